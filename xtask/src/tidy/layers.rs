//! The emulator's layers: which top-level module of `emulator/src` may
//! name which, as a table ([`LAYERS`]) that must stay free of cycles; the
//! edges the sources make between them (paths read as the compiler
//! resolves them, `paths.rs`); and the concept maps (`lib.rs`'s opening
//! list, the architecture page's map) that name every module.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use super::paths::{module_of, named_from_root, root_reexports, EMULATOR_SRC};
use super::{root, rust_sources, Source};

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
    // tokens (`resource_token`); the change feed reads a partition key's
    // scope (`partition_key`).
    (
        "operations",
        &[
            "account",
            "auth",
            "clock",
            "error",
            "faults",
            "json",
            "limits",
            "partition_key",
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

/// Every edge between two top-level modules of `emulator/src` that
/// `sources` make, with one file that makes it. The root's re-exports
/// are read from `lib.rs` when it is among them.
pub(super) fn module_edges(sources: &[Source]) -> BTreeMap<(String, String), String> {
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
pub(super) fn layer_violations(edges: BTreeMap<(String, String), String>) -> Vec<String> {
    let allowed: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
    let mut wrong = Vec::new();
    for ((from, to), file) in edges {
        match allowed.get(from.as_str()) {
            None => wrong.push(format!(
                "{from} is not in tidy/layers.rs's LAYERS: place it (it names {to} in {file})"
            )),
            Some(may) if !may.contains(&to.as_str()) => wrong.push(format!(
                "{from} may not name {to} ({file}); see LAYERS in xtask/src/tidy/layers.rs"
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
