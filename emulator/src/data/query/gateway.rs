//! What the gateway serves of a query sent across partitions, and which
//! query features a client must declare to be given a plan.
//!
//! Recorded against the hosted service (a container with one range): a
//! query sent with no partition key and no range is answered directly
//! when each range's rows are already the answer (filters, projections,
//! JOINs, subqueries). One that needs merging across ranges (a `VALUE`
//! aggregate, `TOP`, `ORDER BY`, `OFFSET LIMIT`, `DISTINCT`, `GROUP BY`)
//! is refused with 400 and substatus 1004, the plan in
//! `additionalErrorInfo`, so that the SDK runs it range by range; an
//! aggregate without `VALUE` is refused outright. The plan request itself
//! is refused when the query needs a feature the client does not list in
//! `x-ms-cosmos-supported-query-features`, as the Python SDK (without
//! GroupBy, NonValueAggregate, MultipleAggregates) finds in Azure.

use super::ast::{BinaryOp, Expr, Projection, SortKind};
use super::{eval, search, PreparedQuery};
use crate::data::index::DocumentPath;
use crate::protocol::error::{ApiError, ApiResult};

/// The substatus that tells an SDK to fetch the plan and run the pipeline.
pub const CROSS_PARTITION_QUERY_NOT_SERVABLE: u32 = 1004;

impl PreparedQuery {
    /// Whether each range's rows are already the answer.
    fn needs_merging(&self) -> bool {
        let s = &self.select;
        self.aggregate
            || !s.group_by.is_empty()
            || s.top.is_some()
            || !s.order_by.is_empty()
            || s.offset.is_some()
            || s.distinct
    }

    /// Whether the projection aggregates without `VALUE`.
    fn non_value_aggregate(&self) -> bool {
        matches!(&self.select.projection, Projection::Fields(fields)
            if fields.iter().any(|(e, _)| e.contains_aggregate()))
    }

    /// Whether the filter pins every path of the partition key to a value
    /// (`r.city = 'Redmond' AND r.zipcode = '98052'`, parameters included):
    /// the gateway then routes the query to that one logical partition, and
    /// it needs no cross-partition header (the Python SDK's
    /// `test_partitioned_collection_document_crud_and_query_subpartition`).
    pub fn pins_partition_key(&self, paths: &[Vec<String>]) -> bool {
        let s = &self.select;
        let Some((filter, from)) = s.filter.as_ref().zip(s.from.as_ref()) else {
            return false;
        };
        if paths.is_empty() {
            return false;
        }
        let mut pinned: Vec<DocumentPath> = Vec::new();
        let mut conjuncts = vec![filter];
        while let Some(expr) = conjuncts.pop() {
            match expr {
                Expr::Chain(first, rest) if rest.iter().all(|(op, _)| *op == BinaryOp::And) => {
                    conjuncts.push(first);
                    conjuncts.extend(rest.iter().map(|(_, e)| e));
                }
                Expr::Binary(BinaryOp::And, a, b) => conjuncts.extend([&**a, &**b]),
                Expr::Binary(BinaryOp::Eq, a, b) => {
                    let path = match (&**a, &**b) {
                        (Expr::Literal(_), other) | (other, Expr::Literal(_)) => {
                            DocumentPath::of_property(other, Some(from))
                        }
                        _ => None,
                    };
                    pinned.extend(path);
                }
                _ => {}
            }
        }
        paths
            .iter()
            .all(|path| pinned.iter().any(|pinned| pinned.is(path)))
    }

