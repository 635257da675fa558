//! Persistence (`--data-dir`): what keeping everything on disk costs.
//!
//! Two parts, each on emulators of its own, each data directory a fresh
//! temporary one removed afterwards:
//!
//! - **speed**: four emulators side by side, in memory and with a data
//!   directory under `--sync never`, `periodic` and `always`, each loaded
//!   with the same 1 KB items; point writes (upserts of random existing
//!   items, [`point::writes`], the emulator write benchmark's load) at every
//!   concurrency, the four taking turns at each concurrency so a change in
//!   the machine's load hits them all; point reads at one concurrency; then
//!   every data directory is restarted on (SIGTERM, spawn) and must hold
//!   every item.
//! - **restarts**: one data directory filled over HTTP size by size (0,
//!   10k, 100k items by default); after each size the emulator is stopped
//!   with SIGTERM and started again several times, timed from spawn to the
//!   first 2xx of a signed `GET /` (as [`crate::measure::startup`]), each
//!   start checked to hold every item; the resident memory after loading
//!   the largest size beside an in-memory emulator that holds the same
//!   items; the data directory's bytes per item before and after
//!   `POST /_emulator/compact`; the compaction's own time, and the write
//!   throughput while one runs; start-up again once the state is in a
//!   snapshot.
//!
//! Every answer is checked: a load with any non-2xx answer, a start whose
//! container holds a different number of items, a compaction answer that is
//! not 200 with its four fields, or a stop that is not a clean exit fails
//! the part with a message instead of giving numbers.
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::connection::{expect_success, Connection, Endpoint};
use crate::cosmos::Signer;
use crate::documents::{id, partition_header};
use crate::load::{Counted, Throughput, Window};
use crate::measure::dataset::DATABASE;
use crate::measure::send_once;
use crate::measure::startup::first_success;
use crate::process::ServerProcess;
use crate::stats::Latency;
use crate::targets::Target;
mod report;
mod restarts;
mod speed;

pub use report::markdown;
pub use restarts::measure_restarts;
pub use speed::measure_speed;

const CONTAINER: &str = "items";

/// How long a stopped emulator may take to exit after SIGTERM.
const STOP_LIMIT: Duration = Duration::from_secs(30);

/// Where an emulator keeps its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Storage {
    /// No `--data-dir`.
    InMemory,
    /// `--data-dir DIR --sync never`.
    SyncNever,
    /// `--data-dir DIR --sync periodic` (the default with a data directory).
    SyncPeriodic,
    /// `--data-dir DIR --sync always`.
    SyncAlways,
}

impl Storage {
    pub const ALL: [Storage; 4] = [
        Storage::InMemory,
        Storage::SyncNever,
        Storage::SyncPeriodic,
        Storage::SyncAlways,
    ];

    pub fn describe(self) -> &'static str {
        match self {
            Storage::InMemory => "in memory",
            Storage::SyncNever => "--data-dir, --sync never",
            Storage::SyncPeriodic => "--data-dir, --sync periodic",
            Storage::SyncAlways => "--data-dir, --sync always",
        }
    }

    fn sync(self) -> Option<&'static str> {
        match self {
            Storage::InMemory => None,
            Storage::SyncNever => Some("never"),
            Storage::SyncPeriodic => Some("periodic"),
            Storage::SyncAlways => Some("always"),
        }
    }
}

/// The emulator target with `--data-dir dir` and `--sync` if given.
fn with_data_dir(target: &Target, dir: &Path, sync: Option<&str>, log: &Path) -> Target {
    let mut args = vec!["--data-dir".to_string(), dir.display().to_string()];
    if let Some(sync) = sync {
        args.extend(["--sync".to_string(), sync.to_string()]);
    }
    let description = format!(
        "{}, --data-dir{}",
        target.description,
        sync.map(|s| format!(" --sync {s}")).unwrap_or_default()
    );
    target.with_args(&args, description, log)
}

