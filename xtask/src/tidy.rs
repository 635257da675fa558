//! Checks that keep the code's map true to its territory, run by `cargo
//! test -p xtask` (as rust-analyzer's `xtask/src/tidy.rs` does):
//!
//! - the emulator's layers: which top-level module of `emulator/src` may
//!   name which, as a table ([`LAYERS`]) that must stay free of cycles;
//! - no web framework below the HTTP layer: the store, the query engine
//!   and the script engine name no `axum` or `hyper` type;
//! - a query run keeps nothing in thread-locals (its context travels as
//!   a value), apart from caches that only remember;
//! - the conformance suite never imports the emulator;
//! - unit tests sit where `CONTRIBUTING.md` says (no `#[path]`);
//! - every Rust source file of the repository opens with a `//!` saying
//!   what it holds;
//! - no file of the emulator, the conformance suite or the bench imports
//!   itself around a loop (`tidy/imports.rs` draws the graph).
//!
//! `docs/src/architecture.md` states these as numbered invariants, each
//! naming its test here.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::docs::cited::{rust_code, tracked_files};

mod imports;

/// Which top-level modules of `emulator/src` each one may name (`lib` is
/// `lib.rs`, the crate's root, which assembles the server). A module not
/// in this table fails the test: a new one must be placed here.
///
/// Bottom to top: the leaves; the query engine, which knows only leaves;
/// the store, which implements the engine's view; what runs over the
/// store (scripts, patches, the purge, re-indexing, permissions); the
/// HTTP layer; the crate's root; the binary's settings and health check.
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
    // The wire.
    (
        "http",
        &[
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
    // The account's endpoints, served and stopped together.
    ("endpoints", &["http", "regions", "transport"]),
    // The root: binds, serves, starts the background tasks.
    (
        "lib",
        &[
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

/// Top-level modules whose files may not name a web framework's types.
const BELOW_HTTP: &[&str] = &[
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
    "partition_key",
    "patch",
    "persist",
    "purge",
    "query",
    "regions",
    "request_units",
    "reindex",
    "rid",
    "script",
    "store",
    "throttle",
    "ttl",
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

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The first segments of every `crate::` path in `code`: `crate::a::b`
/// gives `a`, `crate::{a::b, c}` gives `a` and `c`.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].bytes().last();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|b| is_ident(b) || b == b':' || b == b'$') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 || (depth == 1 && c == ',') {
                    found.extend(first_segment(&item));
                    item.clear();
                    if depth == 0 {
                        break;
                    }
                } else {
                    item.push(c);
                }
            }
        } else {
            found.extend(first_segment(rest));
        }
    }
    found
}

/// How deep a file of `emulator/src` sits in the module tree: 1 for
/// `clock.rs` and `http/mod.rs`, 2 for `query/search/mod.rs` and
/// `http/items.rs`; 0 for `lib.rs` and `main.rs`.
fn module_depth(file: &str) -> usize {
    let Some(path) = file.strip_prefix(EMULATOR_SRC) else {
        return 0;
    };
    let path = path.trim_end_matches(".rs");
    let segments: Vec<&str> = path.split('/').collect();
    match segments.as_slice() {
        ["lib"] | ["main"] => 0,
        [.., "mod"] => segments.len() - 1,
        _ => segments.len(),
    }
}

