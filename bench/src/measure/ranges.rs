//! One physical partition key range beside ten, on a fresh emulator: two
//! containers loaded alike (`ranges-1` with the default 400 RU/s, one range;
//! `ranges-10` created with `x-ms-offer-throughput: 60000`, ten ranges,
//! counted with `GET .../pkranges`), then point reads and point writes of
//! random items in each, at every concurrency, and cross-partition queries
//! run through their query plan as the SDKs run them
//! ([`crate::plan_query`]): per range, to the last page, merged. Every
//! query answer is checked against what was loaded.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::connection::{Connection, Endpoint};
use crate::cosmos::Signer;
use crate::figures::{count, ms};
use crate::load::{throughput, Throughput, Window};
use crate::measure::dataset::{self, DATABASE};
use crate::measure::{point, send_once};
use crate::plan_query;
use crate::process::ServerProcess;
use crate::targets::Target;

/// The two containers: name, throughput sent, ranges expected.
pub const CONTAINERS: [(&str, Option<u32>, usize); 2] =
    [("ranges-1", None, 1), ("ranges-10", Some(60_000), 10)];

/// Results a page of each range's query (`x-ms-max-item-count`).
pub const PAGE_SIZE: i64 = 1000;

/// Runs of each query per container, at most; the median is reported.
const QUERY_RUNS: usize = 3;
/// No further run of a query starts once its runs took this long (the
/// first always runs): an ORDER BY over every item resumes each page by
/// running the whole query again, which takes about a minute on one range.
const QUERY_BUDGET: Duration = Duration::from_secs(10);
/// The longest one query run may take before the measurement gives up.
const QUERY_LIMIT: Duration = Duration::from_secs(180);

/// The cross-partition queries measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RangeQuery {
    /// `SELECT * FROM c WHERE c.seq >= 0`: every item, streamed range by range.
    Scan,
    /// `SELECT VALUE COUNT(1) FROM c`: a partial count per range, added up.
    Count,
    /// `SELECT VALUE c.seq FROM c ORDER BY c.seq`: every value, each range
    /// sorted, merged.
    OrderBy,
}

impl RangeQuery {
    pub const ALL: [RangeQuery; 3] = [RangeQuery::Scan, RangeQuery::Count, RangeQuery::OrderBy];

    pub fn text(self) -> &'static str {
        match self {
            RangeQuery::Scan => "SELECT * FROM c WHERE c.seq >= 0",
            RangeQuery::Count => "SELECT VALUE COUNT(1) FROM c",
            RangeQuery::OrderBy => "SELECT VALUE c.seq FROM c ORDER BY c.seq",
        }
    }

    /// Whether `values` is the right answer over items `0..items`.
    pub fn check(self, values: &[Value], items: usize) -> Result<(), String> {
        let right = match self {
            RangeQuery::Scan => {
                let mut seqs: Vec<u64> = values.iter().filter_map(|v| v["seq"].as_u64()).collect();
                seqs.sort_unstable();
                seqs.len() == values.len() && seqs.iter().copied().eq(0..items as u64)
            }
            RangeQuery::Count => values == [Value::from(items)],
            RangeQuery::OrderBy => values
                .iter()
                .map(Value::as_u64)
                .eq((0..items as u64).map(Some)),
        };
        if right {
            Ok(())
        } else {
            Err(format!(
                "`{}` returned {} rows, not the {items} items' answer",
                self.text(),
                values.len()
            ))
        }
    }
}

/// One container's point loads and queries.
#[derive(Debug, Clone, Serialize)]
pub struct ContainerRanges {
    pub container: &'static str,
    pub throughput: Option<u32>,
    /// As `GET .../pkranges` listed them.
    pub ranges: usize,
    pub reads: Vec<Throughput>,
    pub writes: Vec<Throughput>,
    pub queries: Vec<RangeQueryRun>,
}

