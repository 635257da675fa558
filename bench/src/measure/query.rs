//! Query latency at concurrency 1: a filter on a field (one match) and a
//! count, each run to its last page, repeated within a time budget. The
//! answers are checked, so a target that answers wrongly is reported as such.

use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::connection::{Connection, Endpoint};
use crate::cosmos::{query_body, Signer};
use crate::measure::dataset::DATABASE;
use crate::measure::expect_success;
use crate::stats::Latency;

/// The longest one run may take; the measurement stops at the first run
/// that takes longer (the target may stay busy with it: measure queries
/// last).
pub const RUN_LIMIT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum QueryKind {
    /// `SELECT * FROM c WHERE c.seq = @v`: one item.
    Filter,
    /// `SELECT VALUE COUNT(1) FROM c`.
    Count,
}

impl QueryKind {
    pub fn text(self) -> &'static str {
        match self {
            QueryKind::Filter => "SELECT * FROM c WHERE c.seq = @v",
            QueryKind::Count => "SELECT VALUE COUNT(1) FROM c",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct QueryLatency {
    pub items: usize,
    pub kind: QueryKind,
    pub query: &'static str,
    pub runs: usize,
    /// Pages fetched per run (the last run).
    pub pages: usize,
    pub latency: Option<Latency>,
    /// A wrong answer or a failure, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Runs the query at least `min_runs` times and until `budget` is spent
/// (or `max_runs` are done).
pub async fn measure(
    endpoint: &Endpoint,
    signer: &Signer,
    container: &str,
    items: usize,
    kind: QueryKind,
    budget: Duration,
    (min_runs, max_runs): (usize, usize),
) -> QueryLatency {
    let mut result = QueryLatency {
        items,
        kind,
        query: kind.text(),
        runs: 0,
        pages: 0,
        latency: None,
        error: None,
    };
    let mut connection = match Connection::open(endpoint).await {
        Ok(c) => c,
        Err(e) => {
            result.error = Some(format!("cannot connect: {e}"));
            return result;
        }
    };
    let mut rng = fastrand::Rng::with_seed(7);
    let mut latencies = Vec::new();
    let started = Instant::now();
    while latencies.len() < max_runs && (latencies.len() < min_runs || started.elapsed() < budget) {
        let seq = rng.usize(..items);
        let run_started = Instant::now();
        let run = run_to_last_page(&mut connection, signer, container, kind, seq);
        match tokio::time::timeout(RUN_LIMIT, run)
            .await
            .unwrap_or_else(|_| Err(format!("a run took longer than {RUN_LIMIT:?}; stopped")))
        {
            Ok((values, pages)) => {
                latencies.push(run_started.elapsed().as_micros() as u32);
                result.pages = pages;
                if let Err(wrong) = check(kind, &values, seq, items) {
                    result.error.get_or_insert(wrong);
                }
            }
            Err(e) => {
                result.error = Some(e);
                break;
            }
        }
    }
    result.runs = latencies.len();
    result.latency = Latency::of(latencies);
    result
}

/// Every page of one query; returns the results and the page count.
async fn run_to_last_page(
    connection: &mut Connection,
    signer: &Signer,
    container: &str,
    kind: QueryKind,
    seq: usize,
) -> Result<(Vec<Value>, usize), String> {
    let body = query_body(kind.text(), seq.into());
    let mut values = Vec::new();
    let mut continuation: Option<String> = None;
    let mut pages = 0;
    loop {
        let request = signer.query(DATABASE, container, body.clone(), continuation.as_deref());
        let response = expect_success(connection.send(request).await)?;
        pages += 1;
        let page: Value = serde_json::from_slice(&response.body)
            .map_err(|e| format!("the query answer is not JSON: {e}"))?;
        match page["Documents"].as_array() {
            Some(documents) => values.extend(documents.iter().cloned()),
            None => return Err(format!("the query answer has no Documents: {page:.300}")),
        }
        continuation = response
            .headers
            .get("x-ms-continuation")
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty())
            .map(String::from);
        if continuation.is_none() {
            return Ok((values, pages));
        }
        if pages > 100_000 {
            return Err("more than 100000 pages".into());
        }
    }
}

/// Whether the answer is right: the one item, or the count of all items.
fn check(kind: QueryKind, values: &[Value], seq: usize, items: usize) -> Result<(), String> {
    match kind {
        QueryKind::Filter => match values {
            [one] if one["seq"] == seq => Ok(()),
            _ => Err(format!(
                "the filter returned {} documents, expected the one with seq {seq}",
                values.len()
            )),
        },
        QueryKind::Count => {
            if values == [Value::from(items)] {
                Ok(())
            } else {
                Err(format!(
                    "the count returned {:.200}, expected [{items}]",
                    Value::from(values.to_vec())
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_are_checked() {
        assert!(check(QueryKind::Filter, &[json!({"seq": 5})], 5, 10).is_ok());
        assert!(check(QueryKind::Filter, &[], 5, 10).is_err());
        assert!(check(QueryKind::Filter, &[json!({"seq": 4})], 5, 10).is_err());
        assert!(check(QueryKind::Count, &[json!(10)], 0, 10).is_ok());
        assert!(check(QueryKind::Count, &[json!(4), json!(6)], 0, 10).is_err());
    }
}
