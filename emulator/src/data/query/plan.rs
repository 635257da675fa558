//! Query plans: the answer to `x-ms-cosmos-is-query-plan-request: True`,
//! which the JavaScript SDK asks for before a cross-partition query.
//!
//! The plan tells the SDK what it must do across partition ranges (sort,
//! aggregate, dedupe, TOP, OFFSET/LIMIT) and gives the rewritten query it
//! then runs on each range, in the shapes the SDK's pipeline reads:
//! ORDER BY rows as `{"_rid", "orderByItems": [{"item"}], "payload"}`,
//! VALUE aggregates as `[{"item": x}]`, other aggregates as
//! `{"payload": {"alias": {"item": x}}}`, AVG as `{"sum", "count"}` and
//! MIN/MAX as `{"min"|"max", "count"}`. This emulator has one range.
//!
//! `aggregates` lists only the aggregate of a `VALUE` projection; without
//! `VALUE`, each alias's aggregate is in `groupByAliasToAggregateType` (the
//! JavaScript SDK refuses a plan with `aggregates` and no `VALUE`).

use serde_json::{json, Value};

use super::ast::{Aggregate, Expr, Projection, Select, SortKind};
use super::{search, PreparedQuery};
use crate::protocol::error::{ApiError, ApiResult};

/// What the SDK substitutes with a filter when it resumes an ORDER BY query.
const ORDER_BY_FILTER: &str = "{documentdb-formattableorderbyquery-filter}";

fn aggregate_name(aggregate: Aggregate) -> &'static str {
    match aggregate {
        Aggregate::Count => "Count",
        Aggregate::CountIf => "CountIf",
        Aggregate::Sum => "Sum",
        Aggregate::Min => "Min",
        Aggregate::Max => "Max",
        Aggregate::Avg => "Average",
        Aggregate::MakeList => "MakeList",
        Aggregate::MakeSet => "MakeSet",
    }
}

/// The aggregate a projection expression calls, if it is one aggregate call.
fn as_aggregate(expr: &Expr) -> Option<Aggregate> {
    match expr {
        Expr::Call(name, _) => Aggregate::from_name(name),
        _ => None,
    }
}

/// How one aggregate is computed per range, so the SDK can combine ranges.
/// MIN/MAX carry their count (`{"max", "count"}`) for clients that declare
/// `NonValueAggregate` (JavaScript reads that shape); for others (Python,
/// whose aggregators compare plain values) they are the plain value.
fn partial(aggregate: Aggregate, expr: &Expr, alias: &[String], min_max_count: bool) -> String {
    let arg = match expr {
        Expr::Call(_, args) => args
            .first()
            .map_or_else(|| "1".to_string(), |a| a.to_sql(alias)),
        _ => unreachable!("an aggregate call"),
    };
    let name = match aggregate {
        Aggregate::Count => return format!("{{\"item\": COUNT({arg})}}"),
        // Each range's count; the SDK sums them.
        Aggregate::CountIf => return format!("{{\"item\": COUNTIF({arg})}}"),
        Aggregate::Sum => return format!("{{\"item\": SUM({arg})}}"),
        // Each range's array; the SDK concatenates them (and dedupes a set).
        Aggregate::MakeList => return format!("{{\"item\": MAKELIST({arg})}}"),
        Aggregate::MakeSet => return format!("{{\"item\": MAKESET({arg})}}"),
        Aggregate::Avg => {
            return format!("{{\"item\": {{\"sum\": SUM({arg}), \"count\": COUNT({arg})}}}}")
        }
        Aggregate::Min => "min",
        Aggregate::Max => "max",
    };
    let function = if aggregate == Aggregate::Min {
        "MIN"
    } else {
        "MAX"
    };
    if !min_max_count {
        return format!("{{\"item\": {function}({arg})}}");
    }
    format!("{{\"item\": {{\"{name}\": {function}({arg}), \"count\": COUNT({arg})}}}}")
}

/// The service's refusal of a plan for an aggregate inside an expression
/// (`COUNT(1) + 1`): ranges' partial results cannot be combined through it.
fn composition_refused() -> ApiError {
    ApiError::bad_request("Compositions of aggregates and other expressions are not allowed.")
}