/// One query on one container.
#[derive(Debug, Clone, Serialize)]
pub struct RangeQueryRun {
    pub query: RangeQuery,
    /// Runs completed (the median is of these).
    pub runs: usize,
    /// The median run: plan, ranges, every page of every range, merge.
    pub median_seconds: f64,
    /// Items the query went through per second: the container's items over
    /// the median time.
    pub items_per_second: f64,
    /// Requests one run sent (plan, pkranges, pages).
    pub requests: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RangesResults {
    pub items: usize,
    pub item_bytes: usize,
    pub page_size: i64,
    pub containers: Vec<ContainerRanges>,
}

pub async fn measure(
    target: &Target,
    key: &str,
    window: Window,
    concurrencies: &[usize],
    items: usize,
    item_bytes: usize,
    mut progress: impl FnMut(String),
) -> Result<RangesResults, String> {
    let process = ServerProcess::spawn(target.command())?;
    let endpoint = Endpoint::parse(&process.url)?;
    let signer = Signer::new(key, &endpoint.authority())?;
    send_once(&endpoint, signer.read_account()).await?;
    let mut out = RangesResults {
        items,
        item_bytes,
        page_size: PAGE_SIZE,
        containers: Vec::new(),
    };
    for (container, throughput, expected) in CONTAINERS {
        create(&endpoint, &signer, container, throughput).await?;
        let mut connection = Connection::open(&endpoint)
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        let ranges = plan_query::ranges(&mut connection, &signer, DATABASE, container)
            .await?
            .len();
        if ranges != expected {
            return Err(format!(
                "{container} has {ranges} partition key ranges, not {expected}"
            ));
        }
        let load = dataset::fill(
            &endpoint,
            &signer,
            container,
            0..items,
            item_bytes,
            None,
            32,
        )
        .await?;
        progress(format!(
            "{container} ({ranges} range{}): {} items loaded at {} creates/s",
            if ranges == 1 { "" } else { "s" },
            count(items as f64),
            count(load.per_second)
        ));
        out.containers.push(ContainerRanges {
            container,
            throughput,
            ranges,
            reads: Vec::new(),
            writes: Vec::new(),
            queries: Vec::new(),
        });
    }
    // Point loads alternate between the containers at each concurrency, so
    // that a change in the machine's load hits both alike.
    for &concurrency in concurrencies {
        for reads in [true, false] {
            for c in out.containers.iter_mut() {
                let make = if reads {
                    point::reads(&signer, c.container, items.max(1))
                } else {
                    point::writes(&signer, c.container, items.max(1), item_bytes)
                };
                let t = throughput(&endpoint, concurrency, window, Some(&process), make).await?;
                progress(format!(
                    "{} {} c={concurrency}: {} req/s, p50 {}{}",
                    c.container,
                    if reads { "reads" } else { "writes" },
                    count(t.per_second),
                    t.latency.as_ref().map_or("–".into(), |l| ms(l.p50_us)),
                    if t.errors > 0 {
                        format!(", {} errors", t.errors)
                    } else {
                        String::new()
                    }
                ));
                if reads { &mut c.reads } else { &mut c.writes }.push(t);
            }
        }
    }
    for query in RangeQuery::ALL {
        for c in out.containers.iter_mut() {
            let run = run_query(&endpoint, &signer, c.container, query, items).await;
            progress(format!(
                "{} `{}`: {:.3} s, {} items/s, {} requests{}",
                c.container,
                query.text(),
                run.median_seconds,
                count(run.items_per_second),
                run.requests,
                run.error
                    .as_deref()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default()
            ));
            c.queries.push(run);
        }
    }
    Ok(out)
}

async fn create(
    endpoint: &Endpoint,
    signer: &Signer,
    container: &str,
    throughput: Option<u32>,
) -> Result<(), String> {
    if let Err(e) = send_once(endpoint, signer.create_database(DATABASE)).await {
        if !e.contains("409") {
            return Err(format!("creating the database: {e}"));
        }
    }
    send_once(
        endpoint,
        signer.create_container_with(DATABASE, container, false, throughput),
    )
    .await
    .map_err(|e| format!("creating {container}: {e}"))?;
    Ok(())
}

async fn run_query(
    endpoint: &Endpoint,
    signer: &Signer,
    container: &str,
    query: RangeQuery,
    items: usize,
) -> RangeQueryRun {
    let mut result = RangeQueryRun {
        query,
        runs: 0,
        median_seconds: 0.0,
        items_per_second: 0.0,
        requests: 0,
        error: None,
    };
    let mut connection = match Connection::open(endpoint).await {
        Ok(c) => c,
        Err(e) => {
            result.error = Some(format!("cannot connect: {e}"));
            return result;
        }
    };
    let mut seconds = Vec::new();
    let first = Instant::now();
    while seconds.len() < QUERY_RUNS && (seconds.is_empty() || first.elapsed() < QUERY_BUDGET) {
        let started = Instant::now();
        let run = plan_query::run(
            &mut connection,
            signer,
            DATABASE,
            container,
            query.text(),
            PAGE_SIZE,
        );
        match tokio::time::timeout(QUERY_LIMIT, run).await {
            Ok(Ok(run)) => {
                seconds.push(started.elapsed().as_secs_f64());
                result.requests = run.requests;
                if let Err(wrong) = query.check(&run.values, items) {
                    result.error.get_or_insert(wrong);
                }
            }
            Ok(Err(e)) => {
                result.error = Some(e);
                break;
            }
            Err(_) => {
                result.error = Some(format!("a run took longer than {QUERY_LIMIT:?}"));
                break;
            }
        }
    }
    seconds.sort_by(f64::total_cmp);
    result.runs = seconds.len();
    if let Some(&median) = seconds.get(seconds.len() / 2) {
        result.median_seconds = median;
        result.items_per_second = items as f64 / median;
    }
    result
}

/// `results.md`'s section: one range beside ten.
pub fn markdown(md: &mut String, r: &RangesResults) {
    let [one, ten] = match r.containers.as_slice() {
        [a, b] => [a, b],
        _ => {
            md.push_str("Not measured (see the notes).\n");
            return;
        }
    };
    let _ = writeln!(
        md,
        "One fresh emulator, two containers of {} {}-byte items over 64 logical partitions: \
         `{}` with {} partition key range (400 RU/s) and `{}` with {} ranges (`x-ms-offer-throughput: {}`), \
         as `GET .../pkranges` lists them. The point loads alternate between the two at each concurrency.\n",
        count(r.items as f64),
        r.item_bytes,
        one.container,
        one.ranges,
        ten.container,
        ten.ranges,
        ten.throughput.unwrap_or(0)
    );
    md.push_str(
        "| operation | concurrency | req/s, 1 range | req/s, 10 ranges | 10 / 1 | p50, 1 range | p50, 10 ranges | p99, 1 range | p99, 10 ranges | errors |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for (name, a, b) in [
        ("point reads", &one.reads, &ten.reads),
        ("point writes", &one.writes, &ten.writes),
    ] {
        for (x, y) in a.iter().zip(b) {
            let lat = |t: &Throughput, p99: bool| {
                t.latency
                    .as_ref()
                    .map_or("–".into(), |l| ms(if p99 { l.p99_us } else { l.p50_us }))
            };
            let _ = writeln!(
                md,
                "| {name} | {} | {} | {} | {:.2} | {} | {} | {} | {} | {} |",
                x.concurrency,
                count(x.per_second),
                count(y.per_second),
                y.per_second / x.per_second.max(f64::MIN_POSITIVE),
                lat(x, false),
                lat(y, false),
                lat(x, true),
                lat(y, true),
                x.errors + y.errors
            );
        }
    }
    let _ = writeln!(
        md,
        "\nCross-partition queries through the query plan, as the SDKs run them: the plan, \
         `GET .../pkranges`, then the rewritten query per range (`x-ms-documentdb-partitionkeyrangeid`, \
         {} results a page) to its last page, merged by the client; the median of up to {QUERY_RUNS} runs \
         (no further run once they took {} s), each answer checked. \
         items/s: the container's items over the time.\n",
        r.page_size,
        QUERY_BUDGET.as_secs()
    );
    md.push_str(
        "| query | time, 1 range | items/s, 1 range | requests | time, 10 ranges | items/s, 10 ranges | requests | time 10 / 1 |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for (x, y) in one.queries.iter().zip(&ten.queries) {
        let time = |q: &RangeQueryRun| {
            let runs = if q.runs == 1 {
                "1 run".to_string()
            } else {
                format!("{} runs", q.runs)
            };
            match &q.error {
                Some(e) => format!("{:.3} s ({runs}; {e})", q.median_seconds),
                None => format!("{:.3} s ({runs})", q.median_seconds),
            }
        };
        let _ = writeln!(
            md,
            "| `{}` | {} | {} | {} | {} | {} | {} | {:.2} |",
            x.query.text(),
            time(x),
            count(x.items_per_second),
            x.requests,
            time(y),
            count(y.items_per_second),
            y.requests,
            y.median_seconds / x.median_seconds.max(f64::MIN_POSITIVE)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_are_checked() {
        let scan: Vec<Value> = [2, 0, 1].iter().map(|s| json!({"seq": s})).collect();
        assert!(RangeQuery::Scan.check(&scan, 3).is_ok());
        assert!(RangeQuery::Scan.check(&scan[..2], 3).is_err());
        assert!(RangeQuery::Scan.check(&scan, 4).is_err());
        assert!(RangeQuery::Count.check(&[json!(3)], 3).is_ok());
        assert!(RangeQuery::Count.check(&[json!(1), json!(2)], 3).is_err());
        assert!(RangeQuery::OrderBy
            .check(&[json!(0), json!(1), json!(2)], 3)
            .is_ok());
        assert!(RangeQuery::OrderBy
            .check(&[json!(0), json!(2), json!(1)], 3)
            .is_err());
    }
}
