//! A cross-partition query run the way the SDKs run one: ask the gateway for
//! the query plan (`x-ms-cosmos-is-query-plan-request: True`, with the
//! features this client merges), list the container's partition key ranges
//! (`GET .../pkranges`), send the plan's rewritten query to every range that
//! overlaps the plan's query ranges (`x-ms-documentdb-partitionkeyrangeid`),
//! each to its last page (`x-ms-continuation`), and merge what the ranges
//! returned: concatenated, sorted by the `orderByItems` (a k-way merge of the
//! ranges' sorted streams), or a `VALUE` `COUNT`/`SUM` added up.
//!
//! It merges what the bench's range measurement needs; a plan asking for
//! more (DISTINCT, TOP, OFFSET/LIMIT, GROUP BY, other aggregates) is refused
//! with a message, never answered wrongly.

use std::cmp::Ordering;

use bytes::Bytes;
use serde_json::Value;

use crate::connection::{expect_success, Connection};
use crate::cosmos::Signer;

/// What this client declares it can merge (the query plan request's
/// `x-ms-cosmos-supported-query-features`).
pub const SUPPORTED_FEATURES: &str = "Aggregate, OrderBy, MultipleOrderBy";

/// What the SDK replaces with a filter when it resumes an ORDER BY query;
/// a first run replaces it with `true`.
const ORDER_BY_FILTER: &str = "{documentdb-formattableorderbyquery-filter}";

/// A query's results and what it took to get them.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRun {
    /// The merged results, in the query's order.
    pub values: Vec<Value>,
    /// Requests sent: the plan, the ranges' list, every page of every range.
    pub requests: usize,
    /// The ranges the query was sent to.
    pub ranges: usize,
    /// Rows each range returned (before the merge), in range order.
    pub rows_per_range: Vec<usize>,
}

/// How the ranges' results are merged, from the plan.
#[derive(Debug, Clone, PartialEq)]
enum Merge {
    /// Concatenated, range after range.
    Concatenate,
    /// Each range's rows are `{"orderByItems": [{"item"}], "payload"}` in
    /// order; `true` for each descending key.
    OrderBy(Vec<bool>),
    /// Each range returns `[{"item": n}]`; the total is the sum.
    Sum,
}

/// One physical partition key range: id and EPK bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    pub id: String,
    pub min: String,
    pub max: String,
}

/// The container's ranges, from `GET .../pkranges` (every page).
pub async fn ranges(
    connection: &mut Connection,
    signer: &Signer,
    db: &str,
    coll: &str,
) -> Result<Vec<Range>, String> {
    let mut out = Vec::new();
    let mut continuation: Option<String> = None;
    loop {
        let response = expect_success(
            connection
                .send(signer.partition_key_ranges(db, coll, continuation.as_deref()))
                .await,
        )
        .map_err(|e| format!("GET pkranges {e}"))?;
        let page: Value = serde_json::from_slice(&response.body)
            .map_err(|e| format!("GET pkranges: not JSON: {e}"))?;
        let list = page["PartitionKeyRanges"]
            .as_array()
            .ok_or("GET pkranges: no PartitionKeyRanges")?;
        for range in list {
            let text = |name: &str| range[name].as_str().map(String::from);
            out.push(Range {
                id: text("id").ok_or("a range without id")?,
                min: text("minInclusive").ok_or("a range without minInclusive")?,
                max: text("maxExclusive").ok_or("a range without maxExclusive")?,
            });
        }
        continuation = continuation_of(&response.headers);
        if continuation.is_none() || list.is_empty() {
            return Ok(out);
        }
    }
}

