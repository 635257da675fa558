//! The Python wheel `cosmos-emulator` (packages/python): built by maturin
//! with `bin` bindings; tested in a fresh virtualenv.
//!
//! maturin and auditwheel come from PyPI, pinned below, into a build
//! virtualenv under the target directory (made once, reused). maturin runs
//! cargo on the same target directory with the same profile as `cargo
//! xtask package`'s release build, so it finds the binary up to date and
//! packs it as it is.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime};

use super::{fresh_dir, step, Build};
use crate::{root, target_dir};

/// The build tools, pinned: the wheel's layout and its platform tag must not
/// change with whatever PyPI serves next.
const MATURIN: &str = "maturin==1.16.0";
const AUDITWHEEL: &str = "auditwheel==6.8.2";

fn package_dir() -> PathBuf {
    root().join("packages/python")
}

fn venv_bin(venv: &Path, program: &str) -> PathBuf {
    venv.join("bin").join(program)
}

/// Runs a step and says how long it took.
fn timed(what: &str, command: &mut Command) -> Result<(), String> {
    let started = Instant::now();
    step(what, command)?;
    eprintln!("   ({what}: {:.1} s)", started.elapsed().as_secs_f64());
    Ok(())
}

/// Runs a command and returns its stdout (stderr passes through); a
/// failure names the step.
fn output(what: &str, command: &mut Command) -> Result<String, String> {
    eprintln!("\n== xtask package: {what}");
    let out = command
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("{what}: cannot run {:?}: {e}", command.get_program()))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!("{what}: failed ({})\n{text}", out.status))
    }
}

/// A virtualenv made with the `python3` on PATH, unless it is there already.
fn make_venv(venv: &Path, what: &str) -> Result<(), String> {
    if venv_bin(venv, "python").exists() {
        return Ok(());
    }
    timed(what, Command::new("python3").args(["-m", "venv"]).arg(venv))
}

fn pip_install(venv: &Path) -> Command {
    let mut pip = Command::new(venv_bin(venv, "python"));
    pip.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ]);
    pip
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// Builds the wheel into `build.out`; returns its path.
pub fn build(build: &Build) -> Result<PathBuf, String> {
    let venv = target_dir().join("package-build").join("python-venv");
    make_venv(
        &venv,
        "create the build virtualenv (target/package-build/python-venv)",
    )?;
    // Quick when the pinned versions are already there (no download).
    timed(
        &format!("install the build tools: pip install {MATURIN} {AUDITWHEEL}"),
        pip_install(&venv).args([MATURIN, AUDITWHEEL]),
    )?;

    // A wheel left from an earlier version must not be taken for this one.
    let prefix = "cosmos_emulator-";
    if let Ok(entries) = std::fs::read_dir(&build.out) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(prefix) && name.ends_with(".whl") {
                std::fs::remove_file(entry.path())
                    .map_err(|e| format!("{}: {e}", entry.path().display()))?;
            }
        }
    }

    let binary_before = modified(&build.binary);
    timed(
        "build the wheel: maturin build --release (packages/python)",
        Command::new(venv_bin(&venv, "maturin"))
            .args(["build", "--release", "--out"])
            .arg(&build.out)
            .current_dir(package_dir())
            .env("CARGO_TARGET_DIR", target_dir()),
    )?;
    if modified(&build.binary) != binary_before {
        eprintln!(
            "   note: maturin's cargo rebuilt {} (its flags differ from the release build's)",
            build.binary.display()
        );
    }

    let wheels: Vec<PathBuf> = std::fs::read_dir(&build.out)
        .map_err(|e| format!("{}: {e}", build.out.display()))?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with(&format!("{prefix}{}-", build.version)) && n.ends_with(".whl")
            })
        })
        .collect();
    let wheel = match wheels.as_slice() {
        [one] => one.clone(),
        other => {
            return Err(format!(
                "maturin should have written one cosmos_emulator-{}-*.whl to {}, found {other:?}",
                build.version,
                build.out.display()
            ))
        }
    };

    // auditwheel's own verdict: the platform tag the wheel is consistent with.
    let report = output(
        "check the wheel: auditwheel show",
        Command::new(venv_bin(&venv, "auditwheel"))
            .arg("show")
            .arg(&wheel),
    )?;
    eprint!("{report}");
    // auditwheel wraps its lines: read its words.
    let words = report.split_whitespace().collect::<Vec<_>>().join(" ");
    let tag = words
        .split("consistent with the following platform tag: \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .ok_or_else(|| format!("auditwheel show gave no platform tag:\n{report}"))?;
    let file_name = wheel.file_name().unwrap_or_default().to_string_lossy();
    if !tag.starts_with("manylinux") || !file_name.contains(tag) {
        return Err(format!(
            "{file_name}: auditwheel finds it consistent with {tag:?}, which is not its manylinux tag"
        ));
    }
    eprintln!("   auditwheel: a valid {tag} wheel");
    Ok(wheel)
}

/// PATH for what runs from the test virtualenv: its bin, then the system's,
/// and no Rust toolchain (no ~/.cargo/bin).
fn plain_path(venv: &Path) -> String {
    format!(
        "{}:/usr/local/bin:/usr/bin:/bin",
        venv.join("bin").display()
    )
}

