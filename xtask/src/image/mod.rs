//! `cargo xtask image`: the container image `cosmos-emulator:<version>`
//! (also `latest`), one manifest list of every platform the target table
//! puts in the image (`image_platform`: linux/amd64, linux/arm64), built by
//! podman from the static musl binaries of `target/dist/` and
//! `packages/container/Containerfile` (`context.rs`, `build.rs`), saved to
//! `target/dist/cosmos-emulator-image.tar` and checked there (`archive.rs`:
//! platforms, user, files, size, health check, labels; `load.rs`: `podman
//! load` reads it).
//!
//! With `--test`, each platform that runs here (natively, or through
//! qemu-user's binfmt entry) is started and checked from outside
//! (`run.rs`: time to `/ready`, the conformance suite through the published
//! port, TLS at the older image's certificate path, the health check, a
//! clean `podman stop`); then the real clients start it unchanged through
//! podman's Docker API (`clients.rs`, `service.rs`): Testcontainers for
//! Python, Node, Java and Go, and the compose example.
//!
//! podman runs as configured on the machine: where its defaults do not
//! work (`.ci/run`'s machines: crun, systemd cgroups and default ulimits
//! refused), `CONTAINERS_CONF=.ci/containers.conf` says what does.

mod archive;
mod build;
mod clients;
mod context;
mod load;
mod podman;
mod run;
mod service;

use std::path::Path;
use std::process::ExitCode;

use crate::dist::targets::{Arch, Target};
use crate::target_dir;
use context::Platform;

const USAGE: &str = "cargo xtask image [--binary-dir DIR] [--test [--skip-clients]]";

pub fn run(args: &[String]) -> Result<ExitCode, String> {
    let (mut test, mut clients, mut binary_dir) = (false, true, None);
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--test" => test = true,
            "--skip-clients" => clients = false,
            "--binary-dir" => {
                let dir = args.next().ok_or("--binary-dir needs a directory")?;
                binary_dir = Some(crate::root().join(dir));
            }
            other => return Err(format!("unknown option {other:?}; usage: {USAGE}")),
        }
    }
    let podman_version = podman::version()?;
    eprintln!("xtask image: podman {podman_version}");
    let version = crate::package::emulator_version()?;
    let dist = crate::dist::dist_dir();
    let platforms = binaries(binary_dir.as_ref().unwrap_or(&dist), binary_dir.is_none())?;

    let context = context::stage(&platforms)?;
    std::fs::create_dir_all(&dist).map_err(|e| format!("{}: {e}", dist.display()))?;
    let image = build::build(&platforms, &context, &version, &dist)?;

    let work = target_dir().join("image");
    let images = archive::check(
        &image.archive,
        &work.join("archive"),
        &platforms,
        &image.labels,
    )?;
    let mut report = vec![format!(
        "{} ({}), saved to {}",
        image.reference,
        platforms
            .iter()
            .map(|p| p.name)
            .collect::<Vec<_>>()
            .join(", "),
        image.archive.display()
    )];
    report.extend(images.iter().map(archive::PlatformImage::summary));
    report.push(format!(
        "podman load -i {}: {}",
        build::ARCHIVE,
        load::check(&image.archive, &work.join("load"), &version)?
    ));
    eprintln!("\nxtask image:\n  {}", report.join("\n  "));
    if !test {
        return Ok(ExitCode::SUCCESS);
    }

    let suite = crate::conformance_binary("image")?;
    // A failed test does not stop the next: the error names every failure.
    let mut failures = Vec::new();
    for platform in &platforms {
        let how = match runs_here(platform.target) {
            Ok(how) => how,
            Err(why) => {
                report.push(format!(
                    "{}: not run here ({why}); its contents checked above",
                    platform.name
                ));
                continue;
            }
        };
        let dir = work.join("test").join(platform.architecture());
        match run::test(&image.reference, platform, &dir, &suite) {
            Ok(outcome) => report.push(format!(
                "{} ({how}): /ready {:.3} s after `podman run`; conformance {}; podman stop {:.2} s, exit 0",
                outcome.platform,
                outcome.ready.as_secs_f64(),
                outcome.conformance,
                outcome.stop.as_secs_f64()
            )),
            Err(e) => failures.push(format!("{} ({how}): {e}", platform.name)),
        }
    }
    if clients {
        match clients::run(&image.reference, &context, &podman_version) {
            Ok(passed) => report.extend(passed.into_iter().map(|c| format!("passed: {c}"))),
            Err(e) => failures.push(e),
        }
    }
    eprintln!("\nxtask image --test:\n  {}", report.join("\n  "));
    let file = work.join("report.md");
    let text: String = report.iter().map(|line| format!("- {line}\n")).collect();
    std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
    if failures.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(format!("image --test failed:\n{}", failures.join("\n")))
    }
}