/// Runs `query` (no parameters) across every partition of `db/coll`,
/// `page_size` results a page (`x-ms-max-item-count`).
pub async fn run(
    connection: &mut Connection,
    signer: &Signer,
    db: &str,
    coll: &str,
    query: &str,
    page_size: i64,
) -> Result<PlanRun, String> {
    let body = query_json(query);
    let response = expect_success(
        connection
            .send(signer.query_plan(db, coll, body, SUPPORTED_FEATURES))
            .await,
    )
    .map_err(|e| format!("the query plan {e}"))?;
    let plan: Value = serde_json::from_slice(&response.body)
        .map_err(|e| format!("the query plan is not JSON: {e}"))?;
    let merge = merge_of(&plan)?;
    let rewritten = plan["queryInfo"]["rewrittenQuery"]
        .as_str()
        .filter(|q| !q.is_empty())
        .unwrap_or(query)
        .replace(ORDER_BY_FILTER, "true");
    let body = query_json(&rewritten);
    let all = ranges(connection, signer, db, coll).await?;
    let wanted: Vec<&Range> = all
        .iter()
        .filter(|r| overlaps_plan(r, &plan["queryRanges"]))
        .collect();
    let mut requests = 2;
    let mut per_range = Vec::with_capacity(wanted.len());
    let page_size = page_size.to_string();
    for range in &wanted {
        let mut rows = Vec::new();
        let mut continuation: Option<String> = None;
        loop {
            let request = signer.query_range(
                db,
                coll,
                body.clone(),
                &range.id,
                &page_size,
                continuation.as_deref(),
            );
            let response = expect_success(connection.send(request).await)
                .map_err(|e| format!("range {}: {e}", range.id))?;
            requests += 1;
            let mut page: Value = serde_json::from_slice(&response.body)
                .map_err(|e| format!("range {}: the page is not JSON: {e}", range.id))?;
            match page["Documents"].take() {
                Value::Array(documents) => rows.extend(documents),
                _ => return Err(format!("range {}: a page without Documents", range.id)),
            }
            continuation = continuation_of(&response.headers);
            if continuation.is_none() {
                break;
            }
        }
        per_range.push(rows);
    }
    let rows_per_range = per_range.iter().map(Vec::len).collect();
    Ok(PlanRun {
        values: merge_ranges(&merge, per_range)?,
        requests,
        ranges: wanted.len(),
        rows_per_range,
    })
}

/// The query with a parameter it never reads, another for every run: the
/// emulator keeps a whole result between pages, keyed by the query as
/// sent, and a run must measure the query, not a result kept from the run
/// before it (the service ignores parameters a query does not use).
fn query_json(query: &str) -> Bytes {
    static RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let run = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    serde_json::json!({ "query": query, "parameters": [{ "name": "@run", "value": run }] })
        .to_string()
        .into()
}

fn continuation_of(headers: &hyper::HeaderMap) -> Option<String> {
    headers
        .get("x-ms-continuation")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        .map(String::from)
}

/// Whether a range overlaps any of the plan's `queryRanges` (EPK strings
/// of equal-width hex compare as the EPKs do; "" is the lowest, "FF" above
/// every EPK).
fn overlaps_plan(range: &Range, query_ranges: &Value) -> bool {
    let Some(list) = query_ranges.as_array() else {
        return true;
    };
    list.iter().any(|q| {
        let min = q["min"].as_str().unwrap_or("");
        let max = q["max"].as_str().unwrap_or("FF");
        let max_inclusive = q["isMaxInclusive"].as_bool().unwrap_or(false);
        let below_max = if max_inclusive {
            range.min.as_str() <= max
        } else {
            range.min.as_str() < max
        };
        below_max && min < range.max.as_str()
    })
}

/// What the plan asks the client to do, if this client can.
fn merge_of(plan: &Value) -> Result<Merge, String> {
    let info = &plan["queryInfo"];
    let listed = |name: &str| info[name].as_array().is_some_and(|a| !a.is_empty());
    let set = |name: &str| !info[name].is_null();
    if info["distinctType"].as_str().is_some_and(|d| d != "None")
        || set("top")
        || set("offset")
        || set("limit")
        || listed("groupByExpressions")
    {
        return Err(format!(
            "the plan asks for a merge this client does not do: {info}"
        ));
    }
    if listed("aggregates") {
        let aggregates = info["aggregates"].as_array().expect("listed");
        return match aggregates.as_slice() {
            [name] if name == "Count" || name == "Sum" => Ok(Merge::Sum),
            _ => Err(format!("aggregates this client does not merge: {info}")),
        };
    }
    if listed("orderBy") {
        let order = info["orderBy"].as_array().expect("listed");
        return Ok(Merge::OrderBy(
            order.iter().map(|o| o == "Descending").collect(),
        ));
    }
    Ok(Merge::Concatenate)
}

fn merge_ranges(merge: &Merge, per_range: Vec<Vec<Value>>) -> Result<Vec<Value>, String> {
    match merge {
        Merge::Concatenate => Ok(per_range.into_iter().flatten().collect()),
        Merge::Sum => {
            let mut total = 0.0;
            let mut integral = true;
            for row in per_range.into_iter().flatten() {
                // `[{"item": n}]`; a range without items may omit `item`.
                let item = &row[0]["item"];
                if item.is_null() {
                    continue;
                }
                let n = item
                    .as_f64()
                    .ok_or_else(|| format!("a partial aggregate that is no number: {row}"))?;
                integral &= item.is_i64() || item.is_u64();
                total += n;
            }
            Ok(vec![if integral {
                Value::from(total as i64)
            } else {
                Value::from(total)
            }])
        }
        Merge::OrderBy(descending) => {
            let mut streams: Vec<std::vec::IntoIter<Value>> =
                per_range.into_iter().map(Vec::into_iter).collect();
            let mut heads: Vec<Option<Value>> = streams.iter_mut().map(Iterator::next).collect();
            let mut out = Vec::new();
            loop {
                let mut best: Option<usize> = None;
                for (i, head) in heads.iter().enumerate() {
                    let Some(row) = head else { continue };
                    let better = match best {
                        None => true,
                        Some(b) => {
                            let current = heads[b].as_ref().expect("a head");
                            compare_rows(row, current, descending) == Ordering::Less
                        }
                    };
                    if better {
                        best = Some(i);
                    }
                }
                let Some(i) = best else { break };
                let mut row = heads[i].take().expect("the best head");
                heads[i] = streams[i].next();
                out.push(row["payload"].take());
            }
            Ok(out)
        }
    }
}