    /// Refuses, as the gateway does, a query sent to every partition at
    /// once that it cannot answer without merging ranges. One whose filter
    /// `pinned` the partition key it routes to that partition and answers
    /// whole, ORDER BY and all (the Go SDK's TestSinglePartitionQueryInline),
    /// but an aggregate without `VALUE` is refused even then (the Python
    /// SDK's test_aggregate, `SELECT AVG(r.f) FROM r WHERE r.pk = 'x'`).
    pub fn check_servable_across_partitions(&self, pinned: bool) -> ApiResult<()> {
        if self.select.from.is_none() {
            return Ok(());
        }
        if self.non_value_aggregate() {
            return Err(ApiError::bad_request(
                "Cross partition query only supports 'VALUE <AggregateFunc>' for aggregates.",
            ));
        }
        if pinned || !self.needs_merging() {
            return Ok(());
        }
        let mut refusal = ApiError::bad_request(
            "The provided cross partition query can not be directly served by the gateway. This \
             is a first chance (internal) exception that all newer clients will know how to \
             handle gracefully. This exception is traced, but unless you see it bubble up as an \
             exception (which only happens on older SDK clients), then you can safely ignore \
             this message.",
        )
        .with_substatus(CROSS_PARTITION_QUERY_NOT_SERVABLE);
        refusal.additional_info = self.plan().ok().map(|plan| plan.to_string());
        Err(refusal)
    }