impl PreparedQuery {
    /// The partitioned query execution info for this query, over a
    /// container with the default search policies.
    pub fn plan(&self) -> ApiResult<Value> {
        self.plan_for(Some("NonValueAggregate"), &search::Policies::default())
    }

    /// The plan for a client declaring `supported` query features
    /// (`x-ms-cosmos-supported-query-features`): see [`partial`]. A vector
    /// search's order is the distance function of the container's
    /// `policies`.
    pub fn plan_for(
        &self,
        supported: Option<&str>,
        policies: &search::Policies,
    ) -> ApiResult<Value> {
        let min_max_count = supported
            .unwrap_or_default()
            .split(',')
            .any(|f| f.trim().eq_ignore_ascii_case("NonValueAggregate"));
        let s = &self.select;
        if s.order_by.iter().any(|k| k.kind == SortKind::Rank) {
            return search::plan::hybrid(s, policies);
        }
        let alias = s.aliases();
        // The item's `_rid`, which ORDER BY pages carry: read through the first name.
        let first = alias.first().map_or("c", String::as_str);
        let mut aggregates = Vec::new();
        let mut alias_to_aggregate = serde_json::Map::new();
        let mut group_by_aliases = Vec::new();
        let mut rewritten = String::new();
        // ORDER BY VectorDistance sorts in memory, not through an index.
        let non_streaming = s.order_by.iter().any(|k| k.kind == SortKind::Similarity);
        let from_where = |extra: Option<&str>| {
            let mut conditions: Vec<String> = extra.map(str::to_string).into_iter().collect();
            if let Some(filter) = &s.filter {
                conditions.push(filter.to_sql(alias));
            }
            let where_clause = if conditions.is_empty() {
                String::new()
            } else {
                format!(
                    " WHERE {}",
                    conditions
                        .iter()
                        .map(|c| format!("({c})"))
                        .collect::<Vec<_>>()
                        .join(" AND ")
                )
            };
            let from = s.from.as_ref().map(|f| f.to_sql(&[])).unwrap_or_default();
            format!(" {from}{where_clause}")
        };
        if s.from.is_none() {
            // Without FROM the query is evaluated once as it is: there is
            // nothing to merge across ranges, and no rewriting.
        } else if !s.group_by.is_empty() {
            // Each range returns its groups, keyed by `groupByItems`, with
            // the partial aggregates in `payload`; the SDK merges groups.
            let keys: Vec<String> = s.group_by.iter().map(|e| e.to_sql(alias)).collect();
            let items: Vec<String> = keys.iter().map(|k| format!("{{\"item\": {k}}}")).collect();
            let payload = match &s.projection {
                Projection::Value(e) => match as_aggregate(e) {
                    Some(aggregate) => {
                        aggregates.push(json!(aggregate_name(aggregate)));
                        format!("[{}]", partial(aggregate, e, alias, min_max_count))
                    }
                    None if e.contains_aggregate() => return Err(composition_refused()),
                    None => e.to_sql(alias),
                },
                Projection::Fields(fields) => {
                    let mut parts = Vec::new();
                    for (e, name) in fields {
                        group_by_aliases.push(json!(name));
                        let part = match as_aggregate(e) {
                            Some(aggregate) => {
                                alias_to_aggregate
                                    .insert(name.clone(), json!(aggregate_name(aggregate)));
                                partial(aggregate, e, alias, min_max_count)
                            }
                            None if e.contains_aggregate() => return Err(composition_refused()),
                            None => {
                                alias_to_aggregate.insert(name.clone(), Value::Null);
                                e.to_sql(alias)
                            }
                        };
                        parts.push(format!("{}: {part}", Value::from(name.as_str())));
                    }
                    format!("{{{}}}", parts.join(", "))
                }
                Projection::Star => String::new(),
            };
            rewritten = format!(
                "SELECT [{}] AS groupByItems, {payload} AS payload{} GROUP BY {}",
                items.join(", "),
                from_where(None),
                keys.join(", ")
            );
        } else if self.aggregate {
            match &s.projection {
                Projection::Value(e) => match as_aggregate(e) {
                    Some(aggregate) => {
                        aggregates.push(json!(aggregate_name(aggregate)));
                        rewritten = format!(
                            "SELECT VALUE [{}]{}",
                            partial(aggregate, e, alias, min_max_count),
                            from_where(None)
                        );
                    }
                    None => return Err(composition_refused()),
                },
                Projection::Fields(fields) => {
                    let mut parts = Vec::new();
                    for (e, name) in fields {
                        if as_aggregate(e).is_none() {
                            // Validation lets only aggregates stand here.
                            return Err(composition_refused());
                        }
                        if let Some(aggregate) = as_aggregate(e) {
                            // The select list's order, in which the Java and
                            // .NET SDKs build the merged row from their
                            // aggregators (an empty list makes it `{}`).
                            group_by_aliases.push(json!(name));
                            alias_to_aggregate
                                .insert(name.clone(), json!(aggregate_name(aggregate)));
                            parts.push(format!(
                                "{}: {}",
                                Value::from(name.as_str()),
                                partial(aggregate, e, alias, min_max_count)
                            ));
                        }
                    }
                    rewritten = format!(
                        "SELECT {{{}}} AS payload{}",
                        parts.join(", "),
                        from_where(None)
                    );
                }
                Projection::Star => {}
            }
        } else if !s.order_by.is_empty() {
            let items: Vec<String> = s
                .order_by
                .iter()
                .map(|k| format!("{{\"item\": {}}}", k.expr.to_sql(alias)))
                .collect();
            let payload = s.payload_sql(alias);
            let top = s.top.map(|n| format!("TOP {n} ")).unwrap_or_default();
            let order: Vec<String> = s
                .order_by
                .iter()
                .map(|k| match k.kind {
                    // Most similar first: the direction is the distance function's.
                    SortKind::Similarity => k.expr.to_sql(alias),
                    _ => format!(
                        "{} {}",
                        k.expr.to_sql(alias),
                        if k.descending { "DESC" } else { "ASC" }
                    ),
                })
                .collect();
            // Sorted in memory (a vector search): each range returns the
            // first offset + limit rows, and the SDK skips `offset` itself.
            let window = match (non_streaming, s.offset, s.limit) {
                (true, Some(offset), Some(limit)) => {
                    format!(" OFFSET 0 LIMIT {}", offset.saturating_add(limit))
                }
                _ => String::new(),
            };
            // DISTINCT: each range's rows distinct before its TOP, so no
            // `_rid` (it would make every row distinct), as the service's
            // plan leaves it out ("SELECT DISTINCT TOP 10 c.age ... ORDER BY
            // c.age" over three items per age in one range gives ten ages).
            let head = if s.distinct {
                format!("DISTINCT {top}")
            } else {
                format!("{top}{first}._rid, ")
            };
            rewritten = format!(
                "SELECT {head}[{}] AS orderByItems, {payload} AS payload{} ORDER BY {}{window}",
                items.join(", "),
                from_where(Some(ORDER_BY_FILTER)),
                order.join(", ")
            );
        } else if let (Some(offset), Some(limit)) = (s.offset, s.limit) {
            // The SDK skips `offset` itself: each range returns the first offset + limit.
            rewritten = format!(
                "SELECT {}{}{} OFFSET 0 LIMIT {}",
                if s.distinct { "DISTINCT " } else { "" },
                projection_sql(s, alias),
                from_where(None),
                offset.saturating_add(limit)
            );
        }
        // An aggregate without GROUP BY is one row: its ORDER BY orders
        // nothing, and the plan leaves it out (the rewritten query already
        // has), so that the SDK merges the aggregate and sorts nothing (the
        // Python SDK's test_aggregate, `... ORDER BY r.key`).
        let order_by = if self.aggregate && s.group_by.is_empty() {
            &[][..]
        } else {
            &s.order_by[..]
        };
        let has_order_by = !order_by.is_empty();
        let distinct_type = match (s.distinct, has_order_by) {
            (false, _) => "None",
            (true, true) => "Ordered",
            (true, false) => "Unordered",
        };
        Ok(json!({
            "partitionedQueryExecutionInfoVersion": 2,
            "queryInfo": {
                "distinctType": distinct_type,
                "top": s.top,
                "offset": s.offset,
                "limit": s.limit,
                "orderBy": order_by.iter().map(|k| if search::plan::sorts_descending(policies, k) { "Descending" } else { "Ascending" }).collect::<Vec<_>>(),
                "orderByExpressions": order_by.iter().map(|k| k.expr.to_sql(alias)).collect::<Vec<_>>(),
                "groupByExpressions": s.group_by.iter().map(|e| e.to_sql(alias)).collect::<Vec<_>>(),
                "groupByAliases": group_by_aliases,
                "aggregates": aggregates,
                "groupByAliasToAggregateType": alias_to_aggregate,
                "rewrittenQuery": rewritten,
                "hasSelectValue": matches!(s.projection, Projection::Value(_)),
                "dCountInfo": null,
                "hasNonStreamingOrderBy": non_streaming,
            },
            "queryRanges": [{"min": "", "max": "FF", "isMinInclusive": true, "isMaxInclusive": false}],
        }))
    }
}

