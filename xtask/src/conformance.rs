//! `cargo xtask conformance`: the suite against the emulator (built and
//! started here, with its test clock, on a free port) or against --endpoint.
//!
//! Against the emulator the suite runs twice on the same emulator: as
//! asked, then with every container created with 40000 RU/s, which gives
//! it four physical partition key ranges; the second run must pass and
//! observe the very same outcomes. It writes its reports to `ranges/` under
//! the report directory and never touches `--snapshot` or
//! `--write-expectations` files (the first run's).

use crate::server::Server;
use crate::{cargo, flag, root, target_dir};
use cosmos_conformance::report::Report;
use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

const STARTUP: Duration = Duration::from_secs(10);
/// The second run's containers: 4 ranges (one per 10,000 RU/s).
const SEVERAL_RANGES_THROUGHPUT: u32 = 40_000;
const SEVERAL_RANGES: usize = 4;
/// Options of the first run the second does not repeat (with their value).
const FIRST_RUN_ONLY: [&str; 3] = ["--report-dir", "--snapshot", "--write-expectations"];

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
    let report_dir = flag(args, "--report-dir")
        .map(|dir| root().join(dir))
        .unwrap_or_else(|| target_dir().join("conformance"));
    let mut suite = Command::new(bin.join("cosmos-conformance"));
    suite.args(args);
    if flag(args, "--report-dir").is_none() {
        suite.arg("--report-dir").arg(&report_dir);
    }
    let mut emulator = None;
    let mut extra: Vec<String> = Vec::new();
    if against_emulator {
        std::fs::create_dir_all(&report_dir).map_err(|e| e.to_string())?;
        let running = Server::start(
            &bin.join("cosmos-emulator"),
            &["--host", "127.0.0.1", "--port", "0", "--clock", "manual"],
            &report_dir.join("emulator.log"),
            STARTUP,
        )?;
        extra.extend(["--endpoint".to_string(), running.endpoint.clone()]);
        if flag(args, "--expectations").is_none() {
            extra.extend(["--expectations".to_string(), "cosmos-emulator".to_string()]);
        }
        emulator = Some(running);
    }
    let status = suite
        .args(&extra)
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot run cosmos-conformance: {e}"))?;
    let mut code = exit_code(status.code());
    let several = against_emulator
        && flag(args, "--container-throughput").is_none()
        && !args.iter().any(|a| a == "--list");
    if several {
        let ranges_dir = report_dir.join("ranges");
        println!(
            "\n== the same cases again, every container created with {SEVERAL_RANGES_THROUGHPUT} RU/s ({SEVERAL_RANGES} partition key ranges); reports in {}",
            ranges_dir.display()
        );
        let status = Command::new(bin.join("cosmos-conformance"))
            .args(second_run_args(args))
            .args(&extra)
            .arg("--report-dir")
            .arg(&ranges_dir)
            .arg("--container-throughput")
            .arg(SEVERAL_RANGES_THROUGHPUT.to_string())
            .current_dir(root())
            .status()
            .map_err(|e| format!("cannot run cosmos-conformance: {e}"))?;
        let second = exit_code(status.code());
        match compare(&report_dir, &ranges_dir) {
            Ok(summary) => println!("xtask conformance: {summary}"),
            Err(why) => {
                eprintln!("xtask conformance: the run with several ranges: {why}");
                code = code.max(1);
            }
        }
        code = code.max(second);
    }
    drop(emulator);
    eprintln!(
        "xtask conformance: {:.1} s in all (build check, start, run{}, stop)",
        started.elapsed().as_secs_f64(),
        if several { "s" } else { "" }
    );
    Ok(ExitCode::from(code))
}

/// The exit status of the suite as ours: its code, 1 when killed.
fn exit_code(code: Option<i32>) -> u8 {
    match code {
        Some(code) => u8::try_from(code).unwrap_or(1),
        None => 1,
    }
}

/// The first run's arguments without those it alone uses (see [`FIRST_RUN_ONLY`]).
fn second_run_args(args: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    let mut skip_value = false;
    for arg in args {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if FIRST_RUN_ONLY.contains(&arg.as_str()) {
            skip_value = true;
        } else if !FIRST_RUN_ONLY
            .iter()
            .any(|name| arg.starts_with(&format!("{name}=")))
        {
            kept.push(arg.clone());
        }
    }
    kept
}

/// Both runs' reports: the second's containers had [`SEVERAL_RANGES`]
/// ranges, and its outcome table is the first's, line for line.
fn compare(first: &Path, second: &Path) -> Result<String, String> {
    let load = |dir: &Path| Report::load(&dir.join("report.json"));
    let (first, second) = (load(first)?, load(second)?);
    let containers = second
        .target
        .containers
        .as_ref()
        .ok_or("its report does not name the containers' throughput")?;
    if containers.ranges != [SEVERAL_RANGES] {
        return Err(format!(
            "the containers were to have {SEVERAL_RANGES} partition key ranges: {}",
            containers.describe()
        ));
    }
    let (a, b) = (first.outcome_table(), second.outcome_table());
    if a != b {
        let diff: Vec<String> = a
            .lines()
            .zip(b.lines())
            .filter(|(x, y)| x != y)
            .take(10)
            .map(|(x, y)| format!("  1 range:  {x}\n  {SEVERAL_RANGES} ranges: {y}"))
            .collect();
        return Err(format!(
            "its outcomes differ from those with one range:\n{}",
            diff.join("\n")
        ));
    }
    Ok(format!(
        "{} cases, {} passed, with one range and with {}: the same outcomes",
        second.summary.total,
        second.summary.passed,
        containers.describe()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_run_drops_the_first_runs_files() {
        let args: Vec<String> = [
            "--snapshot",
            "a.snap",
            "--filter",
            "E1",
            "--report-dir=x",
            "--write-expectations",
            "e.toml",
            "--clock",
            "manual",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            second_run_args(&args),
            ["--filter", "E1", "--clock", "manual"]
        );
    }
}
