//! `cargo xtask conformance`: the suite against the emulator (built and
//! started here, with its test clock, on a free port) or against --endpoint.

use crate::server::Server;
use crate::{cargo, flag, root, target_dir};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

const STARTUP: Duration = Duration::from_secs(10);

pub fn run(args: &[String]) -> Result<ExitCode, String> {
    let started = Instant::now();
    let against_emulator =
        flag(args, "--endpoint").is_none() && flag(args, "--connection-string").is_none();
    let mut packages = vec!["-p", "cosmos-conformance"];
    if against_emulator {
        packages.extend(["-p", "cosmos-emulator"]);
    }
    let status = cargo()
        .args(["build", "--quiet", "--bins"])
        .args(&packages)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("the build failed".to_string());
    }
    let bin = target_dir().join("debug");
    let report_dir = target_dir().join("conformance");
    let mut suite = Command::new(bin.join("cosmos-conformance"));
    suite.args(args);
    if flag(args, "--report-dir").is_none() {
        suite.arg("--report-dir").arg(&report_dir);
    }
    let mut emulator = None;
    if against_emulator {
        std::fs::create_dir_all(&report_dir).map_err(|e| e.to_string())?;
        let running = Server::start(
            &bin.join("cosmos-emulator"),
            &["--host", "127.0.0.1", "--port", "0", "--clock", "manual"],
            &report_dir.join("emulator.log"),
            STARTUP,
        )?;
        suite.arg("--endpoint").arg(&running.endpoint);
        if flag(args, "--expectations").is_none() {
            suite.args(["--expectations", "cosmos-emulator"]);
        }
        emulator = Some(running);
    }
    let status = suite
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot run cosmos-conformance: {e}"))?;
    drop(emulator);
    eprintln!(
        "xtask conformance: {:.1} s in all (build check, start, run, stop)",
        started.elapsed().as_secs_f64()
    );
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::from(1),
    })
}
