//! `cargo xtask dist`: the release binaries of every target
//! (`targets.rs`), built from this x86-64 Linux machine with tools from
//! the registries only, each with its wheel; every binary checked for what
//! it claims to be (`inspect.rs`); `SHA256SUMS` beside them. With `--run`,
//! the binaries that run here (natively, under qemu-user, under wine) are
//! started and the conformance suite and a Python SDK smoke test run
//! against each (`emulated.rs`).
//!
//! Output, under `target/dist/`:
//! - `cosmos-emulator-<triple>[.exe]`: the release binaries;
//! - `wheels/cosmos_emulator-<version>-py3-none-<tag>.whl`;
//! - `SHA256SUMS` (of the binaries and wheels, as `sha256sum -c` reads it);
//! - `report.md`: what each binary is and how long it took to build.
//!
//! `--matrix` prints the release workflow's job matrix from the same table.

mod build;
mod checksums;
mod emulated;
pub mod inspect;
pub mod targets;
mod tools;

use std::path::PathBuf;
use std::process::ExitCode;

use crate::target_dir;
use targets::{Target, TARGETS};

const USAGE: &str = "cargo xtask dist [--ci | --target TRIPLE...] [--no-build] [--run] | --matrix";

pub fn run(args: &[String]) -> Result<ExitCode, String> {
    let mut chosen: Vec<&'static Target> = Vec::new();
    let (mut ci, mut run, mut no_build) = (false, false, false);
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--ci" => ci = true,
            "--run" => run = true,
            "--no-build" => no_build = true,
            "--matrix" => {
                println!("{}", matrix());
                return Ok(ExitCode::SUCCESS);
            }
            "--target" => {
                let triple = args.next().ok_or("--target needs a target triple")?;
                chosen.push(targets::find(triple)?);
            }
            other => return Err(format!("unknown option {other:?}; usage: {USAGE}")),
        }
    }
    if ci {
        if !chosen.is_empty() {
            return Err("--ci chooses its own targets: drop --target".into());
        }
        for triple in targets::CI {
            chosen.push(targets::find(triple)?);
        }
    }
    if chosen.is_empty() {
        chosen = TARGETS.iter().collect();
    }

    let out = dist_dir();
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let version = crate::package::emulator_version()?;
    let tools = tools::Tools::install()?;
    let mut report = vec![
        "| target | binary | build |".to_string(),
        "|---|---|---:|".to_string(),
    ];
    let mut problems = Vec::new();
    let mut built = Vec::new();
    for target in &chosen {
        let (binary, wheel, seconds) = if no_build {
            let binary = out.join(target.asset_name());
            let wheel = out.join("wheels").join(format!(
                "cosmos_emulator-{version}-py3-none-{}.whl",
                target.wheel_tag
            ));
            (binary, wheel, None)
        } else {
            let b = build::build(&tools, target, &out, &version)?;
            (b.binary, b.wheel, Some(b.seconds))
        };
        let data = std::fs::read(&binary).map_err(|e| format!("{}: {e}", binary.display()))?;
        let facts = inspect::read(&data).map_err(|e| format!("{}: {e}", binary.display()))?;
        let summary = inspect::summary(&facts);
        eprintln!("   {}: {summary}", target.triple);
        for problem in inspect::check(target, &facts) {
            problems.push(format!("{}: {problem}", binary.display()));
        }
        report.push(format!(
            "| {} | {summary} | {} |",
            target.triple,
            seconds
                .map(|s| format!("{s:.0} s"))
                .unwrap_or_else(|| "-".into())
        ));
        built.push((*target, binary, wheel));
    }
    if !problems.is_empty() {
        return Err(format!(
            "binaries not what their targets claim:\n  {}",
            problems.join("\n  ")
        ));
    }

    check_wheels(&tools, &built)?;
    let mut files: Vec<PathBuf> = Vec::new();
    for (_, binary, wheel) in &built {
        files.push(binary.clone());
        files.push(wheel.clone());
    }
    checksums::write(&out, &files)?;
    let report_path = out.join("report.md");
    std::fs::write(&report_path, report.join("\n") + "\n")
        .map_err(|e| format!("{}: {e}", report_path.display()))?;
    eprintln!("\nxtask dist: {}", report.join("\n"));
    eprintln!("xtask dist: wrote {} and SHA256SUMS", out.display());

    if run {
        let runnable: Vec<_> = built
            .iter()
            .filter(|(t, _, _)| emulated::runner_here(t).is_some())
            .collect();
        for (target, binary, _) in runnable {
            emulated::check(target, binary)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The release workflow's job matrix, from the target table: one entry a
/// target, with the runner it is tested on natively (GitHub Actions'
/// `fromJSON` reads it).
fn matrix() -> String {
    let include: Vec<serde_json::Value> = TARGETS
        .iter()
        .map(|t| {
            serde_json::json!({
                "target": t.triple,
                "runner": t.release_runner,
                "wheel": t.wheel_tag,
                "npm": t.npm_package(),
                // The release workflow tests the musl packages on Alpine:
                // its runners install the glibc ones by name.
                "libc": t.npm_libc,
            })
        })
        .collect();
    serde_json::json!({ "include": include }).to_string()
}

/// `target/dist`
pub fn dist_dir() -> PathBuf {
    target_dir().join("dist")
}

/// auditwheel's verdict on each Linux wheel (its platform tag must be the
/// table's), and `twine check` on all of them (the metadata PyPI reads).
fn check_wheels(
    tools: &tools::Tools,
    built: &[(&'static Target, PathBuf, PathBuf)],
) -> Result<(), String> {
    for (target, _, wheel) in built {
        if target.npm_os != "linux" {
            continue;
        }
        let output = tools
            .command("auditwheel")
            .arg("show")
            .arg(wheel)
            .output()
            .map_err(|e| format!("auditwheel: {e}"))?;
        let text = String::from_utf8_lossy(&output.stdout);
        // auditwheel wraps its lines: read its words.
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let tag = words
            .split("consistent with the following platform tag: \"")
            .nth(1)
            .and_then(|rest| rest.split('"').next());
        if !output.status.success() || !tag.is_some_and(|tag| target.wheel_tags().any(|t| t == tag))
        {
            return Err(format!(
                "auditwheel show {}: expected the platform tag {}, it says:\n{text}{}",
                wheel.display(),
                target.wheel_tag,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        eprintln!(
            "   auditwheel: {} is a valid {} wheel",
            target.triple, target.wheel_tag
        );
    }
    let wheels: Vec<&PathBuf> = built.iter().map(|(_, _, w)| w).collect();
    crate::step(
        "dist",
        "check the wheels' metadata: twine check --strict",
        tools
            .command("twine")
            .args(["check", "--strict"])
            .args(&wheels),
    )?;
    Ok(())
}
