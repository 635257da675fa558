//! `cargo xtask bench`: builds the release binaries (the emulator, the
//! conformance suite, the bench with its bare-server),
//! installs the peer emulator with npm into target/bench/node when node is
//! present, and runs cosmos-bench; results go to target/bench/. The
//! `explorer` part (`--only explorer`, or every run when node and chromium
//! are there) is not cosmos-bench's: it loads the data explorer over 10,000
//! items in chromium (`browser-tests/load-time.mjs`).

use crate::{cargo, flag, root, target_dir, without};
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
    let release = match flag(args, "--emulator-binary") {
        Some(binary) => bin_dir_with(&target_dir().join("release"), Path::new(binary))?,
        None => target_dir().join("release"),
    };
    let out = target_dir().join("bench");
    let args = &without(args, "--emulator-binary");
    // `explorer` is measured here; cosmos-bench gets the other parts.
    let only = flag(args, "--only");
    let explorer = only.is_none_or(|parts| parts.split(',').any(|p| p == "explorer"));
    let rest: Option<String> = only.map(|parts| {
        parts
            .split(',')
            .filter(|p| *p != "explorer")
            .collect::<Vec<_>>()
            .join(",")
    });
    let args = without_only(args, rest.as_deref());
    let mut code = 0;
    if rest.as_deref() != Some("") {
        code = run_bench(&release, &out, &args)?;
    }
    if explorer {
        match measure_explorer(&release, &out) {
            Ok(()) => {}
            Err(why) if only.is_some() => return Err(why),
            Err(why) => eprintln!("xtask bench: the explorer's page load is skipped: {why}"),
        }
    }
    Ok(match code {
        0 => ExitCode::SUCCESS,
        code => ExitCode::from(u8::try_from(code).unwrap_or(1)),
    })
}

/// `--emulator-binary PATH` (e.g. a release binary of `cargo xtask dist`,
/// to compare the musl build with the glibc one): a directory holding that
/// binary as `cosmos-emulator` beside the release build's other binaries.
fn bin_dir_with(release: &Path, binary: &Path) -> Result<PathBuf, String> {
    let binary = std::fs::canonicalize(binary).map_err(|e| format!("{}: {e}", binary.display()))?;
    let dir = target_dir().join("bench-bin");
    crate::package::fresh_dir(&dir)?;
    for name in ["bare-server", "cosmos-conformance", "cosmos-bench"] {
        std::fs::copy(release.join(name), dir.join(name))
            .map_err(|e| format!("copy {name}: {e}"))?;
    }
    std::fs::copy(&binary, dir.join("cosmos-emulator"))
        .map_err(|e| format!("copy {}: {e}", binary.display()))?;
    eprintln!("xtask bench: the emulator measured is {}", binary.display());
    Ok(dir)
}

/// `args` with `--only` replaced by `rest` (dropped when `rest` is None).
fn without_only(args: &[String], rest: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for arg in args {
        if skip {
            skip = false;
            continue;
        }
        if arg == "--only" {
            skip = true;
            continue;
        }
        if arg.starts_with("--only=") {
            continue;
        }
        out.push(arg.clone());
    }
    if let Some(rest) = rest.filter(|r| !r.is_empty()) {
        out.push("--only".into());
        out.push(rest.into());
    }
    out
}

/// cosmos-bench with the release binaries; its exit code.
fn run_bench(release: &Path, out: &Path, args: &[String]) -> Result<i32, String> {
    let mut bench = Command::new(release.join("cosmos-bench"));
    bench
        .arg("--bin-dir")
        .arg(release)
        .arg("--out-dir")
        .arg(out)
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
    Ok(status.code().unwrap_or(1))
}

/// The data explorer over 10,000 items in chromium: navigation to the first
/// rows, medians printed and written to target/bench/explorer.json.
fn measure_explorer(release: &Path, out: &Path) -> Result<(), String> {
    let chromium = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if !chromium.is_file() {
        return Err(format!("no chromium at {}", chromium.display()));
    }
    if on_path("node").is_none() {
        return Err("node is not on PATH".into());
    }
    let dir = root().join("browser-tests");
    crate::npm_ci_unless_installed("bench", &dir, "playwright-core")?;
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let status = Command::new("node")
        .arg("load-time.mjs")
        .arg("--out")
        .arg(out.join("explorer.json"))
        .current_dir(&dir)
        .env("COSMOS_EMULATOR_BIN", release.join("cosmos-emulator"))
        .env("CHROMIUM", &chromium)
        .status()
        .map_err(|e| format!("cannot run node: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err("browser-tests/load-time.mjs failed".into())
    }
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