/// A command that runs as a Python user's would: no Rust toolchain on PATH,
/// no cargo or rustup variables, no binary named by the environment.
fn as_a_user(program: impl AsRef<std::ffi::OsStr>, venv: &Path) -> Command {
    let mut command = Command::new(program);
    command.env("PATH", plain_path(venv));
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("CARGO") || name.starts_with("RUSTUP") || name.starts_with("RUST_") {
            command.env_remove(name.as_ref());
        }
    }
    command
        .env_remove("COSMOS_EMULATOR_BINARY")
        .env_remove("PYTHONPATH")
        .env_remove("VIRTUAL_ENV");
    command
}

/// Installs the wheel into a fresh virtualenv and runs packages/python's tests.
pub fn test(build: &Build, wheel: &Path) -> Result<(), String> {
    let venv = target_dir().join("package-test").join("python-venv");
    fresh_dir(&venv)?;
    make_venv(
        &venv,
        "create a fresh virtualenv (target/package-test/python-venv)",
    )?;
    timed(
        "install the wheel alone: pip install cosmos_emulator-*.whl",
        pip_install(&venv).arg(wheel),
    )?;

    // The wheel put the binary on the venv's PATH, and it runs there with no
    // Rust toolchain in reach.
    let found = output(
        "the wheel puts cosmos-emulator on PATH: command -v cosmos-emulator",
        as_a_user("sh", &venv).args(["-c", "command -v cosmos-emulator"]),
    )?;
    let expected = venv_bin(&venv, "cosmos-emulator");
    if Path::new(found.trim()) != expected {
        return Err(format!(
            "cosmos-emulator resolves to {:?}, expected {}",
            found.trim(),
            expected.display()
        ));
    }
    let version = output(
        "cosmos-emulator --version, from the virtualenv, without a Rust toolchain",
        as_a_user("cosmos-emulator", &venv).arg("--version"),
    )?;
    eprint!("{version}");
    if version.trim() != format!("cosmos-emulator {}", build.version) {
        return Err(format!(
            "cosmos-emulator --version printed {:?}, expected \"cosmos-emulator {}\"",
            version.trim(),
            build.version
        ));
    }
    // The module needs only the standard library: start one, move its
    // clock, stop it, with nothing else installed.
    timed(
        "the module alone (no azure-cosmos): start, advance, stop",
        as_a_user(venv_bin(&venv, "python"), &venv).args([
            "-c",
            "import importlib.util, cosmos_emulator\n\
             assert importlib.util.find_spec('azure') is None, 'azure-cosmos should not be installed yet'\n\
             with cosmos_emulator.start() as e:\n    \
                 now = e.now()\n    \
                 assert e.advance(10) == now + 10\n    \
                 print('   started', e.binary, 'at', e.endpoint, 'and moved its clock')\n",
        ]),
    )?;

    let requirements = package_dir().join("tests/requirements.txt");
    timed(
        "install the test requirements: azure-cosmos and pytest (packages/python/tests/requirements.txt)",
        pip_install(&venv).arg("-r").arg(&requirements),
    )?;
    timed(
        "Python package tests: pytest packages/python/tests (the plugin through its entry point)",
        as_a_user(venv_bin(&venv, "python"), &venv)
            .args(["-m", "pytest", "-v"])
            .current_dir(package_dir().join("tests"))
            .env("COSMOS_EMULATOR_PACKAGE_TEST", "1"),
    )?;
    first_test(wheel)
}

/// The README's and the guide's first test, as a reader follows it: in a
/// fresh directory holding the wheel, with a fresh virtualenv active, the
/// documented install command (docs/snippets/first-test/install-python.sh),
/// then the documented test with pytest and the example without pytest.
fn first_test(wheel: &Path) -> Result<(), String> {
    let snippets = root().join("docs/snippets/first-test");
    let dir = target_dir().join("package-test").join("python-first-test");
    fresh_dir(&dir)?;
    let venv = dir.join("venv");
    make_venv(&venv, "the quick start: a fresh virtualenv")?;
    let name = wheel.file_name().ok_or("the wheel has no file name")?;
    std::fs::copy(wheel, dir.join(name)).map_err(|e| format!("copy the wheel: {e}"))?;
    for file in ["test_items_expire.py", "without_pytest.py"] {
        std::fs::copy(snippets.join(file), dir.join(file))
            .map_err(|e| format!("copy docs/snippets/first-test/{file}: {e}"))?;
    }
    timed(
        "the quick start's install command (docs/snippets/first-test/install-python.sh)",
        as_a_user("bash", &venv)
            .arg("-e")
            .arg(snippets.join("install-python.sh"))
            .env("VIRTUAL_ENV", &venv)
            .current_dir(&dir),
    )?;
    timed(
        "the quick start's first test: pytest test_items_expire.py",
        as_a_user(venv_bin(&venv, "python"), &venv)
            .args([
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "test_items_expire.py",
            ])
            .current_dir(&dir),
    )?;
    timed(
        "the quick start's example without pytest: python without_pytest.py",
        as_a_user(venv_bin(&venv, "python"), &venv)
            .arg("without_pytest.py")
            .current_dir(&dir),
    )
}
