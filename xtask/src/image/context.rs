//! The build context the Containerfile reads, staged under
//! `target/image/context/`: each platform's binary in a directory named
//! after the platform (`linux/amd64/cosmos-emulator`), the licence, and
//! `rootfs/`, the empty directory tree the emulator writes into (a scratch
//! image has no mkdir to run).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::dist::targets::{Target, TARGETS};
use crate::{root, target_dir};

/// The directories of `rootfs/`, each with its mode; the Containerfile
/// copies them owned by the image's user.
pub const DIRECTORIES: &[(&str, u32)] = &[
    ("data", 0o755),
    ("tmp", 0o1777),
    ("tmp/cosmos", 0o755),
    ("tmp/cosmos/appdata", 0o755),
    ("tmp/cosmos/appdata/.system", 0o755),
    ("tmp/cosmos/appdata/.system/profiles", 0o755),
    ("tmp/cosmos/appdata/.system/profiles/Client", 0o755),
    ("tmp/cosmos/appdata/.system/profiles/Client/AppData", 0o755),
    (
        "tmp/cosmos/appdata/.system/profiles/Client/AppData/Local",
        0o755,
    ),
    (GEN1_CERT_DIR, 0o755),
];

/// Where Microsoft's older image writes `emulator.pem` (and Testcontainers
/// for Python copies it from), without the leading slash.
pub const GEN1_CERT_DIR: &str =
    "tmp/cosmos/appdata/.system/profiles/Client/AppData/Local/CosmosDBEmulator";

/// One platform of the image and the binary it is built from.
#[derive(Debug, Clone)]
pub struct Platform {
    pub target: &'static Target,
    /// `linux/amd64`
    pub name: &'static str,
    pub binary: PathBuf,
}

impl Platform {
    /// `amd64`, the image config's `architecture`.
    pub fn architecture(&self) -> &'static str {
        self.name.rsplit('/').next().unwrap_or(self.name)
    }

    /// `linux`, the image config's `os`.
    pub fn os(&self) -> &'static str {
        self.name.split('/').next().unwrap_or(self.name)
    }
}

/// Every target the table puts in the image, with its binary in `dir`
/// (`cosmos-emulator-<triple>`, as `cargo xtask dist` names it).
pub fn platforms(dir: &Path) -> Vec<Platform> {
    TARGETS
        .iter()
        .filter_map(|target| {
            Some(Platform {
                target,
                name: target.image_platform?,
                binary: dir.join(target.asset_name()),
            })
        })
        .collect()
}

/// The binaries missing from `platforms`, by target triple.
pub fn missing(platforms: &[Platform]) -> Vec<&'static str> {
    platforms
        .iter()
        .filter(|p| !p.binary.is_file())
        .map(|p| p.target.triple)
        .collect()
}

/// The binaries built before the newest change to what they are built
/// from (`emulator/`'s sources and manifest, `Cargo.lock`), by target
/// triple: a `target/dist/` left by an earlier revision, which an image
/// must not be made of.
pub fn stale(platforms: &[Platform]) -> Vec<&'static str> {
    let root = root();
    let sources = [
        root.join("emulator/src"),
        root.join("emulator/Cargo.toml"),
        root.join("Cargo.lock"),
    ];
    match sources.iter().filter_map(|p| newest_modified(p)).max() {
        Some(newest) => older_than(platforms, newest),
        None => Vec::new(),
    }
}

fn older_than(platforms: &[Platform], newest: SystemTime) -> Vec<&'static str> {
    platforms
        .iter()
        .filter(|p| modified(&p.binary).is_some_and(|built| built < newest))
        .map(|p| p.target.triple)
        .collect()
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The latest modification time of `path`, or of any file below it.
fn newest_modified(path: &Path) -> Option<SystemTime> {
    if !path.is_dir() {
        return modified(path);
    }
    std::fs::read_dir(path)
        .ok()?
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| newest_modified(&entry.path()))
        .max()
}

/// Stages the context (a fresh `target/image/context/`) and returns it.
pub fn stage(platforms: &[Platform]) -> Result<PathBuf, String> {
    let context = target_dir().join("image").join("context");
    crate::package::fresh_dir(&context)?;
    for platform in platforms {
        let dir = context.join(platform.name);
        create_dir(&dir, 0o755)?;
        let binary = dir.join("cosmos-emulator");
        copy(&platform.binary, &binary)?;
        set_mode(&binary, 0o755)?;
    }
    let licence = context.join("LICENSE");
    copy(&root().join("LICENSE"), &licence)?;
    set_mode(&licence, 0o644)?;
    for (dir, mode) in DIRECTORIES {
        create_dir(&context.join("rootfs").join(dir), *mode)?;
    }
    set_mode(&context.join("rootfs"), 0o755)?;
    Ok(context)
}

fn create_dir(dir: &Path, mode: u32) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    set_mode(dir, mode)
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("copy {} to {}: {e}", from.display(), to.display()))
}

/// The mode exactly (the umask does not apply to set_permissions).
fn set_mode(path: &Path, mode: u32) -> Result<(), String> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("chmod {mode:o} {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_binary_older_than_the_sources_is_stale_and_a_newer_or_absent_one_is_not() {
        let dir = std::env::temp_dir().join(format!("xtask-image-stale-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let platforms = platforms(&dir);
        let first = &platforms[0];
        std::fs::write(&first.binary, b"built").unwrap();
        let built = modified(&first.binary).unwrap();
        // Sources changed after the build: that binary is stale; the
        // others are absent (`missing` names those), not stale.
        let later = built + Duration::from_secs(1);
        assert_eq!(older_than(&platforms, later), vec![first.target.triple]);
        assert!(older_than(&platforms, built).is_empty());
        assert!(older_than(&platforms, SystemTime::UNIX_EPOCH).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
