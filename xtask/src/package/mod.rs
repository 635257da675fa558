//! `cargo xtask package`: the emulator for people without a Rust
//! toolchain, made from what `cargo xtask dist` left in `target/dist/`
//! (this task builds no binary):
//! - the wheels, one per target, as maturin built them there; checked here
//!   (`python.rs`): each holds its target's release binary as its script;
//! - the npm packages (`npm.rs`): one platform package per target from the
//!   template `packages/npm/platform/`, and the main package, whose
//!   `optionalDependencies` name all of them; packed into
//!   `target/package/`.
//!
//! It takes the targets whose binary and wheel are in `target/dist/`, or
//! those named with `--target` (and says which `cargo xtask dist` command
//! makes a missing one).
//!
//! With `--test`, each is installed as users install it, by name, from a
//! local registry that xtask starts on a free loopback port and stops
//! afterwards (`registry.rs`): pypiserver serving the wheels, verdaccio
//! with the tarballs published to it. Every platform must get its own
//! package (`pip download --platform`, `npm install --os --cpu --libc`);
//! then, on this machine, a fresh virtualenv and fresh npm projects get
//! `cosmos-emulator` by name and run the packages' own suites, and the
//! quick starts run as a reader follows them.

mod npm;
mod python;
mod registry;
mod snippet;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::dist::dist_dir;
use crate::dist::targets::{self, Target, TARGETS};
use crate::{root, target_dir};

const USAGE: &str = "cargo xtask package [--target TRIPLE...] [--no-build] [--test]";

/// One target's release files, as `cargo xtask dist` wrote them.
pub struct Artifact {
    pub target: &'static Target,
    /// `target/dist/cosmos-emulator-<triple>[.exe]`
    pub binary: PathBuf,
    /// `target/dist/wheels/cosmos_emulator-<version>-py3-none-<tags>.whl`,
    /// where `<tags>` is the table's tag or a set of tags holding it
    /// (`manylinux2014_x86_64.manylinux_2_17_x86_64`, as maturin names a
    /// wheel of a policy with two names).
    pub wheel: PathBuf,
}

/// What the packages are made from.
pub struct Build {
    /// The targets packaged, in the table's order.
    pub artifacts: Vec<Artifact>,
    /// `target/package/`: the tarballs
    pub out: PathBuf,
    /// The emulator crate's version, which every package carries.
    pub version: String,
}

impl Build {
    /// The artifact of this machine's target: what `--test` installs and runs.
    pub fn host(&self) -> Result<&Artifact, String> {
        let host = host_target()?;
        self.artifacts
            .iter()
            .find(|a| a.target.triple == host.triple)
            .ok_or_else(|| {
                format!(
                    "--test installs the packages on this machine, so it needs {}'s binary and \
                     wheel in target/dist/: cargo xtask dist --target {}",
                    host.triple, host.triple
                )
            })
    }
}

pub fn run(args: &[String]) -> Result<ExitCode, String> {
    let mut test = false;
    let mut chosen: Vec<&'static Target> = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--test" => test = true,
            // It never builds; taken for the release workflow's symmetry
            // with `cargo xtask dist --no-build`.
            "--no-build" => {}
            "--target" => {
                let triple = args.next().ok_or("--target needs a target triple")?;
                chosen.push(targets::find(triple)?);
            }
            other => return Err(format!("unknown option {other:?}; usage: {USAGE}")),
        }
    }
    let version = emulator_version()?;
    let artifacts = find_artifacts(&chosen, &version)?;
    let out = target_dir().join("package");
    fresh_dir(&out)?;
    let build = Build {
        artifacts,
        out,
        version,
    };
    if test {
        // Before anything is packed: say at once if this machine's are missing.
        build.host()?;
    }
    check_checksums(&build.artifacts)?;
    python::check(&build)?;
    let tarballs = npm::build(&build)?;

    eprintln!("\nxtask package: version {}", build.version);
    eprintln!("| target | wheel | npm package | tarball | unpacked |");
    eprintln!("|---|---|---|---:|---:|");
    for artifact in &build.artifacts {
        let wheel = file_size(&artifact.wheel)?;
        let tarball = tarballs
            .platform
            .iter()
            .find(|t| t.target.is_some_and(|t| t.triple == artifact.target.triple))
            .ok_or("a target without its tarball")?;
        eprintln!(
            "| {} | {} ({}) | {} | {} | {} |",
            artifact.target.triple,
            artifact.target.wheel_tag,
            megabytes(wheel),
            artifact.target.npm_package(),
            megabytes(tarball.size),
            megabytes(tarball.unpacked)
        );
    }
    eprintln!(
        "| (all) | | cosmos-emulator | {} | {} |",
        kilobytes(tarballs.main.size),
        kilobytes(tarballs.main.unpacked)
    );
    eprintln!("wheels: {}", dist_dir().join("wheels").display());
    eprintln!("tarballs: {}", tarballs.dir.display());

    if test {
        // Both, whatever the first gives: one failure must not hide the other.
        let started = Instant::now();
        let python = python::test(&build);
        let npm = npm::test(&build, &tarballs);
        let seconds = started.elapsed().as_secs_f64();
        let failed: Vec<String> = [("Python", python), ("npm", npm)]
            .into_iter()
            .filter_map(|(what, result)| result.err().map(|e| format!("{what}: {e}")))
            .collect();
        if !failed.is_empty() {
            return Err(format!(
                "package --test failed ({seconds:.0} s):\n  {}",
                failed.join("\n  ")
            ));
        }
        eprintln!("\nxtask package: every check passed in {seconds:.0} s");
    }
    Ok(ExitCode::SUCCESS)
}

