//! `cargo xtask bench`: builds the release binaries (the emulator, the
//! conformance suite, the bench with its bare-server),
//! installs the peer emulator with npm into target/bench/node when node is
//! present, and runs cosmos-bench; results go to target/bench/.

use crate::{cargo, flag, root, target_dir};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The peer, pinned: the version the conformance expectations were made with.
const PEER_PACKAGE: &str = "@vercel/cosmosdb-server@1.0.1";

pub fn run(args: &[String]) -> Result<ExitCode, String> {
    let status = cargo()
        .args(["build", "--release", "--quiet", "--bins"])
        .args([
            "-p",
            "cosmos-emulator",
            "-p",
            "cosmos-conformance",
            "-p",
            "cosmos-bench",
        ])
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("the release build failed".to_string());
    }
    let release = target_dir().join("release");
    let out = target_dir().join("bench");
    let mut bench = Command::new(release.join("cosmos-bench"));
    bench
        .arg("--bin-dir")
        .arg(&release)
        .arg("--out-dir")
        .arg(&out)
        .arg("--fixtures")
        .arg(root().join("fixtures"));
    let wants_peer = flag(args, "--only").is_none_or(|parts| parts.contains("peer"));
    if wants_peer && flag(args, "--peer-dir").is_none() {
        let peer_dir = out.join("node");
        match install_peer(&peer_dir) {
            Ok(()) => {
                bench.arg("--peer-dir").arg(&peer_dir);
            }
            Err(why) => eprintln!("xtask bench: the peer emulator is skipped: {why}"),
        }
    }
    if let Some(label) = revision() {
        bench.arg("--label").arg(label);
    }
    let status = bench
        .args(args)
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot run cosmos-bench: {e}"))?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::from(1),
    })
}

/// `npm install` of the peer into `dir`, unless it is there already.
fn install_peer(dir: &Path) -> Result<(), String> {
    if dir
        .join("node_modules/@vercel/cosmosdb-server/package.json")
        .is_file()
    {
        return Ok(());
    }
    if on_path("node").is_none() {
        return Err("node is not on PATH".into());
    }
    let npm = on_path("npm").ok_or("npm is not on PATH")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    eprintln!(
        "xtask bench: npm install {PEER_PACKAGE} into {}",
        dir.display()
    );
    let status = Command::new(npm)
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(dir)
        .arg(PEER_PACKAGE)
        .status()
        .map_err(|e| format!("cannot run npm: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("npm install {PEER_PACKAGE} failed"))
    }
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}

/// The checked-out revision, `-dirty` when the tree has changes.
fn revision() -> Option<String> {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let head = git(&["rev-parse", "--short", "HEAD"])?;
    let dirty = git(&["status", "--porcelain"]).is_some_and(|s| !s.is_empty());
    Some(if dirty { format!("{head}-dirty") } else { head })
}