#[derive(Debug, Clone, Serialize)]
pub struct PersistenceSettings {
    /// Warm-up and window of each write and read load.
    pub window: Window,
    /// Concurrencies of the write loads.
    pub concurrencies: Vec<usize>,
    /// Concurrency of the read loads.
    pub read_concurrency: usize,
    /// Items each emulator of the speed part holds (writes upsert them).
    pub write_items: usize,
    /// Item counts the restarts are timed at, ascending.
    pub startup_sizes: Vec<usize>,
    /// Timed starts per size.
    pub startup_runs: usize,
    pub item_bytes: usize,
    pub fill_concurrency: usize,
    /// Concurrency of the writes running while a compaction runs.
    pub compaction_concurrency: usize,
    /// Where the temporary data directories are made.
    #[serde(skip)]
    pub temp_root: PathBuf,
}

/// One storage's loads.
#[derive(Debug, Clone, Serialize)]
pub struct StorageRow {
    pub storage: Storage,
    /// Loading its items (creates).
    pub fill: Counted,
    pub writes: Vec<Throughput>,
    pub reads: Vec<Throughput>,
    /// Spawn to first 2xx of the restart that checked the items were kept
    /// (data directories only).
    pub restart_ready_ms: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Speed {
    pub items: usize,
    pub rows: Vec<StorageRow>,
}

/// Timed starts on one data directory.
#[derive(Debug, Clone, Serialize)]
pub struct StartupRow {
    /// What the directory held, in words.
    pub state: String,
    pub items: usize,
    /// The directory's size on disk before the starts (apparent bytes).
    pub disk_bytes: u64,
    /// Of which in `snapshot-*` files (the rest: the logs).
    pub snapshot_bytes: u64,
    /// Spawn to the first 2xx answer, per start.
    pub ready_ms: Vec<f64>,
    pub median_ready_ms: f64,
    /// Spawn to the `listening on` line (recovery is done by then), median.
    pub median_line_ms: f64,
    /// SIGTERM to exit, median.
    pub median_stop_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Files {
    /// Apparent size of every file in the directory.
    pub bytes: u64,
    /// Blocks allocated (`st_blocks` × 512).
    pub allocated_bytes: u64,
    /// (name, apparent bytes), by name.
    pub files: Vec<(String, u64)>,
}

impl Files {
    /// Bytes in `snapshot-*` files.
    pub fn snapshot_bytes(&self) -> u64 {
        self.files
            .iter()
            .filter(|(name, _)| name.starts_with("snapshot-"))
            .map(|(_, bytes)| bytes)
            .sum()
    }
}

/// `POST /_emulator/compact`'s answer.
#[derive(Debug, Clone, Serialize)]
pub struct CompactAnswer {
    pub generation: u64,
    pub snapshot_bytes: u64,
    pub log_bytes_before: u64,
    pub millis: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Compaction {
    pub items: usize,
    /// Compaction of a quiet emulator.
    pub quiet: CompactAnswer,
    /// Sending it to its answer.
    pub quiet_wall_ms: f64,
    /// The directory right after the fill (emulator stopped).
    pub after_fill: Files,
    /// The directory right after the quiet compaction answered.
    pub after_compact: Files,
    /// Compaction while writers run.
    pub loaded: CompactAnswer,
    pub loaded_wall_ms: f64,
    pub writers: usize,
    /// Writes/s over the window before the compaction was sent.
    pub writes_before_per_second: f64,
    /// Writes completed while the compaction ran, per second of it.
    pub writes_during_per_second: f64,
    pub writes_before: Option<Latency>,
    pub writes_during: Option<Latency>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Restarts {
    pub fill: Vec<Counted>,
    pub startup: Vec<StartupRow>,
    pub items: usize,
    /// RSS of the emulator that loaded the largest size from its data
    /// directory, 300 ms after its first 2xx.
    pub data_dir_rss_bytes: u64,
    /// The same, 3 s after its first 2xx.
    pub data_dir_rss_later_bytes: u64,
    /// Point reads of the largest size right after (c = read concurrency).
    pub reads_after_restart: Throughput,
    /// The same emulator 300 ms after those reads.
    pub data_dir_rss_after_reads_bytes: u64,
    /// RSS of the data-directory emulator that was filled over HTTP, at the
    /// end of the fill.
    pub data_dir_filled_rss_bytes: u64,
    /// RSS of an in-memory emulator filled with the same items, 300 ms
    /// after the fill.
    pub in_memory_rss_bytes: u64,
    pub compaction: Compaction,
}

#[derive(Debug, Clone, Serialize)]
pub struct PersistenceResults {
    pub settings: PersistenceSettings,
    pub speed: Option<Speed>,
    pub restarts: Option<Restarts>,
    /// Why a part is missing.
    pub errors: Vec<String>,
}

/// A temporary directory, removed (with everything in it) when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(root: &Path, name: &str) -> Result<TempDir, String> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = root.join(format!(
            "cosmos-bench-{name}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(TempDir(path))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Sizes of the files under `dir` (recursively).
pub fn files(dir: &Path) -> Result<Files, String> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Files {
        bytes: 0,
        allocated_bytes: 0,
        files: Vec::new(),
    };
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))? {
            let entry = entry.map_err(|e| format!("{}: {e}", d.display()))?;
            let meta = entry
                .metadata()
                .map_err(|e| format!("{}: {e}", entry.path().display()))?;
            if meta.is_dir() {
                pending.push(entry.path());
            } else {
                out.bytes += meta.len();
                out.allocated_bytes += meta.blocks() * 512;
                let name = entry.path();
                let name = name.strip_prefix(dir).unwrap_or(&name);
                out.files.push((name.display().to_string(), meta.len()));
            }
        }
    }
    out.files.sort();
    Ok(out)
}

