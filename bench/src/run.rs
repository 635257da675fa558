//! One benchmark run: every measurement on every target, in order, with
//! progress on stderr; failures of one measurement become notes.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::checks;
use crate::connection::Endpoint;
use crate::cosmos::Signer;
use crate::figures::{count, mib, ms};
use crate::load::throughput;
use crate::measure::batch;
use crate::measure::change_feed;
use crate::measure::conformance;
use crate::measure::dataset::{self, Memory, DATABASE};
use crate::measure::direct::{self, DirectSettings};
use crate::measure::isolation;
use crate::measure::persistence;
use crate::measure::purge;
use crate::measure::query;
use crate::measure::ranges;
use crate::measure::scripts;
use crate::measure::search;
use crate::measure::{point, send_once, startup};
use crate::process::ServerProcess;
use crate::results::{self, Machine, Results, TargetResults};
use crate::settings::{Parts, Paths, Settings};
use crate::targets::{self, Target};

const CONTAINER: &str = "items";

pub async fn run(
    paths: &Paths,
    settings: &Settings,
    parts: Parts,
    key: &str,
    label: Option<String>,
) -> Results {
    let mut machine = Machine::probe();
    let logs = paths.out_dir.join("logs");
    let _ = std::fs::create_dir_all(&logs);
    let bin = |name: &str| paths.bin_dir.join(name);
    let emulator_target = targets::emulator(&bin("cosmos-emulator"), &logs);
    let mut notes = Vec::new();
    let mut results = Vec::new();

    let mut body_bytes = settings.item_bytes + 200;
    let mut headers = Vec::new();
    if parts.emulator {
        let emulator = measure_target(&emulator_target, settings, key, &mut notes).await;
        if let Some(bytes) = emulator.point_read_body_bytes {
            body_bytes = bytes;
        }
        if !settings.bare_plain {
            headers = emulator.point_read_headers.clone();
        }
        results.push(emulator);
    }
    if parts.bare {
        let bare = targets::bare(&bin("bare-server"), body_bytes, &headers, &logs);
        results.push(measure_target(&bare, settings, key, &mut notes).await);
    }
    if parts.peer {
        match paths
            .peer_dir
            .as_deref()
            .map(|dir| targets::peer(dir, settings.peer_tls, &logs))
        {
            Some(Ok(peer)) => results.push(measure_target(&peer, settings, key, &mut notes).await),
            Some(Err(why)) => notes.push(format!("peer skipped: {why}")),
            None => notes.push("peer skipped: no --peer-dir".into()),
        }
    }

    let batch = if parts.batch {
        progress(format_args!("emulator: transactional batch and bulk"));
        let emulator = targets::emulator(&bin("cosmos-emulator"), &logs);
        match batch::measure(&emulator, key, settings.window, settings.item_bytes).await {
            Ok(b) => {
                for row in &b.rows {
                    progress(format_args!(
                        "  {} c={}: {} items/s ({} req/s, p50 {}){}",
                        row.way.describe(),
                        row.load.concurrency,
                        count(row.items_per_second),
                        count(row.load.per_second),
                        row.load
                            .latency
                            .as_ref()
                            .map_or("–".into(), |l| ms(l.p50_us)),
                        if row.load.errors > 0 {
                            format!(
                                ", {} errors: {}",
                                row.load.errors,
                                row.load.first_error.as_deref().unwrap_or("")
                            )
                        } else {
                            String::new()
                        }
                    ));
                }
                Some(b)
            }
            Err(e) => {
                notes.push(format!("batch: {e}"));
                None
            }
        }
    } else {
        None
    };

    let scripts = if parts.scripts {
        progress(format_args!(
            "emulator: stored procedures and UDFs (server-side JavaScript)"
        ));
        let emulator = targets::emulator(&bin("cosmos-emulator"), &logs);
        match scripts::measure(
            &emulator,
            key,
            settings.window,
            settings.item_bytes,
            |line| progress(format_args!("  {line}")),
        )
        .await
        {
            Ok(s) => Some(s),
            Err(e) => {
                notes.push(format!("scripts: {e}"));
                None
            }
        }
    } else {
        None
    };

    let search = if parts.search {
        progress(format_args!(
            "emulator: vector search ({} dimensions) and full-text search",
            search::DIMENSIONS
        ));
        let emulator = targets::emulator(&bin("cosmos-emulator"), &logs);
        match search::measure(&emulator, key, |line| progress(format_args!("  {line}"))).await {
            Ok(s) => Some(s),
            Err(e) => {
                notes.push(format!("search: {e}"));
                None
            }
        }
    } else {
        None
    };

    let purge = if parts.purge {
        progress(format_args!(
            "emulator: TTL purge of {} items",
            count(settings.purge.items as f64)
        ));
        let emulator = targets::emulator(&bin("cosmos-emulator"), &logs);
        match purge::measure(&emulator, key, settings.purge.clone()).await {
            Ok(p) => {
                progress(format_args!(
                    "  purged in {:.3} s; read p99 during {}; RSS {} → {} → {} → {} (log dropped)",
                    p.purge_seconds,
                    p.reads_during.as_ref().map_or("–".into(), |l| ms(l.p99_us)),
                    mib(p.rss_full_bytes),
                    mib(p.rss_purged_bytes),
                    mib(p.rss_settled_bytes),
                    mib(p.rss_log_dropped_bytes)
                ));
                Some(p)
            }
            Err(e) => {
                notes.push(format!("purge: {e}"));
                None
            }
        }
    } else {
        None
    };

    let ranges = if parts.ranges {
        let items = *settings.sizes.last().unwrap_or(&100_000);
        progress(format_args!(
            "emulator: 1 partition key range beside 10, {} items each",
            count(items as f64)
        ));
        let emulator = targets::emulator(&bin("cosmos-emulator"), &logs);
        match ranges::measure(
            &emulator,
            key,
            settings.window,
            &settings.concurrencies,
            items,
            settings.item_bytes,
            |line| progress(format_args!("  {line}")),
        )
        .await
        {
            Ok(r) => Some(r),
            Err(e) => {
                notes.push(format!("ranges: {e}"));
                None
            }
        }
    } else {
        None
    };

    let persistence = if parts.persistence {
        progress(format_args!(
            "emulator: persistence (--data-dir) beside in memory"
        ));
        let emulator = targets::emulator(&bin("cosmos-emulator"), &logs);
        let p = persistence::measure(
            &emulator,
            key,
            settings.persistence.clone(),
            &logs,
            |line| progress(format_args!("  {line}")),
        )
        .await;
        notes.extend(p.errors.iter().cloned());
        Some(p)
    } else {
        None
    };

    let isolation = if parts.isolation {
        progress(format_args!(
            "emulator: test isolation (reset, snapshot, restore)"
        ));
        let emulator = targets::emulator(&bin("cosmos-emulator"), &logs);
        match isolation::measure(&emulator, key, &settings.isolation, |line| {
            progress(format_args!("  {line}"))
        })
        .await
        {
            Ok(rows) => Some(rows),
            Err(e) => {
                notes.push(format!("isolation: {e}"));
                None
            }
        }
    } else {
        None
    };

    let direct =
        if parts.direct {
            progress(format_args!(
                "emulator: Direct mode (RNTBD) beside HTTPS, --tls"
            ));
            let cert = paths.out_dir.join("direct-ca.pem");
            let emulator = emulator_target.with_args(
            &["--tls".to_string(), "--cert-out".to_string(), cert.display().to_string()],
            "cosmos-emulator (release, --tls: HTTPS and Direct mode on one port, --clock manual)"
                .into(),
            &logs.join("emulator-direct.log"),
        );
            let settings = DirectSettings {
                window: settings.window,
                concurrencies: &settings.concurrencies,
                items: *settings.sizes.last().unwrap_or(&100_000),
                item_bytes: settings.item_bytes,
                startup_runs: settings.startup_runs,
                cert: &cert,
            };
            match direct::measure(&emulator, key, settings, |line| {
                progress(format_args!("  {line}"))
            })
            .await
            {
                Ok(d) => Some(d),
                Err(e) => {
                    notes.push(format!("direct: {e}"));
                    None
                }
            }
        } else {
            None
        };

    let conformance = if parts.conformance {
        progress(format_args!("emulator: conformance suite"));
        match conformance::measure(
            &bin("cosmos-conformance"),
            &emulator_target,
            &paths.fixtures,
            &paths.out_dir,
            settings.conformance_runs,
        ) {
            Ok(c) => {
                progress(format_args!("  {:.2} s (median)", c.median_seconds));
                if !c.passed {
                    notes.push(format!(
                        "the conformance suite reported failures: see {}",
                        paths.out_dir.join("conformance.log").display()
                    ));
                }
                Some(c)
            }
            Err(e) => {
                notes.push(format!("conformance: {e}"));
                None
            }
        }
    } else {
        None
    };

    let find = |name: &str| results.iter().find(|t: &&TargetResults| t.name == name);
    let mut ratios = Vec::new();
    if let Some(e) = find("emulator") {
        for other in ["bare", "peer"] {
            if let Some(o) = find(other) {
                ratios.extend(checks::ratios("reads", &e.reads, other, &o.reads));
                ratios.extend(checks::ratios("writes", &e.writes, other, &o.writes));
            }
        }
    }
    let checks = checks::evaluate(
        find("emulator"),
        &ratios,
        purge.as_ref(),
        persistence.as_ref(),
        conformance.as_ref(),
    );
    machine.load_average_end = results::load_average();
    Results {
        finished_unix: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        label,
        machine,
        settings: settings.clone(),
        targets: results,
        batch,
        scripts,
        search,
        purge,
        ranges,
        persistence,
        isolation,
        direct,
        conformance,
        ratios,
        checks,
        notes,
    }
}

