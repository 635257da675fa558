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

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::connection::{Connection, Endpoint};
use crate::cosmos::Signer;
use crate::documents::{id, partition_header};
use crate::load::{throughput, Counted, Load, Throughput, Window};
use crate::measure::dataset::{self, DATABASE};
use crate::measure::startup::first_success;
use crate::measure::{expect_success, point, send_once};
use crate::process::ServerProcess;
use crate::report::{count, mib, ms};
use crate::stats::{median, Latency};
use crate::targets::Target;

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

/// The speed part: writes and reads in memory and under each `--sync`.
pub async fn measure_speed(
    emulator: &Target,
    key: &str,
    settings: &PersistenceSettings,
    logs: &Path,
    progress: &mut impl FnMut(String),
) -> Result<Speed, String> {
    let log = logs.join("persistence.log");
    let items = settings.write_items.max(1);
    // Declared before the emulators: removed after they are killed.
    let mut dirs = Vec::new();
    let mut targets = Vec::new();
    for storage in Storage::ALL {
        targets.push(match storage.sync() {
            None => emulator.with_args(&[], emulator.description.clone(), &log),
            Some(sync) => {
                let dir = TempDir::new(&settings.temp_root, &format!("data-{sync}"))?;
                let target = with_data_dir(emulator, dir.path(), Some(sync), &log);
                dirs.push(dir);
                target
            }
        });
    }
    let mut running = Vec::new();
    let mut rows = Vec::new();
    for (storage, target) in Storage::ALL.into_iter().zip(&targets) {
        let (r, _, _) = Running::start(target, key).await?;
        dataset::create_container(&r.endpoint, &r.signer, CONTAINER, false).await?;
        let fill = dataset::fill(
            &r.endpoint,
            &r.signer,
            CONTAINER,
            0..items,
            settings.item_bytes,
            None,
            settings.fill_concurrency,
        )
        .await
        .map_err(|e| format!("{}: loading: {e}", storage.describe()))?;
        progress(format!(
            "{}: {} items loaded at {} creates/s",
            storage.describe(),
            count(items as f64),
            count(fill.per_second)
        ));
        running.push(r);
        rows.push(StorageRow {
            storage,
            fill,
            writes: Vec::new(),
            reads: Vec::new(),
            restart_ready_ms: None,
        });
    }
    let loads: [(&str, &[usize]); 2] = [
        ("writes", &settings.concurrencies),
        ("reads", std::slice::from_ref(&settings.read_concurrency)),
    ];
    for (operation, concurrencies) in loads {
        for &concurrency in concurrencies {
            for (row, r) in rows.iter_mut().zip(&running) {
                let make = if operation == "writes" {
                    point::writes(&r.signer, CONTAINER, items, settings.item_bytes)
                } else {
                    point::reads(&r.signer, CONTAINER, items)
                };
                let what = format!("{} {operation}", row.storage.describe());
                let t = throughput(
                    &r.endpoint,
                    concurrency,
                    settings.window,
                    Some(&r.process),
                    make,
                )
                .await?;
                let t = clean(t, &what)?;
                progress(format!(
                    "{what} c={concurrency}: {} req/s, p50 {}, p99 {}, server {} µs/req",
                    count(t.per_second),
                    t.latency.as_ref().map_or("–".into(), |l| ms(l.p50_us)),
                    t.latency.as_ref().map_or("–".into(), |l| ms(l.p99_us)),
                    t.server_cpu_us_per_request
                        .map_or("–".into(), |v| format!("{v:.1}")),
                ));
                if operation == "writes" {
                    row.writes.push(t);
                } else {
                    row.reads.push(t);
                }
            }
        }
    }
    // Every data directory must come back with every item.
    for ((row, r), target) in rows.iter_mut().zip(running).zip(&targets) {
        if row.storage == Storage::InMemory {
            continue;
        }
        r.stop()
            .map_err(|e| format!("{}: stopping: {e}", row.storage.describe()))?;
        let (again, _, ready) = Running::start(target, key)
            .await
            .map_err(|e| format!("{}: restarting: {e}", row.storage.describe()))?;
        again
            .check_items(items)
            .await
            .map_err(|e| format!("{}: after a restart: {e}", row.storage.describe()))?;
        again.stop()?;
        row.restart_ready_ms = Some(ready.as_secs_f64() * 1e3);
    }
    drop(dirs);
    Ok(Speed { items, rows })
}

