//! The results of a run: the model written to `results.json` (what each
//! target measured, the machine, the settings, the checks and ratios).

use serde::Serialize;

use crate::load::Throughput;
use crate::measure::batch::BatchResults;
use crate::measure::change_feed::ChangeFeedRead;
use crate::measure::conformance::Conformance;
use crate::measure::dataset::Memory;
use crate::measure::direct::DirectResults;
use crate::measure::isolation::IsolationRow;
use crate::measure::persistence::PersistenceResults;
use crate::measure::purge::Purge;
use crate::measure::query::QueryLatency;
use crate::measure::ranges::RangesResults;
use crate::measure::scripts::ScriptsResults;
use crate::measure::search::SearchResults;
use crate::measure::startup::Startup;
use crate::settings::Settings;

#[derive(Debug, Clone, Serialize)]
pub struct Results {
    /// Seconds since the epoch when the run ended.
    pub finished_unix: u64,
    /// What was measured, e.g. the git revision.
    pub label: Option<String>,
    pub machine: Machine,
    pub settings: Settings,
    pub targets: Vec<TargetResults>,
    /// Transactional batch and bulk against single creates (emulator).
    pub batch: Option<BatchResults>,
    /// Stored procedures and UDFs (emulator).
    pub scripts: Option<ScriptsResults>,
    /// Vector and full-text search (emulator).
    pub search: Option<SearchResults>,
    pub purge: Option<Purge>,
    /// One partition key range beside ten (emulator).
    pub ranges: Option<RangesResults>,
    /// `--data-dir` against in memory (emulator).
    pub persistence: Option<PersistenceResults>,
    /// Reset, snapshot and restore of the whole account (emulator).
    pub isolation: Option<Vec<IsolationRow>>,
    /// Direct mode (RNTBD) beside HTTPS (emulator with `--tls`).
    pub direct: Option<DirectResults>,
    pub conformance: Option<Conformance>,
    pub ratios: Vec<Ratio>,
    pub checks: Vec<Check>,
    /// Skips and failures, in words.
    pub notes: Vec<String>,
}

/// Everything measured on one target.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TargetResults {
    pub name: String,
    pub description: String,
    pub startup: Option<Startup>,
    pub idle_rss_bytes: Option<u64>,
    pub empty_container_rss_bytes: Option<u64>,
    pub memory: Vec<Memory>,
    /// Size of a point read's answer body.
    pub point_read_body_bytes: Option<usize>,
    /// A point read's answer headers (`name: value`), but those hyper
    /// writes itself (`content-length`, `date`): what the bare server
    /// answers with, so that both answers weigh the same on the wire.
    pub point_read_headers: Vec<String>,
    pub reads: Vec<Throughput>,
    pub writes: Vec<Throughput>,
    pub queries: Vec<QueryLatency>,
    /// The latest-version change feed read from the beginning, per size.
    pub change_feed: Vec<ChangeFeedRead>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub cpus: usize,
    pub cpu_model: String,
    pub kernel: String,
    pub memory_bytes: u64,
    /// /proc/loadavg at the start and the end: the machine is shared.
    pub load_average_start: String,
    pub load_average_end: String,
}

impl Machine {
    pub fn probe() -> Machine {
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        let cpuinfo = read("/proc/cpuinfo");
        let meminfo = read("/proc/meminfo");
        Machine {
            cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
            cpu_model: cpuinfo
                .lines()
                .find_map(|l| l.strip_prefix("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
                .unwrap_or_default(),
            kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
            memory_bytes: meminfo
                .lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
                .map_or(0, |kb| kb * 1024),
            load_average_start: load_average(),
            load_average_end: String::new(),
        }
    }
}

/// The first three fields of /proc/loadavg (empty where there is none).
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// One of the targets `checks.rs` holds the measurements against.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub target: String,
    pub measured: String,
    /// `None`: not measured.
    pub pass: Option<bool>,
}

/// The emulator's throughput over another target's, at one concurrency.
#[derive(Debug, Clone, Serialize)]
pub struct Ratio {
    pub operation: &'static str,
    pub concurrency: usize,
    pub versus: String,
    pub emulator_per_second: f64,
    pub other_per_second: f64,
    pub ratio: f64,
}