fn progress(message: std::fmt::Arguments<'_>) {
    eprintln!("[bench] {message}");
}

/// Startup, idle memory, and (for Cosmos targets) memory, queries and
/// point loads over a loaded container; then point loads.
async fn measure_target(
    target: &Target,
    settings: &Settings,
    key: &str,
    notes: &mut Vec<String>,
) -> TargetResults {
    let mut out = TargetResults {
        name: target.name.to_string(),
        description: target.description.clone(),
        ..TargetResults::default()
    };
    progress(format_args!("{}: {}", target.name, target.description));
    match startup::measure(target, settings.startup_runs, key).await {
        Ok(s) => {
            progress(format_args!(
                "  ready in {:.1} ms (median of {})",
                s.median_ready_ms, s.runs
            ));
            out.startup = Some(s);
        }
        Err(e) => notes.push(format!("{}: startup: {e}", target.name)),
    }
    if let Err(e) = measure_running(target, settings, key, &mut out).await {
        notes.push(format!("{}: {e}", target.name));
    }
    out
}

async fn measure_running(
    target: &Target,
    settings: &Settings,
    key: &str,
    out: &mut TargetResults,
) -> Result<(), String> {
    let process = ServerProcess::spawn(target.command())?;
    let endpoint = Endpoint::parse(&process.url)?;
    let signer = Signer::new(key, &endpoint.authority())?;
    send_once(&endpoint, signer.read_account()).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    out.idle_rss_bytes = Some(process.rss()?);
    progress(format_args!("  idle RSS {}", mib(process.rss()?)));

    let items = if target.speaks_cosmos() {
        dataset::create_container(&endpoint, &signer, CONTAINER, false).await?;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let empty = process.rss()?;
        out.empty_container_rss_bytes = Some(empty);
        let mut loaded = 0;
        for &size in &settings.sizes {
            let load = dataset::fill(
                &endpoint,
                &signer,
                CONTAINER,
                loaded..size,
                settings.item_bytes,
                None,
                settings.fill_concurrency,
            )
            .await?;
            loaded = size;
            tokio::time::sleep(Duration::from_millis(200)).await;
            let rss = process.rss()?;
            let memory = Memory {
                items: size,
                rss_bytes: rss,
                bytes_per_item: rss.saturating_sub(empty) as f64 / size as f64,
                load,
            };
            progress(format_args!(
                "  {} items: RSS {} ({:.0} B/item), loaded at {} creates/s",
                count(size as f64),
                mib(rss),
                memory.bytes_per_item,
                count(memory.load.per_second)
            ));
            out.memory.push(memory);
            // The largest size's queries come last: a target still busy
            // with a query that timed out must not slow the point loads.
            if Some(&size) != settings.sizes.last() {
                measure_queries(&endpoint, &signer, settings, size, out).await;
            }
        }
        let response = send_once(
            &endpoint,
            signer.read_item(
                DATABASE,
                CONTAINER,
                &crate::documents::id(0),
                &crate::documents::partition_header(0),
            ),
        )
        .await?;
        out.point_read_body_bytes = Some(response.body.len());
        out.point_read_headers = response
            .headers
            .iter()
            .filter(|(name, _)| !matches!(name.as_str(), "content-length" | "date"))
            .filter_map(|(name, value)| Some(format!("{name}: {}", value.to_str().ok()?)))
            .collect();
        loaded
    } else {
        *settings.sizes.last().unwrap_or(&1)
    };

    for (operation, results) in [("reads", &mut out.reads), ("writes", &mut out.writes)] {
        for &concurrency in &settings.concurrencies {
            let make = if operation == "reads" {
                point::reads(&signer, CONTAINER, items.max(1))
            } else {
                point::writes(&signer, CONTAINER, items.max(1), settings.item_bytes)
            };
            let t = throughput(
                &endpoint,
                concurrency,
                settings.window,
                Some(&process),
                make,
            )
            .await?;
            progress(format_args!(
                "  {operation} c={concurrency}: {} req/s, p50 {}, p99 {}, server {} µs/req, client {:.1} µs/req{}",
                count(t.per_second),
                t.latency.as_ref().map_or("–".into(), |l| ms(l.p50_us)),
                t.latency.as_ref().map_or("–".into(), |l| ms(l.p99_us)),
                t.server_cpu_us_per_request.map_or("–".into(), |v| format!("{v:.1}")),
                t.client_cpu_us_per_request,
                if t.errors > 0 {
                    format!(", {} errors: {}", t.errors, t.first_error.as_deref().unwrap_or(""))
                } else {
                    String::new()
                }
            ));
            results.push(t);
        }
    }
    if target.speaks_cosmos() {
        measure_queries(&endpoint, &signer, settings, items, out).await;
    }
    Ok(())
}

async fn measure_queries(
    endpoint: &Endpoint,
    signer: &Signer,
    settings: &Settings,
    items: usize,
    out: &mut TargetResults,
) {
    for &kind in &settings.queries {
        let q = query::measure(
            endpoint,
            signer,
            CONTAINER,
            items,
            kind,
            settings.query_budget,
            settings.query_runs,
        )
        .await;
        progress(format_args!(
            "  {} items, {}: {} runs, p50 {}{}",
            count(items as f64),
            q.query,
            q.runs,
            q.latency.as_ref().map_or("–".into(), |l| ms(l.p50_us)),
            q.error
                .as_deref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default()
        ));
        out.queries.push(q);
    }
    if out.name == "emulator" {
        let feed = change_feed::measure(endpoint, signer, CONTAINER, items).await;
        progress(format_args!(
            "  {} items, change feed from the beginning: {:.3} s, {} items/s{}",
            count(items as f64),
            feed.seconds,
            count(feed.items_per_second),
            feed.error
                .as_deref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default()
        ));
        out.change_feed.push(feed);
    }
}
