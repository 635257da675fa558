//! One target's release binary and wheel, in one `maturin build`: maturin
//! runs cargo for the target (through zig or mingw-w64, as the target
//! table says) and packs the binary it built into the wheel. Building the
//! binary again with another driver (cargo-zigbuild, say) would compile
//! everything twice: cargo's fingerprints differ with the C compiler and
//! linker wrappers, so maturin would not find it fresh.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use super::targets::{Format, Target, Toolchain};
use super::tools::Tools;
use crate::{root, target_dir};

/// Cargo.toml's profile for shipped binaries: `release` without symbol tables.
const PROFILE: &str = "release-stripped";

pub struct Built {
    /// `target/dist/cosmos-emulator-<triple>[.exe]`
    pub binary: PathBuf,
    /// `target/dist/wheels/cosmos_emulator-<version>-py3-none-<tag>.whl`
    pub wheel: PathBuf,
    pub seconds: f64,
}

/// Builds `target`; the binary and the wheel land in `out`.
pub fn build(
    tools: &Tools,
    target: &'static Target,
    out: &Path,
    version: &str,
) -> Result<Built, String> {
    let wheels = out.join("wheels");
    std::fs::create_dir_all(&wheels).map_err(|e| format!("{}: {e}", wheels.display()))?;
    let wheel = wheels.join(format!(
        "cosmos_emulator-{version}-py3-none-{}.whl",
        target.wheel_tag
    ));
    // A wheel left from an earlier build must not pass for this one.
    remove_if_there(&wheel)?;

    // The target's standard library: quick when rustup has it already.
    crate::step(
        "dist",
        &format!("rustup target add {}", target.triple),
        Command::new("rustup").args(["target", "add", target.triple]),
    )?;
    let mut maturin = tools.command("maturin");
    maturin
        .args([
            "build",
            "--profile",
            PROFILE,
            "--target",
            target.triple,
            "--out",
        ])
        .arg(&wheels)
        .current_dir(root().join("packages/python"))
        .env("CARGO_TARGET_DIR", target_dir());
    if let Some(policy) = target.compatibility {
        maturin.args(["--compatibility", policy]);
    }
    match target.toolchain {
        Toolchain::Zig => {
            maturin.arg("--zig");
        }
        Toolchain::Mingw => {
            let triple = target.env_triple();
            maturin
                .env(
                    format!("CARGO_TARGET_{}_LINKER", triple.to_uppercase()),
                    "x86_64-w64-mingw32-gcc",
                )
                .env(format!("CC_{triple}"), "x86_64-w64-mingw32-gcc")
                .env(format!("CXX_{triple}"), "x86_64-w64-mingw32-g++")
                .env(format!("AR_{triple}"), "x86_64-w64-mingw32-ar");
        }
    }
    if let Format::MachO {
        min_os: (major, minor),
    } = target.format
    {
        // The binary's LC_BUILD_VERSION and the wheel's tag both follow it.
        maturin.env("MACOSX_DEPLOYMENT_TARGET", format!("{major}.{minor}"));
    }
    let started = Instant::now();
    crate::step(
        "dist",
        &format!(
            "build {}: maturin build --profile {PROFILE} --target {}",
            target.triple, target.triple
        ),
        &mut maturin,
    )?;
    let seconds = started.elapsed().as_secs_f64();
    if !wheel.exists() {
        return Err(format!(
            "maturin built no {} (its tag for {} differs from the table's {}: see {})",
            wheel.display(),
            target.triple,
            target.wheel_tag,
            wheels.display()
        ));
    }

    let built = target_dir()
        .join(target.triple)
        .join(PROFILE)
        .join(target.binary_name());
    let binary = out.join(target.asset_name());
    std::fs::copy(&built, &binary)
        .map_err(|e| format!("copy {} to {}: {e}", built.display(), binary.display()))?;
    eprintln!("   built {} in {seconds:.0} s", target.triple);
    Ok(Built {
        binary,
        wheel,
        seconds,
    })
}

fn remove_if_there(path: &Path) -> Result<(), String> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}
