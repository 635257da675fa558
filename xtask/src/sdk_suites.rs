//! `cargo xtask sdk-suites`: the official Python SDK's own test suite
//! (Microsoft's tests from the azure-cosmos sdist on PyPI, fetched at run
//! time, never committed) against the release emulator, per file, with the
//! failures grouped by cause (`sdk-tests/official/python_suite.py`). Not
//! part of `.ci/run`: it takes many minutes and needs the registries.

use std::process::{Command, ExitCode};

use crate::{cargo, root, step, target_dir};

pub fn run(args: &[String]) -> Result<ExitCode, String> {
    step(
        "sdk-suites",
        "build the release emulator",
        cargo().args(["build", "--release", "--locked", "-p", "cosmos-emulator"]),
    )?;
    let mut suite = Command::new("python3");
    suite
        .arg(root().join("sdk-tests/official/python_suite.py"))
        .arg("--binary")
        .arg(target_dir().join("release").join("cosmos-emulator"))
        .arg("--workdir")
        .arg(target_dir().join("sdk-suites").join("python"))
        .args(args);
    step(
        "sdk-suites",
        "the azure-cosmos sdist's tests against the emulator",
        &mut suite,
    )?;
    Ok(ExitCode::SUCCESS)
}
