//! `cargo xtask test`: every test of the project. The workspace's Rust
//! tests (the emulator, the conformance suite, the Rust SDK), then the
//! official Python, JavaScript, Go and Java SDK suites against the emulator
//! binary built here. It sets up what the SDK suites need when it is
//! missing: a virtualenv with `sdk-tests/python/requirements.txt` under the
//! target directory, and `npm ci` in `sdk-tests/js`; Go fetches the Go
//! suite's modules (`sdk-tests/go/go.sum`) and Maven the Java suites'
//! dependencies (`sdk-tests/java/pom.xml`, then Spring Data Azure Cosmos
//! DB's, `sdk-tests/java-spring/pom.xml`) themselves; then the data explorer's
//! tests in Debian's chromium (`browser-tests`, `npm ci` for playwright-core,
//! which downloads no browser: `CHROMIUM` names the binary, /usr/bin/chromium
//! by default); last `cargo xtask docs` (the guide and its examples).

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

    let python = crate::sdk_venv::python()?;
    let mut pytest = Command::new(&python);
    pytest
        .args(["-m", "pytest", "-q"])
        .current_dir(root().join("sdk-tests/python"))
        .env("COSMOS_EMULATOR_BIN", &binary);
    step("Python SDK (azure-cosmos): pytest", &mut pytest)?;

    let js = root().join("sdk-tests/js");
    crate::npm_ci_unless_installed("test", &js, "@azure/cosmos")?;
    step(
        "JavaScript SDK (@azure/cosmos): node --test",
        npm()
            .arg("test")
            .current_dir(&js)
            .env("COSMOS_EMULATOR_BIN", &binary),
    )?;

    // The Go SDK (azcosmos): go test builds in Go's own cache, nothing in
    // the source tree; -mod=readonly holds it to go.mod and go.sum.
    step(
        "Go SDK (azcosmos): go test",
        Command::new("go")
            .args(["test", "-mod=readonly", "-count=1", "./..."])
            .current_dir(root().join("sdk-tests/go"))
            .env("COSMOS_EMULATOR_BIN", &binary),
    )?;

    // Maven's output goes to target/sdk-tests/java (the pom's <directory>);
    // without -q, so that Surefire's closing "Tests run: ..." line shows.
    step(
        "Java SDK (azure-cosmos): mvn test",
        Command::new("mvn")
            .args(["--batch-mode", "--no-transfer-progress", "test"])
            .current_dir(root().join("sdk-tests/java"))
            .env("COSMOS_EMULATOR_BIN", &binary),
    )?;
    // The same suite again in the SDK's default connection mode, Direct
    // (RNTBD to the replicas the address feed names).
    step(
        "Java SDK (azure-cosmos) in Direct mode: mvn test -Dcosmos.mode=direct",
        Command::new("mvn")
            .args(["--batch-mode", "--no-transfer-progress", "test"])
            .arg("-Dcosmos.mode=direct")
            .current_dir(root().join("sdk-tests/java"))
            .env("COSMOS_EMULATOR_BIN", &binary),
    )?;
    // Spring Data Azure Cosmos DB, its output in target/sdk-tests/java-spring
    // (it compiles in sdk-tests/java's Emulator.java): in gateway mode, then
    // in its default configuration (no connection mode: Direct).
    for (what, mode) in [
        ("", "gateway"),
        (" in its default configuration", "default"),
    ] {
        step(
            &format!("Spring Data (azure-spring-data-cosmos){what}: mvn test"),
            Command::new("mvn")
                .args(["--batch-mode", "--no-transfer-progress", "test"])
                .arg(format!("-Dcosmos.mode={mode}"))
                .current_dir(root().join("sdk-tests/java-spring"))
                .env("COSMOS_EMULATOR_BIN", &binary),
        )?;
    }

    // playwright-core drives the system chromium; it downloads no browser.
    let browser = root().join("browser-tests");
    crate::npm_ci_unless_installed("test", &browser, "playwright-core")?;
    step(
        "the data explorer in chromium: node --test",
        npm()
            .arg("test")
            .current_dir(&browser)
            .env("COSMOS_EMULATOR_BIN", &binary),
    )?;
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
