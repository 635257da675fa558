//! Writes and reads with and without a data directory, per sync mode.

use std::path::Path;

use super::*;
use crate::figures::{count, ms};
use crate::load::throughput;
use crate::measure::dataset::{self};
use crate::measure::point;
use crate::targets::Target;

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
