//! Query latency at concurrency 1: a filter on a field (one match), a count,
//! and the rest of the query language as an application uses it (a JOIN,
//! GROUP BY, TOP with ORDER BY, DISTINCT, string functions, an average, a
//! range, the first and tenth pages of an ORDER BY, a count of a range), each
//! run to its last page, repeated within a time budget. The answers are
//! checked against what the generator stored, so a target that answers
//! wrongly is reported as such.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde::Serialize;
use serde_json::{json, Value};

use crate::connection::{expect_success, Connection, Endpoint};
use crate::cosmos::{query_body, Signer};
use crate::documents;
use crate::measure::dataset::DATABASE;
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
    /// A count over `JOIN t IN c.tags` with a filter on the tag.
    Join,
    /// `COUNT(1)` per group, `GROUP BY c.grp`: ten rows.
    GroupBy,
    /// `TOP 10 ... ORDER BY c.seq DESC`: the ten last items.
    Top,
    /// `SELECT DISTINCT VALUE c.grp`: the ten groups.
    Distinct,
    /// A filter of string functions (`UPPER`, `LIKE`, `LOWER`,
    /// `STARTSWITH`) on every item: about a dozen ids.
    Functions,
    /// `SELECT VALUE AVG(c.seq) FROM c`.
    Average,
    /// A range of `seq`, `@v` to `@v + 99`: a hundred items.
    Range,
    /// The first page of ten in `seq` order (`OFFSET 0 LIMIT 10`).
    OrderFirstPage,
    /// The tenth page of ten in `seq` order (`OFFSET 90 LIMIT 10`).
    OrderTenthPage,
    /// `COUNT(1)` of the hundred items of a `seq` range.
    CountRange,
    /// `SELECT VALUE MAX(c.seq) FROM c`: the last `seq`.
    Max,
    /// What the SDKs' query plan sends each range for a cross-partition
    /// `MAX(c.seq)`: the maximum with the count beside it.
    MaxCount,
}

impl QueryKind {
    /// Every kind, in the order they are measured.
    pub const ALL: [QueryKind; 14] = [
        QueryKind::Filter,
        QueryKind::Count,
        QueryKind::Join,
        QueryKind::GroupBy,
        QueryKind::Top,
        QueryKind::Distinct,
        QueryKind::Functions,
        QueryKind::Average,
        QueryKind::Range,
        QueryKind::OrderFirstPage,
        QueryKind::OrderTenthPage,
        QueryKind::CountRange,
        QueryKind::Max,
        QueryKind::MaxCount,
    ];