/// The order of two ORDER BY rows by their `orderByItems`.
fn compare_rows(a: &Value, b: &Value, descending: &[bool]) -> Ordering {
    for (k, desc) in descending.iter().enumerate() {
        let x = &a["orderByItems"][k]["item"];
        let y = &b["orderByItems"][k]["item"];
        let order = compare_values(x, y);
        let order = if *desc { order.reverse() } else { order };
        if order != Ordering::Equal {
            return order;
        }
    }
    Ordering::Equal
}

/// Cosmos DB's order across types: undefined (absent), null, booleans,
/// numbers, strings; within a type, by value.
fn compare_values(x: &Value, y: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Null => 1,
            Value::Bool(_) => 2,
            Value::Number(_) => 3,
            Value::String(_) => 4,
            _ => 5,
        }
    }
    match (x, y) {
        (Value::Number(a), Value::Number(b)) => a
            .as_f64()
            .partial_cmp(&b.as_f64())
            .unwrap_or(Ordering::Equal),
        (Value::String(a), Value::String(b)) => a.cmp(b),
        (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
        _ => rank(x).cmp(&rank(y)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ordered(items: &[i64]) -> Vec<Value> {
        items
            .iter()
            .map(|n| json!({"orderByItems": [{"item": n}], "payload": n}))
            .collect()
    }

    #[test]
    fn order_by_rows_are_merged_across_ranges() {
        let merged = merge_ranges(
            &Merge::OrderBy(vec![false]),
            vec![ordered(&[1, 4, 9]), ordered(&[]), ordered(&[2, 3, 10])],
        )
        .unwrap();
        assert_eq!(
            merged,
            json!([1, 2, 3, 4, 9, 10]).as_array().unwrap().clone()
        );
        let merged = merge_ranges(
            &Merge::OrderBy(vec![true]),
            vec![ordered(&[9, 4, 1]), ordered(&[10, 3, 2])],
        )
        .unwrap();
        assert_eq!(
            merged,
            json!([10, 9, 4, 3, 2, 1]).as_array().unwrap().clone()
        );
    }

    #[test]
    fn partial_counts_are_added_up() {
        let merged = merge_ranges(
            &Merge::Sum,
            vec![
                vec![json!([{"item": 3}])],
                vec![json!([{}])],
                vec![json!([{"item": 4}])],
            ],
        )
        .unwrap();
        assert_eq!(merged, vec![json!(7)]);
    }

    #[test]
    fn plans_this_client_cannot_merge_are_refused() {
        let plan = |info: Value| json!({ "queryInfo": info });
        assert_eq!(
            merge_of(&plan(
                json!({"distinctType": "None", "aggregates": ["Count"]})
            )),
            Ok(Merge::Sum)
        );
        assert_eq!(
            merge_of(&plan(
                json!({"distinctType": "None", "orderBy": ["Descending"]})
            )),
            Ok(Merge::OrderBy(vec![true]))
        );
        assert_eq!(
            merge_of(&plan(json!({"distinctType": "None"}))),
            Ok(Merge::Concatenate)
        );
        assert!(merge_of(&plan(json!({"distinctType": "Unordered"}))).is_err());
        assert!(merge_of(&plan(json!({"distinctType": "None", "top": 10}))).is_err());
        assert!(merge_of(&plan(json!({"aggregates": ["Average"]}))).is_err());
    }

    #[test]
    fn ranges_outside_the_plans_query_ranges_are_left_out() {
        let range = |min: &str, max: &str| Range {
            id: "0".into(),
            min: min.into(),
            max: max.into(),
        };
        let all =
            json!([{"min": "", "max": "FF", "isMinInclusive": true, "isMaxInclusive": false}]);
        assert!(overlaps_plan(&range("", "3333"), &all));
        assert!(overlaps_plan(&range("CCCC", "FF"), &all));
        let point = json!([{"min": "5000", "max": "5000", "isMaxInclusive": true}]);
        assert!(overlaps_plan(&range("3333", "6666"), &point));
        assert!(!overlaps_plan(&range("6666", "9999"), &point));
        assert!(!overlaps_plan(&range("", "3333"), &point));
    }
}
