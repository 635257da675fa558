//! `cargo xtask package`: the emulator for people without a Rust
//! toolchain. Builds the release binary once, then a Python wheel
//! (`python.rs`) and npm tarballs (`npm.rs`) under `target/package/`.
//! With `--test`, installs each into a fresh place (a virtualenv, an npm
//! project) with the official SDK and a test runner from the registries,
//! and runs the package's own suite against what was installed.

mod npm;
mod python;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use crate::{cargo, root, target_dir};

/// What both packages are built from.
pub struct Build {
    /// The release binary, `target/release/cosmos-emulator`.
    pub binary: PathBuf,
    /// `target/package/`: where the wheel and the tarballs go.
    pub out: PathBuf,
    /// The emulator crate's version, which every package carries.
    pub version: String,
}

pub fn run(args: &[String]) -> Result<ExitCode, String> {
    let mut test = false;
    for arg in args {
        match arg.as_str() {
            "--test" => test = true,
            other => {
                return Err(format!(
                    "`cargo xtask package` takes only --test, got {other:?}"
                ))
            }
        }
    }
    step(
        "build the release binary",
        cargo().args(["build", "--release", "--locked", "-p", "cosmos-emulator"]),
    )?;
    let out = target_dir().join("package");
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let build = Build {
        binary: target_dir().join("release").join("cosmos-emulator"),
        out,
        version: emulator_version()?,
    };
    let wheel = python::build(&build)?;
    let tarballs = npm::build(&build)?;
    eprintln!("\nxtask package: wrote");
    for path in std::iter::once(&wheel).chain(&tarballs) {
        eprintln!("  {}", path.display());
    }
    if test {
        python::test(&build, &wheel)?;
        npm::test(&build, &tarballs)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `version = "..."` of `emulator/Cargo.toml`.
pub(crate) fn emulator_version() -> Result<String, String> {
    let manifest = root().join("emulator/Cargo.toml");
    let text =
        std::fs::read_to_string(&manifest).map_err(|e| format!("{}: {e}", manifest.display()))?;
    text.lines()
        .find_map(|line| {
            let value = line.trim().strip_prefix("version")?.trim_start();
            let value = value.strip_prefix('=')?.trim();
            Some(value.trim_matches('"').to_string())
        })
        .ok_or_else(|| format!("{}: no version", manifest.display()))
}

/// Runs one step of `cargo xtask package`.
pub(crate) fn step(what: &str, command: &mut Command) -> Result<(), String> {
    crate::step("package", what, command)
}

/// A fresh, empty directory (removed first if it exists).
pub(crate) fn fresh_dir(path: &Path) -> Result<(), String> {
    if path.exists() {
        std::fs::remove_dir_all(path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    std::fs::create_dir_all(path).map_err(|e| format!("{}: {e}", path.display()))
}
