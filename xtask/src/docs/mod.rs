//! `cargo xtask docs`: the guide (`docs/`, mdBook) built with no broken
//! link, and every code example of the README and the guide run.
//!
//! Examples live as files in `docs/snippets/` (its README says which runner
//! runs each folder); the guide includes them with `{{#include}}` and the
//! README, which GitHub shows as it is, holds copies that must match them
//! byte for byte. So an example that is edited in one place only, or that
//! no runner runs, fails here; one that breaks fails where it runs:
//! - `http/`, `tls/`: here, against `cosmos-emulator` started by the
//!   folder's own `start.sh` on 127.0.0.1:8081 (`snippets.rs`);
//! - `go/`: here, with `go test` in a module made as the Go quick start
//!   says (`snippets.rs`);
//! - `java/`: here too, the same way: a Maven project whose `trust.sh`
//!   makes the trust store, then `mvn test`;
//! - `rust/`: `cargo test` (sdk-tests/rust includes them as modules);
//! - `first-test/`: `cargo xtask package --test`, in a fresh directory
//!   beside the built wheel and tarballs, as a user follows the README;
//! - `commands/`: `.ci/run` runs each line (checked here).
//! - `compose/`: `cargo xtask image --test`, with podman-compose against the
//!   image it built.
//! - `testcontainers/`: `cargo xtask image --test`, Testcontainers for
//!   Python (pytest), Node (node --test), Java (mvn test) and Go (go test)
//!   starting that image.

mod blocks;
pub(crate) mod cited;
mod links;
mod snippets;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use crate::{cargo, root};

/// The mdBook release `.ci/run` installs (`cargo install mdbook --locked --version`).
pub const MDBOOK_VERSION: &str = "0.5.4";

pub fn run(args: &[String]) -> Result<ExitCode, String> {
    let run_snippets = match args {
        [] => true,
        [flag] if flag == "--no-run" => false,
        other => {
            return Err(format!(
                "`cargo xtask docs` takes only --no-run, got {other:?}"
            ))
        }
    };
    let python = match run_snippets {
        true => Some(crate::sdk_venv::python()?),
        false => None,
    };
    check(python.as_deref())?;
    Ok(ExitCode::SUCCESS)
}

/// The blocks, the book and its links; with `python` (the SDK virtualenv's,
/// `crate::sdk_venv::python`), the go/, http/, tls/ and java/ snippets too.
pub fn check(python: Option<&Path>) -> Result<(), String> {
    let problems = blocks::check(&root())?;
    if !problems.is_empty() {
        return Err(format!(
            "{} code block(s) no test runs:\n{}",
            problems.len(),
            problems.join("\n")
        ));
    }
    eprintln!("every code block of the README and the guide is a snippet that CI runs");

    let dead = cited::check(&root())?;
    if !dead.is_empty() {
        return Err(format!(
            "{} cited path(s) that do not exist:\n{}",
            dead.len(),
            dead.join("\n")
        ));
    }
    eprintln!("every path the repository's sources and documents cite exists");

    build_book()?;
    let broken = links::check_book(&root().join("docs/book"))?;
    let broken_md =
        links::check_markdown(&[root().join("README.md"), root().join("CONTRIBUTING.md")])?;
    let broken: Vec<String> = broken.into_iter().chain(broken_md).collect();
    if !broken.is_empty() {
        return Err(format!(
            "{} broken link(s):\n{}",
            broken.len(),
            broken.join("\n")
        ));
    }
    eprintln!("no broken link in the guide, the README and CONTRIBUTING.md");

    if let Some(python) = python {
        crate::step(
            "docs",
            "build the emulator and the suite the snippets run",
            cargo().args(["build", "-p", "cosmos-emulator", "-p", "cosmos-conformance"]),
        )?;
        snippets::run_all(python)?;
    }
    Ok(())
}

/// `mdbook build docs` (into docs/book, ignored by git).
fn build_book() -> Result<(), String> {
    let mdbook = std::env::var_os("MDBOOK")
        .map(PathBuf::from)
        .unwrap_or_else(|| "mdbook".into());
    let mut command = Command::new(&mdbook);
    command.arg("build").arg(root().join("docs"));
    let output = command.output().map_err(|e| {
        format!(
            "cannot run {}: {e}; install it with `cargo install mdbook --locked --version {MDBOOK_VERSION}` \
             (or name it with MDBOOK)",
            mdbook.display()
        )
    })?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    // mdBook reports a missing {{#include}} as an error yet still exits 0,
    // and an unclosed HTML tag (text the page then hides) as a warning.
    if !output.status.success() || stderr.contains("ERROR") || stderr.contains("WARN") {
        return Err(format!("mdbook build docs failed:\n{stderr}"));
    }
    eprintln!("mdbook build docs: docs/book");
    Ok(())
}

/// Every file under `dir`, recursively, in name order.
fn files_under(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
            if path.is_dir() {
                // A runner's installed packages are not snippets.
                if path.file_name().is_some_and(|n| n != "node_modules") {
                    pending.push(path);
                }
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}
