//! Start-up, memory, disk and compaction on data directories of several sizes.

use std::path::Path;
use std::time::{Duration, Instant};

use super::*;
use crate::figures::{count, mib};
use crate::load::{throughput, Load};
use crate::measure::dataset::{self};
use crate::measure::point;
use crate::stats::{median, Latency};
use crate::targets::Target;

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