/// A running emulator with its endpoint and signer.
struct Running {
    process: ServerProcess,
    endpoint: Endpoint,
    signer: Signer,
}

impl Running {
    /// Spawns `target` and waits for its first 2xx `GET /`; returns it with
    /// (spawn → `listening on`, spawn → first 2xx).
    async fn start(target: &Target, key: &str) -> Result<(Running, Duration, Duration), String> {
        let process = ServerProcess::spawn(target.command())?;
        let endpoint = Endpoint::parse(&process.url)?;
        let signer = Signer::new(key, &endpoint.authority())?;
        first_success(&endpoint, &signer).await?;
        let ready = process.spawned_at.elapsed();
        let line = process.spawned_to_line;
        Ok((
            Running {
                process,
                endpoint,
                signer,
            },
            line,
            ready,
        ))
    }

    /// Items stored in the container (`GET /_emulator/stats`), which must
    /// be `expected`; and item 0 (if any) must read back 200.
    async fn check_items(&self, expected: usize) -> Result<(), String> {
        let stored = stored_items(&self.endpoint, &self.signer, CONTAINER).await?;
        if stored != Some(expected) {
            return Err(format!(
                "{DATABASE}/{CONTAINER} holds {} items, not the {expected} written",
                stored.map_or("no container and no".into(), |n| n.to_string())
            ));
        }
        if expected > 0 {
            send_once(
                &self.endpoint,
                self.signer
                    .read_item(DATABASE, CONTAINER, &id(0), &partition_header(0)),
            )
            .await
            .map_err(|e| format!("reading back {}: {e}", id(0)))?;
        }
        Ok(())
    }

    fn stop(self) -> Result<Duration, String> {
        self.process.terminate(STOP_LIMIT)
    }
}

/// Items stored in `container` of the bench database; `None` when it does
/// not exist.
async fn stored_items(
    endpoint: &Endpoint,
    signer: &Signer,
    container: &str,
) -> Result<Option<usize>, String> {
    let response = send_once(endpoint, signer.stats())
        .await
        .map_err(|e| format!("GET /_emulator/stats: {e}"))?;
    let stats: Value = serde_json::from_slice(&response.body)
        .map_err(|e| format!("/_emulator/stats is not JSON: {e}"))?;
    let containers = stats["containers"]
        .as_array()
        .ok_or_else(|| format!("/_emulator/stats has no containers list: {stats}"))?;
    match containers
        .iter()
        .find(|c| c["database"] == DATABASE && c["container"] == container)
    {
        None => Ok(None),
        Some(c) => c["storedItems"]
            .as_u64()
            .map(|n| Some(n as usize))
            .ok_or_else(|| format!("/_emulator/stats: no storedItems in {c}")),
    }
}

