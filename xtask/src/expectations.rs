//! `cargo xtask expectations`: an implementation's known failures from a
//! report of a real run, keeping the reasons a person already wrote.

use crate::{flag, root};
use cosmos_conformance::expectations::Expectations;
use cosmos_conformance::report::Report;
use std::path::Path;
use std::process::ExitCode;

pub fn run(args: &[String]) -> Result<ExitCode, String> {
    let from = flag(args, "--from").ok_or("--from REPORT.json is required")?;
    let name = flag(args, "--name").ok_or("--name NAME is required")?;
    let report = Report::load(Path::new(from))?;
    let file = Expectations::locate(name, &root().join("fixtures"));
    let previous = if file.exists() {
        Some(Expectations::load(&file)?)
    } else {
        None
    };
    let implementation = flag(args, "--implementation")
        .map(str::to_string)
        .or_else(|| previous.as_ref().map(|p| p.implementation.clone()))
        .unwrap_or_else(|| name.to_string());
    let generated = format!(
        "cargo xtask expectations --name {name}, from a run against {} with clock {}",
        report.target.endpoint, report.target.clock
    );
    let expectations =
        Expectations::from_report(&report, previous.as_ref(), &implementation, &generated);
    std::fs::write(&file, expectations.to_toml())
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    println!(
        "{}: {} known failures ({} cases in the report)",
        file.display(),
        expectations.failures.len(),
        report.cases.len()
    );
    Ok(ExitCode::SUCCESS)
}
