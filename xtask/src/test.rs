//! `cargo xtask test`: every test of the project. The workspace's Rust
//! tests (the emulator, the conformance suite, the Rust SDK), then the
//! official Python and JavaScript SDK suites against the emulator binary
//! built here. It sets up what the SDK suites need when it is missing: a
//! virtualenv with `sdk-tests/python/requirements.txt` under the target
//! directory, and `npm ci` in `sdk-tests/js`; then the data explorer's
//! tests in Debian's chromium (`browser-tests`, `npm ci` for playwright-core,
//! which downloads no browser: `CHROMIUM` names the binary, /usr/bin/chromium
//! by default); last `cargo xtask docs` (the guide and its examples).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use crate::{cargo, root, target_dir};

pub fn run(args: &[String]) -> Result<ExitCode, String> {
    if let Some(unknown) = args.first() {
        return Err(format!(
            "`cargo xtask test` takes no arguments, got {unknown:?}"
        ));
    }
    step(
        "Rust tests: cargo test --workspace",
        cargo().args(["test", "--workspace"]),
    )?;
    step(
        "build the emulator for the SDK suites",
        cargo().args(["build", "-p", "cosmos-emulator"]),
    )?;
    let binary = target_dir().join("debug").join("cosmos-emulator");

    let python = python_env()?;
    let mut pytest = Command::new(&python);
    pytest
        .args(["-m", "pytest", "-q"])
        .current_dir(root().join("sdk-tests/python"))
        .env("COSMOS_EMULATOR_BIN", &binary);
    step("Python SDK (azure-cosmos): pytest", &mut pytest)?;

    for (dir, package, what) in [
        (
            "sdk-tests/js",
            "@azure/cosmos",
            "JavaScript SDK (@azure/cosmos): node --test",
        ),
        // playwright-core drives the system chromium; it downloads no browser.
        (
            "browser-tests",
            "playwright-core",
            "the data explorer in chromium: node --test",
        ),
    ] {
        let dir = root().join(dir);
        crate::npm_ci_unless_installed("test", &dir, package)?;
        step(
            what,
            npm()
                .arg("test")
                .current_dir(&dir)
                .env("COSMOS_EMULATOR_BIN", &binary),
        )?;
    }
    eprintln!(
        "\n== xtask test: the guide and every example of it and the README (cargo xtask docs)"
    );
    crate::docs::check(Some(&python))?;
    Ok(ExitCode::SUCCESS)
}

/// Runs one step of `cargo xtask test`.
fn step(what: &str, command: &mut Command) -> Result<(), String> {
    crate::step("test", what, command)
}

fn npm() -> Command {
    crate::host::npm()
}

/// The virtualenv's python, made and filled on first use; pip is run every
/// time so that a changed requirements file takes effect (it is quick when
/// nothing changed).
pub(crate) fn python_env() -> Result<PathBuf, String> {
    let venv = target_dir().join("sdk-venv");
    // In Scripts on Windows (the release workflow's runner, dist --run).
    let python = crate::host::venv_bin(&venv, "python");
    if !python.exists() {
        step(
            "create the Python virtualenv",
            &mut crate::host::new_venv(&venv),
        )?;
    }
    let requirements: &Path = &root().join("sdk-tests/python/requirements.txt");
    step(
        "install the Python SDK: pip install -r sdk-tests/python/requirements.txt",
        crate::pip_install(&python).arg("-r").arg(requirements),
    )?;
    Ok(python)
}
