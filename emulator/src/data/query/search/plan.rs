//! The gateway's plan for `ORDER BY RANK` queries: `hybridSearchQueryInfo`
//! (Microsoft's query plan retriever tests record its shape), which the
//! Python, JavaScript and Rust SDKs run across ranges:
//!
//! 1. if a component is a `FullTextScore`, the global statistics query on
//!    every range, which the SDK sums (`documentCount`, and per full-text
//!    component `totalWordCount` and the `hitCounts` of its terms);
//! 2. each component query on every range, its placeholders replaced by
//!    those sums: the top items by that one score, each with every
//!    component's score (`componentScores`) and the projection (`payload`);
//! 3. client side, reciprocal rank fusion of the scores over the union of
//!    the rows, then `skip` and `take`.
//!
//! With the same statistics everywhere, a score does not depend on the
//! range that computes it, so one range and many rank alike.

use serde_json::{json, Value};

use super::super::ast::{Expr, Select, SortKey, SortKind};
use super::super::eval;
use super::rank::rrf_components;
use super::score_terms;
use super::{comparison, Policies};
use crate::data::index::vector;
use crate::protocol::error::{ApiError, ApiResult};

/// What the SDK replaces with the filter that resumes an ORDER BY.
const ORDER_BY_FILTER: &str = "{documentdb-formattableorderbyquery-filter}";
const DOCUMENT_COUNT: &str = "{documentdb-formattablehybridsearchquery-totaldocumentcount}";

/// How many rows of each component each range returns, per row wanted:
/// the gateway asks for 120 when a query takes 10.
const CANDIDATES_PER_RESULT: usize = 12;

/// One scoring component of a rank.
struct Component {
    /// The score as the component queries compute it.
    score: String,
    /// Whether it ranks greater scores first.
    descending: bool,
    /// What a row without the score ranks as: after every other.
    missing: &'static str,
    /// For a `FullTextScore`: the text it reads (`c.text`) and its terms.
    full_text: Option<(String, Vec<String>)>,
}