    /// The name `--queries` takes.
    pub fn name(self) -> &'static str {
        match self {
            QueryKind::Filter => "filter",
            QueryKind::Count => "count",
            QueryKind::Join => "join",
            QueryKind::GroupBy => "group-by",
            QueryKind::Top => "top",
            QueryKind::Distinct => "distinct",
            QueryKind::Functions => "functions",
            QueryKind::Average => "average",
            QueryKind::Range => "range",
            QueryKind::OrderFirstPage => "order-first-page",
            QueryKind::OrderTenthPage => "order-tenth-page",
            QueryKind::CountRange => "count-range",
            QueryKind::Max => "max",
            QueryKind::MaxCount => "max-count",
        }
    }

    /// The kinds named in a comma-separated list.
    pub fn parse_list(list: &str) -> Result<Vec<QueryKind>, String> {
        list.split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(|name| {
                QueryKind::ALL
                    .into_iter()
                    .find(|kind| kind.name() == name)
                    .ok_or_else(|| {
                        format!(
                            "unknown query {name:?} ({})",
                            QueryKind::ALL.map(QueryKind::name).join(", ")
                        )
                    })
            })
            .collect()
    }

    pub fn text(self) -> &'static str {
        match self {
            QueryKind::Filter => "SELECT * FROM c WHERE c.seq = @v",
            QueryKind::Count => "SELECT VALUE COUNT(1) FROM c",
            QueryKind::Join => "SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags WHERE t = @v",
            QueryKind::GroupBy => "SELECT c.grp AS g, COUNT(1) AS n FROM c GROUP BY c.grp",
            QueryKind::Top => "SELECT TOP 10 c.seq FROM c ORDER BY c.seq DESC",
            QueryKind::Distinct => "SELECT DISTINCT VALUE c.grp FROM c",
            QueryKind::Functions => {
                "SELECT VALUE c.id FROM c WHERE UPPER(c.pk) LIKE 'P%1' AND STARTSWITH(LOWER(c.id), @v)"
            }
            QueryKind::Average => "SELECT VALUE AVG(c.seq) FROM c",
            QueryKind::Range => "SELECT * FROM c WHERE c.seq >= @v AND c.seq < @v + 100",
            QueryKind::OrderFirstPage => "SELECT * FROM c ORDER BY c.seq OFFSET 0 LIMIT 10",
            QueryKind::OrderTenthPage => "SELECT * FROM c ORDER BY c.seq OFFSET 90 LIMIT 10",
            QueryKind::CountRange => {
                "SELECT VALUE COUNT(1) FROM c WHERE c.seq >= @v AND c.seq < @v + 100"
            }
            QueryKind::Max => "SELECT VALUE MAX(c.seq) FROM c",
            QueryKind::MaxCount => {
                "SELECT VALUE [{\"item\": {\"max\": MAX(c.seq), \"count\": COUNT(c.seq)}}] FROM c"
            }
        }
    }

    /// The value of `@v` for a run that picked item `seq`: its `seq`, one
    /// of its tags, or its id without the last two digits (a prefix of 100
    /// ids). Kinds that do not use `@v` are sent it all the same.
    fn parameter(self, seq: usize) -> Value {
        match self {
            QueryKind::Join => {
                let [a, b, c] = documents::tags(seq);
                Value::from([a, b, c][seq % 3].clone())
            }
            QueryKind::Functions => {
                let id = documents::id(seq);
                Value::from(&id[..id.len() - 2])
            }
            _ => Value::from(seq),
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
    // The right answers, by parameter: working one out scans the generator.
    let mut answers: HashMap<String, Vec<Value>> = HashMap::new();
    let mut latencies = Vec::new();
    let started = Instant::now();
    while latencies.len() < max_runs && (latencies.len() < min_runs || started.elapsed() < budget) {
        let parameter = kind.parameter(rng.usize(..items));
        let run_started = Instant::now();
        let run = run_to_last_page(&mut connection, signer, container, kind, &parameter);
        match tokio::time::timeout(RUN_LIMIT, run)
            .await
            .unwrap_or_else(|_| Err(format!("a run took longer than {RUN_LIMIT:?}; stopped")))
        {
            Ok((values, pages)) => {
                latencies.push(run_started.elapsed().as_micros() as u32);
                result.pages = pages;
                let expected = answers
                    .entry(parameter.to_string())
                    .or_insert_with(|| expected(kind, &parameter, items));
                if let Err(wrong) = check(kind, &values, expected) {
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
    parameter: &Value,
) -> Result<(Vec<Value>, usize), String> {
    let body = query_body(kind.text(), parameter.clone());
    all_pages(connection, signer, container, body).await
}

/// Every page of the cross-partition query `body` (`{"query",
/// "parameters"}`), continuations followed; the results and the page count.
pub async fn all_pages(
    connection: &mut Connection,
    signer: &Signer,
    container: &str,
    body: Bytes,
) -> Result<(Vec<Value>, usize), String> {
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

/// The right answer to `kind` with `@v` = `parameter` over items
/// `0..items`, from the generator (`crate::documents`): what the query must
/// return, in its order when the query orders, in JSON order otherwise
/// (see `canonical`). For `Filter`, the `seq` of the one item.
fn expected(kind: QueryKind, parameter: &Value, items: usize) -> Vec<Value> {
    let all = 0..items;
    match kind {
        QueryKind::Filter => vec![json!({ "seq": parameter })],
        QueryKind::Count => vec![Value::from(items)],
        QueryKind::Join => {
            let rows = all
                .flat_map(documents::tags)
                .filter(|tag| parameter == tag.as_str())
                .count();
            vec![Value::from(rows)]
        }
        QueryKind::GroupBy => {
            let mut counts = BTreeMap::new();
            for seq in all {
                *counts.entry(documents::group(seq)).or_insert(0usize) += 1;
            }
            counts
                .into_iter()
                .map(|(g, n)| json!({ "g": g, "n": n }))
                .collect()
        }
        QueryKind::Top => {
            let mut seqs: Vec<usize> = all.collect();
            seqs.sort_unstable_by(|a, b| b.cmp(a));
            seqs.truncate(10);
            seqs.into_iter().map(|seq| json!({ "seq": seq })).collect()
        }
        QueryKind::Distinct => all
            .map(documents::group)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .map(Value::from)
            .collect(),
        QueryKind::Functions => {
            let prefix = parameter.as_str().unwrap_or_default();
            canonical(
                kind,
                all.filter(|&seq| {
                    let pk = documents::partition(seq).to_uppercase();
                    pk.starts_with('P')
                        && pk.ends_with('1')
                        && documents::id(seq).to_lowercase().starts_with(prefix)
                })
                .map(|seq| Value::from(documents::id(seq)))
                .collect(),
            )
        }
        QueryKind::Range => {
            let from = parameter.as_u64().unwrap_or_default() as usize;
            (from..(from + 100).min(items))
                .map(|seq| json!({ "seq": seq }))
                .collect()
        }
        QueryKind::OrderFirstPage | QueryKind::OrderTenthPage => {
            let from = if kind == QueryKind::OrderFirstPage {
                0
            } else {
                90
            };
            (from..(from + 10).min(items))
                .map(|seq| json!({ "seq": seq }))
                .collect()
        }
        QueryKind::CountRange => {
            let from = parameter.as_u64().unwrap_or_default() as usize;
            vec![Value::from((from + 100).min(items).saturating_sub(from))]
        }
        QueryKind::Max => all.max().map(Value::from).into_iter().collect(),
        QueryKind::MaxCount => match all.max() {
            Some(max) => vec![json!([{"item": {"max": max, "count": items}}])],
            None => vec![json!([{"item": {"count": 0}}])],
        },
        QueryKind::Average => {
            let sum: f64 = all.map(|seq| seq as f64).sum();
            if items == 0 {
                Vec::new()
            } else {
                vec![Value::from(sum / items as f64)]
            }
        }
    }
}

/// The answer in a comparable form: for `Filter` only each item's `seq`;
/// the rows of queries without an order sorted (groups by `g`, values by
/// their JSON).
fn canonical(kind: QueryKind, mut values: Vec<Value>) -> Vec<Value> {
    match kind {
        QueryKind::Filter
        | QueryKind::Range
        | QueryKind::OrderFirstPage
        | QueryKind::OrderTenthPage => {
            let mut seqs: Vec<Value> = values
                .iter()
                .map(|item| json!({ "seq": item["seq"] }))
                .collect();
            // A range comes in key order (partition, id); its set is checked.
            if kind == QueryKind::Range {
                seqs.sort_by_key(|v| v["seq"].as_u64());
            }
            seqs
        }
        QueryKind::GroupBy | QueryKind::Distinct | QueryKind::Functions => {
            values.sort_by_key(|v| v.to_string());
            if kind == QueryKind::GroupBy {
                values.sort_by_key(|row| row["g"].as_u64());
            }
            values
        }
        _ => values,
    }
}

/// Whether the answer is right: `values` against `expected(kind, ...)`.
/// An average may differ from the generator's in the last bits.
fn check(kind: QueryKind, values: &[Value], expected: &[Value]) -> Result<(), String> {
    let got = canonical(kind, values.to_vec());
    let right = match (kind, got.as_slice(), expected) {
        (QueryKind::Average, [got], [want]) => match (got.as_f64(), want.as_f64()) {
            (Some(got), Some(want)) => (got - want).abs() <= want.abs() * 1e-9,
            _ => false,
        },
        _ => got == expected,
    };
    if right {
        Ok(())
    } else {
        Err(format!(
            "`{}` returned {} rows, {:.200}; expected {:.200}",
            kind.text(),
            values.len(),
            Value::from(got),
            Value::from(expected.to_vec())
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(kind: QueryKind, values: Vec<Value>, parameter: Value, items: usize) -> bool {
        check(kind, &values, &expected(kind, &parameter, items)).is_ok()
    }

    #[test]
    fn answers_are_checked() {
        assert!(checked(
            QueryKind::Filter,
            vec![json!({"seq": 5, "id": "x"})],
            json!(5),
            10
        ));
        assert!(!checked(QueryKind::Filter, vec![], json!(5), 10));
        assert!(!checked(
            QueryKind::Filter,
            vec![json!({"seq": 4})],
            json!(5),
            10
        ));
        assert!(checked(QueryKind::Count, vec![json!(10)], json!(0), 10));
        assert!(!checked(
            QueryKind::Count,
            vec![json!(4), json!(6)],
            json!(0),
            10
        ));
    }

    #[test]
    fn join_counts_the_items_with_the_tag() {
        // c3: seq 3, 10, 17 of 0..20; a1: 1, 4, ..., 19.
        assert!(checked(QueryKind::Join, vec![json!(3)], json!("c3"), 20));
        assert!(checked(QueryKind::Join, vec![json!(7)], json!("a1"), 20));
        assert!(!checked(QueryKind::Join, vec![json!(60)], json!("c3"), 20));
        assert!(!checked(QueryKind::Join, vec![], json!("c3"), 20));
        // The parameter is a tag of the picked item.
        assert_eq!(QueryKind::Join.parameter(10), json!("b0"));
    }

    #[test]
    fn group_by_gives_every_group_its_count_in_any_order() {
        // 25 items: groups 0..4 hold 3, groups 5..9 hold 2.
        let mut rows: Vec<Value> = (0..10)
            .rev()
            .map(|g| json!({"g": g, "n": if g < 5 { 3 } else { 2 }}))
            .collect();
        assert!(checked(QueryKind::GroupBy, rows.clone(), json!(0), 25));
        rows[0]["n"] = json!(3);
        assert!(!checked(QueryKind::GroupBy, rows.clone(), json!(0), 25));
        rows.truncate(9);
        assert!(!checked(QueryKind::GroupBy, rows, json!(0), 25));
    }

    #[test]
    fn top_gives_the_last_ten_in_descending_order() {
        let mut rows: Vec<Value> = (90..100).rev().map(|seq| json!({"seq": seq})).collect();
        assert!(checked(QueryKind::Top, rows.clone(), json!(0), 100));
        rows.swap(0, 1);
        assert!(!checked(QueryKind::Top, rows.clone(), json!(0), 100));
        rows.pop();
        assert!(!checked(QueryKind::Top, rows, json!(0), 100));
    }

    #[test]
    fn a_range_gives_its_hundred_items_in_any_order_and_a_page_its_ten_in_order() {
        let mut rows: Vec<Value> = (250..350).rev().map(|seq| json!({"seq": seq})).collect();
        assert!(checked(QueryKind::Range, rows.clone(), json!(250), 1000));
        rows.pop();
        assert!(!checked(QueryKind::Range, rows, json!(250), 1000));
        // Near the end, fewer than a hundred.
        let tail: Vec<Value> = (950..1000).map(|seq| json!({"seq": seq})).collect();
        assert!(checked(QueryKind::Range, tail, json!(950), 1000));
        assert!(checked(
            QueryKind::CountRange,
            vec![json!(50)],
            json!(950),
            1000
        ));
        assert!(!checked(
            QueryKind::CountRange,
            vec![json!(100)],
            json!(950),
            1000
        ));

        assert!(checked(QueryKind::Max, vec![json!(999)], json!(0), 1000));
        assert!(!checked(QueryKind::Max, vec![json!(998)], json!(0), 1000));
        assert!(checked(QueryKind::Max, vec![], json!(0), 0));
        let max_count = json!([{"item": {"max": 999, "count": 1000}}]);
        assert!(checked(
            QueryKind::MaxCount,
            vec![max_count],
            json!(0),
            1000
        ));
        let wrong = json!([{"item": {"max": 999, "count": 999}}]);
        assert!(!checked(QueryKind::MaxCount, vec![wrong], json!(0), 1000));

        let mut page: Vec<Value> = (90..100).map(|seq| json!({"seq": seq})).collect();
        assert!(checked(
            QueryKind::OrderTenthPage,
            page.clone(),
            json!(0),
            1000
        ));
        assert!(!checked(
            QueryKind::OrderFirstPage,
            page.clone(),
            json!(0),
            1000
        ));
        page.swap(0, 1);
        assert!(!checked(QueryKind::OrderTenthPage, page, json!(0), 1000));
    }

    #[test]
    fn distinct_gives_each_group_once_in_any_order() {
        let mut groups: Vec<Value> = (0..10).rev().map(Value::from).collect();
        assert!(checked(QueryKind::Distinct, groups.clone(), json!(0), 100));
        // Seven items hold only seven groups.
        assert!(!checked(QueryKind::Distinct, groups.clone(), json!(0), 7));
        groups.push(json!(3));
        assert!(!checked(QueryKind::Distinct, groups, json!(0), 100));
    }

    #[test]
    fn functions_give_the_ids_with_the_prefix_in_a_partition_ending_in_1() {
        // Prefix item-000001 (seq 100..=199), partitions p01, p11, ..., p61
        // (seq % 64 in {1, 11, 21, 31, 41, 51, 61}).
        let prefix = QueryKind::Functions.parameter(123);
        assert_eq!(prefix, json!("item-000001"));
        let mut ids: Vec<Value> = [193, 189, 179, 169, 159, 149, 139, 129, 125, 115, 105]
            .map(|seq| json!(documents::id(seq)))
            .to_vec();
        assert!(checked(
            QueryKind::Functions,
            ids.clone(),
            prefix.clone(),
            1000
        ));
        // Only the items loaded count.
        assert!(!checked(
            QueryKind::Functions,
            ids.clone(),
            prefix.clone(),
            150
        ));
        ids.push(json!(documents::id(101)));
        assert!(!checked(QueryKind::Functions, ids, prefix, 1000));
    }

    #[test]
    fn the_average_is_of_every_seq() {
        assert!(checked(QueryKind::Average, vec![json!(4.5)], json!(0), 10));
        assert!(checked(
            QueryKind::Average,
            vec![json!(49999.5)],
            json!(0),
            100_000
        ));
        assert!(!checked(QueryKind::Average, vec![json!(5)], json!(0), 10));
        assert!(!checked(
            QueryKind::Average,
            vec![json!("4.5")],
            json!(0),
            10
        ));
        assert!(!checked(QueryKind::Average, vec![], json!(0), 10));
    }

    #[test]
    fn kinds_are_named_for_the_command_line() {
        assert_eq!(
            QueryKind::parse_list("join, group-by,,top").unwrap(),
            [QueryKind::Join, QueryKind::GroupBy, QueryKind::Top]
        );
        assert_eq!(
            QueryKind::parse_list(&QueryKind::ALL.map(QueryKind::name).join(",")).unwrap(),
            QueryKind::ALL
        );
        assert!(QueryKind::parse_list("joins").is_err());
    }
}
