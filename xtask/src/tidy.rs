//! Checks that keep the code's map true to its territory, run by `cargo
//! test -p xtask` (as rust-analyzer's `xtask/src/tidy.rs` does):
//!
//! - the emulator's layers: which top-level module of `emulator/src` may
//!   name which, as a table (`LAYERS`) that must stay free of cycles, and
//!   every module named in the concept maps (`tidy/layers.rs`);
//! - no HTTP below the adapter: only the modules that serve or speak
//!   HTTP (`SPEAKS_HTTP`) name `StatusCode`, the `http` crate, `axum` or
//!   `hyper`; the store, the engines and the leaves speak their own
//!   language (`error.rs`'s `Status`, the store's `Written`)
//!   (`tidy/speaks_http.rs`);
//! - a query run keeps nothing in thread-locals (its context travels as
//!   a value), apart from caches that only remember;
//! - the conformance suite never imports the emulator;
//! - unit tests sit where `CONTRIBUTING.md` says (no `#[path]`);
//! - every Rust source file of the repository opens with a `//!` saying
//!   what it holds;
//! - a poisoned lock is recovered, never unwrapped.
//! - no file of the emulator, the conformance suite or the bench imports
//!   itself around a loop (`tidy/cycles.rs`; `tidy/imports.rs` draws the
//!   graph).
//!
//! Paths are read as the compiler resolves them (`tidy/paths.rs`: grouped
//! `use` trees, `super::` chains), and each check is a function of the
//! sources it reads, so that `tidy/tests.rs` can plant what each must catch.
//! `docs/src/architecture.md` states these as numbered invariants, each
//! naming its test here or in the file of its concept.

use std::fs;
use std::path::{Path, PathBuf};

use crate::docs::cited::{rust_code, tracked_files};

mod cycles;
mod imports;
mod layers;
mod paths;
mod speaks_http;

use paths::EMULATOR_SRC;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .to_path_buf()
}

/// A tracked Rust source file: its path from the repository's root, and
/// its text.
struct Source {
    path: String,
    text: String,
}

impl Source {
    /// Its code alone: comments, strings and chars blanked, so that a
    /// path cited in a comment or a message is not taken for a use.
    fn code(&self) -> String {
        rust_code(&self.text)
    }
}

/// Every `.rs` file git tracks under `dir` (a path from the root, ending
/// in `/`; empty for all), as `git ls-files` lists them for the cited-path
/// check. One deleted in the work tree but still in the index is skipped.
fn rust_sources(dir: &str) -> Vec<Source> {
    let root = root();
    let files = tracked_files(&root).expect("git lists the repository's files");
    files
        .into_iter()
        .filter(|path| path.starts_with(dir) && path.ends_with(".rs"))
        .filter_map(|path| {
            let text = fs::read_to_string(root.join(&path)).ok()?;
            Some(Source { path, text })
        })
        .collect()
}

#[test]
fn every_source_file_says_what_it_holds() {
    let silent: Vec<String> = rust_sources("")
        .into_iter()
        .filter(|s| !s.text.starts_with("//!"))
        .map(|s| s.path)
        .collect();
    assert!(
        silent.is_empty(),
        "files that do not open with a //! comment:\n{}",
        silent.join("\n")
    );
}

/// The query engine's thread-locals that only remember (a word's stem, a
/// compiled pattern): an answer never depends on what they hold. Anything
/// a run needs travels in its context (`data/query/context.rs`).
const QUERY_CACHES: &[&str] = &[
    "emulator/src/data/query/search/text.rs",
    "emulator/src/data/query/functions/regex.rs",
];

#[test]
fn a_query_run_keeps_nothing_in_thread_locals() {
    let found: Vec<String> = rust_sources(&format!("{EMULATOR_SRC}query/"))
        .into_iter()
        .filter(|s| !QUERY_CACHES.contains(&s.path.as_str()))
        .filter(|s| s.code().contains("thread_local!"))
        .map(|s| s.path)
        .collect();
    assert!(
        found.is_empty(),
        "thread-locals in the query engine (a run's state goes in its context): {found:?}"
    );
}

/// Whether `code` takes a lock in a way that does not recover a poisoned
/// one, however the call is laid out over lines: `.lock()`, `.read()`,
/// `.write()` (no argument: a lock, not I/O) or `.try_lock()` followed by
/// `unwrap()` or `expect(...)` (a panic), or by `ok()`, `is_ok()` or
/// `is_err()` (a poisoned lock taken for a busy or absent one, for ever).
fn unwraps_a_lock(code: &str) -> bool {
    let code: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    let calls = ["lock", "read", "write", "try_lock", "try_read", "try_write"];
    let ends = [".unwrap()", ".expect(", ".ok()", ".is_ok()", ".is_err()"];
    calls.iter().any(|call| {
        ends.iter()
            .any(|end| code.contains(&format!(".{call}(){end}")))
    })
}

/// One way with a poisoned lock: recover it (`unwrap_or_else(|e|
/// e.into_inner())`). A panic in one request's handler must not turn every
/// later request that takes the same lock into a panic too.
#[test]
fn a_poisoned_lock_is_recovered_everywhere() {
    let found: Vec<String> = rust_sources(EMULATOR_SRC)
        .into_iter()
        .filter(|s| unwraps_a_lock(&s.code()))
        .map(|s| s.path)
        .collect();
    assert!(
        found.is_empty(),
        "a lock taken with unwrap(), expect() or as an Option: recover a poisoned one instead: {found:?}"
    );
}

/// `#[path]` includes that are not unit tests: the quick start's example,
/// compiled by the Rust SDK tests as the guide shows it.
const PATH_INCLUDES: &[&str] = &["sdk-tests/rust/tests/sdk.rs"];

#[test]
fn unit_tests_sit_where_contributing_says() {
    // CONTRIBUTING.md: inline, or `x/tests.rs` in the module's directory,
    // found by the module tree alone.
    let found: Vec<String> = rust_sources("")
        .into_iter()
        .filter(|s| !PATH_INCLUDES.contains(&s.path.as_str()))
        .filter(|s| s.code().contains("#[path"))
        .map(|s| s.path)
        .collect();
    assert!(found.is_empty(), "#[path] attributes: {found:?}");
}

#[test]
fn the_suite_never_imports_the_emulator() {
    // Its expectations come from the fixtures, and it talks HTTP only: it
    // must run against any endpoint. Its tests may start the emulator.
    let manifest = fs::read_to_string(root().join("conformance/Cargo.toml")).expect("its manifest");
    let dependencies = manifest
        .split("\n[")
        .find(|section| section.starts_with("dependencies]"))
        .expect("a [dependencies] section");
    assert!(
        !dependencies.contains("cosmos-emulator"),
        "conformance depends on the emulator"
    );
    for source in rust_sources("conformance/src/") {
        assert!(
            !source.code().contains("cosmos_emulator"),
            "{} names the emulator",
            source.path
        );
    }
}

/// The README is the first screen: what it is, how to install it, one
/// test; the rest lives in the guide. Under 10 KB, so that it stays so.
#[test]
fn the_readme_stays_a_first_screen() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    assert!(
        readme.len() < 10_000,
        "README.md is {} bytes: keep it under 10,000 and move the rest to the guide (docs/src/)",
        readme.len()
    );
}

mod tests;
