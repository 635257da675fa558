//! Test isolation: what `POST /_emulator/reset`, a snapshot
//! (`PUT /_emulator/snapshots/{name}`) and its restore cost with N items
//! stored, in memory and with `--data-dir` (where a restore is journaled),
//! beside what a test suite does without them: write the items again
//! through the API.
//!
//! Per size and storage: one emulator, a container filled with 1 KB items
//! (timed: the "reload" a suite would pay), then `runs` rounds of snapshot,
//! restore, reset and restore again (from empty, as a suite restores its
//! fixture before each test), each request timed from send to answer on a
//! fresh connection. After each restore the stored count is checked. The
//! resident memory before the first snapshot and with it held (each read
//! a second after, once the allocator gave back what was freed) shows what
//! a snapshot costs (its items share their bodies with the store).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::connection::Endpoint;
use crate::cosmos::Signer;
use crate::measure::dataset;
use crate::measure::send_once;
use crate::process::ServerProcess;
use crate::stats::median;
use crate::targets::Target;

const CONTAINER: &str = "isolation";
const SNAPSHOT: &str = "fixture";
/// How long the resident memory is left to settle before it is read.
const SETTLE: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, Serialize)]
pub struct IsolationSettings {
    /// Item counts, each on a fresh emulator.
    pub sizes: Vec<usize>,
    /// Rounds of snapshot, restore, reset, restore per size.
    pub runs: usize,
    pub item_bytes: usize,
    pub fill_concurrency: usize,
    /// Where the `--data-dir` runs keep their temporary directories.
    pub temp_root: PathBuf,
}

#[derive(Debug, Clone, Serialize)]
pub struct IsolationRow {
    pub items: usize,
    /// `memory` or `data-dir`.
    pub storage: &'static str,
    /// Writing the items through the API (the alternative to a restore).
    pub reload_ms: f64,
    pub snapshot_ms: Timing,
    pub restore_ms: Timing,
    pub reset_ms: Timing,
    /// Restoring into an account a reset just emptied.
    pub restore_after_reset_ms: Timing,
    pub rss_without_snapshot_bytes: u64,
    pub rss_with_snapshot_bytes: u64,
}

/// Median and slowest of the runs, in milliseconds.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Timing {
    pub median: f64,
    pub max: f64,
}

impl Timing {
    fn of(samples: &[f64]) -> Timing {
        Timing {
            median: median(samples).unwrap_or(f64::NAN),
            max: samples.iter().copied().fold(f64::NAN, f64::max),
        }
    }
}