/// `code` with every `super::` chain that climbs to the crate's root
/// written as `crate::`, so that [`crate_paths`] sees what it names:
/// `use super::super::store::Store` in `query/search/mod.rs` names the
/// store as `crate::store::Store` does. `depth` is the file's
/// ([`module_depth`]); an inline module (`mod tests { ... }`) is one
/// deeper, so `super::` inside it names the file's own module.
fn with_super_resolved(code: &str, depth: usize) -> String {
    let bytes = code.as_bytes();
    let mut out = String::with_capacity(code.len());
    // The brace depth at which each open inline module's body started.
    let mut inline: Vec<usize> = Vec::new();
    let mut braces = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let rest = &code[i..];
        let after_ident = i > 0 && (is_ident(bytes[i - 1]) || bytes[i - 1] == b':');
        if !after_ident && rest.starts_with("mod ") {
            // `mod name {` opens an inline module; `mod name;` does not.
            let tail = rest["mod ".len()..].trim_start();
            let name_end = tail
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(tail.len());
            if name_end > 0 && tail[name_end..].trim_start().starts_with('{') {
                inline.push(braces + 1);
            }
        }
        if !after_ident && rest.starts_with("super::") {
            let mut count = 0;
            let mut chain = rest;
            while let Some(next) = chain.strip_prefix("super::") {
                count += 1;
                chain = next;
            }
            if count == depth + inline.len() {
                out.push_str("crate::");
                i += count * "super::".len();
                continue;
            }
        }
        match bytes[i] {
            b'{' => braces += 1,
            b'}' => {
                if inline.last() == Some(&braces) {
                    inline.pop();
                }
                braces = braces.saturating_sub(1);
            }
            _ => {}
        }
        let len = rest.chars().next().map_or(1, char::len_utf8);
        out.push_str(&rest[..len]);
        i += len;
    }
    out
}

fn first_segment(path: &str) -> Option<String> {
    let path = path.trim_start();
    let end = path
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(path.len());
    (end > 0).then(|| path[..end].to_string())
}

/// Where the emulator's modules are.
const EMULATOR_SRC: &str = "emulator/src/";

/// The top-level module a file of `emulator/src` belongs to (`lib` for
/// `lib.rs`); `None` for `main.rs`, which uses the library by its name.
fn module_of(file: &str) -> Option<String> {
    let first = file.strip_prefix(EMULATOR_SRC)?.split('/').next()?;
    let name = first.trim_end_matches(".rs");
    (name != "main").then(|| name.to_string())
}

/// What `lib.rs` re-exports from its modules (`pub use clock::{Clock,
/// ClockMode};`): a path through the root names the module it comes from.
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for statement in rust_code(lib).split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, items)) = path.split_once("::") else {
            continue;
        };
        let items = items.trim_matches(|c| c == '{' || c == '}');
        for item in items.split(',') {
            let item = item.trim();
            let name = item.rsplit(" as ").next().unwrap_or(item).trim();
            if !name.is_empty() {
                names.insert(name.to_string(), module.trim().to_string());
            }
        }
    }
    names
}

