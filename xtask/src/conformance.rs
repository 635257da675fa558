//! `cargo xtask conformance`: the suite against the emulator (built and
//! started here, with its test clock, on a free port) or against --endpoint.

use crate::{cargo, flag, root, target_dir};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::mpsc;
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
        let running = Emulator::start(
            &bin.join("cosmos-emulator"),
            &report_dir.join("emulator.log"),
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

/// The emulator binary, running until dropped.
struct Emulator {
    child: Child,
    endpoint: String,
}

impl Emulator {
    /// Starts `cosmos-emulator --port 0 --clock manual` and reads its first
    /// stdout line, `listening on http://HOST:PORT`.
    fn start(binary: &Path, log: &Path) -> Result<Emulator, String> {
        let log = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let mut child = Command::new(binary)
            .args(["--host", "127.0.0.1", "--port", "0", "--clock", "manual"])
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (line_tx, line_rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let _ = line_tx.send(reader.read_line(&mut line).map(|_| line));
            // Keep draining, so that later output never blocks the emulator.
            let _ = std::io::copy(&mut reader.by_ref(), &mut std::io::sink());
        });
        let mut emulator = Emulator {
            child,
            endpoint: String::new(),
        };
        let line = match line_rx.recv_timeout(STARTUP) {
            Ok(Ok(line)) => line,
            Ok(Err(e)) => return Err(format!("reading the emulator's output: {e}")),
            Err(_) => {
                return Err(format!(
                    "the emulator did not say where it listens within {STARTUP:?}"
                ))
            }
        };
        emulator.endpoint = line
            .trim()
            .strip_prefix("listening on ")
            .ok_or_else(|| {
                format!("the emulator's first line is {line:?}, not `listening on URL`")
            })?
            .to_string();
        Ok(emulator)
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
