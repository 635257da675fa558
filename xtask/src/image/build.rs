//! The image built with podman: one `podman build` per platform into a
//! manifest list `cosmos-emulator:<version>` (each platform's image also
//! tagged `cosmos-emulator:<version>-<arch>`), the list tagged `latest`
//! too, then pushed whole into `target/dist/` as an archive.
//!
//! Docker format (`--format docker`), not OCI: an OCI image config has no
//! field for HEALTHCHECK, so podman drops it from OCI images, and the
//! Docker format is what Docker and Testcontainers read. The archive keeps
//! those manifests (`--format v2s2`) inside an OCI layout (`oci-archive`):
//! the one archive format of podman 4.3 that holds a manifest list. `podman
//! load` reads it (and picks the machine's platform), so does Docker with
//! its containerd image store; Docker's classic store reads only
//! single-image `docker-archive` files (`podman save` one platform).
//! `skopeo copy --all oci-archive:FILE docker://REGISTRY/...` publishes it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use super::context::Platform;
use super::podman::{output, podman};
use crate::root;

/// The image's name; podman stores it as `localhost/cosmos-emulator`.
pub const NAME: &str = "cosmos-emulator";
/// The name the guide's examples use (the release workflow pushes there,
/// `owner` being the repository's owner): the local build is tagged with
/// it too, so that they run here as written, nothing pulled.
pub const PUBLISHED: &str = "ghcr.io/owner/cosmos-emulator";
/// The archive's file name under `target/dist/`.
pub const ARCHIVE: &str = "cosmos-emulator-image.tar";

/// What was built.
pub struct Image {
    /// `cosmos-emulator:<version>`, the manifest list.
    pub reference: String,
    /// `target/dist/cosmos-emulator-image.tar`
    pub archive: PathBuf,
    /// The OCI labels every platform's image carries.
    pub labels: Vec<(&'static str, String)>,
}

/// The OCI labels (annotations the registries and `docker inspect` show).
pub fn labels(version: &str) -> Result<Vec<(&'static str, String)>, String> {
    let revision = output(
        Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(root()),
    )?
    .trim()
    .to_string();
    let source = source_url();
    let description = emulator_description()?;
    Ok(vec![
        ("org.opencontainers.image.title", NAME.to_string()),
        ("org.opencontainers.image.description", description),
        ("org.opencontainers.image.version", version.to_string()),
        ("org.opencontainers.image.revision", revision),
        ("org.opencontainers.image.source", source),
        ("org.opencontainers.image.licenses", "MIT".to_string()),
        ("org.opencontainers.image.created", now_rfc3339()),
    ])
}

/// The repository's address: `origin`'s URL (as https), else the
/// placeholder the gate workflow (docs/github-actions-gate.yml) uses.
fn source_url() -> String {
    let origin = output(
        Command::new("git")
            .args(["remote", "get-url", "origin"])
            .current_dir(root()),
    )
    .map(|url| url.trim().to_string())
    .unwrap_or_default();
    if origin.is_empty() {
        eprintln!(
            "   note: no git remote `origin`: org.opencontainers.image.source is the placeholder {PLACEHOLDER_SOURCE}"
        );
        return PLACEHOLDER_SOURCE.to_string();
    }
    match origin.strip_prefix("git@github.com:") {
        Some(path) => format!(
            "https://github.com/{}",
            path.strip_suffix(".git").unwrap_or(path)
        ),
        None => origin.strip_suffix(".git").unwrap_or(&origin).to_string(),
    }
}

const PLACEHOLDER_SOURCE: &str = "https://github.com/OWNER/cosmos-ttl";

/// `description = "..."` of `emulator/Cargo.toml`.
fn emulator_description() -> Result<String, String> {
    let manifest = root().join("emulator/Cargo.toml");
    let text =
        std::fs::read_to_string(&manifest).map_err(|e| format!("{}: {e}", manifest.display()))?;
    text.lines()
        .find_map(|line| {
            let value = line.trim().strip_prefix("description")?.trim_start();
            Some(
                value
                    .strip_prefix('=')?
                    .trim()
                    .trim_matches('"')
                    .to_string(),
            )
        })
        .ok_or_else(|| format!("{}: no description", manifest.display()))
}

/// Builds every platform from `context` into the manifest list, tags it
/// `latest`, and writes the archive into `out`.
pub fn build(
    platforms: &[Platform],
    context: &Path,
    version: &str,
    out: &Path,
) -> Result<Image, String> {
    let reference = format!("{NAME}:{version}");
    let latest = format!("{NAME}:latest");
    let published = format!("{PUBLISHED}:latest");
    // What an earlier build left under these names goes first: a list
    // keeps the images added to it, and `podman build --manifest` adds.
    for name in [&reference, &latest, &published] {
        free(name)?;
    }
    for platform in platforms {
        let _ = podman()
            .args(["rmi", &per_platform(version, platform)])
            .output();
    }
    output(podman().args(["manifest", "create", &reference]))?;

    let labels = labels(version)?;
    let containerfile = root().join("packages/container/Containerfile");
    for platform in platforms {
        let mut build = podman();
        build
            .args(["build", "--format", "docker", "--squash", "--pull=never"])
            .args(["--platform", platform.name])
            .args(["--manifest", &reference])
            .args(["--tag", &per_platform(version, platform)])
            .arg("--file")
            .arg(&containerfile);
        for (key, value) in &labels {
            build.arg("--label").arg(format!("{key}={value}"));
        }
        crate::step(
            "image",
            &format!("build {reference} for {}", platform.name),
            build.arg(context),
        )?;
    }
    output(podman().args(["tag", &reference, &latest]))?;
    output(podman().args(["tag", &reference, &published]))?;

    let archive = out.join(ARCHIVE);
    if archive.exists() {
        // An oci-archive destination would add to the index inside.
        std::fs::remove_file(&archive).map_err(|e| format!("{}: {e}", archive.display()))?;
    }
    crate::step(
        "image",
        &format!("save {reference} (every platform) as {}", archive.display()),
        podman()
            .args(["manifest", "push", "--all", "--format", "v2s2", "--quiet"])
            .arg(&reference)
            .arg(format!("oci-archive:{}:{reference}", archive.display())),
    )?;
    Ok(Image {
        reference,
        archive,
        labels,
    })
}

/// Frees `name` for a new manifest list. An earlier build left a list
/// there, which goes; but after `podman load -i` of the archive (as a user
/// loads it) the name is one platform's image, which `manifest rm` refuses
/// ("image is not a manifest list") and `manifest create` cannot take
/// ("that name is already in use"): that image only loses the name, and
/// keeps its other tags and any container made from it.
fn free(name: &str) -> Result<(), String> {
    let exists = |what: &[&str]| {
        podman()
            .args(what)
            .arg(name)
            .status()
            .is_ok_and(|s| s.success())
    };
    if exists(&["manifest", "exists"]) {
        output(podman().args(["manifest", "rm", name]))?;
    } else if exists(&["image", "exists"]) {
        output(podman().args(["untag", name, name]))?;
    }
    Ok(())
}

/// `cosmos-emulator:<version>-<arch>`: one platform's image.
pub fn per_platform(version: &str, platform: &Platform) -> String {
    format!("{NAME}:{version}-{}", platform.architecture())
}

/// Now, as `2026-01-31T12:00:00Z`.
fn now_rfc3339() -> String {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::civil_from_days;

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_819), (2027, 1, 1));
    }
}