/// The image's platforms with their binaries in `dir`; when `dir` is
/// `target/dist/` and some are missing, `cargo xtask dist` builds them.
fn binaries(dir: &Path, build_missing: bool) -> Result<Vec<Platform>, String> {
    let platforms = context::platforms(dir);
    let mut missing = context::missing(&platforms);
    if build_missing {
        let stale = context::stale(&platforms);
        if !stale.is_empty() {
            eprintln!(
                "xtask image: {} in {} older than the emulator's sources: built again",
                stale.join(", "),
                dir.display()
            );
        }
        missing.extend(stale);
    }
    if missing.is_empty() {
        return Ok(platforms);
    }
    let command = missing
        .iter()
        .map(|t| format!("--target {t}"))
        .collect::<Vec<_>>()
        .join(" ");
    if !build_missing {
        return Err(format!(
            "{} holds no cosmos-emulator-<triple> for {}: build them with `cargo xtask dist {command}`",
            dir.display(),
            missing.join(", ")
        ));
    }
    eprintln!("xtask image: {} missing from {}: cargo xtask dist {command} (a release build per target, minutes)", missing.join(", "), dir.display());
    let args: Vec<String> = missing
        .iter()
        .flat_map(|t| ["--target".to_string(), t.to_string()])
        .collect();
    crate::dist::run(&args)?;
    let platforms = context::platforms(dir);
    match context::missing(&platforms).as_slice() {
        [] => Ok(platforms),
        still => Err(format!(
            "cargo xtask dist did not leave {}",
            still.join(", ")
        )),
    }
}

/// How a target's image runs on this machine, or why it does not: natively
/// on its own architecture, else through a qemu-user binfmt entry with the
/// F flag (the interpreter opened at registration, so that it works inside
/// a container's filesystem too), as Debian's qemu-user-static registers.
fn runs_here(target: &Target) -> Result<&'static str, String> {
    let native = match std::env::consts::ARCH {
        "x86_64" => Some(Arch::X86_64),
        "aarch64" => Some(Arch::Aarch64),
        _ => None,
    };
    if native == Some(target.arch) {
        return Ok("native");
    }
    let entry = match target.arch {
        Arch::X86_64 => "qemu-x86_64",
        Arch::Aarch64 => "qemu-aarch64",
    };
    let path = format!("/proc/sys/fs/binfmt_misc/{entry}");
    let text = std::fs::read_to_string(&path).map_err(|_| {
        format!("no binfmt entry {path}: install qemu-user-static and register it (Debian: binfmt-support, or `cat /usr/lib/binfmt.d/{entry}.conf > /proc/sys/fs/binfmt_misc/register`)")
    })?;
    let enabled = text.lines().next() == Some("enabled");
    let fixed = text
        .lines()
        .find_map(|l| l.strip_prefix("flags: "))
        .is_some_and(|flags| flags.contains('F'));
    match (enabled, fixed) {
        (true, true) => Ok("qemu-user through binfmt_misc"),
        (false, _) => Err(format!("{path} is disabled")),
        (true, false) => Err(format!(
            "{path} lacks the F flag, so its interpreter is not found inside a container"
        )),
    }
}