    /// The features running this query across ranges takes, by the names
    /// of `x-ms-cosmos-supported-query-features`.
    pub fn features(&self) -> Vec<&'static str> {
        let s = &self.select;
        let mut needed = Vec::new();
        let aggregates: usize = match &s.projection {
            Projection::Star => 0,
            Projection::Value(e) => eval::aggregate_calls(e).len(),
            Projection::Fields(fields) => fields
                .iter()
                .map(|(e, _)| eval::aggregate_calls(e).len())
                .sum(),
        };
        if s.from.is_some() && aggregates > 0 {
            let value = matches!(s.projection, Projection::Value(_));
            match (aggregates, value) {
                (1, true) => needed.push("Aggregate"),
                (1, false) => needed.push("NonValueAggregate"),
                _ => needed.extend(["MultipleAggregates", "NonValueAggregate"]),
            }
        }
        if s.distinct {
            needed.push("Distinct");
        }
        if !s.group_by.is_empty() {
            needed.push("GroupBy");
        }
        if s.offset.is_some() || s.limit.is_some() {
            needed.push("OffsetAndLimit");
        }
        let rank = s.order_by.iter().find(|k| k.kind == SortKind::Rank);
        match (rank, s.order_by.len()) {
            (Some(key), _) => {
                needed.push("HybridSearch");
                if search::rank::rrf_components(&key.expr).is_some_and(|(_, w)| w.is_some()) {
                    needed.push("WeightedRankFusion");
                }
            }
            (None, 0) => {}
            (None, 1) => needed.push("OrderBy"),
            (None, _) => needed.push("MultipleOrderBy"),
        }
        if s.order_by.iter().any(|k| k.kind == SortKind::Similarity) {
            needed.push("NonStreamingOrderBy");
        }
        if s.top.is_some() {
            needed.push("Top");
        }
        needed
    }

    /// Refuses the plan of a query that needs features the client does
    /// not declare (`supported`: the header's comma-separated list).
    pub fn check_supported_features(&self, supported: Option<&str>) -> ApiResult<()> {
        let declared: Vec<&str> = supported
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .collect();
        let missing: Vec<String> = self
            .features()
            .into_iter()
            .filter(|f| !declared.iter().any(|d| d.eq_ignore_ascii_case(f)))
            .map(|f| format!("Query contained {f}, which the calling client does not support."))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(ApiError::bad_request(format!(
            "Query contains 1 or more unsupported features. Upgrade your SDK to a version that \
             does support the requested features:\n{}",
            missing.join("\n")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::prepared as prepare;

    #[test]
    fn a_filter_that_pins_every_level_of_the_key() {
        let key = |paths: &[&str]| -> Vec<Vec<String>> {
            paths
                .iter()
                .map(|p| {
                    p.split('/')
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect()
                })
                .collect()
        };
        let hierarchical = key(&["/city", "/zip"]);
        for q in [
            "SELECT * FROM root r WHERE r.city = 'a' AND r.zip = 'b'",
            "SELECT * FROM c WHERE 'b' = c.zip AND c.n > 1 AND c.city = 'a'",
            "SELECT * FROM c WHERE c[\"city\"] = 'a' AND (c.zip = 'b')",
        ] {
            assert!(prepare(q).pins_partition_key(&hierarchical), "{q}");
        }
        for q in [
            "SELECT * FROM c WHERE c.city = 'a'",
            "SELECT * FROM c WHERE c.city = 'a' OR c.zip = 'b'",
            "SELECT * FROM c WHERE c.city = c.zip AND c.zip = 'b'",
            "SELECT * FROM c",
            "SELECT * FROM c IN c.kids WHERE c.city = 'a' AND c.zip = 'b'",
        ] {
            assert!(!prepare(q).pins_partition_key(&hierarchical), "{q}");
        }
        let nested = key(&["/address/state"]);
        assert!(prepare("SELECT * FROM c WHERE c.address.state = 'WA'").pins_partition_key(&nested));
        assert!(!prepare("SELECT * FROM c WHERE c.state = 'WA'").pins_partition_key(&nested));
    }

    /// The forms the hosted gateway was recorded to refuse, and to answer.
    #[test]
    fn what_the_gateway_serves_across_partitions() {
        for q in [
            "SELECT VALUE COUNT(1) FROM c",
            "SELECT TOP 3 * FROM c",
            "SELECT * FROM c ORDER BY c.n",
            "SELECT * FROM c ORDER BY c.n, c.id",
            "SELECT * FROM c OFFSET 1 LIMIT 2",
            "SELECT DISTINCT VALUE c.n FROM c",
            "SELECT VALUE c.n FROM c GROUP BY c.n",
        ] {
            let refusal = prepare(q)
                .check_servable_across_partitions(false)
                .unwrap_err();
            assert_eq!(refusal.substatus, Some(1004), "{q}");
            let plan: serde_json::Value =
                serde_json::from_str(refusal.additional_info.as_deref().unwrap()).unwrap();
            assert_eq!(plan["partitionedQueryExecutionInfoVersion"], 2, "{q}");
        }
        for q in [
            "SELECT COUNT(1) AS n FROM c",
            "SELECT c.g, COUNT(1) AS n FROM c GROUP BY c.g",
        ] {
            let refusal = prepare(q)
                .check_servable_across_partitions(false)
                .unwrap_err();
            assert_eq!(refusal.substatus, None, "{q}");
            assert!(refusal
                .message
                .contains("only supports 'VALUE <AggregateFunc>'"));
        }
        for q in [
            "SELECT c.id, c.n FROM c WHERE c.n IN (1, 2) AND c.id LIKE 'a%'",
            "SELECT VALUE t FROM c JOIN t IN c.tags",
            "SELECT c.id, ARRAY(SELECT VALUE t FROM t IN c.tags) AS t FROM c",
            "SELECT VALUE COUNT(1)",
        ] {
            assert!(
                prepare(q).check_servable_across_partitions(false).is_ok(),
                "{q}"
            );
        }
    }

    #[test]
    fn a_plan_needs_the_features_its_query_uses() {
        let python = "Aggregate,CompositeAggregate,Distinct,MultipleOrderBy,OffsetAndLimit,OrderBy,Top,NonStreamingOrderBy,HybridSearch,CountIf,WeightedRankFusion";
        assert!(prepare("SELECT VALUE COUNT(1) FROM c")
            .check_supported_features(Some(python))
            .is_ok());
        let refusal = prepare("SELECT VALUE COUNT(1) FROM c")
            .check_supported_features(None)
            .unwrap_err();
        assert!(refusal
            .message
            .ends_with("\nQuery contained Aggregate, which the calling client does not support."));
        let refusal = prepare("SELECT c.g, COUNT(1) AS n, AVG(c.x) AS a FROM c GROUP BY c.g")
            .check_supported_features(Some(python))
            .unwrap_err();
        for feature in ["MultipleAggregates", "NonValueAggregate", "GroupBy"] {
            assert!(
                refusal
                    .message
                    .contains(&format!("Query contained {feature},")),
                "{}",
                refusal.message
            );
        }
        assert_eq!(
            prepare("SELECT DISTINCT TOP 2 VALUE c.n FROM c ORDER BY c.n, c.id OFFSET 1 LIMIT 1")
                .features(),
            ["Distinct", "OffsetAndLimit", "MultipleOrderBy", "Top"]
        );
    }
}