fn projection_sql(s: &Select, alias: &[String]) -> String {
    match &s.projection {
        Projection::Star => "*".to_string(),
        Projection::Value(e) => format!("VALUE {}", e.to_sql(alias)),
        Projection::Fields(fields) => fields
            .iter()
            .map(|(e, name)| format!("{} AS {name}", e.to_sql(alias)))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::prepared as prepare;
    use serde_json::{json, Value};
    /// Runs the plan's rewritten query the way the SDK does.
    fn run_rewritten(plan: &Value, docs: &[Value]) -> Vec<Value> {
        let text = plan["queryInfo"]["rewrittenQuery"]
            .as_str()
            .unwrap()
            .replace(super::ORDER_BY_FILTER, "true");
        prepare(&text).run_values(docs.iter().cloned()).unwrap()
    }

    fn docs() -> Vec<Value> {
        vec![
            json!({"id": "a", "n": 3, "_rid": "r1"}),
            json!({"id": "b", "n": 1, "_rid": "r2"}),
            json!({"id": "c", "_rid": "r3"}),
        ]
    }

    /// JOINs and `IN` sources are written back into the rewritten query,
    /// which then gives per range what the original gives.
    #[test]
    fn rewritten_queries_keep_the_from_clause() {
        let docs = vec![
            json!({"id": "a", "tags": ["x", "y"], "_rid": "r1"}),
            json!({"id": "b", "tags": ["z"], "_rid": "r2"}),
        ];
        let plan = prepare("SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags")
            .plan()
            .unwrap();
        let text = plan["queryInfo"]["rewrittenQuery"].as_str().unwrap();
        assert!(text.contains("FROM c JOIN t IN c.tags"), "{text}");
        assert_eq!(run_rewritten(&plan, &docs), vec![json!([{"item": 3}])]);
        let plan = prepare("SELECT VALUE x FROM x IN c.tags ORDER BY x DESC")
            .plan()
            .unwrap();
        let rows = run_rewritten(&plan, &docs);
        let payloads: Vec<&Value> = rows.iter().map(|r| &r["payload"]).collect();
        assert_eq!(payloads, [&json!("z"), &json!("y"), &json!("x")]);
    }

    /// DISTINCT with ORDER BY: each range's rows are distinct before its
    /// TOP (no `_rid`, which would make every row distinct), so a range
    /// holding each age three times still gives the first ten ages (the
    /// JavaScript SDK's "query with TOP 10 should fetch correct number of
    /// results").
    #[test]
    fn a_distinct_ordered_query_is_distinct_in_each_range() {
        let docs: Vec<Value> = (1..=12)
            .flat_map(|age| ["A", "B", "C"].map(|n| json!({"id": format!("{age}{n}"), "age": age, "_rid": format!("r{age}{n}")})))
            .collect();
        let plan = prepare("SELECT DISTINCT TOP 10 c.age FROM c ORDER BY c.age ASC")
            .plan()
            .unwrap();
        let rows = run_rewritten(&plan, &docs);
        let ages: Vec<&Value> = rows.iter().map(|r| &r["payload"]["age"]).collect();
        assert_eq!(
            ages,
            (1..=10)
                .map(|a| json!(a))
                .collect::<Vec<_>>()
                .iter()
                .collect::<Vec<_>>()
        );
    }

    /// Without FROM there is nothing to merge: the query runs as it is
    /// (an aggregate rewritten over `FROM c` would count the items).
    #[test]
    fn from_less_queries_are_not_rewritten() {
        for q in [
            "SELECT VALUE COUNT(1)",
            "SELECT VALUE CONCAT('a', 'b')",
            "SELECT 1 AS one",
        ] {
            let plan = prepare(q).plan().unwrap();
            assert_eq!(plan["queryInfo"]["rewrittenQuery"], json!(""), "{q}");
            assert_eq!(plan["queryInfo"]["aggregates"], json!([]), "{q}");
        }
    }

    #[test]
    fn plain_queries_need_no_rewrite() {
        let plan = prepare("SELECT * FROM c WHERE c.n = 1").plan().unwrap();
        assert_eq!(plan["queryInfo"]["rewrittenQuery"], json!(""));
        assert_eq!(plan["queryInfo"]["distinctType"], json!("None"));
        assert_eq!(plan["queryRanges"][0]["max"], json!("FF"));
    }

    #[test]
    fn an_aggregate_orders_nothing() {
        let plan = prepare("SELECT VALUE AVG(r.key) FROM r WHERE IS_NUMBER(r.key) ORDER BY r.key")
            .plan()
            .unwrap();
        assert_eq!(plan["queryInfo"]["orderBy"], json!([]), "{plan}");
        assert_eq!(plan["queryInfo"]["aggregates"], json!(["Average"]));
        let rewritten = plan["queryInfo"]["rewrittenQuery"].as_str().unwrap();
        assert!(!rewritten.contains("ORDER BY"), "{rewritten}");
    }

    #[test]
    fn order_by_rows_carry_items_and_payload() {
        let plan = prepare("SELECT c.id FROM c WHERE c.n > 0 ORDER BY c.n DESC")
            .plan()
            .unwrap();
        assert_eq!(plan["queryInfo"]["orderBy"], json!(["Descending"]));
        let rows = run_rewritten(&plan, &docs());
        assert_eq!(
            rows,
            vec![
                json!({"_rid": "r1", "orderByItems": [{"item": 3}], "payload": {"id": "a"}}),
                json!({"_rid": "r2", "orderByItems": [{"item": 1}], "payload": {"id": "b"}}),
            ]
        );
    }

    #[test]
    fn aggregates_come_back_in_the_sdk_shapes() {
        let plan = prepare("SELECT VALUE COUNT(1) FROM c").plan().unwrap();
        assert_eq!(plan["queryInfo"]["aggregates"], json!(["Count"]));
        assert_eq!(run_rewritten(&plan, &docs()), vec![json!([{"item": 3}])]);
        let plan = prepare("SELECT VALUE AVG(c.n) FROM c").plan().unwrap();
        assert_eq!(
            run_rewritten(&plan, &docs()),
            vec![json!([{"item": {"sum": 4, "count": 2}}])]
        );
        let plan = prepare("SELECT VALUE MAX(c.n) FROM c WHERE c.n > 5")
            .plan()
            .unwrap();
        assert_eq!(
            run_rewritten(&plan, &docs()),
            vec![json!([{"item": {"count": 0}}])]
        );
        // A client without NonValueAggregate (Python) gets plain MIN/MAX values.
        let plan = prepare("SELECT VALUE MAX(c.n) FROM c")
            .plan_for(Some("Aggregate,Distinct,OrderBy"), &Default::default())
            .unwrap();
        assert_eq!(run_rewritten(&plan, &docs()), vec![json!([{"item": 3}])]);
        let plan = prepare("SELECT VALUE MAX(c.n) FROM c WHERE c.n > 5")
            .plan_for(None, &Default::default())
            .unwrap();
        assert_eq!(run_rewritten(&plan, &docs()), vec![json!([{}])]);
        let plan = prepare("SELECT COUNT(1) AS total, MIN(c.n) AS low FROM c")
            .plan()
            .unwrap();
        assert_eq!(
            plan["queryInfo"]["groupByAliasToAggregateType"],
            json!({"total": "Count", "low": "Min"})
        );
        // The aliases in the select list's order: the Java SDK builds the
        // merged row from them (sdk-tests/java, QueriesTest).
        assert_eq!(plan["queryInfo"]["groupByAliases"], json!(["total", "low"]));
        assert_eq!(plan["queryInfo"]["groupByExpressions"], json!([]));
        assert_eq!(
            run_rewritten(&plan, &docs()),
            vec![
                json!({"payload": {"total": {"item": 3}, "low": {"item": {"min": 1, "count": 2}}}})
            ]
        );
    }

    #[test]
    fn offset_limit_is_left_to_the_sdk() {
        let plan = prepare("SELECT VALUE c.id FROM c OFFSET 1 LIMIT 1")
            .plan()
            .unwrap();
        assert_eq!(
            (
                plan["queryInfo"]["offset"].clone(),
                plan["queryInfo"]["limit"].clone()
            ),
            (json!(1), json!(1))
        );
        assert_eq!(
            run_rewritten(&plan, &docs()).len(),
            2,
            "each range returns offset + limit rows"
        );
    }

    /// GROUP BY: each range returns its groups keyed by `groupByItems`, the
    /// partial aggregates in `payload`, as the SDK's GROUP BY stage reads them.
    #[test]
    fn group_by_is_described_and_rewritten() {
        let docs = vec![
            json!({"id": "a", "g": "x", "n": 1}),
            json!({"id": "b", "g": "x", "n": 3}),
            json!({"id": "c", "g": "y", "n": 5}),
        ];
        let plan = prepare(
            "SELECT c.g, COUNT(1) AS n, AVG(c.n) AS mean FROM c WHERE c.n > 0 GROUP BY c.g",
        )
        .plan()
        .unwrap();
        let info = &plan["queryInfo"];
        assert_eq!(info["groupByExpressions"], json!(["c.g"]));
        assert_eq!(info["groupByAliases"], json!(["g", "n", "mean"]));
        assert_eq!(
            info["groupByAliasToAggregateType"],
            json!({"g": null, "n": "Count", "mean": "Average"})
        );
        assert_eq!(info["hasSelectValue"], json!(false));
        assert_eq!(
            run_rewritten(&plan, &docs),
            vec![
                json!({"groupByItems": [{"item": "x"}], "payload": {"g": "x", "n": {"item": 2}, "mean": {"item": {"sum": 4, "count": 2}}}}),
                json!({"groupByItems": [{"item": "y"}], "payload": {"g": "y", "n": {"item": 1}, "mean": {"item": {"sum": 5, "count": 1}}}}),
            ]
        );
        let plan = prepare("SELECT VALUE MAX(c.n) FROM c GROUP BY c.g")
            .plan()
            .unwrap();
        assert_eq!(plan["queryInfo"]["aggregates"], json!(["Max"]));
        assert_eq!(plan["queryInfo"]["hasSelectValue"], json!(true));
        assert_eq!(
            run_rewritten(&plan, &docs)[0],
            json!({"groupByItems": [{"item": "x"}], "payload": [{"item": {"max": 3, "count": 2}}]})
        );
        let plan = prepare("SELECT VALUE c.g FROM c GROUP BY c.g")
            .plan()
            .unwrap();
        assert_eq!(
            run_rewritten(&plan, &docs),
            vec![
                json!({"groupByItems": [{"item": "x"}], "payload": "x"}),
                json!({"groupByItems": [{"item": "y"}], "payload": "y"}),
            ]
        );
    }

    #[test]
    fn an_aggregate_inside_an_expression_has_no_plan() {
        for q in [
            "SELECT VALUE COUNT(1) + 1 FROM c",
            "SELECT VALUE {n: COUNT(1)} FROM c GROUP BY c.g",
            "SELECT c.g, COUNT(1) * 2 AS n FROM c GROUP BY c.g",
        ] {
            let error = prepare(q).plan().unwrap_err();
            assert!(error.message.contains("Compositions of aggregates"), "{q}");
        }
    }
}