/// The plan of a query whose ORDER BY is `RANK` (validated: its rank is
/// made of `FullTextScore` and `VectorDistance` calls).
pub fn hybrid(select: &Select, policies: &super::Policies) -> ApiResult<Value> {
    let aliases = select.aliases();
    let first = aliases.first().map_or("c", String::as_str);
    let sql = |e: &Expr| e.to_sql(aliases);
    let key = &select.order_by[0].expr;
    let (scores, weights) = match rrf_components(key) {
        Some((components, weights)) => (components, weights),
        None => (vec![key], None),
    };
    let components: Vec<Component> = scores
        .iter()
        .enumerate()
        .map(|(i, expr)| -> ApiResult<Component> {
            let weight = weights
                .as_ref()
                .and_then(|w| w.get(i))
                .copied()
                .unwrap_or(1.0);
            let Expr::Call(name, args) = expr else {
                return Err(not_a_score());
            };
            let args_sql: Vec<String> = args.iter().map(sql).collect();
            let (score, greater_first, full_text) = match name.as_str() {
                "FULLTEXTSCORE" => {
                    let ((_, terms), target) = score_terms(args)
                        .zip(args_sql.first().cloned())
                        .ok_or_else(not_a_score)?;
                    let score = format!(
                        "_FullTextScore({target}, {}, {DOCUMENT_COUNT}, \
                         {{documentdb-formattablehybridsearchquery-totalwordcount-{i}}}, \
                         {{documentdb-formattablehybridsearchquery-hitcountsarray-{i}}})",
                        Value::from(terms.clone())
                    );
                    (score, true, Some((target, terms)))
                }
                "VECTORDISTANCE" => {
                    let closer = greater_is_closer(policies, args);
                    (
                        format!("_VectorScore({})", args_sql.join(", ")),
                        closer,
                        None,
                    )
                }
                _ => return Err(not_a_score()),
            };
            let descending = greater_first == (weight >= 0.0);
            Ok(Component {
                score,
                descending,
                missing: match (descending, full_text.is_some()) {
                    (true, true) => "-1",
                    (true, false) => "-1.79769e+308",
                    (false, _) => "1.79769e+308",
                },
                full_text,
            })
        })
        .collect::<ApiResult<_>>()?;
    // Without TOP or LIMIT, `take` is null and the component queries have
    // no TOP: every row is a candidate. The .NET SDK adds a take stage only
    // when `take` is not null, and the JavaScript SDK's fullTextSearch.spec.ts
    // gets all 15 matches of such a query from the service (with
    // `allowUnboundedNonStreamingQueries`); the Python SDK refuses it.
    let (skip, take) = match (select.top, select.offset, select.limit) {
        (_, Some(offset), Some(limit)) => (Some(offset), Some(limit)),
        (Some(top), _, _) => (None, Some(top)),
        _ => (None, None),
    };
    let candidates = take.map(|take| {
        skip.unwrap_or(0)
            .saturating_add(take)
            .saturating_mul(CANDIDATES_PER_RESULT)
    });
    let top_clause = candidates.map_or_else(String::new, |n| format!("TOP {n} "));
    let payload = select.payload_sql(aliases);
    let component_scores = components
        .iter()
        .map(|c| format!("({} ?? {})", c.score, c.missing))
        .collect::<Vec<_>>()
        .join(", ");
    let from = select
        .from
        .as_ref()
        .map(|f| f.to_sql(&[]))
        .unwrap_or_default();
    let filter = match &select.filter {
        Some(filter) => format!("({} AND ({ORDER_BY_FILTER}))", sql(filter)),
        None => format!("({ORDER_BY_FILTER})"),
    };
    let component_infos: Vec<Value> = components
        .iter()
        .map(|c| {
            let direction = if c.descending { "DESC" } else { "ASC" };
            let rewritten = format!(
                "SELECT {top_clause}{first}._rid, [{{\"item\": {score}}}] AS orderByItems, \
                 {{\"payload\": {payload}, \"componentScores\": [{component_scores}]}} AS payload \
                 {from} WHERE {filter} ORDER BY {score} {direction}",
                score = c.score
            );
            json!({
                "distinctType": "None",
                "top": candidates,
                "offset": null,
                "limit": null,
                "orderBy": [if c.descending { "Descending" } else { "Ascending" }],
                "orderByExpressions": [c.score],
                "groupByExpressions": [],
                "groupByAliases": [],
                "aggregates": [],
                "groupByAliasToAggregateType": {},
                "rewrittenQuery": rewritten,
                "hasSelectValue": false,
                "dCountInfo": null,
                "hasNonStreamingOrderBy": true,
            })
        })
        .collect();
    let statistics: Vec<String> = components
        .iter()
        .filter_map(|c| c.full_text.as_ref())
        .map(|(target, terms)| {
            let hits: Vec<String> = terms
                .iter()
                .map(|t| {
                    format!(
                        "COUNTIF(FullTextContains({target}, {}))",
                        Value::from(t.as_str())
                    )
                })
                .collect();
            format!(
                "{{\"totalWordCount\": SUM(_FullTextWordCount({target})), \"hitCounts\": [{}]}}",
                hits.join(", ")
            )
        })
        .collect();
    Ok(json!({
        "partitionedQueryExecutionInfoVersion": 2,
        "queryInfo": null,
        "hybridSearchQueryInfo": {
            "globalStatisticsQuery": format!(
                "SELECT COUNT(1) AS documentCount, [{}] AS fullTextStatistics {from}",
                statistics.join(", ")
            ),
            "componentQueryInfos": component_infos,
            "componentWithoutPayloadQueryInfos": [],
            "projectionQueryInfo": null,
            "componentWeights": weights.map_or_else(Vec::new, |w| w.iter().map(|x| x.abs()).collect()),
            "skip": skip,
            "take": take,
            "requiresGlobalStatistics": !statistics.is_empty(),
        },
        "queryRanges": [{"min": "", "max": "FF", "isMinInclusive": true, "isMaxInclusive": false}],
    }))
}

/// What validation refuses before a plan is asked, refused here too, so
/// that no query can make the plan fail another way.
fn not_a_score() -> ApiError {
    ApiError::bad_request(
        "ORDER BY RANK takes a scoring function: FullTextScore(path, 'term', ...), \
         VectorDistance(...), or RRF of them.",
    )
}

/// Whether `VectorDistance(args)` counts greater scores as closer, read
/// without a row (for a plan): constant options only.
fn greater_is_closer(policies: &Policies, args: &[Expr]) -> bool {
    let options = args.get(3).and_then(eval::constant);
    comparison(policies, args, options.as_ref())
        .is_none_or(|c| vector::greater_is_closer(c.distance))
}

/// Whether an ORDER BY key's values come in descending order: for
/// `VectorDistance`, whether its distance function counts greater as
/// closer (by `policies`); for a rank, always (its scores are relevances).
pub fn sorts_descending(policies: &Policies, key: &SortKey) -> bool {
    match (key.kind, &key.expr) {
        (SortKind::Similarity, Expr::Call(_, args)) => greater_is_closer(policies, args),
        _ => key.descending,
    }
}
