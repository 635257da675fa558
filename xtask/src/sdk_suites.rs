//! `cargo xtask sdk-suites`: the official SDKs' own test suites against
//! the release emulator, their tests fetched at run time and never
//! committed: the Python SDK's (the azure-cosmos sdist's tests/, from PyPI;
//! `sdk-tests/official/python_suite.py`); with `--sdk go`, the Go SDK's
//! emulator tests (the azcosmos module's, from the Go module proxy;
//! `sdk-tests/official/go_suite.py`); with `--sdk js --source DIR`, the
//! JavaScript SDK's integration tests (from a checkout of its repository,
//! as no registry publishes them; `sdk-tests/official/js_suite.py`). Each
//! prints per-file counts and the failures. Not part of `.ci/run`: they
//! need the registries (and the JavaScript one a checkout), and take
//! minutes.

use std::process::{Command, ExitCode};

use crate::{cargo, root, step, target_dir};

pub fn run(args: &[String]) -> Result<ExitCode, String> {
    let (sdk, rest) = match args {
        [flag, sdk, rest @ ..] if flag == "--sdk" => (sdk.as_str(), rest),
        _ => ("python", args),
    };
    let (script, what) = match sdk {
        "python" => (
            "python_suite.py",
            "the azure-cosmos sdist's tests against the emulator",
        ),
        "go" => (
            "go_suite.py",
            "the azcosmos module's emulator tests against the emulator",
        ),
        "js" => (
            "js_suite.py",
            "@azure/cosmos's integration tests against the emulator",
        ),
        other => {
            return Err(format!(
                "`cargo xtask sdk-suites --sdk` takes python, go or js, got {other:?}"
            ))
        }
    };
    step(
        "sdk-suites",
        "build the release emulator",
        cargo().args(["build", "--release", "--locked", "-p", "cosmos-emulator"]),
    )?;
    let mut suite = Command::new("python3");
    suite
        .arg(root().join("sdk-tests/official").join(script))
        .arg("--binary")
        .arg(target_dir().join("release").join("cosmos-emulator"))
        .arg("--workdir")
        .arg(target_dir().join("sdk-suites").join(sdk))
        .args(rest);
    step("sdk-suites", what, &mut suite)?;
    Ok(ExitCode::SUCCESS)
}
