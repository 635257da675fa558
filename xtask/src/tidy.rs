//! Checks that keep the code's map true to its territory, run by `cargo
//! test -p xtask` (as rust-analyzer's `xtask/src/tidy.rs` does):
//!
//! - the emulator's layers: which top-level module of `emulator/src` may
//!   name which, as a table ([`LAYERS`]) that must stay free of cycles;
//! - no HTTP below the adapter: only the modules that serve or speak
//!   HTTP ([`SPEAKS_HTTP`]) name `StatusCode`, the `http` crate, `axum` or
//!   `hyper`; the store, the engines and the leaves speak their own
//!   language (`error.rs`'s `Status`, the store's `Written`);
//! - a query run keeps nothing in thread-locals (its context travels as
//!   a value), apart from caches that only remember;
//! - the conformance suite never imports the emulator;
//! - unit tests sit where `CONTRIBUTING.md` says (no `#[path]`);
//! - every Rust source file of the repository opens with a `//!` saying
//!   what it holds;
//! - a poisoned lock is recovered, never unwrapped.
//! - no file of the emulator, the conformance suite or the bench imports
//!   itself around a loop (`tidy/imports.rs` draws the graph).
//!
//! Paths are read as the compiler resolves them (`tidy/paths.rs`: grouped
//! `use` trees, `super::` chains), and each check is a function of the
//! sources it reads, so that `tidy/tests.rs` can plant what each must catch.
//! `docs/src/architecture.md` states these as numbered invariants, each
//! naming its test here.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::docs::cited::{rust_code, tracked_files};

mod imports;
mod paths;

use paths::{code_of, is_ident, module_of, named_from_root, root_reexports, EMULATOR_SRC};

/// Which top-level modules of `emulator/src` each one may name (`lib` is
/// `lib.rs`, the crate's root, which assembles the server). A module not
/// in this table fails the test: a new one must be placed here.
///
/// Bottom to top: the leaves; the query engine, which knows only leaves;
/// the store, which implements the engine's view; what runs over the
/// store (scripts, patches, the purge, re-indexing, permissions); the
/// HTTP layer; the control API over it; the endpoints, which assemble
/// both; the crate's root; the binary's settings and health check.
const LAYERS: &[(&str, &[&str])] = &[
    // Leaves: the quotas, the one error type, resource ids, the data
    // directory's files, JSON, time, the TTL rules, partition keys.
    ("limits", &[]),
    ("error", &[]),
    ("rid", &[]),
    ("persist", &[]),
    ("tls", &[]),
    ("shutdown", &[]),
    ("json", &["limits"]),
    ("clock", &["error"]),
    ("consistency", &["error"]),
    // What requests cost, and the per-second budgets that throttle them.
    ("request_units", &["consistency"]),
    ("throttle", &[]),
    // The account's regions: names, write region, outages, replication.
    ("regions", &[]),
    ("ttl", &["error"]),
    ("partition_key", &["error", "limits"]),
    ("item_key", &["partition_key"]),
    ("epk", &["partition_key"]),
    // Fault rules: what matches and how often, no HTTP.
    ("faults", &["error"]),
    // The indexes, the indexing policy and the paths they read: what the
    // query engine reads and the store keeps, below both.
    ("index", &["error", "item_key", "json", "limits"]),
    // The query engine: no store, no HTTP, no scripts (it calls UDFs
    // through a runner it is given).
    (
        "query",
        &["clock", "error", "index", "item_key", "json", "limits"],
    ),
    // The store: implements the engine's view over its containers.
    (
        "store",
        &[
            "clock",
            "epk",
            "error",
            "index",
            "item_key",
            "json",
            "limits",
            "partition_key",
            "persist",
            "query",
            "rid",
            "ttl",
        ],
    ),
    // Over the store.
    ("patch", &["error", "limits", "query", "store"]),
    (
        "script",
        &["clock", "error", "json", "limits", "query", "store"],
    ),
    ("purge", &["store"]),
    ("reindex", &["store"]),
    ("auth", &["error", "limits", "rid"]),
    ("resource_token", &["auth", "error", "store"]),
    ("entra_token", &["auth", "error"]),
    ("transport", &["tls"]),
    // The account: what every endpoint and front door shares.
    (
        "account",
        &[
            "auth",
            "clock",
            "consistency",
            "faults",
            "query",
            "regions",
            "request_units",
            "script",
            "store",
            "throttle",
        ],
    ),
    // The Cosmos operations, below every protocol: a function of the
    // account and a protocol-neutral request each. The metadata operations
    // query their resources in memory (`query`) and hand out permission
    // tokens (`resource_token`).
    (
        "operations",
        &[
            "account",
            "error",
            "faults",
            "json",
            "limits",
            "patch",
            "persist",
            "query",
            "regions",
            "request_units",
            "resource_token",
            "rid",
            "script",
            "store",
            "throttle",
        ],
    ),
    // The wire.
    (
        "http",
        &[
            "account",
            "auth",
            "clock",
            "consistency",
            "entra_token",
            "epk",
            "error",
            "faults",
            "index",
            "item_key",
            "json",
            "limits",
            "operations",
            "partition_key",
            "patch",
            "persist",
            "purge",
            "query",
            "regions",
            "request_units",
            "resource_token",
            "rid",
            "script",
            "store",
            "throttle",
            "transport",
        ],
    ),
    // The control API (`/_emulator/...`): handlers over the HTTP layer's
    // state and extractors, above it so that `http/` stays the resources'
    // protocol and never names the emulator's own routes.
    (
        "control",
        &["error", "http", "item_key", "purge", "regions", "store"],
    ),
    // The account's endpoints, served and stopped together; what one
    // serves (`app`) is assembled here, above both `http` and `control`.
    ("endpoints", &["control", "http", "regions", "transport"]),
    // The root: binds, serves, starts the background tasks.
    (
        "lib",
        &[
            "account",
            "auth",
            "clock",
            "consistency",
            "endpoints",
            "error",
            "http",
            "limits",
            "persist",
            "purge",
            "regions",
            "reindex",
            "request_units",
            "script",
            "store",
            "throttle",
            "tls",
            "transport",
        ],
    ),
    // The binary's side.
    ("health", &["clock", "lib", "transport"]),
    (
        "settings",
        &[
            "auth",
            "clock",
            "consistency",
            "lib",
            "persist",
            "regions",
            "request_units",
            "store",
            "tls",
            "transport",
        ],
    ),
    ("probe", &["settings"]),
];

