//! `cargo xtask <task>`: the project's automation, one module per task.

mod bench;
mod conformance;
mod dist;
mod docs;
mod expectations;
mod fuzz;
mod host;
// podman, network namespaces, Unix sockets: Linux only (so that xtask
// builds on the release workflow's Windows runner).
#[cfg(unix)]
mod image;
mod package;
mod scorecard;
mod sdk_suites;
mod sdk_venv;
mod server;
mod test;
#[cfg(test)]
mod tidy;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

const HELP: &str = "\
cargo xtask <task>

tasks:
  test
      Every test: cargo test --workspace, then the official Python,
      JavaScript, Go and Java SDK suites (sdk-tests/) against the emulator
      built here.
      Sets up a virtualenv (target/sdk-venv) and npm packages when missing.
  bench [--emulator-binary PATH] [cosmos-bench options...]
      Build the release binaries, install @vercel/cosmosdb-server with npm
      into target/bench/node when node is present, and measure startup,
      memory, point reads and writes, queries, the TTL purge, one partition
      key range beside ten (--only ranges) and the conformance run against
      the emulator, the peer and a bare server;
      print the tables and write target/bench/results.{json,md}. A few
      minutes. See bench/README.md. --emulator-binary measures that
      binary instead of the release build (e.g. target/dist's musl one).
  conformance [--endpoint URL | --data-dir DIR] [cosmos-conformance options...]
      With no --endpoint: build and start the emulator (test clock, free
      port), run every case against it, print the table, write the reports
      to target/conformance/, run every case again on containers of four
      partition key ranges (--container-throughput 24000; reports in
      target/conformance/ranges/, same outcomes required) and stop it.
      With --endpoint: run once against that.
      With --data-dir DIR (not with --endpoint): the emulator persists into
      DIR; after those two runs, the cases again in two halves
      (--cases-to N, --cases-from N) with the emulator SIGKILLed and
      restarted on DIR between them: the databases list and the test clock
      must read the same before and after, and the halves' outcomes
      together must be the first run's (reports in
      target/conformance/restart/{first,second}/).
  dist [--ci | --target TRIPLE...] [--no-build] [--run]
      The release binaries of every target of xtask/src/dist/targets.rs
      (Linux glibc 2.17 and musl, x86-64 and arm64; macOS x86-64 and arm64;
      Windows x64), each with its wheel, built by maturin (zig, or Debian's
      mingw-w64 for Windows) into target/dist/, each checked for what it
      claims (format, architecture, glibc floor, static, macOS minimum,
      DLLs, size), the wheels by auditwheel and twine; SHA256SUMS beside.
      --ci: only what .ci/run's tests run. --run: start each binary that
      runs here (natively, qemu-user, wine) and run the conformance suite
      and a Python SDK smoke test against it. About 3-5 minutes a target.
  docs [--no-run]
      Check that every code block of README.md and docs/src/ is a snippet
      of docs/snippets/ that CI runs, build the guide (mdbook build docs,
      into docs/book) and fail on a broken link, then run the http/ and
      tls/ snippets against cosmos-emulator on 127.0.0.1:8081 (--no-run:
      not those). Needs mdbook on PATH (or MDBOOK).
  fuzz [--cases N] [--seed S]
      The emulator's property-based fuzz tests (HTTP: emulator/tests/it/fuzz.rs;
      Direct mode: the RNTBD codec's and dispatcher's properties), optimised, with N cases a property (default 10000, about six
      minutes) from seed S (default: a fresh one, printed first).
  image [--binary-dir DIR] [--test [--skip-clients]]
      The container image cosmos-emulator:<version> (and :latest) with
      podman: one manifest list of linux/amd64 and linux/arm64 (the target
      table's image_platform) from the static musl binaries of target/dist/
      (or DIR; built by `cargo xtask dist` when missing, or
      older than the emulator's sources) and
      packages/container/Containerfile, in Docker format (it keeps the
      HEALTHCHECK). Saved to target/dist/cosmos-emulator-image.tar (an OCI
      layout holding the list; `podman load` reads it) and checked there:
      each platform's OS and architecture, its binary, a numeric non-root
      user, only the expected files, under 8 MB compressed, the health
      check and labels. --test: each platform that runs here (natively or
      through qemu-user binfmt) started with podman run: time to /ready,
      the conformance suite through the published port, the certificate,
      the health check, podman stop; then (unless --skip-clients), in a
      network namespace of its own with podman's Docker API socket,
      Testcontainers for Python and for Node and docs/snippets/compose/
      started by podman-compose. Needs root, podman, iproute2 (nsenter);
      set CONTAINERS_CONF=.ci/containers.conf where podman's defaults fail.
  package [--target TRIPLE...] [--no-build] [--test]
      From what cargo xtask dist left in target/dist/ (every target there,
      or those named; it builds no binary, and names the dist command for
      a missing one): checks each target's wheel (its script is the
      release binary) and packs the npm packages into target/package/
      (cosmos-emulator, and cosmos-emulator-<os>-<cpu>[-musl] per target,
      the binary inside, nothing downloaded at install; --no-build is
      taken and changes nothing). With --test,
      starts pypiserver and verdaccio on free loopback ports with them;
      pip download --platform and npm install --os --cpu --libc must pick
      each platform's own package; then this machine installs
      cosmos-emulator by name from them into a fresh virtualenv / npm
      project with the official SDK and runs the packages' own suites
      (packages/python/tests, packages/npm/test) and the quick starts.
  scorecard
      Run the suite against this emulator (test clock, system clock on the
      wall clock, and the throughput area with --rate-limit) and against
      @vercel/cosmosdb-server and @zeit/cosmosdb-server from npm and cosmium
      from the Go module proxy (HTTP and HTTPS; installed into
      target/scorecard/; cosmium in a network namespace of its own),
      regenerate their fixtures/expectations/ lists and write
      docs/scorecard.{md,html}. About five minutes; needs node, npm, go and
      util-linux's unshare and nsenter.
  sdk-suites [--kind sync|async|all] [--files F...] [-k EXPR]
      The official Python SDK's own tests (the azure-cosmos sdist's tests/,
      downloaded from PyPI into target/sdk-suites/python, never committed)
      against the release emulator on https://localhost:8081/, with the
      emulator marker; prints per-file counts and the failures grouped by
      cause, and writes target/sdk-suites/python/report-<kind>.md. Many
      minutes; not part of .ci/run.
  sdk-suites --sdk go [--version V] [-run REGEX]
      The official Go SDK's own emulator tests (azcosmos 1.5.0's
      emulator_*_test.go, from the Go module proxy into
      target/sdk-suites/go, never committed), unchanged, against the release
      emulator on https://localhost:8081/ started as Microsoft's CI starts
      its own (consistency Strong); writes target/sdk-suites/go/report.md.
      About a minute.
  sdk-suites --sdk js --source DIR [FILE...]
      The official JavaScript SDK's integration tests (@azure/cosmos 4.7.0's
      test/public/**/*.spec.ts, from DIR, a checkout of azure-sdk-for-js at
      its release commit: no registry publishes them), unchanged, against the
      release emulator on https://localhost:8081/; writes
      target/sdk-suites/js/report.md. About five minutes.
  expectations --from REPORT.json --name NAME [--implementation TEXT]
      Write fixtures/expectations/NAME.toml from a report, keeping the
      reasons already written.
