//! The targets of issue 5 (and of issue 14, persistence), each checked
//! against the measurements (pass, miss, or not measured), and the
//! throughput ratios they rest on.

use crate::figures::{count, mib, ms};
use crate::load::Throughput;
use crate::measure::conformance::Conformance;
use crate::measure::persistence::{PersistenceResults, Storage};
use crate::measure::purge::Purge;
use crate::results::{Check, Ratio, TargetResults};

pub const READY_MS: f64 = 50.0;
pub const IDLE_RSS_BYTES: u64 = 20 * 1024 * 1024;
pub const BYTES_PER_ITEM: f64 = 2048.0;
/// Point reads over the bare server answering the same bytes (issue 26).
pub const OF_BARE: f64 = 0.80;
pub const OVER_PEER: f64 = 5.0;
pub const PURGE_SECONDS: f64 = 2.0;
pub const PURGE_READ_P99_US: u32 = 5_000;
pub const CONFORMANCE_SECONDS: f64 = 3.0;
/// Writes/s with a data directory (`--sync periodic`, the default) over in
/// memory, at concurrency 16.
pub const PERSISTED_WRITES: f64 = 0.5;
pub const PERSISTED_WRITES_CONCURRENCY: usize = 16;
/// Start-up with the largest size (100k) on disk, and with a new directory.
pub const PERSISTED_READY_MS: f64 = 1000.0;
pub const EMPTY_DIR_READY_MS: f64 = 50.0;
/// RSS after loading from disk over RSS of the same items in memory.
pub const PERSISTED_RSS: f64 = 1.5;

/// Ratios at every concurrency both measured.
pub fn ratios(
    operation: &'static str,
    emulator: &[Throughput],
    versus: &str,
    other: &[Throughput],
) -> Vec<Ratio> {
    emulator
        .iter()
        .filter_map(|e| {
            let o = other.iter().find(|o| o.concurrency == e.concurrency)?;
            (o.per_second > 0.0).then(|| Ratio {
                operation,
                concurrency: e.concurrency,
                versus: versus.to_string(),
                emulator_per_second: e.per_second,
                other_per_second: o.per_second,
                ratio: e.per_second / o.per_second,
            })
        })
        .collect()
}

/// Peak read throughput (the best of all concurrencies) of the emulator
/// over that of `versus`, from the per-concurrency ratios.
fn peak_read_ratio(ratios: &[Ratio], versus: &str) -> Option<(f64, String)> {
    let reads = || {
        ratios
            .iter()
            .filter(move |r| r.operation == "reads" && r.versus == versus)
    };
    let emulator =
        reads().max_by(|a, b| a.emulator_per_second.total_cmp(&b.emulator_per_second))?;
    let other = reads().max_by(|a, b| a.other_per_second.total_cmp(&b.other_per_second))?;
    let ratio = emulator.emulator_per_second / other.other_per_second;
    let per_concurrency: Vec<String> = reads()
        .map(|r| format!("{:.2} at {}", r.ratio, r.concurrency))
        .collect();
    Some((
        ratio,
        format!(
            "{ratio:.2}× (peaks {} at concurrency {} vs {} at {}; per concurrency: {})",
            count(emulator.emulator_per_second),
            emulator.concurrency,
            count(other.other_per_second),
            other.concurrency,
            per_concurrency.join(", ")
        ),
    ))
}

/// Writes/s at concurrency 16 with `--sync periodic` over in memory.
fn persisted_writes(persistence: Option<&PersistenceResults>) -> Option<(f64, String)> {
    let rows = &persistence?.speed.as_ref()?.rows;
    let at = |storage: Storage| {
        rows.iter()
            .find(|r| r.storage == storage)?
            .writes
            .iter()
            .find(|t| t.concurrency == PERSISTED_WRITES_CONCURRENCY)
            .map(|t| t.per_second)
    };
    let memory = at(Storage::InMemory).filter(|m| *m > 0.0)?;
    let periodic = at(Storage::SyncPeriodic)?;
    let ratio = periodic / memory;
    let never = at(Storage::SyncNever).map_or(String::new(), |n| {
        format!("; --sync never {:.2}×", n / memory)
    });
    Some((
        ratio,
        format!(
            "{ratio:.2}× ({} vs {} writes/s{never})",
            count(periodic),
            count(memory)
        ),
    ))
}

fn check(target: String, measured: Option<(String, bool)>) -> Check {
    match measured {
        Some((measured, pass)) => Check {
            target,
            measured,
            pass: Some(pass),
        },
        None => Check {
            target,
            measured: "–".into(),
            pass: None,
        },
    }
}

