//! The TTL purge: a container holding many items with a `ttl` and a few
//! that never expire; reads of the latter run throughout; the test clock
//! moves past the expiry; the time until the expired items are physically
//! gone is measured, with the read latency before, during and after, and
//! the resident memory before, full and after.
//!
//! Each purged item leaves one TTL delete in the container's change log,
//! retained for the change feed; the memory they hold is measured by
//! moving the clock past the retention and dropping them.
//!
//! Physical deletion is invisible through the Cosmos API (expired items are
//! absent at once, R5), so it is observed through the emulator's own
//! `GET /_emulator/stats` (items stored, expired or not), polled every
//! millisecond.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::connection::{expect_success, Connection, Endpoint};
use crate::cosmos::Signer;
use crate::load::{Counted, Load};
use crate::measure::dataset::{self, DATABASE};
use crate::measure::{point, send_once};
use crate::process::ServerProcess;
use crate::stats::Latency;
use crate::targets::Target;

const CONTAINER: &str = "purge";

/// The items' own `ttl`; the clock moves one second past it.
const TTL: i64 = 60;

/// The emulator's default change feed retention (`--change-feed-retention`).
const RETENTION_SECONDS: i64 = 3600;

#[derive(Debug, Clone, Serialize)]
pub struct PurgeSettings {
    /// Items that expire.
    pub items: usize,
    /// Items with `ttl: -1`, read during the purge.
    pub kept: usize,
    pub item_bytes: usize,
    /// Concurrent readers during the purge.
    pub readers: usize,
    pub fill_concurrency: usize,
    /// Longest wait for the purge.
    pub limit: Duration,
}

#[derive(Debug, Clone, Serialize)]
pub struct Purge {
    pub settings: PurgeSettings,
    pub fill: Counted,
    pub rss_empty_bytes: u64,
    pub rss_full_bytes: u64,
    /// At the moment the purge was seen complete.
    pub rss_purged_bytes: u64,
    /// One second later (the TTL deletes still retained in the change log).
    pub rss_settled_bytes: u64,
    /// Once the clock passed the change log's retention and its entries
    /// were dropped.
    pub rss_log_dropped_bytes: u64,
    /// From sending the clock advance to the stored count reaching `kept`.
    pub purge_seconds: f64,
    /// (seconds since the advance, items still stored), sampled.
    pub progress: Vec<(f64, usize)>,
    /// Reads sent in the second before the advance.
    pub reads_before: Option<Latency>,
    /// Reads sent while the purge ran.
    pub reads_during: Option<Latency>,
    /// Reads sent in the half second after.
    pub reads_after: Option<Latency>,
    pub read_errors: usize,
}

pub async fn measure(target: &Target, key: &str, settings: PurgeSettings) -> Result<Purge, String> {
    let process = ServerProcess::spawn(target.command())?;
    let endpoint = Endpoint::parse(&process.url)?;
    let signer = Signer::new(key, &endpoint.authority())?;
    dataset::create_container(&endpoint, &signer, CONTAINER, true).await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let rss_empty_bytes = process.rss()?;
    let kept = settings.kept;
    dataset::fill(
        &endpoint,
        &signer,
        CONTAINER,
        0..kept,
        settings.item_bytes,
        Some(-1),
        settings.fill_concurrency,
    )
    .await?;
    let fill = dataset::fill(
        &endpoint,
        &signer,
        CONTAINER,
        kept..kept + settings.items,
        settings.item_bytes,
        Some(TTL),
        settings.fill_concurrency,
    )
    .await?;
    // One keep-alive connection for the stats polls, as a client would keep.
    let mut stats = Connection::open(&endpoint)
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", endpoint.url()))?;
    let loaded = stored(&mut stats, &signer).await?;
    if loaded != kept + settings.items {
        return Err(format!(
            "{loaded} items stored after loading {}",
            kept + settings.items
        ));
    }
    let rss_full_bytes = process.rss()?;

    let load = Load::start(
        &endpoint,
        settings.readers,
        point::reads(&signer, CONTAINER, kept),
    )
    .await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let advanced = Instant::now();
    send_once(&endpoint, signer.advance_clock(TTL + 1))
        .await
        .map_err(|e| format!("moving the test clock: {e}"))?;
    let mut progress = Vec::new();
    let mut last_recorded = advanced;
    let done = loop {
        let remaining = stored(&mut stats, &signer).await? - kept;
        let now = Instant::now();
        if remaining == 0 || now.duration_since(last_recorded) >= Duration::from_millis(100) {
            progress.push(((now - advanced).as_secs_f64(), remaining));
            last_recorded = now;
        }
        if remaining == 0 {
            break now;
        }
        if now - advanced > settings.limit {
            load.stop().await;
            return Err(format!(
                "{remaining} expired items still stored {:?} after the clock moved",
                settings.limit
            ));
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    };
    let rss_purged_bytes = process.rss()?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let end = Instant::now();
    let (load_start, advance_us, done_us, end_us) = (
        load.offset_us(advanced - Duration::from_secs(1)),
        load.offset_us(advanced),
        load.offset_us(done),
        load.offset_us(end),
    );
    let samples = load.stop().await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_settled_bytes = process.rss()?;
    // Past the retention (the emulator's default), the purge drops the log.
    send_once(&endpoint, signer.advance_clock(RETENTION_SECONDS + 1))
        .await
        .map_err(|e| format!("moving the test clock past the retention: {e}"))?;
    send_once(&endpoint, signer.purge())
        .await
        .map_err(|e| format!("purging: {e}"))?;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let rss_log_dropped_bytes = process.rss()?;
    Ok(Purge {
        settings,
        fill,
        rss_empty_bytes,
        rss_full_bytes,
        rss_purged_bytes,
        rss_settled_bytes,
        rss_log_dropped_bytes,
        purge_seconds: (done - advanced).as_secs_f64(),
        progress,
        reads_before: Latency::of(samples.started_within(load_start, advance_us)),
        reads_during: Latency::of(samples.started_within(advance_us, done_us)),
        reads_after: Latency::of(samples.started_within(done_us, end_us)),
        read_errors: samples.errors,
    })
}

/// Items physically stored in the purge container, from `GET /_emulator/stats`.
async fn stored(connection: &mut Connection, signer: &Signer) -> Result<usize, String> {
    let response = expect_success(connection.send(signer.stats()).await)?;
    let stats: serde_json::Value = serde_json::from_slice(&response.body)
        .map_err(|e| format!("/_emulator/stats is not JSON: {e}"))?;
    stats["containers"]
        .as_array()
        .and_then(|containers| {
            containers
                .iter()
                .find(|c| c["database"] == DATABASE && c["container"] == CONTAINER)
        })
        .and_then(|c| c["storedItems"].as_u64())
        .map(|n| n as usize)
        .ok_or_else(|| format!("/_emulator/stats has no {DATABASE}/{CONTAINER}: {stats}"))
}