";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let task = args.next();
    let rest: Vec<String> = args.collect();
    let result = match task.as_deref() {
        Some("test") => test::run(&rest),
        Some("bench") => bench::run(&rest),
        Some("conformance") => conformance::run(&rest),
        Some("dist") => dist::run(&rest),
        Some("docs") => docs::run(&rest),
        Some("expectations") => expectations::run(&rest),
        Some("fuzz") => fuzz::run(&rest),
        #[cfg(unix)]
        Some("image") => image::run(&rest),
        #[cfg(not(unix))]
        Some("image") => Err("cargo xtask image needs podman on Linux".to_string()),
        Some("package") => package::run(&rest),
        Some("scorecard") => scorecard::run(&rest),
        Some("sdk-suites") => sdk_suites::run(&rest),
        Some("help" | "--help" | "-h") | None => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Some(other) => Err(format!("unknown task {other:?}\n\n{HELP}")),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("xtask: {error}");
            ExitCode::from(2)
        }
    }
}

/// The workspace root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// Cargo's target directory, as cargo itself chooses it.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|dir| {
            if dir.is_absolute() {
                dir
            } else {
                root().join(dir)
            }
        })
        .unwrap_or_else(|| root().join("target"))
}

/// `$CARGO`, the cargo that runs xtask.
fn cargo() -> std::process::Command {
    std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// Runs one step of `task`, echoing what it is; a failure names the step.
fn step(task: &str, what: &str, command: &mut std::process::Command) -> Result<(), String> {
    eprintln!("\n== xtask {task}: {what}");
    let status = command
        .status()
        .map_err(|e| format!("{what}: cannot run {:?}: {e}", command.get_program()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what}: failed ({status})"))
    }
}

/// The conformance suite's binary (a debug build), for a task that runs it
/// against an emulator it started; built (quickly when fresh) first.
fn conformance_binary(task: &str) -> Result<PathBuf, String> {
    step(
        task,
        "build the conformance suite",
        cargo().args([
            "build",
            "--quiet",
            "-p",
            "cosmos-conformance",
            "--bin",
            "cosmos-conformance",
        ]),
    )?;
    Ok(target_dir().join("debug").join("cosmos-conformance"))
}

/// `-m pip install` quietly: the arguments every task's pip install starts with.
const PIP_INSTALL: [&str; 5] = [
    "-m",
    "pip",
    "install",
    "--quiet",
    "--disable-pip-version-check",
];

/// `python -m pip install --quiet --disable-pip-version-check`, to which
/// the caller adds what to install.
fn pip_install(python: &Path) -> std::process::Command {
    let mut pip = std::process::Command::new(python);
    pip.args(PIP_INSTALL);
    pip
}

/// `npm ci` in `dir` unless `package` is installed there already (the
/// node test projects: sdk-tests/js, browser-tests).
fn npm_ci_unless_installed(task: &str, dir: &Path, package: &str) -> Result<(), String> {
    if dir.join("node_modules").join(package).exists() {
        return Ok(());
    }
    step(
        task,
        &format!("install {package}: npm ci in {}", dir.display()),
        host::npm().arg("ci").current_dir(dir),
    )
}

/// The value of `--name VALUE` or `--name=VALUE` in `args`.
fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter().enumerate().find_map(|(i, arg)| {
        if arg == name {
            args.get(i + 1).map(String::as_str)
        } else {
            arg.strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('='))
        }
    })
}

/// `args` without `--name VALUE` and `--name=VALUE`.
fn without(args: &[String], name: &str) -> Vec<String> {
    let mut kept = Vec::new();
    let mut skip_value = false;
    for arg in args {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if arg == name {
            skip_value = true;
        } else if !arg.starts_with(&format!("{name}=")) {
            kept.push(arg.clone());
        }
    }
    kept
}