pub async fn measure(
    target: &Target,
    key: &str,
    settings: &IsolationSettings,
    progress: impl Fn(String),
) -> Result<Vec<IsolationRow>, String> {
    let mut rows = Vec::new();
    for &items in &settings.sizes {
        for storage in ["memory", "data-dir"] {
            let dir = settings.temp_root.join(format!(
                "cosmos-bench-isolation-{}-{items}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            let target = if storage == "data-dir" {
                let args = ["--data-dir".to_string(), dir.display().to_string()];
                target.with_args(
                    &args,
                    format!("{}, --data-dir", target.description),
                    &dir.with_extension("log"),
                )
            } else {
                target.clone()
            };
            let row = measure_one(&target, key, settings, items, storage).await;
            let _ = std::fs::remove_dir_all(&dir);
            let _ = std::fs::remove_file(dir.with_extension("log"));
            let row = row?;
            progress(format!(
                "{items} items, {storage}: snapshot {:.1} ms, restore {:.1} ms, reset {:.1} ms, \
                 restore after reset {:.1} ms (medians); writing them again {:.0} ms",
                row.snapshot_ms.median,
                row.restore_ms.median,
                row.reset_ms.median,
                row.restore_after_reset_ms.median,
                row.reload_ms
            ));
            rows.push(row);
        }
    }
    Ok(rows)
}

async fn measure_one(
    target: &Target,
    key: &str,
    settings: &IsolationSettings,
    items: usize,
    storage: &'static str,
) -> Result<IsolationRow, String> {
    let process = ServerProcess::spawn(target.command())?;
    let endpoint = Endpoint::parse(&process.url)?;
    let signer = Signer::new(key, &endpoint.authority())?;
    dataset::create_container(&endpoint, &signer, CONTAINER, false).await?;
    let started = Instant::now();
    dataset::fill(
        &endpoint,
        &signer,
        CONTAINER,
        0..items,
        settings.item_bytes,
        None,
        settings.fill_concurrency,
    )
    .await?;
    let reload_ms = millis(started.elapsed());
    // The allocator gives freed memory back 200 ms after it is freed.
    tokio::time::sleep(SETTLE).await;
    let rss_without_snapshot_bytes = process.rss()?;
    let (mut snapshot, mut restore, mut reset, mut after_reset) = (vec![], vec![], vec![], vec![]);
    let mut rss_with_snapshot_bytes = 0;
    for round in 0..settings.runs.max(1) {
        snapshot.push(timed(&endpoint, signer.snapshot(SNAPSHOT)).await?);
        if round == 0 {
            tokio::time::sleep(SETTLE).await;
            rss_with_snapshot_bytes = process.rss()?;
        }
        restore.push(timed(&endpoint, signer.restore(SNAPSHOT)).await?);
        expect_stored(&endpoint, &signer, items).await?;
        reset.push(timed(&endpoint, signer.reset()).await?);
        expect_stored(&endpoint, &signer, 0).await?;
        after_reset.push(timed(&endpoint, signer.restore(SNAPSHOT)).await?);
        expect_stored(&endpoint, &signer, items).await?;
    }
    process.terminate(Duration::from_secs(30))?;
    Ok(IsolationRow {
        items,
        storage,
        reload_ms,
        snapshot_ms: Timing::of(&snapshot),
        restore_ms: Timing::of(&restore),
        reset_ms: Timing::of(&reset),
        restore_after_reset_ms: Timing::of(&after_reset),
        rss_without_snapshot_bytes,
        rss_with_snapshot_bytes,
    })
}

async fn timed(
    endpoint: &Endpoint,
    request: hyper::Request<crate::cosmos::Body>,
) -> Result<f64, String> {
    let started = Instant::now();
    send_once(endpoint, request).await?;
    Ok(millis(started.elapsed()))
}

/// The items stored in the container, as `GET /_emulator/stats` counts them.
async fn expect_stored(endpoint: &Endpoint, signer: &Signer, items: usize) -> Result<(), String> {
    let response = send_once(endpoint, signer.stats()).await?;
    let stats: Value = serde_json::from_slice(&response.body)
        .map_err(|e| format!("the stats are not JSON: {e}"))?;
    let stored: u64 = stats["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["container"] == CONTAINER)
        .filter_map(|c| c["storedItems"].as_u64())
        .sum();
    if stored as usize == items {
        Ok(())
    } else {
        Err(format!("{stored} items stored, expected {items}"))
    }
}

fn millis(elapsed: Duration) -> f64 {
    elapsed.as_secs_f64() * 1e3
}

/// The table for results.md.
pub fn markdown(rows: &[IsolationRow]) -> String {
    let mut out = String::from(
        "| items | storage | snapshot | restore | reset | restore after reset | writing them again | RSS without → with the snapshot |\n|---:|---|---:|---:|---:|---:|---:|---|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {:.1} ms (max {:.1}) | {:.1} ms (max {:.1}) | {:.1} ms (max {:.1}) | {:.1} ms (max {:.1}) | {:.0} ms | {:.1} → {:.1} MiB |\n",
            r.items,
            r.storage,
            r.snapshot_ms.median,
            r.snapshot_ms.max,
            r.restore_ms.median,
            r.restore_ms.max,
            r.reset_ms.median,
            r.reset_ms.max,
            r.restore_after_reset_ms.median,
            r.restore_after_reset_ms.max,
            r.reload_ms,
            r.rss_without_snapshot_bytes as f64 / 1048576.0,
            r.rss_with_snapshot_bytes as f64 / 1048576.0,
        ));
    }
    out
}
