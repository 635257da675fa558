//! The persistence tables of the report.

use std::fmt::Write as _;

use super::*;
use crate::figures::{count, mib, ms};
use crate::load::Throughput;
use crate::stats::Latency;

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
