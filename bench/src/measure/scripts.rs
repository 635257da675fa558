//! Server-side JavaScript (QuickJS) on a fresh emulator: stored procedure
//! executions per second beside the same work as two plain requests, and
//! what a user-defined function adds per item of a query.
//!
//! Executions: 1,000 items (1 KB, over the 64 partitions) in a container of
//! their own; the stored procedure [`SPROC`] reads one and upserts a small
//! item beside it (`{id: <id>-w<n>, pk, v: <the read item's seq>}`, n in
//! 0..4, so upserts replace after the first round), in the partition of the
//! item it reads; the plain row sends the same point read, then the same
//! upsert, as two requests. Before each load one execution is checked to
//! answer 200 `"ok"` (or one read and one upsert to answer 2xx); the load
//! generator counts any other answer as an error.
//!
//! UDF: 10,000 items in one logical partition of another container (100
//! transactional batches of 100 creates), `udf.double` = [`UDF`]; the
//! queries run in that partition, every page read (`x-ms-max-item-count:
//! -1`, continuations followed), in rounds (one untimed, then
//! [`QUERY_ROUNDS`] timed) so the machine's load hits each alike; every
//! answer must hold the 10,000 values (doubled where the UDF projects them).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use serde::Serialize;
use serde_json::{json, Value};

use crate::connection::{expect_success, Connection, Endpoint};
use crate::cosmos::Signer;
use crate::documents::{id, partition, partition_header, PARTITIONS};
use crate::figures::{count, ms};
use crate::load::{run_count, throughput, Counted, MakeRequest, Throughput, Window};
use crate::measure::batch::{self, OPERATIONS};
use crate::measure::dataset::{self, DATABASE};
use crate::measure::send_once;
use crate::process::ServerProcess;
use crate::stats::median;
use crate::targets::Target;

/// The stored procedure: one read, one upsert, `"ok"`.
pub const SPROC: &str = r#"function (id, pk, n) {
  var c = getContext().getCollection();
  c.readDocument(c.getAltLink() + '/docs/' + id, function (err, doc) {
    if (err) throw err;
    c.upsertDocument(c.getSelfLink(), {id: id + '-w' + n, pk: pk, v: doc.seq}, function (err) {
      if (err) throw err;
      getContext().getResponse().setBody('ok');
    });
  });
}"#;
const SPROC_ID: &str = "readwrite";

/// The user-defined function the queries call as `udf.double`.
pub const UDF: &str = "function (x) { return x * 2; }";

/// Items the executions read, over every partition.
pub const SPROC_ITEMS: usize = 1_000;
/// Small items written beside each read item, in turn.
const WRITTEN: usize = 4;
/// Items the queries run over, all in one logical partition.
pub const QUERY_ITEMS: usize = 10_000;
/// Timed runs of each query (after one untimed round).
pub const QUERY_ROUNDS: usize = 7;

const EXECUTED: &str = "scripts";
const QUERIED: &str = "udf";

/// The queries, with what their values are: `seq` times this.
pub const QUERIES: [(&str, f64); 3] = [
    ("SELECT VALUE c.seq FROM c", 1.0),
    ("SELECT VALUE udf.double(c.seq) FROM c", 2.0),
    (
        "SELECT VALUE c.seq FROM c WHERE udf.double(c.seq) >= 0",
        1.0,
    ),
];

/// How one operation is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Way {
    /// One execution of [`SPROC`].
    Sproc,
    /// A point read, then an upsert.
    Plain,
}