/// A load's result, if every answer was a 2xx and some came.
fn clean(t: Throughput, what: &str) -> Result<Throughput, String> {
    if t.errors > 0 {
        return Err(format!(
            "{what} at concurrency {}: {} errors, the first: {}",
            t.concurrency,
            t.errors,
            t.first_error.as_deref().unwrap_or("?")
        ));
    }
    if t.requests == 0 {
        return Err(format!(
            "{what} at concurrency {}: no request completed in the window",
            t.concurrency
        ));
    }
    Ok(t)
}

/// `POST /_emulator/compact`: its answer (200 with the four fields) and
/// the time from sending to the answer.
async fn compact(endpoint: &Endpoint, signer: &Signer) -> Result<(CompactAnswer, f64), String> {
    let mut connection = Connection::open(endpoint)
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", endpoint.url()))?;
    let sent = Instant::now();
    let result = connection.send(signer.compact()).await;
    let wall_ms = sent.elapsed().as_secs_f64() * 1e3;
    let response = expect_success(result).map_err(|e| format!("POST /_emulator/compact {e}"))?;
    if response.status != 200 {
        return Err(format!(
            "POST /_emulator/compact answered {}, not 200",
            response.status
        ));
    }
    let answer: Value = serde_json::from_slice(&response.body)
        .map_err(|e| format!("POST /_emulator/compact: the answer is not JSON: {e}"))?;
    let field = |name: &str| {
        answer[name].as_f64().ok_or_else(|| {
            format!("POST /_emulator/compact: no number {name:?} in its answer {answer}")
        })
    };
    Ok((
        CompactAnswer {
            generation: field("generation")? as u64,
            snapshot_bytes: field("snapshotBytes")? as u64,
            log_bytes_before: field("logBytesBefore")? as u64,
            millis: field("millis")?,
        },
        wall_ms,
    ))
}

/// Both parts; a part that fails is named in `errors`.
pub async fn measure(
    emulator: &Target,
    key: &str,
    settings: PersistenceSettings,
    logs: &Path,
    mut progress: impl FnMut(String),
) -> PersistenceResults {
    let mut errors = Vec::new();
    let speed = match measure_speed(emulator, key, &settings, logs, &mut progress).await {
        Ok(speed) => Some(speed),
        Err(e) => {
            errors.push(format!("persistence speed: {e}"));
            None
        }
    };
    let restarts = match measure_restarts(emulator, key, &settings, logs, &mut progress).await {
        Ok(restarts) => Some(restarts),
        Err(e) => {
            errors.push(format!("persistence restarts: {e}"));
            None
        }
    };
    PersistenceResults {
        settings,
        speed,
        restarts,
        errors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_add_up_every_file_below_and_the_temporary_directory_goes() {
        let dir = TempDir::new(&std::env::temp_dir(), "unit").unwrap();
        let path = dir.path().to_path_buf();
        std::fs::write(path.join("log-00000001.bin"), [0u8; 100]).unwrap();
        std::fs::create_dir(path.join("sub")).unwrap();
        std::fs::write(path.join("sub/x"), [0u8; 23]).unwrap();
        std::fs::write(path.join("LOCK"), []).unwrap();
        let f = files(&path).unwrap();
        assert_eq!(f.bytes, 123);
        assert_eq!(
            f.files,
            vec![
                ("LOCK".to_string(), 0),
                ("log-00000001.bin".to_string(), 100),
                ("sub/x".to_string(), 23)
            ]
        );
        drop(dir);
        assert!(!path.exists());
    }
}