/// `runs` timed starts of `target`, each checked to hold `items` items (or
/// no container at all when `items` is `None`), each stopped with SIGTERM.
async fn timed_starts(
    target: &Target,
    key: &str,
    runs: usize,
    items: Option<usize>,
) -> Result<(Vec<f64>, Vec<f64>, Vec<f64>), String> {
    let (mut ready_ms, mut line_ms, mut stop_ms) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs.max(1) {
        let (r, line, ready) = Running::start(target, key).await?;
        match items {
            Some(items) => r.check_items(items).await?,
            None => {
                if let Some(n) = stored_items(&r.endpoint, &r.signer, CONTAINER).await? {
                    return Err(format!("a new directory holds a container of {n} items"));
                }
            }
        }
        stop_ms.push(r.stop()?.as_secs_f64() * 1e3);
        ready_ms.push(ready.as_secs_f64() * 1e3);
        line_ms.push(line.as_secs_f64() * 1e3);
    }
    Ok((ready_ms, line_ms, stop_ms))
}

fn startup_row(
    state: String,
    items: usize,
    disk: Option<&Files>,
    (ready_ms, line_ms, stop_ms): (Vec<f64>, Vec<f64>, Vec<f64>),
) -> StartupRow {
    StartupRow {
        state,
        items,
        disk_bytes: disk.map_or(0, |d| d.bytes),
        snapshot_bytes: disk.map_or(0, Files::snapshot_bytes),
        median_ready_ms: median(&ready_ms).unwrap_or(f64::NAN),
        median_line_ms: median(&line_ms).unwrap_or(f64::NAN),
        median_stop_ms: median(&stop_ms).unwrap_or(f64::NAN),
        ready_ms,
    }
}