/// The top-level modules of `emulator/src` that may name HTTP's types
/// (`StatusCode`, the `http` crate, `axum`, `hyper`), and why. Every other
/// module, a new one included, speaks the emulator's own language: a
/// second protocol (Direct mode's RNTBD) must be able to reuse it whole.
/// Those that need no HTTP type are not here, though they serve HTTP:
/// `endpoints` (it names our `http` module only), `tls` (certificates),
/// `probe` (one `GET` written by hand with the standard library),
/// `settings` and `main.rs`.
const SPEAKS_HTTP: &[(&str, &str)] = &[
    ("http", "the adapter: requests in, responses out"),
    ("transport", "accepted connections become HTTP requests"),
    ("health", "the health server: an HTTP router of its own"),
    ("lib", "the crate's root: binds and serves the HTTP app"),
    (
        "control",
        "the control API: routes of its own beside the resources' (/_emulator/...)",
    ),
    ("endpoints", "assembles the HTTP app of each endpoint"),
];

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

/// Every edge between two top-level modules of `emulator/src` that
/// `sources` make, with one file that makes it. The root's re-exports
/// are read from `lib.rs` when it is among them.
fn module_edges(sources: &[Source]) -> BTreeMap<(String, String), String> {
    let reexports = sources
        .iter()
        .find(|s| s.path == format!("{EMULATOR_SRC}lib.rs"))
        .map(|lib| root_reexports(&lib.text))
        .unwrap_or_default();
    let modules: BTreeSet<String> = sources.iter().filter_map(|s| module_of(&s.path)).collect();
    let mut edges = BTreeMap::new();
    for source in sources {
        let Some(from) = module_of(&source.path) else {
            continue;
        };
        for name in named_from_root(&source.path, &source.text) {
            let to = if modules.contains(&name) {
                name
            } else {
                reexports
                    .get(&name)
                    .cloned()
                    .unwrap_or_else(|| "lib".into())
            };
            if to != from {
                edges
                    .entry((from.clone(), to))
                    .or_insert(source.path.clone());
            }
        }
    }
    edges
}

/// The edges that [`LAYERS`] does not allow, each said in a line.
fn layer_violations(edges: BTreeMap<(String, String), String>) -> Vec<String> {
    let allowed: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
    let mut wrong = Vec::new();
    for ((from, to), file) in edges {
        match allowed.get(from.as_str()) {
            None => wrong.push(format!(
                "{from} is not in tidy.rs's LAYERS: place it (it names {to} in {file})"
            )),
            Some(may) if !may.contains(&to.as_str()) => wrong.push(format!(
                "{from} may not name {to} ({file}); see LAYERS in xtask/src/tidy.rs"
            )),
            Some(_) => {}
        }
    }
    wrong
}