pub fn evaluate(
    emulator: Option<&TargetResults>,
    ratios: &[Ratio],
    purge: Option<&Purge>,
    persistence: Option<&PersistenceResults>,
    conformance: Option<&Conformance>,
) -> Vec<Check> {
    let startup = emulator.and_then(|e| e.startup.as_ref());
    let idle = emulator.and_then(|e| e.idle_rss_bytes);
    let largest = emulator.and_then(|e| e.memory.iter().max_by_key(|m| m.items));
    vec![
        check(
            format!("ready in under {READY_MS:.0} ms"),
            startup.map(|s| {
                (
                    format!("{:.1} ms (median of {})", s.median_ready_ms, s.runs),
                    s.median_ready_ms < READY_MS,
                )
            }),
        ),
        check(
            format!("idle RSS under {}", mib(IDLE_RSS_BYTES)),
            idle.map(|b| (mib(b), b < IDLE_RSS_BYTES)),
        ),
        check(
            format!("under {BYTES_PER_ITEM:.0} B of memory per stored 1 KB item"),
            largest.map(|m| {
                (
                    format!("{:.0} B per item at {} items", m.bytes_per_item, m.items),
                    m.bytes_per_item < BYTES_PER_ITEM,
                )
            }),
        ),
        check(
            format!(
                "point reads at least {:.0}% of the bare stack's throughput (peak vs peak)",
                OF_BARE * 100.0
            ),
            peak_read_ratio(ratios, "bare").map(|(ratio, text)| (text, ratio >= OF_BARE)),
        ),
        check(
            format!("point reads at least {OVER_PEER:.0}× the peer's throughput (peak vs peak)"),
            peak_read_ratio(ratios, "peer").map(|(ratio, text)| (text, ratio >= OVER_PEER)),
        ),
        check(
            format!("expired items purged in under {PURGE_SECONDS:.0} s"),
            purge.map(|p| {
                (
                    format!("{:.3} s for {} items", p.purge_seconds, p.settings.items),
                    p.purge_seconds < PURGE_SECONDS,
                )
            }),
        ),
        check(
            format!(
                "read p99 under {} while the purge runs",
                ms(PURGE_READ_P99_US)
            ),
            purge.and_then(|p| p.reads_during.as_ref()).map(|l| {
                (
                    format!("{} over {} reads", ms(l.p99_us), l.count),
                    l.p99_us < PURGE_READ_P99_US,
                )
            }),
        ),
        check(
            format!(
                "writes with --data-dir (--sync periodic) at least {:.0}% of in memory at concurrency {PERSISTED_WRITES_CONCURRENCY}",
                PERSISTED_WRITES * 100.0
            ),
            persisted_writes(persistence).map(|(ratio, text)| (text, ratio >= PERSISTED_WRITES)),
        ),
        check(
            format!("ready in under {PERSISTED_READY_MS:.0} ms with the largest size on disk"),
            persistence
                .and_then(|p| p.restarts.as_ref())
                .and_then(|r| {
                    r.startup
                        .iter()
                        .filter(|s| s.items == r.items && s.items > 0)
                        .max_by(|a, b| a.median_ready_ms.total_cmp(&b.median_ready_ms))
                })
                .map(|s| {
                    (
                        format!("{:.1} ms (median, slowest state: {})", s.median_ready_ms, s.state),
                        s.median_ready_ms < PERSISTED_READY_MS,
                    )
                }),
        ),
        check(
            format!("ready in under {EMPTY_DIR_READY_MS:.0} ms with a new data directory"),
            persistence
                .and_then(|p| p.restarts.as_ref())
                .and_then(|r| r.startup.first())
                .map(|s| {
                    (
                        format!("{:.1} ms (median)", s.median_ready_ms),
                        s.median_ready_ms < EMPTY_DIR_READY_MS,
                    )
                }),
        ),
        check(
            format!("RSS after loading from the data directory (idle, 300 ms after ready) within {PERSISTED_RSS}× in memory"),
            persistence.and_then(|p| p.restarts.as_ref()).map(|r| {
                let ratio = r.data_dir_rss_bytes as f64 / r.in_memory_rss_bytes.max(1) as f64;
                (
                    format!(
                        "{ratio:.2}× ({} vs {} with {} items; {:.2}× after {} s of point reads)",
                        mib(r.data_dir_rss_bytes),
                        mib(r.in_memory_rss_bytes),
                        r.items,
                        r.data_dir_rss_after_reads_bytes as f64
                            / r.in_memory_rss_bytes.max(1) as f64,
                        r.reads_after_restart.seconds.round()
                    ),
                    ratio <= PERSISTED_RSS,
                )
            }),
        ),
        check(
            format!("conformance run in under {CONFORMANCE_SECONDS:.0} s"),
            conformance.map(|c| {
                (
                    format!(
                        "{:.2} s (median){}",
                        c.median_seconds,
                        if c.passed { "" } else { ", with failures" }
                    ),
                    c.median_seconds < CONFORMANCE_SECONDS && c.passed,
                )
            }),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(concurrency: usize, per_second: f64) -> Throughput {
        Throughput {
            concurrency,
            requests: 0,
            seconds: 1.0,
            per_second,
            latency: None,
            errors: 0,
            first_error: None,
            client_cpu_us_per_request: 0.0,
            server_cpu_us_per_request: None,
        }
    }

    #[test]
    fn ratios_pair_equal_concurrencies_and_peaks_decide() {
        let emulator = [at(1, 10.0), at(16, 60.0), at(64, 55.0)];
        let bare = [at(1, 20.0), at(16, 80.0), at(64, 100.0), at(128, 1.0)];
        let r = ratios("reads", &emulator, "bare", &bare);
        assert_eq!(
            r.iter()
                .map(|r| (r.concurrency, r.ratio))
                .collect::<Vec<_>>(),
            vec![(1, 0.5), (16, 0.75), (64, 0.55)]
        );
        let checks = evaluate(None, &r, None, None, None);
        let bare_check = checks.iter().find(|c| c.target.contains("bare")).unwrap();
        assert_eq!(bare_check.pass, Some(false));
        // 60 at 16 over 100 at 64.
        assert!(
            bare_check
                .measured
                .starts_with("0.60× (peaks 60 at concurrency 16 vs 100 at 64"),
            "{}",
            bare_check.measured
        );
        assert!(checks
            .iter()
            .filter(|c| !c.target.contains("bare"))
            .all(|c| c.pass.is_none()));
    }
}
