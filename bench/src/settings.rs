//! What a run is given: where things are (`Paths`), which parts run
//! (`Parts`), and how each is measured (`Settings`, written into
//! `results.json` beside the results).

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::load::Window;
use crate::measure::isolation::IsolationSettings;
use crate::measure::persistence::PersistenceSettings;
use crate::measure::purge::PurgeSettings;
use crate::measure::query::QueryKind;

#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    pub window: Window,
    pub startup_runs: usize,
    pub item_bytes: usize,
    /// Item counts at which memory and queries are measured; point loads
    /// run over the largest.
    pub sizes: Vec<usize>,
    pub concurrencies: Vec<usize>,
    pub fill_concurrency: usize,
    /// The queries measured, at every size, on every Cosmos target.
    pub queries: Vec<QueryKind>,
    pub query_budget: Duration,
    pub query_runs: (usize, usize),
    pub purge: PurgeSettings,
    pub persistence: PersistenceSettings,
    pub isolation: IsolationSettings,
    pub conformance_runs: usize,
    pub client_threads: usize,
    pub peer_tls: bool,
    /// The bare server answers with `content-type` alone instead of the
    /// emulator's point-read headers (`--bare-plain`).
    pub bare_plain: bool,
}

/// Where things are.
#[derive(Debug, Clone)]
pub struct Paths {
    /// Holds cosmos-emulator, bare-server, cosmos-conformance.
    pub bin_dir: PathBuf,
    /// Where the peer is installed; `None`: skip it.
    pub peer_dir: Option<PathBuf>,
    pub fixtures: PathBuf,
    pub out_dir: PathBuf,
}

/// Which parts to run.
#[derive(Debug, Clone, Copy)]
pub struct Parts {
    pub emulator: bool,
    pub bare: bool,
    pub peer: bool,
    /// Transactional batch and bulk against single creates (emulator).
    pub batch: bool,
    pub purge: bool,
    pub conformance: bool,
    /// One partition key range beside ten (emulator).
    pub ranges: bool,
    /// Stored procedures and UDFs (emulator).
    pub scripts: bool,
    /// Vector and full-text search (emulator).
    pub search: bool,
    /// `--data-dir` against in memory (emulator).
    pub persistence: bool,
    /// Reset, snapshot and restore of the whole account (emulator).
    pub isolation: bool,
    /// Direct mode (RNTBD) beside HTTPS (emulator with `--tls`).
    pub direct: bool,
}