#[test]
fn the_emulator_keeps_its_layers() {
    let wrong = layer_violations(module_edges(&rust_sources(EMULATOR_SRC)));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_layers_have_no_cycle() {
    // Each module's allowed names come earlier in the table: the table is
    // written bottom to top, so no edge it allows can close a cycle.
    let mut placed = BTreeSet::new();
    for (module, may) in LAYERS {
        for name in *may {
            assert!(
                placed.contains(name),
                "{module} may name {name}, which is not below it in LAYERS"
            );
        }
        assert!(placed.insert(*module), "{module} is in LAYERS twice");
    }
}

#[test]
fn every_module_of_the_emulator_is_placed() {
    let placed: BTreeSet<&str> = LAYERS.iter().map(|(module, _)| *module).collect();
    let missing: BTreeSet<String> = rust_sources(EMULATOR_SRC)
        .iter()
        .filter_map(|s| module_of(&s.path))
        .filter(|module| !placed.contains(module.as_str()))
        .collect();
    assert!(missing.is_empty(), "not in LAYERS: {missing:?}");
}

/// Every top-level module of the emulator is named where a newcomer looks
/// first: `lib.rs`'s opening list (as `` `name` ``) and the architecture
/// page's concept map (as `name.rs` or `name/` at the start of a line).
#[test]
fn every_module_is_in_the_concept_maps() {
    let modules: BTreeSet<String> = rust_sources(EMULATOR_SRC)
        .iter()
        .filter_map(|s| module_of(&s.path))
        .filter(|module| module != "lib")
        .collect();
    let lib = fs::read_to_string(root().join(EMULATOR_SRC).join("lib.rs")).expect("lib.rs");
    let opening: String = lib
        .lines()
        .take_while(|line| line.starts_with("//!"))
        .collect::<Vec<_>>()
        .join("\n");
    let page = fs::read_to_string(root().join("docs/src/architecture.md")).expect("the page");
    let mapped: BTreeSet<String> = page
        .lines()
        .filter_map(|line| line.strip_prefix("  "))
        .filter_map(|line| line.split_whitespace().next())
        .map(|entry| {
            entry
                .trim_end_matches('/')
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect();
    let mut missing = Vec::new();
    for module in &modules {
        if !opening.contains(&format!("`{module}`")) {
            missing.push(format!("lib.rs's opening list: `{module}`"));
        }
        if !mapped.contains(module) {
            missing.push(format!("architecture.md's concept map: {module}"));
        }
    }
    assert!(missing.is_empty(), "modules not named: {missing:#?}");
}

/// The names of HTTP that `code` (comments and strings blanked, groups
/// flattened) uses: `StatusCode`, `axum`, `hyper` as words, and the `http`
/// crate (`http::`, but not a module of ours named so: `crate::http::`,
/// `super::http::`, `self::http::`).
fn http_names(code: &str) -> BTreeSet<&'static str> {
    let bytes = code.as_bytes();
    let mut found = BTreeSet::new();
    for name in ["StatusCode", "axum", "hyper", "http"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(name).map(|at| from + at) {
            from = at + name.len();
            let before = at.checked_sub(1).map(|i| bytes[i]);
            if before.is_some_and(is_ident) || bytes.get(from).copied().is_some_and(is_ident) {
                continue;
            }
            if name == "http" {
                let ours = ["crate::", "super::", "self::"]
                    .iter()
                    .any(|module| code[..at].ends_with(module));
                if ours || !code[from..].starts_with("::") {
                    continue;
                }
            }
            found.insert(name);
        }
    }
    found
}

/// What of HTTP the files of `sources` below the adapter name: every file
/// of `emulator/src` (`main.rs` included) outside [`SPEAKS_HTTP`].
fn http_below_the_adapter(sources: &[Source]) -> Vec<String> {
    let mut found = Vec::new();
    for source in sources {
        let Some(rest) = source.path.strip_prefix(EMULATOR_SRC) else {
            continue;
        };
        let module = rest
            .split('/')
            .next()
            .unwrap_or(rest)
            .trim_end_matches(".rs");
        if SPEAKS_HTTP.iter().any(|(speaks, _)| *speaks == module) {
            continue;
        }
        for name in http_names(&code_of(&source.text)) {
            found.push(format!(
                "{} names {name}: below the HTTP adapter, use the emulator's own types \
                 (error.rs's Status, the store's Written), or place the module in \
                 SPEAKS_HTTP (xtask/src/tidy.rs) with why",
                source.path
            ));
        }
    }
    found
}

#[test]
fn no_http_below_the_adapter() {
    let found = http_below_the_adapter(&rust_sources(EMULATOR_SRC));
    assert!(found.is_empty(), "{}", found.join("\n"));
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
/// a run needs travels in its context (`query/context.rs`).
const QUERY_CACHES: &[&str] = &[
    "emulator/src/query/search/text.rs",
    "emulator/src/query/functions/regex.rs",
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

/// No file imports itself around a loop: each crate's library is a graph
/// of files without cycles, so any file can be read (and tested) knowing
/// only the files below it. The failure lists every cycle, file by file.
#[test]
fn no_file_imports_itself_around_a_loop() {
    let mut found = Vec::new();
    for src in [EMULATOR_SRC, "conformance/src/", "bench/src/"] {
        let files: Vec<imports::File> = rust_sources(src)
            .into_iter()
            .map(|s| imports::File {
                code: s.code(),
                path: s.path[src.len()..].to_string(),
            })
            .collect();
        for cycle in imports::cycles(&files) {
            let named: Vec<String> = cycle.files.iter().map(|f| format!("{src}{f}")).collect();
            found.push(format!(
                "{} files: {}\n    {}",
                named.len(),
                named.join(", "),
                cycle.imports.join("\n    ")
            ));
        }
    }
    assert!(
        found.is_empty(),
        "import cycles (break each by moving what they share down):\n{}",
        found.join("\n")
    );
}
