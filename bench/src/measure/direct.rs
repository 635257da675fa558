//! Direct mode beside HTTPS (issue 49): a fresh emulator with `--tls`,
//! which serves both on its one port; items loaded over HTTPS; then point
//! reads and point writes (upserts of random existing items, as the HTTP
//! rows) at every concurrency, through HTTPS (one keep-alive HTTP/1.1
//! connection per worker, `crate::load`) and through RNTBD (workers sharing
//! pipelined connections, `crate::rntbd::load`), the two taking turns, over
//! the same TLS client configuration trusting the emulator's `--cert-out`.
//! One request of each kind is checked first.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::connection::Endpoint;
use crate::cosmos::Signer;
use crate::documents::{document, id, partition_header};
use crate::figures::{count, mib, ms};
use crate::load::{self, throughput, Throughput, Window};
use crate::measure::dataset::{self, DATABASE};
use crate::measure::startup::{self, Startup};
use crate::measure::{point, send_once};
use crate::process::ServerProcess;
use crate::rntbd::connection::DirectConnection;
use crate::rntbd::frame::guid_bytes;
use crate::rntbd::load::{connections_for, refusal, MakeFrame, REQUESTS_PER_CONNECTION};
use crate::rntbd::request::DirectSigner;
use crate::targets::Target;

pub const CONTAINER: &str = "direct";

/// One operation at one concurrency, both ways.
#[derive(Debug, Clone, Serialize)]
pub struct DirectRow {
    /// `reads` or `writes`.
    pub operation: &'static str,
    pub concurrency: usize,
    /// RNTBD connections the workers shared (HTTPS: one per worker).
    pub direct_connections: usize,
    pub https: Throughput,
    pub direct: Throughput,
    /// Direct-mode answers whose TransportRequestID named no request
    /// waiting (the SDK drops them; the request then times out).
    pub unmatched_answers: usize,
    /// The emulator's RSS after both loads of the row.
    pub rss_after_bytes: u64,
}

