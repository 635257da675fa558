//! The npm packages `cosmos-emulator` and one `cosmos-emulator-<os>-<cpu>
//! [-musl]` per target (packages/npm): packed with `npm pack` into
//! `target/package/`; tested by publishing them to a local verdaccio
//! and installing them by name from it (`install.rs`).
//!
//! The esbuild / @biomejs/biome pattern: the main package is plain
//! JavaScript and lists every platform package in its
//! `optionalDependencies`; npm installs the one whose `os`, `cpu` and (on
//! Linux) `libc` match. The platform packages are the template
//! `packages/npm/platform/` filled in from the target table, each with its
//! target's release binary from `target/dist/`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

mod install;

pub use install::test;

use super::{copy_file, fresh_dir, read, write, Build};
use crate::dist::targets::{Target, TARGETS};
use crate::{root, target_dir};

/// The main package's version in the repository, replaced by the
/// emulator's at build time (its own and its optionalDependencies' pins).
const DEV_VERSION: &str = "\"0.0.0-dev\"";

/// One packed package.
pub struct Tarball {
    /// The platform package's target; None for the main package.
    pub target: Option<&'static Target>,
    pub name: String,
    pub path: PathBuf,
    pub size: u64,
    pub unpacked: u64,
}

pub struct Tarballs {
    /// `target/package/`
    pub dir: PathBuf,
    pub platform: Vec<Tarball>,
    pub main: Tarball,
}

/// Packs each target's platform package and the main package.
pub fn build(build: &Build) -> Result<Tarballs, String> {
    let started = Instant::now();
    let sources = root().join("packages/npm");
    let staging = target_dir().join("package-staging").join("npm");
    fresh_dir(&staging)?;
    // target/package/, fresh: the tarballs of this run only.
    let out = build.out.clone();

    let mut platform = Vec::new();
    for artifact in &build.artifacts {
        let target = artifact.target;
        let dir = staging.join(target.npm_package());
        std::fs::create_dir_all(dir.join("bin")).map_err(|e| format!("{}: {e}", dir.display()))?;
        for file in ["package.json", "README.md"] {
            let text = read(&sources.join("platform").join(file))?;
            write(&dir.join(file), &fill(&text, target, &build.version))?;
        }
        let binary = dir.join("bin").join(target.binary_name());
        copy_file(&artifact.binary, &binary)?;
        // npm packs the mode it finds. On Windows there is no executable
        // bit to find: tarballs packed there are for testing there only
        // (the release packs them on Linux, in its collect job).
        crate::host::make_executable(&binary)?;
        let manifest = check_manifest(&dir, &target.npm_package(), &build.version)?;
        check_platform_fields(&manifest, target)
            .map_err(|e| format!("{}: {e}", dir.join("package.json").display()))?;
        let mut tarball = pack(&dir, &out)?;
        tarball.target = Some(target);
        platform.push(tarball);
    }

    // The main package: its files as they are, the versions written in.
    let main_dir = staging.join("cosmos-emulator");
    copy_tree(&sources.join("cosmos-emulator"), &main_dir)?;
    let path = main_dir.join("package.json");
    let manifest = read(&path)?;
    check_optional_dependencies(&manifest)
        .map_err(|e| format!("packages/npm/cosmos-emulator/package.json: {e}"))?;
    let version = format!("\"{}\"", build.version);
    write(&path, &manifest.replace(DEV_VERSION, &version))?;
    check_manifest(&main_dir, "cosmos-emulator", &build.version)?;
    let main = pack(&main_dir, &out)?;
    eprintln!(
        "npm packages packed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    if crate::host::Os::HERE == crate::host::Os::Windows {
        eprintln!(
            "   note: packed on Windows, the Unix platform packages' binaries are not executable \
             (no executable bit there): test them here, publish what Linux or macOS packs"
        );
    }
    Ok(Tarballs {
        dir: out,
        platform,
        main,
    })
}

/// The template with its `{{...}}` filled in from the target table; the
/// `libc` line goes where the platform has no libc to choose.
fn fill(template: &str, target: &Target, version: &str) -> String {
    let text: String = if target.npm_libc.is_none() {
        template
            .lines()
            .filter(|line| !line.contains("{{libc}}"))
            .map(|line| format!("{line}\n"))
            .collect()
    } else {
        template.to_string()
    };
    let libc_note = match target.npm_libc {
        Some(libc) => format!(" ({libc})"),
        None => String::new(),
    };
    text.replace("{{name}}", &target.npm_package())
        .replace("{{version}}", version)
        .replace("{{platform}}", target.npm_os)
        .replace("{{arch}}", target.npm_cpu)
        .replace("{{libc}}", target.npm_libc.unwrap_or(""))
        .replace("{{libc_note}}", &libc_note)
        .replace("{{binary}}", &target.binary_name())
}

/// The manifest's `os`, `cpu` and `libc` are the target's, so that npm
/// installs it on that platform and no other.
fn check_platform_fields(manifest: &serde_json::Value, target: &Target) -> Result<(), String> {
    let one = |field: &str| -> Option<String> {
        match manifest[field].as_array().map(Vec::as_slice) {
            Some([value]) => value.as_str().map(str::to_string),
            _ => None,
        }
    };
    let fields = (one("os"), one("cpu"), one("libc"));
    let expected = (
        Some(target.npm_os.to_string()),
        Some(target.npm_cpu.to_string()),
        target.npm_libc.map(str::to_string),
    );
    if fields != expected || (target.npm_libc.is_none() && !manifest["libc"].is_null()) {
        return Err(format!(
            "os, cpu, libc are {fields:?}, expected {expected:?} ({})",
            target.triple
        ));
    }
    Ok(())
}