/// The restart part: start-up by size, memory, disk, compaction.
pub async fn measure_restarts(
    emulator: &Target,
    key: &str,
    settings: &PersistenceSettings,
    logs: &Path,
    progress: &mut impl FnMut(String),
) -> Result<Restarts, String> {
    let log = logs.join("persistence.log");
    let runs = settings.startup_runs.max(1);
    let mut sizes = settings.startup_sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    let largest = *sizes.last().ok_or("no start-up sizes")?;
    if largest == 0 {
        return Err("the largest start-up size must hold items".into());
    }
    let mut startup = Vec::new();

    // A new, empty directory each time (the first start ever).
    {
        let mut times = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let dir = TempDir::new(&settings.temp_root, "data-new")?;
            let target = with_data_dir(emulator, &dir.path().join("data"), None, &log);
            let (ready, line, stop) = timed_starts(&target, key, 1, None).await?;
            times.0.extend(ready);
            times.1.extend(line);
            times.2.extend(stop);
        }
        let row = startup_row("a new directory".into(), 0, None, times);
        progress(format!(
            "a new directory: ready in {:.1} ms (median of {runs})",
            row.median_ready_ms
        ));
        startup.push(row);
    }

    let dir = TempDir::new(&settings.temp_root, "data-restarts")?;
    let target = with_data_dir(emulator, dir.path(), None, &log);
    let mut fill = Vec::new();
    let mut loaded = 0;
    let mut filled_rss = 0;
    {
        let (r, _, _) = Running::start(&target, key).await?;
        dataset::create_container(&r.endpoint, &r.signer, CONTAINER, false).await?;
        r.stop()?;
    }
    for &size in &sizes {
        if size > loaded {
            let (r, _, _) = Running::start(&target, key).await?;
            r.check_items(loaded).await?;
            let counted = dataset::fill(
                &r.endpoint,
                &r.signer,
                CONTAINER,
                loaded..size,
                settings.item_bytes,
                None,
                settings.fill_concurrency,
            )
            .await?;
            progress(format!(
                "data directory: {} items loaded at {} creates/s",
                count(size as f64),
                count(counted.per_second)
            ));
            fill.push(counted);
            loaded = size;
            tokio::time::sleep(Duration::from_millis(300)).await;
            filled_rss = r.process.rss()?;
            r.stop()?;
        }
        let disk = files(dir.path())?;
        let times = timed_starts(&target, key, runs, Some(size)).await?;
        let row = startup_row(
            format!("{} items, after the fill", count(size as f64)),
            size,
            Some(&disk),
            times,
        );
        progress(format!(
            "{}: ready in {:.1} ms (median of {runs}; `listening on` at {:.1} ms), {} on disk",
            row.state,
            row.median_ready_ms,
            row.median_line_ms,
            mib(disk.bytes)
        ));
        startup.push(row);
    }

    let after_fill = files(dir.path())?;
    let (r, _, _) = Running::start(&target, key).await?;
    r.check_items(largest).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let data_dir_rss_bytes = r.process.rss()?;
    // Whether what recovery used is handed back later.
    tokio::time::sleep(Duration::from_millis(2700)).await;
    let data_dir_rss_later_bytes = r.process.rss()?;
    // Point reads (the allocator hands back what recovery freed once the
    // process allocates again), then the RSS once more.
    let reads_after_restart = clean(
        throughput(
            &r.endpoint,
            settings.read_concurrency,
            settings.window,
            Some(&r.process),
            point::reads(&r.signer, CONTAINER, largest),
        )
        .await?,
        "point reads after a restart",
    )?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let data_dir_rss_after_reads_bytes = r.process.rss()?;

    let (quiet, quiet_wall_ms) = compact(&r.endpoint, &r.signer).await?;
    let after_compact = files(dir.path())?;
    r.check_items(largest).await?;
    progress(format!(
        "compaction at {} items: {:.1} ms (the emulator's millis; {:.1} ms sent to answer); {} → {} on disk",
        count(largest as f64),
        quiet.millis,
        quiet_wall_ms,
        mib(after_fill.bytes),
        mib(after_compact.bytes),
    ));

    // Writers throughout; a window without, then a compaction.
    let writers = settings.compaction_concurrency.max(1);
    let load = Load::start(
        &r.endpoint,
        writers,
        point::writes(&r.signer, CONTAINER, largest.max(1), settings.item_bytes),
    )
    .await?;
    tokio::time::sleep(settings.window.warmup).await;
    let before_from = Instant::now();
    tokio::time::sleep(settings.window.measure).await;
    let sent = Instant::now();
    let compacted = compact(&r.endpoint, &r.signer).await;
    let answered = Instant::now();
    let (from_us, sent_us, answered_us) = (
        load.offset_us(before_from),
        load.offset_us(sent),
        load.offset_us(answered),
    );
    let samples = load.stop().await;
    let (loaded_answer, loaded_wall_ms) = compacted?;
    if samples.errors > 0 {
        return Err(format!(
            "writes around a compaction: {} errors, the first: {}",
            samples.errors,
            samples.first_error.as_deref().unwrap_or("?")
        ));
    }
    let before = samples.completed_within(from_us, sent_us);
    let during = samples.completed_within(sent_us, answered_us);
    let per_second = |n: usize, from: u64, to: u64| n as f64 / ((to - from).max(1) as f64 / 1e6);
    let compaction = Compaction {
        items: largest,
        quiet,
        quiet_wall_ms,
        after_fill,
        after_compact,
        loaded: loaded_answer,
        loaded_wall_ms,
        writers,
        writes_before_per_second: per_second(before.len(), from_us, sent_us),
        writes_during_per_second: per_second(during.len(), sent_us, answered_us),
        writes_before: Latency::of(before),
        writes_during: Latency::of(during),
    };
    progress(format!(
        "compaction under {writers} writers: {:.1} ms; writes/s {} before, {} during",
        compaction.loaded_wall_ms,
        count(compaction.writes_before_per_second),
        count(compaction.writes_during_per_second),
    ));
    r.check_items(largest).await?;
    r.stop()?;

    // Start-up from the snapshot (and the log the writers left after it).
    let disk = files(dir.path())?;
    let times = timed_starts(&target, key, runs, Some(largest)).await?;
    let row = startup_row(
        format!(
            "{} items, after two compactions and the writes around the second",
            count(largest as f64)
        ),
        largest,
        Some(&disk),
        times,
    );
    progress(format!(
        "{}: ready in {:.1} ms (median of {runs}), {} on disk",
        row.state,
        row.median_ready_ms,
        mib(disk.bytes)
    ));
    startup.push(row);
    drop(dir);

    // The same items in memory.
    let in_memory = emulator.with_args(&[], emulator.description.clone(), &log);
    let (m, _, _) = Running::start(&in_memory, key).await?;
    dataset::create_container(&m.endpoint, &m.signer, CONTAINER, false).await?;
    dataset::fill(
        &m.endpoint,
        &m.signer,
        CONTAINER,
        0..largest,
        settings.item_bytes,
        None,
        settings.fill_concurrency,
    )
    .await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let in_memory_rss_bytes = m.process.rss()?;
    m.check_items(largest).await?;
    m.stop()?;
    progress(format!(
        "RSS with {} items: {} loaded from the data directory ({} 3 s later, {} after reads), {} in memory",
        count(largest as f64),
        mib(data_dir_rss_bytes),
        mib(data_dir_rss_later_bytes),
        mib(data_dir_rss_after_reads_bytes),
        mib(in_memory_rss_bytes)
    ));

    Ok(Restarts {
        fill,
        startup,
        items: largest,
        data_dir_rss_bytes,
        data_dir_rss_later_bytes,
        reads_after_restart,
        data_dir_rss_after_reads_bytes,
        data_dir_filled_rss_bytes: filled_rss,
        in_memory_rss_bytes,
        compaction,
    })
}

