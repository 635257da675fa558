//! The emulator's layers: which top-level module of `emulator/src` may
//! name which, as a table ([`LAYERS`]) that must stay free of cycles; the
//! edges the sources make between them (paths read as the compiler
//! resolves them, `paths.rs`); and the concept maps (`lib.rs`'s opening
//! list, the architecture page's map) that name every module.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use super::paths::{module_of, named_from_root, root_reexports, EMULATOR_SRC};
use super::{root, rust_sources, Source};

/// Which modules of `emulator/src` each one may name: the crate root's,
/// and those of the folders that group them (`data::store`, see
/// `paths.rs`'s `GROUPS`); `lib` is `lib.rs`, the crate's root, which
/// assembles the server. A module not in this table fails the test: a new
/// one must be placed here.
///
/// Bottom to top: the leaves; the query engine, which knows only leaves;
/// the store, which implements the engine's view; what runs over the
/// store (scripts, patches, the purge, re-indexing, permissions); the
/// HTTP layer; the control API over it; the endpoints, which assemble
/// both; the crate's root; the binary's settings and health check.
const LAYERS: &[(&str, &[&str])] = &[
    // The folders' front doors (`data/mod.rs`...): they declare their
    // modules and name nothing.
    ("protocol", &[]),
    ("data", &[]),
    ("net", &[]),
    ("binary", &[]),
    // Leaves: the quotas, the one error type, resource ids, the data
    // directory's files, JSON, time, the TTL rules, partition keys.
    ("protocol::limits", &[]),
    ("protocol::error", &[]),
    ("protocol::rid", &[]),
    ("data::persist", &[]),
    ("net::tls", &[]),
    ("binary::shutdown", &[]),
    ("protocol::json", &["protocol::limits"]),
    ("data::clock", &["protocol::error"]),
    ("protocol::consistency", &["protocol::error"]),
    // What requests cost, and the per-second budgets that throttle them.
    ("protocol::request_units", &["protocol::consistency"]),
    ("account::throttle", &[]),
    // The account's regions: names, write region, outages, replication.
    ("account::regions", &[]),
    ("data::ttl", &["protocol::error"]),
    (
        "protocol::partition_key",
        &["protocol::error", "protocol::limits"],
    ),
    ("protocol::item_key", &["protocol::partition_key"]),
    ("protocol::epk", &["protocol::partition_key"]),
    // Fault rules: what matches and how often, no HTTP.
    ("account::faults", &["protocol::error"]),
    // The indexes, the indexing policy and the paths they read: what the
    // query engine reads and the store keeps, below both.
    (
        "data::index",
        &[
            "protocol::error",
            "protocol::item_key",
            "protocol::json",
            "protocol::limits",
        ],
    ),
    // The query engine: no store, no HTTP, no scripts (it calls UDFs
    // through a runner it is given).
    (
        "data::query",
        &[
            "data::clock",
            "data::index",
            "protocol::error",
            "protocol::item_key",
            "protocol::json",
            "protocol::limits",
        ],
    ),
    // The store: implements the engine's view over its containers.
    (
        "data::store",
        &[
            "data::clock",
            "data::index",
            "data::persist",
            "data::query",
            "data::ttl",
            "protocol::epk",
            "protocol::error",
            "protocol::item_key",
            "protocol::json",
            "protocol::limits",
            "protocol::partition_key",
            "protocol::rid",
        ],
    ),
    // Over the store.
    (
        "data::patch",
        &[
            "data::query",
            "data::store",
            "protocol::error",
            "protocol::limits",
        ],
    ),
    (
        "data::script",
        &[
            "data::clock",
            "data::query",
            "data::store",
            "protocol::error",
            "protocol::json",
            "protocol::limits",
        ],
    ),
    ("data::purge", &["data::store"]),
    ("data::reindex", &["data::store"]),
    (
        "protocol::auth",
        &["protocol::error", "protocol::limits", "protocol::rid"],
    ),
    (
        "protocol::entra_token",
        &["protocol::auth", "protocol::error"],
    ),
    ("net::transport", &["net::tls"]),
    // The account: what every endpoint and front door shares.
    (
        "account",
        &[
            "account::faults",
            "account::regions",
            "account::throttle",
            "data::clock",
            "data::query",
            "data::script",
            "data::store",
            "protocol::auth",
            "protocol::consistency",
            "protocol::request_units",
        ],
    ),
    // The Cosmos operations, below every protocol: a function of the
    // account and a protocol-neutral request each. The metadata operations
    // query their resources in memory (`query`) and hand out permission
    // tokens (`resource_token`); the change feed reads a partition key's
    // scope (`partition_key`). A fault rule or an outage breaks the
    // request's connection through the transport's `ConnectionControl`,
    // whichever front door it came through (`net::transport`).
    (
        "operations",
        &[
            "account",
            "account::faults",
            "account::regions",
            "account::throttle",
            "data::clock",
            "data::patch",
            "data::persist",
            "data::query",
            "data::script",
            "data::store",
            "net::transport",
            "protocol::auth",
            "protocol::error",
            "protocol::json",
            "protocol::limits",
            "protocol::partition_key",
            "protocol::request_units",
            "protocol::rid",
        ],
    ),
    // The wire.
    (
        "http",
        &[
            "account",
            "account::faults",
            "account::regions",
            "account::throttle",
            "data::clock",
            "data::index",
            "data::patch",
            "data::persist",
            "data::purge",
            "data::query",
            "data::script",
            "data::store",
            "net::transport",
            "operations",
            "protocol::auth",
            "protocol::consistency",
            "protocol::entra_token",
            "protocol::epk",
            "protocol::error",
            "protocol::item_key",
            "protocol::json",
            "protocol::limits",
            "protocol::partition_key",
            "protocol::request_units",
            "protocol::rid",
        ],
    ),
    // Direct mode's front door (RNTBD), beside `http` and never through
    // it: its frame codec (a leaf), its connections (served for the
    // transport through its `BinaryFrontDoor`) and the dispatcher that
    // answers a request frame with the operations `http` calls.
    (
        "rntbd",
        &[
            "account",
            "account::faults",
            "data::clock",
            "data::store",
            "net::transport",
            "operations",
            "protocol::auth",
            "protocol::entra_token",
            "protocol::error",
            "protocol::request_units",
            "protocol::rid",
        ],
    ),
    // The control API (`/_emulator/...`): handlers over the HTTP layer's
    // state and extractors, above it so that `http/` stays the resources'
    // protocol and never names the emulator's own routes.
    (
        "control",
        &[
            "account::regions",
            "data::purge",
            "data::store",
            "http",
            "protocol::error",
            "protocol::item_key",
        ],
    ),
    // The account's endpoints, served and stopped together; what one
    // serves (`app`) is assembled here, above both `http` and `control`.
    (
        "endpoints",
        &[
            "account::regions",
            "control",
            "http",
            "net::transport",
            "rntbd",
        ],
    ),
    // The root: binds, serves, starts the background tasks.
    (
        "lib",
        &[
            "account",
            "account::regions",
            "account::throttle",
            "data::clock",
            "data::persist",
            "data::purge",
            "data::reindex",
            "data::script",
            "data::store",
            "endpoints",
            "http",
            "net::tls",
            "net::transport",
            "protocol::auth",
            "protocol::consistency",
            "protocol::error",
            "protocol::limits",
            "protocol::request_units",
        ],
    ),
    // The binary's side.
    ("binary::health", &["data::clock", "lib", "net::transport"]),
    (
        "binary::settings",
        &[
            "account::regions",
            "data::clock",
            "data::persist",
            "data::store",
            "lib",
            "net::tls",
            "net::transport",
            "protocol::auth",
            "protocol::consistency",
            "protocol::request_units",
        ],
    ),
    ("binary::probe", &["binary::settings"]),
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
            // `account::Account` names the module `account`: a group's
            // own item, where no module has the path's first two names.
            let group = name.split_once("::").map(|(group, _)| group.to_string());
            let to = if modules.contains(&name) {
                name
            } else if let Some(group) = group.filter(|group| modules.contains(group)) {
                group
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

/// Every module of the emulator is named where a newcomer looks first:
/// the opening list of the file that declares it (`lib.rs`'s for the
/// root's, `data/mod.rs`'s for `data::store`), as `` `name` ``, and the
/// architecture page's map of `emulator/src`, as `name.rs` or `name/` at
/// the start of a line (indented under its folder for a folder's module).
#[test]
fn every_module_is_in_the_concept_maps() {
    let modules: BTreeSet<String> = rust_sources(EMULATOR_SRC)
        .iter()
        .filter_map(|s| module_of(&s.path))
        .filter(|module| module != "lib")
        .collect();
    let opening = |file: &str| -> String {
        let text = fs::read_to_string(root().join(EMULATOR_SRC).join(file)).expect(file);
        text.lines()
            .take_while(|line| line.starts_with("//!"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let page = fs::read_to_string(root().join("docs/src/architecture.md")).expect("the page");
    let mapped = concept_map(&page);
    let mut missing = Vec::new();
    for module in &modules {
        let (declared_in, name) = match module.split_once("::") {
            Some((group, name)) => (format!("{group}/mod.rs"), name),
            None => ("lib.rs".to_string(), module.as_str()),
        };
        if !opening(&declared_in).contains(&format!("`{name}`")) {
            missing.push(format!("{declared_in}'s opening list: `{name}`"));
        }
        if !mapped.contains(module) {
            missing.push(format!("architecture.md's concept map: {module}"));
        }
    }
    assert!(missing.is_empty(), "modules not named: {missing:#?}");
}

/// The modules the architecture page's map of `emulator/src` names: an
/// entry at two spaces is the root's (`http/`, `lib.rs`), one at four a
/// module of the folder above it (`data::store` for `    store/` under
/// `  data/`).
fn concept_map(page: &str) -> BTreeSet<String> {
    let name = |entry: &str| {
        entry
            .trim_end_matches('/')
            .trim_end_matches(".rs")
            .to_string()
    };
    let mut mapped = BTreeSet::new();
    let mut folder = String::new();
    for line in page.lines() {
        if let Some(entry) = line.strip_prefix("    ").filter(|l| !l.starts_with(' ')) {
            let entry = entry.split_whitespace().next().unwrap_or_default();
            if entry.ends_with('/') || entry.ends_with(".rs") {
                mapped.insert(format!("{folder}::{}", name(entry)));
            }
        } else if let Some(entry) = line.strip_prefix("  ").filter(|l| !l.starts_with(' ')) {
            let entry = entry.split_whitespace().next().unwrap_or_default();
            if entry.ends_with('/') || entry.ends_with(".rs") {
                folder = name(entry);
                mapped.insert(folder.clone());
            }
        }
    }
    mapped
}