impl DirectRow {
    /// Direct mode's throughput over HTTPS's.
    pub fn ratio(&self) -> f64 {
        self.direct.per_second / self.https.per_second.max(f64::MIN_POSITIVE)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct DirectResults {
    pub description: String,
    pub items: usize,
    pub item_bytes: usize,
    pub requests_per_connection: usize,
    /// Spawn to the first 2xx of a signed `GET /` over HTTPS.
    pub startup: Option<Startup>,
    pub idle_rss_bytes: u64,
    /// RSS with the items loaded, before the point loads.
    pub loaded_rss_bytes: u64,
    /// RSS after the last load (every connection closed).
    pub final_rss_bytes: u64,
    pub rows: Vec<DirectRow>,
}

/// What one run of the measurement is given.
pub struct DirectSettings<'a> {
    pub window: Window,
    pub concurrencies: &'a [usize],
    pub items: usize,
    pub item_bytes: usize,
    pub startup_runs: usize,
    /// Where the emulator writes the certificate the bench trusts.
    pub cert: &'a Path,
}

/// `target` is the emulator started with `--tls --cert-out` `settings.cert`.
pub async fn measure(
    target: &Target,
    key: &str,
    settings: DirectSettings<'_>,
    mut progress: impl FnMut(String),
) -> Result<DirectResults, String> {
    let startup = match startup::measure(target, settings.startup_runs, key).await {
        Ok(s) => {
            progress(format!(
                "ready over HTTPS in {:.1} ms (median of {})",
                s.median_ready_ms, s.runs
            ));
            Some(s)
        }
        Err(e) => {
            progress(format!("startup: {e}"));
            None
        }
    };
    let process = ServerProcess::spawn(target.command())?;
    let endpoint = Endpoint::parse(&process.url)?.trusting(settings.cert)?;
    if !endpoint.tls {
        return Err(format!("{} serves no TLS", process.url));
    }
    let signer = Signer::new(key, &endpoint.authority())?;
    send_once(&endpoint, signer.read_account()).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let idle_rss_bytes = process.rss()?;
    progress(format!("idle RSS {}", mib(idle_rss_bytes)));

    dataset::create_container(&endpoint, &signer, CONTAINER, false).await?;
    let container = send_once(&endpoint, signer.read_container(DATABASE, CONTAINER)).await?;
    let rid = serde_json::from_slice::<serde_json::Value>(&container.body)
        .ok()
        .and_then(|c| c["_rid"].as_str().map(String::from))
        .ok_or("the container has no _rid")?;
    let direct = DirectSigner::new(key, DATABASE, CONTAINER, &rid)?;
    let items = settings.items.max(1);
    let loaded = dataset::fill(
        &endpoint,
        &signer,
        CONTAINER,
        0..items,
        settings.item_bytes,
        None,
        32,
    )
    .await?;
    progress(format!(
        "{} items loaded over HTTPS at {} creates/s",
        count(items as f64),
        count(loaded.per_second)
    ));
    check_once(&endpoint, &direct, settings.item_bytes).await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let loaded_rss_bytes = process.rss()?;
    progress(format!("RSS with the items {}", mib(loaded_rss_bytes)));

    let mut rows = Vec::new();
    let mut turn = 0;
    for &concurrency in settings.concurrencies {
        for operation in ["reads", "writes"] {
            let (make_http, make_direct) = if operation == "reads" {
                (
                    point::reads(&signer, CONTAINER, items),
                    reads(&direct, items),
                )
            } else {
                (
                    point::writes(&signer, CONTAINER, items, settings.item_bytes),
                    writes(&direct, items, settings.item_bytes),
                )
            };
            // Taking turns at which goes first, so neither always follows
            // the other's load.
            turn += 1;
            let mut https = None;
            let mut rntbd = None;
            let mut unmatched_answers = 0;
            for direct_now in [turn % 2 == 0, turn % 2 == 1] {
                if direct_now {
                    let started =
                        crate::rntbd::load::start(&endpoint, concurrency, make_direct.clone())
                            .await?;
                    rntbd = Some(
                        load::measure(started.load, concurrency, settings.window, Some(&process))
                            .await,
                    );
                    unmatched_answers = started.connections.iter().map(|c| c.unmatched()).sum();
                } else {
                    https = Some(
                        throughput(
                            &endpoint,
                            concurrency,
                            settings.window,
                            Some(&process),
                            make_http.clone(),
                        )
                        .await?,
                    );
                }
            }
            let row = DirectRow {
                operation,
                concurrency,
                direct_connections: connections_for(concurrency),
                https: https.expect("measured"),
                direct: rntbd.expect("measured"),
                unmatched_answers,
                rss_after_bytes: process.rss()?,
            };
            progress(format!(
                "{operation} c={concurrency}: HTTPS {} req/s (p50 {}), Direct {} req/s (p50 {}, {} connection{}): {:.2}×, RSS {}{}",
                count(row.https.per_second),
                row.https.latency.as_ref().map_or("–".into(), |l| ms(l.p50_us)),
                count(row.direct.per_second),
                row.direct.latency.as_ref().map_or("–".into(), |l| ms(l.p50_us)),
                row.direct_connections,
                if row.direct_connections == 1 { "" } else { "s" },
                row.ratio(),
                mib(row.rss_after_bytes),
                match (row.https.errors, row.direct.errors) {
                    (0, 0) => String::new(),
                    (h, d) => format!(
                        "; errors: HTTPS {h}, Direct {d}: {}",
                        row.direct
                            .first_error
                            .as_deref()
                            .or(row.https.first_error.as_deref())
                            .unwrap_or("")
                    ),
                }
            ));
            rows.push(row);
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok(DirectResults {
        description: target.description.clone(),
        items,
        item_bytes: settings.item_bytes,
        requests_per_connection: REQUESTS_PER_CONNECTION,
        startup,
        idle_rss_bytes,
        loaded_rss_bytes,
        final_rss_bytes: process.rss()?,
        rows,
    })
}

/// Document Read of a random item among `0..items`.
pub fn reads(signer: &DirectSigner, items: usize) -> Arc<MakeFrame> {
    let signer = signer.clone();
    Arc::new(move |rng, transport_request_id| {
        let seq = rng.usize(..items);
        signer.read_item(
            &id(seq),
            &partition_header(seq),
            transport_request_id,
            guid_bytes(rng.u128(..)),
        )
    })
}

/// Document Upsert of a random existing item among `0..items`, same size.
pub fn writes(signer: &DirectSigner, items: usize, item_bytes: usize) -> Arc<MakeFrame> {
    let signer = signer.clone();
    Arc::new(move |rng, transport_request_id| {
        let seq = rng.usize(..items);
        signer.upsert_item(
            &partition_header(seq),
            &document(seq, None, item_bytes),
            transport_request_id,
            guid_bytes(rng.u128(..)),
        )
    })
}

/// One Read and one Upsert through Direct mode: 200 with the item, and a
/// 2xx with the item written.
async fn check_once(
    endpoint: &Endpoint,
    signer: &DirectSigner,
    item_bytes: usize,
) -> Result<(), String> {
    let connection = DirectConnection::open(endpoint).await?;
    let read = connection
        .call(|tid| signer.read_item(&id(0), &partition_header(0), tid, [1; 16]))
        .await?;
    let body = |answer: &crate::rntbd::frame::ResponseFrame| {
        serde_json::from_slice::<serde_json::Value>(answer.payload().unwrap_or_default())
            .unwrap_or_default()
    };
    if read.status != 200 || body(&read)["id"] != id(0) {
        return Err(format!("a Direct-mode read answered {}", refusal(&read)));
    }
    let written = connection
        .call(|tid| {
            signer.upsert_item(
                &partition_header(0),
                &document(0, None, item_bytes),
                tid,
                [2; 16],
            )
        })
        .await?;
    if !(200..300).contains(&written.status) || body(&written)["id"] != id(0) {
        return Err(format!(
            "a Direct-mode upsert answered {}",
            refusal(&written)
        ));
    }
    Ok(())
}

/// `results.md`'s section: Direct mode beside HTTPS.
pub fn markdown(md: &mut String, r: &DirectResults) {
    let _ = writeln!(
        md,
        "{}: {} {}-byte items over 64 logical partitions, loaded over HTTPS. \
         HTTPS: one keep-alive HTTP/1.1 connection per worker; Direct mode (RNTBD): the workers share \
         ceil(concurrency / {}) connections, each pipelining their requests, answers matched by \
         TransportRequestID (errors count answers naming no waiting request too). \
         Each worker sends one request at a time either way; both over the \
         same TLS client (rustls) trusting the emulator's `--cert-out`; the two take turns at each \
         concurrency. Ready over HTTPS in {} (median of {}); RSS idle {}, {} with the items, {} after the loads.\n",
        r.description,
        count(r.items as f64),
        r.item_bytes,
        r.requests_per_connection,
        r.startup
            .as_ref()
            .map_or("–".into(), |s| format!("{:.1} ms", s.median_ready_ms)),
        r.startup.as_ref().map_or(0, |s| s.runs),
        mib(r.idle_rss_bytes),
        mib(r.loaded_rss_bytes),
        mib(r.final_rss_bytes),
    );
    md.push_str(
        "| operation | concurrency | Direct connections | req/s, HTTPS | req/s, Direct | Direct / HTTPS | p50, HTTPS | p50, Direct | p99, HTTPS | p99, Direct | server CPU µs/req, HTTPS | server CPU µs/req, Direct | client CPU µs/req, HTTPS | client CPU µs/req, Direct | RSS after | errors |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for row in &r.rows {
        let lat = |t: &Throughput, p99: bool| {
            t.latency
                .as_ref()
                .map_or("–".into(), |l| ms(if p99 { l.p99_us } else { l.p50_us }))
        };
        let cpu = |v: Option<f64>| v.map_or("–".into(), |v| format!("{v:.1}"));
        let _ = writeln!(
            md,
            "| point {} | {} | {} | {} | {} | {:.2} | {} | {} | {} | {} | {} | {} | {:.1} | {:.1} | {} | {} |",
            row.operation,
            row.concurrency,
            row.direct_connections,
            count(row.https.per_second),
            count(row.direct.per_second),
            row.ratio(),
            lat(&row.https, false),
            lat(&row.direct, false),
            lat(&row.https, true),
            lat(&row.direct, true),
            cpu(row.https.server_cpu_us_per_request),
            cpu(row.direct.server_cpu_us_per_request),
            row.https.client_cpu_us_per_request,
            row.direct.client_cpu_us_per_request,
            mib(row.rss_after_bytes),
            row.https.errors + row.direct.errors + row.unmatched_answers
        );
    }
    let firsts: Vec<String> = r
        .rows
        .iter()
        .flat_map(|row| [&row.https, &row.direct])
        .filter_map(|t| t.first_error.clone())
        .collect();
    if let Some(first) = firsts.first() {
        let _ = writeln!(md, "\nFirst error: {first}");
    }
}