fn latency_ms(latency: &Option<Latency>, pick: fn(&Latency) -> u32) -> String {
    latency.as_ref().map_or("–".into(), |l| ms(pick(l)))
}

/// The persistence section of results.md.
pub fn markdown(md: &mut String, p: &PersistenceResults) {
    let s = &p.settings;
    match &p.speed {
        Some(speed) => speed_tables(md, speed, s),
        None => md.push_str("Writes and reads: not measured (see the notes).\n"),
    }
    md.push('\n');
    match &p.restarts {
        Some(r) => restart_tables(md, r, s),
        None => {
            md.push_str("Start-up, memory, disk and compaction: not measured (see the notes).\n")
        }
    }
}

fn speed_tables(md: &mut String, speed: &Speed, s: &PersistenceSettings) {
    let _ = writeln!(
        md,
        "Four emulators side by side (release, `--clock manual`), each with one container of {} {}-byte items \
         created over HTTP at concurrency {}: in memory, and with a fresh `--data-dir` under each `--sync`. \
         Point writes are upserts of a random existing item (the point-write load above); the four take turns \
         at each concurrency; {} s warm-up + {} s window each. Afterwards each data directory was restarted on \
         and held every item.\n",
        count(speed.items as f64),
        s.item_bytes,
        s.fill_concurrency,
        s.window.warmup.as_secs_f64(),
        s.window.measure.as_secs_f64(),
    );
    md.push_str(
        "| storage | concurrency | writes/s | × in memory | p50 | p99 | p99.9 | server CPU µs/write | errors |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let memory = speed.rows.iter().find(|r| r.storage == Storage::InMemory);
    let ratio = |pick: fn(&StorageRow) -> &Vec<Throughput>, t: &Throughput| {
        memory
            .and_then(|m| pick(m).iter().find(|x| x.concurrency == t.concurrency))
            .filter(|m| m.per_second > 0.0)
            .map_or("–".into(), |m| {
                format!("{:.2}", t.per_second / m.per_second)
            })
    };
    let concurrencies: Vec<usize> = speed
        .rows
        .first()
        .map(|r| r.writes.iter().map(|t| t.concurrency).collect())
        .unwrap_or_default();
    for concurrency in concurrencies {
        for row in &speed.rows {
            let Some(t) = row.writes.iter().find(|t| t.concurrency == concurrency) else {
                continue;
            };
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                row.storage.describe(),
                t.concurrency,
                count(t.per_second),
                ratio(|r| &r.writes, t),
                latency_ms(&t.latency, |l| l.p50_us),
                latency_ms(&t.latency, |l| l.p99_us),
                latency_ms(&t.latency, |l| l.p999_us),
                t.server_cpu_us_per_request
                    .map_or("–".into(), |v| format!("{v:.1}")),
                t.errors
            );
        }
    }
    md.push_str(
        "\n| storage | concurrency | point reads/s | × in memory | p50 | p99 | server CPU µs/read | loaded at creates/s | restart: ready |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for row in &speed.rows {
        for t in &row.reads {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                row.storage.describe(),
                t.concurrency,
                count(t.per_second),
                ratio(|r| &r.reads, t),
                latency_ms(&t.latency, |l| l.p50_us),
                latency_ms(&t.latency, |l| l.p99_us),
                t.server_cpu_us_per_request
                    .map_or("–".into(), |v| format!("{v:.1}")),
                count(row.fill.per_second),
                row.restart_ready_ms
                    .map_or("–".into(), |v| format!("{v:.1} ms"))
            );
        }
    }
}

