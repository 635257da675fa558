//! The conformance suite's wall time against a running emulator: the
//! `cosmos-conformance` binary, from spawn to exit, the emulator already up.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde::Serialize;

use crate::process::ServerProcess;
use crate::stats::median;
use crate::targets::Target;

#[derive(Debug, Clone, Serialize)]
pub struct Conformance {
    pub seconds: Vec<f64>,
    pub median_seconds: f64,
    /// Whether every run exited 0 (no unexpected failure).
    pub passed: bool,
}

/// Runs the suite `runs` times, each against a freshly started emulator;
/// the suite's output goes to `out_dir/conformance.log`.
pub fn measure(
    suite: &Path,
    emulator: &Target,
    fixtures: &Path,
    out_dir: &Path,
    runs: usize,
) -> Result<Conformance, String> {
    let log_path = out_dir.join("conformance.log");
    let mut seconds = Vec::with_capacity(runs);
    let mut passed = true;
    for _ in 0..runs {
        let running = ServerProcess::spawn(emulator.command())?;
        let log =
            std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
        let started = Instant::now();
        let status = Command::new(suite)
            .arg("--endpoint")
            .arg(&running.url)
            .args(["--expectations", "cosmos-emulator"])
            .arg("--fixtures")
            .arg(fixtures)
            .arg("--report-dir")
            .arg(out_dir.join("conformance"))
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .stdin(Stdio::null())
            .status()
            .map_err(|e| format!("cannot run {}: {e}", suite.display()))?;
        seconds.push(started.elapsed().as_secs_f64());
        passed &= status.success();
    }
    Ok(Conformance {
        median_seconds: median(&seconds).unwrap_or(f64::NAN),
        seconds,
        passed,
    })
}
