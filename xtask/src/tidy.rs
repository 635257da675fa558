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
//!   what it holds.
//!
//! `docs/src/architecture.md` states these as numbered invariants, each
//! naming its test here.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

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
    ("ttl", &["error"]),
    ("partition_key", &["error", "limits"]),
    ("item_key", &["partition_key"]),
    ("epk", &["partition_key"]),
    // The query engine: no store, no HTTP, no scripts (it calls UDFs
    // through a runner it is given).
    ("query", &["clock", "error", "item_key", "json", "limits"]),
    // The store: implements the engine's view over its containers.
    (
        "store",
        &[
            "clock",
            "epk",
            "error",
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
    ("transport", &["tls"]),
    // The wire.
    (
        "http",
        &[
            "auth",
            "clock",
            "epk",
            "error",
            "item_key",
            "json",
            "limits",
            "partition_key",
            "patch",
            "persist",
            "purge",
            "query",
            "resource_token",
            "rid",
            "script",
            "store",
            "transport",
        ],
    ),
    // The root: binds, serves, starts the background tasks.
    (
        "lib",
        &[
            "auth",
            "clock",
            "error",
            "http",
            "limits",
            "persist",
            "purge",
            "reindex",
            "script",
            "store",
            "tls",
            "transport",
        ],
    ),
    // The binary's side.
    ("health", &["clock", "lib", "transport"]),
    (
        "settings",
        &["auth", "clock", "lib", "persist", "store", "transport"],
    ),
    ("probe", &["settings"]),
];

/// Top-level modules whose files may not name a web framework's types.
const BELOW_HTTP: &[&str] = &[
    "clock",
    "epk",
    "error",
    "item_key",
    "json",
    "limits",
    "partition_key",
    "patch",
    "persist",
    "purge",
    "query",
    "reindex",
    "rid",
    "script",
    "store",
    "ttl",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .to_path_buf()
}

/// Every `.rs` file under `dir`, sorted, outside build output, installed
/// packages and git's own directory.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                let skipped = ["target", "node_modules", ".git"];
                if !skipped.iter().any(|name| path.ends_with(name)) {
                    pending.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// `src` with comments, string and character literals blanked out, so
/// that a path cited in a comment or a message is not taken for a use.
fn code_only(src: &str) -> String {
    let bytes = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &src[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |end| end + 2);
        } else if let Some(len) = raw_string(rest, i == 0 || is_ident(bytes[i - 1])) {
            i += len;
        } else if rest.starts_with('"') {
            let mut j = 1;
            while j < rest.len() && rest.as_bytes()[j] != b'"' {
                j += if rest.as_bytes()[j] == b'\\' { 2 } else { 1 };
            }
            i += (j + 1).min(rest.len());
        } else if let Some(len) = char_literal(rest) {
            i += len;
        } else {
            let c = rest.chars().next().expect("not at the end");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The length of the raw string `r#"..."#` that `rest` starts with.
fn raw_string(rest: &str, after_ident: bool) -> Option<usize> {
    if after_ident {
        return None;
    }
    let body = rest.strip_prefix('r').or_else(|| rest.strip_prefix("br"))?;
    let hashes = body.len() - body.trim_start_matches('#').len();
    let opened = body[hashes..].strip_prefix('"')?;
    let close = format!("\"{}", "#".repeat(hashes));
    let end = opened.find(&close)?;
    Some(rest.len() - opened.len() + end + close.len())
}

/// The length of the character literal `'x'` or `'\n'` that `rest`
/// starts with (a lifetime, `'a`, is not one).
fn char_literal(rest: &str) -> Option<usize> {
    let body = rest.strip_prefix('\'')?;
    let mut chars = body.char_indices();
    let (_, first) = chars.next()?;
    if first == '\\' {
        return body.find('\'').filter(|&end| end > 0).map(|end| end + 2);
    }
    let (at, next) = chars.next()?;
    (next == '\'').then_some(at + 2)
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

fn first_segment(path: &str) -> Option<String> {
    let path = path.trim_start();
    let end = path
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(path.len());
    (end > 0).then(|| path[..end].to_string())
}

/// The top-level module a file of `emulator/src` belongs to (`lib` for
/// `lib.rs`); `None` for `main.rs`, which uses the library by its name.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let first = file.strip_prefix(src).ok()?.components().next()?;
    let name = first.as_os_str().to_str()?.trim_end_matches(".rs");
    (name != "main").then(|| name.to_string())
}

/// What `lib.rs` re-exports from its modules (`pub use clock::{Clock,
/// ClockMode};`): a path through the root names the module it comes from.
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for statement in code_only(lib).split(';') {
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
fn module_edges() -> BTreeMap<(String, String), PathBuf> {
    let src = root().join("emulator/src");
    let lib = fs::read_to_string(src.join("lib.rs")).expect("emulator/src/lib.rs");
    let reexports = root_reexports(&lib);
    let modules: BTreeSet<String> = rust_files(&src)
        .iter()
        .filter_map(|file| module_of(&src, file))
        .collect();
    let mut edges = BTreeMap::new();
    for file in rust_files(&src) {
        let Some(from) = module_of(&src, &file) else {
            continue;
        };
        let code = code_only(&fs::read_to_string(&file).expect("a source file"));
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
                edges.entry((from.clone(), to)).or_insert(file.clone());
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
                "{from} is not in tidy.rs's LAYERS: place it (it names {to} in {})",
                file.display()
            )),
            Some(may) if !may.contains(&to.as_str()) => wrong.push(format!(
                "{from} may not name {to} ({}); see LAYERS in xtask/src/tidy.rs",
                file.display()
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
    let src = root().join("emulator/src");
    let placed: BTreeSet<&str> = LAYERS.iter().map(|(module, _)| *module).collect();
    let missing: Vec<String> = rust_files(&src)
        .iter()
        .filter_map(|file| module_of(&src, file))
        .filter(|module| !placed.contains(module.as_str()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    assert!(missing.is_empty(), "not in LAYERS: {missing:?}");
}

#[test]
fn no_web_framework_below_http() {
    let src = root().join("emulator/src");
    let mut found = Vec::new();
    for file in rust_files(&src) {
        let Some(module) = module_of(&src, &file) else {
            continue;
        };
        if !BELOW_HTTP.contains(&module.as_str()) {
            continue;
        }
        let code = code_only(&fs::read_to_string(&file).expect("a source file"));
        for framework in ["axum", "hyper"] {
            if code.contains(&format!("{framework}::")) {
                found.push(format!("{} names {framework}", file.display()));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn every_source_file_says_what_it_holds() {
    let root = root();
    let mut silent = Vec::new();
    for file in rust_files(&root) {
        let text = fs::read_to_string(&file).expect("a source file");
        if !text.starts_with("//!") {
            silent.push(
                file.strip_prefix(&root)
                    .unwrap_or(&file)
                    .display()
                    .to_string(),
            );
        }
    }
    assert!(
        silent.is_empty(),
        "files that do not open with a //! comment:\n{}",
        silent.join("\n")
    );
}

/// The query engine's thread-locals that only remember (a word's stem, a
/// compiled pattern): an answer never depends on what they hold. Anything
/// a run needs travels in its context (`query/context.rs`).
const QUERY_CACHES: &[&str] = &["query/search/text.rs", "query/functions/regex.rs"];

#[test]
fn a_query_run_keeps_nothing_in_thread_locals() {
    let src = root().join("emulator/src");
    let mut found = Vec::new();
    for file in rust_files(&src.join("query")) {
        let relative = file.strip_prefix(&src).unwrap_or(&file);
        let code = code_only(&fs::read_to_string(&file).expect("a source file"));
        let cache = QUERY_CACHES.iter().any(|c| relative == Path::new(c));
        if code.contains("thread_local!") && !cache {
            found.push(relative.display().to_string());
        }
    }
    assert!(
        found.is_empty(),
        "thread-locals in the query engine (a run's state goes in its context): {found:?}"
    );
}

/// `#[path]` includes that are not unit tests: the quick start's example,
/// compiled by the Rust SDK tests as the guide shows it.
const PATH_INCLUDES: &[&str] = &["sdk-tests/rust/tests/sdk.rs"];

#[test]
fn unit_tests_sit_where_contributing_says() {
    // CONTRIBUTING.md: inline, or `x/tests.rs` in the module's directory,
    // found by the module tree alone.
    let root = root();
    let mut found = Vec::new();
    for file in rust_files(&root) {
        let relative = file.strip_prefix(&root).unwrap_or(&file);
        let code = code_only(&fs::read_to_string(&file).expect("a source file"));
        let included = PATH_INCLUDES.iter().any(|c| relative == Path::new(c));
        if code.contains("#[path") && !included {
            found.push(relative.display().to_string());
        }
    }
    assert!(found.is_empty(), "#[path] attributes: {found:?}");
}

#[test]
fn the_suite_never_imports_the_emulator() {
    // Its expectations come from the fixtures, and it talks HTTP only: it
    // must run against any endpoint. Its tests may start the emulator.
    let root = root();
    let manifest = fs::read_to_string(root.join("conformance/Cargo.toml")).expect("its manifest");
    let dependencies = manifest
        .split("\n[")
        .find(|section| section.starts_with("dependencies]"))
        .expect("a [dependencies] section");
    assert!(
        !dependencies.contains("cosmos-emulator"),
        "conformance depends on the emulator"
    );
    for file in rust_files(&root.join("conformance/src")) {
        let code = code_only(&fs::read_to_string(&file).expect("a source file"));
        assert!(
            !code.contains("cosmos_emulator"),
            "{} names the emulator",
            file.display()
        );
    }
}

#[test]
fn the_scanner_sees_code_not_comments_or_strings() {
    let code = code_only(
        "use crate::a::b; // crate::c\n/* crate::d */ let s = \"crate::e\"; \
         let r = r#\"crate::f\"#; let c = '\"'; fn g<'x>() { crate::h::i() }\n\
         use crate::{j::k, l, m::{n, o}};",
    );
    let found: Vec<String> = crate_paths(&code).into_iter().collect();
    assert_eq!(found, ["a", "h", "j", "l", "m"]);
    let exports = root_reexports("pub use clock::{Clock, ClockMode};\npub use store::Store;");
    assert_eq!(exports.get("ClockMode").map(String::as_str), Some("clock"));
    assert_eq!(exports.get("Store").map(String::as_str), Some("store"));
}