fn restart_tables(md: &mut String, r: &Restarts, s: &PersistenceSettings) {
    let _ = writeln!(
        md,
        "One data directory (`--sync periodic`, the default), filled over HTTP with {}-byte items at \
         concurrency {}, stopped with SIGTERM after each size and started {} times: spawn → first 2xx of a \
         signed `GET /`, every start checked (`GET /_emulator/stats`) to hold every item.\n",
        s.item_bytes, s.fill_concurrency, s.startup_runs
    );
    md.push_str(
        "| data directory | on disk: snapshot + log | ready (median) | ready (min – max) | `listening on` (median) | SIGTERM → exit (median) |\n\
         |---|---:|---:|---:|---:|---:|\n",
    );
    for row in &r.startup {
        let min = row.ready_ms.iter().copied().fold(f64::INFINITY, f64::min);
        let max = row.ready_ms.iter().copied().fold(0.0, f64::max);
        let _ = writeln!(
            md,
            "| {} | {} + {} | {:.1} ms | {:.1} – {:.1} ms | {:.1} ms | {:.1} ms |",
            row.state,
            mib(row.snapshot_bytes),
            mib(row.disk_bytes - row.snapshot_bytes),
            row.median_ready_ms,
            min,
            max,
            row.median_line_ms,
            row.median_stop_ms
        );
    }
    let c = &r.compaction;
    let items = r.items.max(1) as f64;
    let _ = writeln!(md, "\n| {} items | |\n|---|---:|", count(r.items as f64));
    let _ = writeln!(
        md,
        "| RSS, loaded from the data directory (300 ms after ready) | {} ({:.2}× in memory) |",
        mib(r.data_dir_rss_bytes),
        r.data_dir_rss_bytes as f64 / r.in_memory_rss_bytes.max(1) as f64
    );
    let _ = writeln!(
        md,
        "| RSS, the same emulator 3 s after ready | {} ({:.2}× in memory) |",
        mib(r.data_dir_rss_later_bytes),
        r.data_dir_rss_later_bytes as f64 / r.in_memory_rss_bytes.max(1) as f64
    );
    let _ = writeln!(
        md,
        "| then point reads at concurrency {} for {} s: reads/s, p50, p99 | {}, {}, {} |",
        r.reads_after_restart.concurrency,
        r.reads_after_restart.seconds.round(),
        count(r.reads_after_restart.per_second),
        latency_ms(&r.reads_after_restart.latency, |l| l.p50_us),
        latency_ms(&r.reads_after_restart.latency, |l| l.p99_us),
    );
    let _ = writeln!(
        md,
        "| RSS, the same emulator 300 ms after those reads | {} ({:.2}× in memory) |",
        mib(r.data_dir_rss_after_reads_bytes),
        r.data_dir_rss_after_reads_bytes as f64 / r.in_memory_rss_bytes.max(1) as f64
    );
    let _ = writeln!(
        md,
        "| RSS, in memory, the same items created over HTTP | {} |",
        mib(r.in_memory_rss_bytes)
    );
    let _ = writeln!(
        md,
        "| RSS, the data-directory emulator that was filled, at the end of the fill | {} |",
        mib(r.data_dir_filled_rss_bytes)
    );
    let _ = writeln!(
        md,
        "| disk after the fill: bytes per item (total) | {:.0} B ({}; {} allocated) |",
        c.after_fill.bytes as f64 / items,
        mib(c.after_fill.bytes),
        mib(c.after_fill.allocated_bytes)
    );
    let _ = writeln!(
        md,
        "| disk after `POST /_emulator/compact`: bytes per item (total) | {:.0} B ({}; {} allocated) |",
        c.after_compact.bytes as f64 / items,
        mib(c.after_compact.bytes),
        mib(c.after_compact.allocated_bytes)
    );
    let _ = writeln!(
        md,
        "| compaction, quiet: the emulator's `millis` / sent → answered | {:.1} ms / {:.1} ms (snapshot {}, log before {}) |",
        c.quiet.millis,
        c.quiet_wall_ms,
        mib(c.quiet.snapshot_bytes),
        mib(c.quiet.log_bytes_before)
    );
    let _ = writeln!(
        md,
        "| compaction under {} writers: `millis` / sent → answered | {:.1} ms / {:.1} ms (snapshot {}, log before {}) |",
        c.writers,
        c.loaded.millis,
        c.loaded_wall_ms,
        mib(c.loaded.snapshot_bytes),
        mib(c.loaded.log_bytes_before)
    );
    let _ = writeln!(
        md,
        "| writes/s (c{}): before / while compacting | {} / {} ({:.2}×) |",
        c.writers,
        count(c.writes_before_per_second),
        count(c.writes_during_per_second),
        c.writes_during_per_second / c.writes_before_per_second.max(f64::MIN_POSITIVE)
    );
    let _ = writeln!(
        md,
        "| write p50 / p99 / max: before / while compacting | {} / {} / {} ; {} / {} / {} |",
        latency_ms(&c.writes_before, |l| l.p50_us),
        latency_ms(&c.writes_before, |l| l.p99_us),
        latency_ms(&c.writes_before, |l| l.max_us),
        latency_ms(&c.writes_during, |l| l.p50_us),
        latency_ms(&c.writes_during, |l| l.p99_us),
        latency_ms(&c.writes_during, |l| l.max_us),
    );
    let files = |f: &Files| {
        f.files
            .iter()
            .map(|(name, bytes)| format!("`{name}` {bytes}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        md,
        "\nFiles after the fill: {}. After the compaction: {}.",
        files(&c.after_fill),
        files(&c.after_compact)
    );
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