/// The repository's main manifest pins every platform package of the
/// target table, and nothing else, at the development version.
fn check_optional_dependencies(manifest: &str) -> Result<(), String> {
    let value: serde_json::Value =
        serde_json::from_str(manifest).map_err(|e| format!("not JSON: {e}"))?;
    let pins = value["optionalDependencies"]
        .as_object()
        .ok_or("no optionalDependencies")?;
    let listed: BTreeSet<&str> = pins.keys().map(String::as_str).collect();
    let names: Vec<String> = TARGETS.iter().map(Target::npm_package).collect();
    let table: BTreeSet<&str> = names.iter().map(String::as_str).collect();
    let missing: Vec<_> = table.difference(&listed).collect();
    let extra: Vec<_> = listed.difference(&table).collect();
    if !missing.is_empty() || !extra.is_empty() {
        return Err(format!(
            "its optionalDependencies must be the target table's platform packages \
             (xtask/src/dist/targets.rs); add {missing:?}, remove {extra:?}"
        ));
    }
    if let Some((name, pin)) = pins
        .iter()
        .find(|(_, pin)| pin.as_str() != Some("0.0.0-dev"))
    {
        return Err(format!(
            "optionalDependencies pins {name} at {pin}; write {DEV_VERSION}, replaced at build time"
        ));
    }
    Ok(())
}

/// The staged package.json parses and says `name` and `version`, and pins
/// its optional dependencies at that version; returns it.
fn check_manifest(dir: &Path, name: &str, version: &str) -> Result<serde_json::Value, String> {
    let path = dir.join("package.json");
    let manifest: serde_json::Value = serde_json::from_str(&read(&path)?)
        .map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    if manifest["name"] != name || manifest["version"] != version {
        return Err(format!(
            "{}: expected name {name} and version {version}, got {} and {}",
            path.display(),
            manifest["name"],
            manifest["version"]
        ));
    }
    if let Some(pins) = manifest["optionalDependencies"].as_object() {
        if let Some((package, pin)) = pins.iter().find(|(_, pin)| *pin != version) {
            return Err(format!(
                "{}: optionalDependencies pins {package} at {pin}, not {version}",
                path.display()
            ));
        }
    }
    Ok(manifest)
}

/// `npm pack` of `dir` into `out`.
fn pack(dir: &Path, out: &Path) -> Result<Tarball, String> {
    let what = format!("npm pack {}", dir.display());
    let output = npm()
        .args(["pack", "--json", "--ignore-scripts", "--pack-destination"])
        .arg(out)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("{what}: cannot run npm: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{what}: failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let report: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("{what}: cannot read its --json report: {e}"))?;
    let entry = &report[0];
    let filename = entry["filename"]
        .as_str()
        .ok_or_else(|| format!("{what}: no filename in {report}"))?;
    let files: Vec<&str> = entry["files"]
        .as_array()
        .map(|files| files.iter().filter_map(|f| f["path"].as_str()).collect())
        .unwrap_or_default();
    eprintln!(
        "   {filename}: {} bytes packed, {} unpacked; {}",
        entry["size"],
        entry["unpackedSize"],
        files.join(", ")
    );
    Ok(Tarball {
        target: None,
        name: entry["name"].as_str().unwrap_or_default().to_string(),
        path: out.join(filename),
        size: entry["size"].as_u64().unwrap_or(0),
        unpacked: entry["unpackedSize"].as_u64().unwrap_or(0),
    })
}

/// Copies `from` into `to` (made if needed), leaving out `node_modules`.
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", from.display()))?;
        let name = entry.file_name();
        if name == "node_modules" {
            continue;
        }
        let (source, target) = (entry.path(), to.join(&name));
        let kind = entry
            .file_type()
            .map_err(|e| format!("{}: {e}", source.display()))?;
        if kind.is_dir() {
            copy_tree(&source, &target)?;
        } else {
            copy_file(&source, &target)?;
        }
    }
    Ok(())
}

/// npm (`npm.cmd` on Windows), without its update notice.
fn npm() -> Command {
    let mut command = crate::host::npm();
    command.env("npm_config_update_notifier", "false");
    command
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::targets::find;

    const TEMPLATE: &str = include_str!("../../../../packages/npm/platform/package.json");

    #[test]
    fn each_target_fills_the_template_with_its_fields() {
        for target in TARGETS {
            let text = fill(TEMPLATE, target, "1.2.3");
            let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(manifest["name"], target.npm_package().as_str());
            assert_eq!(manifest["version"], "1.2.3");
            check_platform_fields(&manifest, target).unwrap();
            assert_eq!(
                manifest["files"][0],
                format!("bin/{}", target.binary_name()).as_str()
            );
        }
        let musl = fill(TEMPLATE, find("aarch64-unknown-linux-musl").unwrap(), "1");
        assert!(musl.contains("\"libc\": [\"musl\"]"), "{musl}");
        let windows = fill(TEMPLATE, find("x86_64-pc-windows-gnu").unwrap(), "1");
        assert!(!windows.contains("libc"), "{windows}");
    }

    #[test]
    fn the_main_package_names_every_target() {
        let manifest = include_str!("../../../../packages/npm/cosmos-emulator/package.json");
        check_optional_dependencies(manifest).unwrap();
        let fewer = manifest.replace(
            "\"cosmos-emulator-win32-x64\": \"0.0.0-dev\"",
            "\"x\": \"0.0.0-dev\"",
        );
        let error = check_optional_dependencies(&fewer).unwrap_err();
        assert!(error.contains("cosmos-emulator-win32-x64"), "{error}");
    }
}