/// This machine's target in the table (x86-64 Linux glibc, say).
pub fn host_target() -> Result<&'static Target, String> {
    let os = match std::env::consts::OS {
        "linux" => "linux",
        "macos" => "darwin",
        "windows" => "win32",
        other => return Err(format!("no release target for the OS {other:?}")),
    };
    let cpu = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => return Err(format!("no release target for the architecture {other:?}")),
    };
    let libc = match os {
        "linux" if cfg!(target_env = "musl") => Some("musl"),
        "linux" => Some("glibc"),
        _ => None,
    };
    TARGETS
        .iter()
        .find(|t| t.npm_os == os && t.npm_cpu == cpu && t.npm_libc == libc)
        .ok_or_else(|| format!("no release target for {os} {cpu} {libc:?}"))
}

/// The artifacts of `chosen` (all must be there), or with none chosen of
/// every target whose binary and wheel are both in `target/dist/`.
fn find_artifacts(chosen: &[&'static Target], version: &str) -> Result<Vec<Artifact>, String> {
    let dist = dist_dir();
    let wheels = dist.join("wheels");
    let mut found = Vec::new();
    // (target, what is missing, whether that stops the run)
    let mut missing: Vec<(&'static Target, Vec<String>, bool)> = Vec::new();
    for target in TARGETS {
        let named = chosen.iter().any(|t| t.triple == target.triple);
        if !chosen.is_empty() && !named {
            continue;
        }
        let binary = dist.join(target.asset_name());
        let wheel = find_wheel(&wheels, version, target)?;
        match (binary.exists(), wheel) {
            (true, Some(wheel)) => found.push(Artifact {
                target,
                binary,
                wheel,
            }),
            (has_binary, wheel) => {
                let mut absent = Vec::new();
                if !has_binary {
                    absent.push(binary.display().to_string());
                }
                if wheel.is_none() {
                    absent.push(format!(
                        "{}/cosmos_emulator-{version}-py3-none-{}.whl",
                        wheels.display(),
                        target.wheel_tag
                    ));
                }
                // Half a target is a build that stopped: never left out silently.
                let half = absent.len() == 1;
                missing.push((target, absent, named || half));
            }
        }
    }
    let needed: Vec<_> = missing.iter().filter(|(_, _, needed)| *needed).collect();
    if !needed.is_empty() {
        let lines: Vec<String> = needed
            .iter()
            .map(|(t, absent, _)| format!("{}: no {}", t.triple, absent.join(" and no ")))
            .collect();
        let command: Vec<String> = needed
            .iter()
            .map(|(t, _, _)| format!("--target {}", t.triple))
            .collect();
        return Err(format!(
            "missing release artifacts of version {version}:\n  {}\nbuild them with: cargo xtask dist {}",
            lines.join("\n  "),
            command.join(" ")
        ));
    }
    if found.is_empty() {
        return Err(format!(
            "{} holds no release artifacts of version {version}: cargo xtask dist builds every \
             target's (--ci: the ones .ci/run needs; --target TRIPLE: one)",
            dist.display()
        ));
    }
    let left_out: Vec<&str> = missing.iter().map(|(t, _, _)| t.triple).collect();
    if !left_out.is_empty() {
        eprintln!(
            "xtask package: not in target/dist, left out: {} (cargo xtask dist {} makes them)",
            left_out.join(", "),
            left_out
                .iter()
                .map(|t| format!("--target {t}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    Ok(found)
}

/// The target's wheel in `wheels`, if there is one:
/// `cosmos_emulator-<version>-py3-none-<tags>.whl` whose dot-separated
/// `<tags>` share a tag with the table's (a dist that named the manylinux2014
/// wheel by its first tag only, or by both). Two such wheels are an error
/// (one is stale).
fn find_wheel(wheels: &Path, version: &str, target: &Target) -> Result<Option<PathBuf>, String> {
    let Ok(entries) = std::fs::read_dir(wheels) else {
        return Ok(None);
    };
    let prefix = format!("cosmos_emulator-{version}-py3-none-");
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.strip_prefix(&prefix)
                .and_then(|rest| rest.strip_suffix(".whl"))
                .is_some_and(|tags| tags.split('.').any(|t| target.wheel_tags().any(|w| w == t)))
        })
        .map(|entry| entry.path())
        .collect();
    found.sort();
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        _ => Err(format!(
            "several wheels for {} in {}: {found:?}; remove the stale ones (or run cargo xtask dist again)",
            target.triple,
            wheels.display()
        )),
    }
}

/// Each artifact is the file `target/dist/SHA256SUMS` lists, where it lists
/// it (dist writes the sums of the targets of its last run): a binary or a
/// wheel changed since, or half copied, is not packaged.
fn check_checksums(artifacts: &[Artifact]) -> Result<(), String> {
    let sums_path = dist_dir().join("SHA256SUMS");
    let text = std::fs::read_to_string(&sums_path).unwrap_or_default();
    let sums: HashMap<&str, &str> = text
        .lines()
        .filter_map(|line| line.split_once("  "))
        .map(|(digest, name)| (name, digest))
        .collect();
    let mut unlisted = Vec::new();
    for artifact in artifacts {
        for path in [&artifact.binary, &artifact.wheel] {
            let name = sums_name(
                path.strip_prefix(dist_dir())
                    .map_err(|_| format!("{} is not under target/dist", path.display()))?,
            );
            let Some(expected) = sums.get(name.as_str()) else {
                unlisted.push(name);
                continue;
            };
            if sha256_file(path)? != *expected {
                return Err(format!(
                    "{} differs from its line in {}; rebuild it: cargo xtask dist --target {}",
                    path.display(),
                    sums_path.display(),
                    artifact.target.triple
                ));
            }
        }
    }
    eprintln!(
        "xtask package: {} files match target/dist/SHA256SUMS{}",
        artifacts.len() * 2 - unlisted.len(),
        if unlisted.is_empty() {
            String::new()
        } else {
            format!(
                " ({} not listed there: {})",
                unlisted.len(),
                unlisted.join(", ")
            )
        }
    );
    Ok(())
}

/// How SHA256SUMS names a file under target/dist: `wheels/x.whl`, with
/// `/` on every platform (a Windows path would say `wheels\x.whl`).
fn sums_name(relative: &Path) -> String {
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The SHA-256 of a file, in hex.
pub(crate) fn sha256_file(path: &Path) -> Result<String, String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(sha256_hex(&data))
}

fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The SHA-256s of a text file of this tree as a package may hold it: as
/// it is, and with LF line endings where the checkout has CRLF ones (git's
/// core.autocrlf, the default on Windows) but the package was built from
/// an LF checkout.
pub(crate) fn text_digests(path: &Path) -> Result<Vec<String>, String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut digests = vec![sha256_hex(&data)];
    if data.windows(2).any(|pair| pair == b"\r\n") {
        let text = String::from_utf8_lossy(&data).replace("\r\n", "\n");
        digests.push(sha256_hex(text.as_bytes()));
    }
    Ok(digests)
}

/// The file at `installed` is the target's release binary, byte for byte.
pub(crate) fn same_binary(installed: &Path, artifact: &Artifact) -> Result<(), String> {
    if sha256_file(installed)? != sha256_file(&artifact.binary)? {
        return Err(format!(
            "{} is not {} (the release binary of {})",
            installed.display(),
            artifact.binary.display(),
            artifact.target.triple
        ));
    }
    Ok(())
}

fn file_size(path: &Path) -> Result<u64, String> {
    std::fs::metadata(path)
        .map(|m| m.len())
        .map_err(|e| format!("{}: {e}", path.display()))
}

pub(crate) fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

pub(crate) fn kilobytes(bytes: u64) -> String {
    format!("{:.1} kB", bytes as f64 / 1e3)
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

/// Runs a step and says how long it took; returns the seconds.
pub(crate) fn timed(what: &str, command: &mut Command) -> Result<f64, String> {
    let started = Instant::now();
    step(what, command)?;
    let seconds = started.elapsed().as_secs_f64();
    eprintln!("   ({what}: {seconds:.1} s)");
    Ok(seconds)
}

/// Runs a command and returns its stdout (stderr passes through); a
/// failure names the step.
pub(crate) fn output(what: &str, command: &mut Command) -> Result<String, String> {
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

/// A fresh, empty directory (removed first if it exists).
pub(crate) fn fresh_dir(path: &Path) -> Result<(), String> {
    if path.exists() {
        std::fs::remove_dir_all(path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    std::fs::create_dir_all(path).map_err(|e| format!("{}: {e}", path.display()))
}

pub(crate) fn copy_file(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("copy {} to {}: {e}", from.display(), to.display()))
}

pub(crate) fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

pub(crate) fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_file_is_named_as_sha256sums_names_it() {
        use std::path::Path;
        let wheel = Path::new("wheels").join("cosmos_emulator-1.0.0-py3-none-win_amd64.whl");
        assert_eq!(
            super::sums_name(&wheel),
            "wheels/cosmos_emulator-1.0.0-py3-none-win_amd64.whl"
        );
        let binary = Path::new("cosmos-emulator-x86_64-pc-windows-gnu.exe");
        assert_eq!(
            super::sums_name(binary),
            "cosmos-emulator-x86_64-pc-windows-gnu.exe"
        );
    }

    #[test]
    fn a_crlf_checkout_is_the_same_text() {
        let dir = std::env::temp_dir().join(format!("xtask-text-digests-{}", std::process::id()));
        super::fresh_dir(&dir).unwrap();
        let (lf, crlf) = (dir.join("lf.py"), dir.join("crlf.py"));
        std::fs::write(&lf, "import os\nprint(os.sep)\n").unwrap();
        std::fs::write(&crlf, "import os\r\nprint(os.sep)\r\n").unwrap();
        let lf_digest = super::sha256_file(&lf).unwrap();
        let crlf_digests = super::text_digests(&crlf).unwrap();
        assert_eq!(crlf_digests.len(), 2);
        assert_eq!(crlf_digests[1], lf_digest);
        assert_eq!(super::text_digests(&lf).unwrap(), [lf_digest]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_wheel_is_found_by_its_tags() {
        use crate::dist::targets::find;
        let dir = std::env::temp_dir().join(format!("xtask-find-wheel-{}", std::process::id()));
        super::fresh_dir(&dir).unwrap();
        let many = "cosmos_emulator-1.0.0-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl";
        let musl = "cosmos_emulator-1.0.0-py3-none-musllinux_1_2_x86_64.whl";
        for name in [
            many,
            musl,
            "cosmos_emulator-0.9.0-py3-none-win_amd64.whl",
            "cosmos_emulator-1.0.0-py3-none-manylinux2014_aarch64_extra.whl",
        ] {
            std::fs::write(dir.join(name), b"").unwrap();
        }
        let find = |triple| super::find_wheel(&dir, "1.0.0", find(triple).unwrap()).unwrap();
        assert_eq!(find("x86_64-unknown-linux-gnu"), Some(dir.join(many)));
        assert_eq!(find("x86_64-unknown-linux-musl"), Some(dir.join(musl)));
        // Another version's wheel is not this one's; a longer tag is not the tag.
        assert_eq!(find("x86_64-pc-windows-gnu"), None);
        assert_eq!(find("aarch64-unknown-linux-gnu"), None);
        // The first tag alone (an older name) is found too, but not two at once.
        std::fs::remove_file(dir.join(many)).unwrap();
        let one = "cosmos_emulator-1.0.0-py3-none-manylinux2014_x86_64.whl";
        std::fs::write(dir.join(one), b"").unwrap();
        assert_eq!(find("x86_64-unknown-linux-gnu"), Some(dir.join(one)));
        std::fs::write(dir.join(many), b"").unwrap();
        let gnu = crate::dist::targets::find("x86_64-unknown-linux-gnu").unwrap();
        assert!(super::find_wheel(&dir, "1.0.0", gnu).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
