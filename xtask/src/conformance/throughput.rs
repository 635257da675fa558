//! The `throughput` area's run (see `conformance.rs`): its cases taken
//! out of the other runs and run against an emulator of their own started
//! with `--rate-limit`, where every one must run and pass.

use std::path::Path;
use std::process::Command;

use super::{exit_code, fixture_cases, flags, second_run_args, STARTUP};
use crate::server::Server;
use crate::{flag, root};
use cosmos_conformance::report::Report;

/// The area that runs against an emulator with `--rate-limit` alone.
pub const THROUGHPUT_AREA: &str = "throughput";

/// What the run's options select (`--fixtures`, `--filter`, `--exclude`):
/// how many cases of the other areas, and the throughput cases by id.
pub fn selection(args: &[String]) -> Result<(usize, Vec<String>), String> {
    let cases = cosmos_conformance::select(fixture_cases(args)?, flag(args, "--filter"));
    let cases = cosmos_conformance::exclude(cases, &flags(args, "--exclude"));
    let (throughput, others): (Vec<_>, Vec<_>) = cases
        .into_iter()
        .partition(|case| case.area == THROUGHPUT_AREA);
    Ok((
        others.len(),
        throughput.into_iter().map(|case| case.id).collect(),
    ))
}

/// The throughput cases against an emulator of their own started with
/// `--rate-limit` (and the test clock): every one of `cases` must run and
/// pass, none skipped (the suite skips them against a target that does not
/// throttle). Reports in `throughput/` under the report directory.
pub fn run(bin: &Path, args: &[String], report_dir: &Path, cases: &[String]) -> Result<u8, String> {
    let dir = report_dir.join(THROUGHPUT_AREA);
    println!(
        "\n== the {} throughput cases against an emulator started with --rate-limit; reports in {}",
        cases.len(),
        dir.display()
    );
    let emulator = Server::start(
        &bin.join("cosmos-emulator"),
        &[
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--clock",
            "manual",
            "--rate-limit",
        ],
        &report_dir.join("emulator-rate-limit.log"),
        STARTUP,
    )?;
    let mut suite = Command::new(bin.join("cosmos-conformance"));
    suite.args(second_run_args(args));
    // The user's --filter stays; the other areas are left out.
    if flag(args, "--filter").is_none() {
        suite.args(["--filter", THROUGHPUT_AREA]);
    } else {
        for area in other_areas(args)? {
            suite.args(["--exclude", &area]);
        }
    }
    if flag(args, "--expectations").is_none() {
        suite.args(["--expectations", "cosmos-emulator"]);
    }
    let status = suite
        .args(["--endpoint", &emulator.endpoint])
        .arg("--report-dir")
        .arg(&dir)
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot run cosmos-conformance: {e}"))?;
    drop(emulator);
    let mut code = exit_code(status.code());
    let report = Report::load(&dir.join("report.json"))?;
    let ran: Vec<&str> = report.cases.iter().map(|c| c.id.as_str()).collect();
    if ran != cases || report.summary.skipped > 0 || report.summary.passed != cases.len() {
        eprintln!(
            "xtask conformance: the throughput cases must all run and pass against the emulator with --rate-limit: {} of {} passed, {} skipped (ran {})",
            report.summary.passed,
            cases.len(),
            report.summary.skipped,
            ran.join(", ")
        );
        code = code.max(1);
    } else {
        println!(
            "xtask conformance: {} throughput cases, {} passed, against the emulator with --rate-limit",
            cases.len(),
            report.summary.passed
        );
    }
    Ok(code)
}

/// The areas of the fixtures other than the throughput area.
pub fn other_areas(args: &[String]) -> Result<Vec<String>, String> {
    let mut areas: Vec<String> = fixture_cases(args)?
        .into_iter()
        .map(|case| case.area)
        .filter(|area| area != THROUGHPUT_AREA)
        .collect();
    areas.sort();
    areas.dedup();
    Ok(areas)
}