/// Every edge between two top-level modules of `emulator/src`, with one
/// file that makes it.
fn module_edges() -> BTreeMap<(String, String), String> {
    let sources = rust_sources(EMULATOR_SRC);
    let lib = sources
        .iter()
        .find(|s| s.path == format!("{EMULATOR_SRC}lib.rs"))
        .expect("emulator/src/lib.rs");
    let reexports = root_reexports(&lib.text);
    let modules: BTreeSet<String> = sources.iter().filter_map(|s| module_of(&s.path)).collect();
    let mut edges = BTreeMap::new();
    for source in &sources {
        let Some(from) = module_of(&source.path) else {
            continue;
        };
        let code = with_super_resolved(&source.code(), module_depth(&source.path));
        for name in crate_paths(&code) {
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

#[test]
fn the_emulator_keeps_its_layers() {
    let allowed: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
    let mut wrong = Vec::new();
    for ((from, to), file) in module_edges() {
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

#[test]
fn no_web_framework_below_http() {
    let mut found = Vec::new();
    for source in rust_sources(EMULATOR_SRC) {
        let below = module_of(&source.path).is_some_and(|m| BELOW_HTTP.contains(&m.as_str()));
        if !below {
            continue;
        }
        let code = source.code();
        for framework in ["axum", "hyper"] {
            if code.contains(&format!("{framework}::")) {
                found.push(format!("{} names {framework}", source.path));
            }
        }
    }
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

/// One way with a poisoned lock: recover it (`unwrap_or_else(|e|
/// e.into_inner())`). A panic in one request's handler must not turn every
/// later request that takes the same lock into a panic too.
#[test]
fn a_poisoned_lock_is_recovered_everywhere() {
    let found: Vec<String> = rust_sources(EMULATOR_SRC)
        .into_iter()
        .filter(|s| {
            let code = s.code();
            ["lock", "read", "write"].iter().any(|call| {
                code.contains(&format!(".{call}().unwrap()"))
                    || code.contains(&format!(".{call}().expect("))
            })
        })
        .map(|s| s.path)
        .collect();
    assert!(
        found.is_empty(),
        "a lock taken with unwrap() or expect(): recover a poisoned one instead: {found:?}"
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

#[test]
fn the_scanner_sees_code_not_comments_or_strings() {
    let code = rust_code(
        "use crate::a::b; // crate::c\n/* crate::d */ let s = \"crate::e\"; \
         let r = r#\"crate::f\"#; let c = '\"'; fn g<'x>() { crate::h::i() }\n\
         use crate::{j::k, l, m::{n, o}};",
    );
    let found: Vec<String> = crate_paths(&code).into_iter().collect();
    assert_eq!(found, ["a", "h", "j", "l", "m"]);
    // `super::` chains that climb to the root name what `crate::` names;
    // shorter ones, and `super::` in an inline module, stay inside.
    assert_eq!(module_depth("emulator/src/query/search/mod.rs"), 2);
    assert_eq!(module_depth("emulator/src/http/items.rs"), 2);
    assert_eq!(module_depth("emulator/src/clock.rs"), 1);
    assert_eq!(module_depth("emulator/src/lib.rs"), 0);
    let resolved = with_super_resolved(
        "use super::super::store::Store; use super::eval; \
         mod tests { use super::*; use super::super::super::http::x; }",
        2,
    );
    let found: Vec<String> = crate_paths(&resolved).into_iter().collect();
    assert_eq!(found, ["http", "store"], "{resolved}");
    let exports = root_reexports("pub use clock::{Clock, ClockMode};\npub use store::Store;");
    assert_eq!(exports.get("ClockMode").map(String::as_str), Some("clock"));
    assert_eq!(exports.get("Store").map(String::as_str), Some("store"));
}

/// Import cycles known and being broken on another branch: a cycle
/// found passes if its files are all in one entry (a cycle shrinks as it
/// is broken).
const CYCLES_ALLOWED: &[&[&str]] = &[
    // broken by branch store-language: catalog.rs <-> users.rs,
    // client_encryption_keys.rs (a database's parts name the catalog that
    // holds them). Around it this reading also finds container/mod.rs <->
    // scripts.rs (a container holds its Scripts, whose functions take the
    // Container) and mod.rs <-> durable/ (the store and its journal name
    // each other's types), for the store's owner to break.
    &[
        "emulator/src/store/catalog.rs",
        "emulator/src/store/checks.rs",
        "emulator/src/store/client_encryption_keys.rs",
        "emulator/src/store/container/mod.rs",
        "emulator/src/store/durable/meta.rs",
        "emulator/src/store/durable/mod.rs",
        "emulator/src/store/image.rs",
        "emulator/src/store/mod.rs",
        "emulator/src/store/offers.rs",
        "emulator/src/store/scripts.rs",
        "emulator/src/store/users.rs",
    ],
    // A front door and its part naming each other: script/mod.rs's
    // `failure` (which branch store-language rewrites without StatusCode)
    // is what bound.rs calls; settings.rs's `Invalid` is what values.rs
    // returns. Each breaks by moving the shared item into the part.
    &["emulator/src/script/bound.rs", "emulator/src/script/mod.rs"],
    &[
        "emulator/src/settings.rs",
        "emulator/src/settings/values.rs",
    ],
];

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
            let allowed = CYCLES_ALLOWED
                .iter()
                .any(|allowed| named.iter().all(|f| allowed.contains(&f.as_str())));
            if !allowed {
                found.push(format!(
                    "{} files: {}\n    {}",
                    named.len(),
                    named.join(", "),
                    cycle.imports.join("\n    ")
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "import cycles (break each by moving what they share down):\n{}",
        found.join("\n")
    );
}