impl Way {
    pub fn describe(self) -> &'static str {
        match self {
            Way::Sproc => "stored procedure (read + upsert inside)",
            Way::Plain => "point read, then upsert (two requests)",
        }
    }

    pub fn requests_per_operation(self) -> usize {
        match self {
            Way::Sproc => 1,
            Way::Plain => 2,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ExecutionRow {
    pub way: Way,
    pub operations_per_second: f64,
    /// Per request (a plain operation is two).
    pub load: Throughput,
}

#[derive(Debug, Clone, Serialize)]
pub struct QueryRow {
    pub query: String,
    pub pages: usize,
    pub runs_ms: Vec<f64>,
    pub median_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ScriptsResults {
    pub item_bytes: usize,
    pub sproc_items: usize,
    pub executions: Vec<ExecutionRow>,
    pub query_items: usize,
    /// Loading the queried items in batches.
    pub query_load: Counted,
    pub queries: Vec<QueryRow>,
}

impl ScriptsResults {
    /// (median of `query` − median of the plain query) / items, in µs.
    pub fn udf_us_per_item(&self, query: &QueryRow) -> Option<f64> {
        let plain = self.queries.first()?;
        Some((query.median_ms - plain.median_ms) * 1e3 / self.query_items as f64)
    }
}

/// The execution rows, in order: (way, concurrency).
pub const ROWS: [(Way, usize); 4] = [
    (Way::Sproc, 1),
    (Way::Plain, 1),
    (Way::Sproc, 16),
    (Way::Plain, 16),
];

pub async fn measure(
    target: &Target,
    key: &str,
    window: Window,
    item_bytes: usize,
    mut progress: impl FnMut(String),
) -> Result<ScriptsResults, String> {
    let process = ServerProcess::spawn(target.command())?;
    let endpoint = Endpoint::parse(&process.url)?;
    let signer = Signer::new(key, &endpoint.authority())?;
    dataset::create_container(&endpoint, &signer, EXECUTED, false).await?;
    dataset::fill(
        &endpoint,
        &signer,
        EXECUTED,
        0..SPROC_ITEMS,
        item_bytes,
        None,
        32,
    )
    .await?;
    let create = signer.create_script(DATABASE, EXECUTED, "sprocs", SPROC_ID, SPROC);
    send_once(&endpoint, create)
        .await
        .map_err(|e| format!("creating the stored procedure: {e}"))?;
    let mut executions = Vec::new();
    for (way, concurrency) in ROWS {
        let make = requests(&signer, way);
        check(&endpoint, &make, way).await?;
        let load = throughput(&endpoint, concurrency, window, Some(&process), make).await?;
        let row = ExecutionRow {
            way,
            operations_per_second: load.per_second / way.requests_per_operation() as f64,
            load,
        };
        progress(execution_line(&row));
        executions.push(row);
    }

    dataset::create_container(&endpoint, &signer, QUERIED, false).await?;
    let query_load = fill_one_partition(&endpoint, &signer, item_bytes).await?;
    let create = signer.create_script(DATABASE, QUERIED, "udfs", "double", UDF);
    send_once(&endpoint, create)
        .await
        .map_err(|e| format!("creating the UDF: {e}"))?;
    let mut connection = Connection::open(&endpoint)
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", endpoint.url()))?;
    let mut runs = vec![Vec::new(); QUERIES.len()];
    let mut pages = vec![0; QUERIES.len()];
    for round in 0..=QUERY_ROUNDS {
        for (i, (sql, factor)) in QUERIES.into_iter().enumerate() {
            let started = Instant::now();
            let answer = query_all(&mut connection, &signer, sql).await?;
            let elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
            check_values(&answer, factor).map_err(|e| format!("`{sql}`: {e}"))?;
            pages[i] = answer.len();
            if round > 0 {
                runs[i].push(elapsed_ms);
            }
        }
    }
    let queries: Vec<QueryRow> = (runs.into_iter().zip(pages).zip(QUERIES))
        .map(|((runs_ms, pages), (sql, _))| QueryRow {
            query: sql.to_string(),
            pages,
            median_ms: median(&runs_ms).unwrap_or(f64::NAN),
            runs_ms,
        })
        .collect();
    for (i, q) in queries.iter().enumerate() {
        let extra_us = (q.median_ms - queries[0].median_ms) * 1e3 / QUERY_ITEMS as f64;
        progress(format!(
            "`{}`: median {:.1} ms of {}{}",
            q.query,
            q.median_ms,
            q.runs_ms.len(),
            match i {
                0 => String::new(),
                _ => format!(", {extra_us:+.2} µs per item beside the first"),
            }
        ));
    }
    Ok(ScriptsResults {
        item_bytes,
        sproc_items: SPROC_ITEMS,
        executions,
        query_items: QUERY_ITEMS,
        query_load,
        queries,
    })
}

/// One operation of the row, sent once: the execution answers 200 `"ok"`,
/// the read and the upsert 2xx.
async fn check(endpoint: &Endpoint, make: &Arc<MakeRequest>, way: Way) -> Result<(), String> {
    for _ in 0..way.requests_per_operation() {
        let response = send_once(endpoint, make(&mut fastrand::Rng::new()))
            .await
            .map_err(|e| format!("{}: {e}", way.describe()))?;
        if way == Way::Sproc && (response.status != 200 || response.body.as_ref() != b"\"ok\"") {
            return Err(format!(
                "the stored procedure answered {}: {:.300}",
                response.status,
                String::from_utf8_lossy(&response.body)
            ));
        }
    }
    Ok(())
}

/// Operations numbered by a counter: operation k reads item k × 7919 mod
/// 1,000 (every item in turn) and writes `<id>-w<k mod 4>`; a plain
/// operation is request 2k (the read) and 2k + 1 (the upsert).
fn requests(signer: &Signer, way: Way) -> Arc<MakeRequest> {
    let signer = signer.clone();
    let next = AtomicUsize::new(0);
    Arc::new(move |_rng| {
        let request = next.fetch_add(1, Ordering::Relaxed);
        let operation = request / way.requests_per_operation();
        let seq = operation * 7919 % SPROC_ITEMS;
        let (pk, written) = (partition_header(seq), operation % WRITTEN);
        match (way, request % 2) {
            (Way::Sproc, _) => {
                let arguments = json!([id(seq), partition(seq), written]);
                let body = arguments.to_string().into();
                signer.execute_sproc(DATABASE, EXECUTED, SPROC_ID, &pk, body)
            }
            (Way::Plain, 0) => signer.read_item(DATABASE, EXECUTED, &id(seq), &pk),
            (Way::Plain, _) => {
                let item = json!({"id": format!("{}-w{written}", id(seq)), "pk": partition(seq), "v": seq});
                signer.write_item(DATABASE, EXECUTED, &pk, item.to_string().into(), true)
            }
        }
    })
}

/// Items 0, 64, 128, … (all in partition `p00`), by transactional batches.
async fn fill_one_partition(
    endpoint: &Endpoint,
    signer: &Signer,
    item_bytes: usize,
) -> Result<Counted, String> {
    let signer = signer.clone();
    let loaded = run_count(
        endpoint,
        4,
        0..QUERY_ITEMS / OPERATIONS,
        Arc::new(move |block| {
            let seqs = (block * OPERATIONS..(block + 1) * OPERATIONS).map(|k| k * PARTITIONS);
            let body = batch::operations(seqs, item_bytes, false);
            signer.batch(DATABASE, QUERIED, Some(&partition_header(0)), body)
        }),
    )
    .await?;
    if loaded.errors > 0 {
        return Err(format!(
            "{} of {} batches failed, the first: {}",
            loaded.errors,
            loaded.requests,
            loaded.first_error.as_deref().unwrap_or("?")
        ));
    }
    Ok(loaded)
}

/// Every page of `sql` in partition `p00`, as answered.
async fn query_all(
    connection: &mut Connection,
    signer: &Signer,
    sql: &str,
) -> Result<Vec<Bytes>, String> {
    let body: Bytes = json!({ "query": sql, "parameters": [] }).to_string().into();
    let pk = partition_header(0);
    let mut pages = Vec::new();
    let mut continuation: Option<String> = None;
    loop {
        let request = signer.query_partition(
            DATABASE,
            QUERIED,
            &pk,
            body.clone(),
            continuation.as_deref(),
        );
        let response = expect_success(connection.send(request).await)?;
        continuation = response
            .headers
            .get("x-ms-continuation")
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        pages.push(response.body);
        if continuation.is_none() {
            return Ok(pages);
        }
        if pages.len() > QUERY_ITEMS {
            return Err("the query does not end".into());
        }
    }
}

/// The pages hold every queried item's `seq` × `factor`, once each.
fn check_values(pages: &[Bytes], factor: f64) -> Result<(), String> {
    let (mut n, mut sum) = (0usize, 0f64);
    for page in pages {
        let page: Value =
            serde_json::from_slice(page).map_err(|e| format!("a page is not JSON: {e}"))?;
        for value in page["Documents"]
            .as_array()
            .ok_or("a page has no Documents")?
        {
            n += 1;
            sum += value.as_f64().ok_or("a value is not a number")?;
        }
    }
    let expected = factor * (PARTITIONS * QUERY_ITEMS * (QUERY_ITEMS - 1) / 2) as f64;
    if n != QUERY_ITEMS || sum != expected {
        return Err(format!(
            "{n} values summing to {sum}, expected {QUERY_ITEMS} summing to {expected}"
        ));
    }
    Ok(())
}

/// The progress line of an execution row.
pub fn execution_line(row: &ExecutionRow) -> String {
    let load = &row.load;
    format!(
        "{} c={}: {} operations/s ({} req/s, p50 {}){}",
        row.way.describe(),
        load.concurrency,
        count(row.operations_per_second),
        count(load.per_second),
        load.latency.as_ref().map_or("–".into(), |l| ms(l.p50_us)),
        match load.errors {
            0 => String::new(),
            n => format!(
                ", {n} errors: {}",
                load.first_error.as_deref().unwrap_or("")
            ),
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_checked_by_count_and_sum() {
        let seqs: Vec<usize> = (0..QUERY_ITEMS).map(|k| k * PARTITIONS).collect();
        let page = |factor: usize| -> Bytes {
            let values: Vec<usize> = seqs.iter().map(|s| s * factor).collect();
            json!({ "Documents": values }).to_string().into()
        };
        assert!(check_values(&[page(1)], 1.0).is_ok());
        assert!(check_values(&[page(2)], 2.0).is_ok());
        assert!(check_values(&[page(2)], 1.0).is_err());
        let half: Bytes = json!({ "Documents": &seqs[..QUERY_ITEMS / 2] })
            .to_string()
            .into();
        assert!(check_values(&[half], 1.0).is_err());
    }

    #[test]
    fn a_plain_operation_is_a_read_then_an_upsert_of_the_same_item() {
        let signer = Signer::new(cosmos_emulator::WELL_KNOWN_KEY, "127.0.0.1:1").unwrap();
        let make = requests(&signer, Way::Plain);
        let mut rng = fastrand::Rng::new();
        let (read, upsert) = (make(&mut rng), make(&mut rng));
        assert_eq!(read.method(), "GET");
        assert_eq!(upsert.method(), "POST");
        assert_eq!(
            read.headers()["x-ms-documentdb-partitionkey"],
            upsert.headers()["x-ms-documentdb-partitionkey"]
        );
        let sproc = requests(&signer, Way::Sproc)(&mut rng);
        assert_eq!(
            sproc.uri().path(),
            "/dbs/bench/colls/scripts/sprocs/readwrite"
        );
    }
}
