//! What the service refuses in a query before reading any item, checked
//! once per query (and per subquery): unknown functions, aggregates where
//! they cannot stand, with aggregates or GROUP BY a projection that reads
//! something neither grouped nor aggregated, `TOP`, `ORDER BY` and
//! `OFFSET LIMIT` in a subquery, and ORDER BY keys that are not paths of
//! the items.

use super::ast::{Aggregate, Expr, Select};
use super::eval;
use super::lexer::{query_error, truncated};
use super::paths::maps_to_path;
use crate::data::index::DocumentPath;
use crate::protocol::error::{ApiError, ApiResult};

/// Refuses what the service refuses in `select`; `text` is the query, quoted
/// in messages; `outer` the names bound around a subquery; `nested` for a
/// subquery (also one over the container, `FROM (SELECT ...) x`).
pub(super) fn validate(
    select: &Select,
    text: &str,
    outer: &[String],
    nested: bool,
) -> ApiResult<()> {
    if nested {
        subquery_clauses(select)?;
    } else {
        order_by_paths(select)?;
    }
    super::search::validate::validate(select)?;
    if let Some(inner) = select.from.as_ref().and_then(|f| f.derived.as_deref()) {
        validate(inner, text, &[], true)?;
    }
    let projected = select.projection.expressions();
    for e in &projected {
        eval::check_functions(e, true)?;
    }
    let mut all = projected.clone();
    for e in select.clause_expressions() {
        eval::check_functions(e, false)?;
        all.push(e);
    }
    // Documented: GROUP BY takes no subquery (nor an aggregate, refused above).
    if select
        .group_by
        .iter()
        .any(|e| !eval::subqueries(e).is_empty())
    {
        return Err(ApiError::bad_request(format!(
            "GROUP BY does not accept subqueries: group by a path or an expression of the item. Query: {}",
            truncated(text)
        )));
    }
    let names: Vec<String> = outer.iter().chain(select.aliases()).cloned().collect();
    let aggregating = projected.iter().any(|e| e.contains_aggregate());
    if aggregating || !select.group_by.is_empty() {
        for e in &projected {
            grouped_only(e, &select.group_by, &names, text)?;
        }
    }
    for e in all {
        for subquery in eval::subqueries(e) {
            validate(subquery, text, &names, true)?;
        }
    }
    Ok(())
}

/// A subquery has no `TOP`, `ORDER BY` or `OFFSET LIMIT` (measured against
/// Microsoft's emulator, which runs the service's engine: SC2203, SC2202,
/// SC2204).
fn subquery_clauses(select: &Select) -> ApiResult<()> {
    if select.top.is_some() {
        return Err(query_error(
            "SC2203",
            "'TOP' is not supported in subqueries.",
        ));
    }
    if !select.order_by.is_empty() {
        return Err(query_error(
            "SC2202",
            "'ORDER BY' is not supported in subqueries.",
        ));
    }
    if select.offset.is_some() || select.limit.is_some() {
        return Err(query_error(
            "SC2204",
            "'OFFSET LIMIT' clause is not supported in subqueries.",
        ));
    }
    Ok(())
}

/// The service sorts by paths of the items only (through the index): an
/// ORDER BY key that computes a value is refused, except one `ST_DISTANCE`.
fn order_by_paths(select: &Select) -> ApiResult<()> {
    let (Some(from), keys) = (&select.from, &select.order_by) else {
        return Ok(());
    };
    let distance = |e: &Expr| matches!(e, Expr::Call(name, _) if name == "ST_DISTANCE");
    // A user-defined function orders by what it computes (the issue's
    // contract for UDFs, which the service evaluates per item).
    let udf = |e: &Expr| matches!(e, Expr::Call(name, _) if name.starts_with(super::udf::PREFIX));
    // Scores sort through the vector and full-text indexes (`search/`).
    let score = |e: &Expr| matches!(e, Expr::Call(name, _) if super::search::is_function(name));
    let all_paths = keys
        .iter()
        .all(|k| maps_to_path(&k.expr, from) || udf(&k.expr) || score(&k.expr));
    if all_paths || (keys.len() == 1 && distance(&keys[0].expr)) {
        return Ok(());
    }
    Err(ApiError::bad_request(
        "Unsupported ORDER BY clause. ORDER BY item expression could not be mapped to a document path.",
    ))
}

/// With aggregates or GROUP BY, a projected expression may read the row
/// only through a grouped expression or an aggregate.
fn grouped_only(expr: &Expr, group_by: &[Expr], names: &[String], text: &str) -> ApiResult<()> {
    if group_by.contains(expr) {
        return Ok(());
    }
    match expr {
        Expr::Call(name, _) if Aggregate::from_name(name).is_some() => Ok(()),
        // A subquery sees the row as it is: the service's rule is on references.
        Expr::Subquery(..) => Ok(()),
        Expr::Var(_) | Expr::Property(..) | Expr::Index(..) => {
            Err(ApiError::bad_request(format!(
                "Property reference '{}' is invalid in the select list because it is not contained in either an aggregate function or the GROUP BY clause. Query: {}",
                expr.to_sql(names),
                truncated(text)
            )))
        }
        other => other
            .children()
            .into_iter()
            .try_for_each(|child| grouped_only(child, group_by, names, text)),
    }
}

/// Refuses, as the service does, ORDER BY over several keys that no
/// composite index of the container's indexing `policy` serves: one with
/// exactly the keys' paths, in order, in the keys' directions or all
/// reversed.
pub fn check_order_by_index(select: &Select, policy: &serde_json::Value) -> ApiResult<()> {
    let keys = &select.order_by;
    if let [key] = keys.as_slice() {
        // One property: its range index must exist (the service's
        // words, 400, as the MongoDB API relays them from the same engine).
        let unindexed = key.kind == super::ast::SortKind::Value
            && DocumentPath::of_property(&key.expr, select.from.as_ref())
                .is_some_and(|steps| !crate::data::index::indexing_policy::indexes(policy, &steps));
        if unindexed {
            return Err(ApiError::bad_request(
                "The index path corresponding to the specified order-by item is excluded.",
            ));
        }
        return Ok(());
    }
    let Some(from) = select.from.as_ref().filter(|_| keys.len() > 1) else {
        return Ok(());
    };
    let wanted: Option<Vec<(String, bool)>> = keys
        .iter()
        .map(|k| {
            Some((
                DocumentPath::of(&k.expr, Some(from))?.to_string(),
                k.descending,
            ))
        })
        .collect();
    let served = wanted.is_some_and(|wanted| {
        let indexes = policy["compositeIndexes"].as_array().into_iter().flatten();
        indexes.filter_map(|index| index.as_array()).any(|index| {
            let matches = |reversed: bool| {
                index.len() == wanted.len()
                    && index
                        .iter()
                        .zip(&wanted)
                        .all(|(entry, (path, descending))| {
                            let index_descending = entry["order"] == "descending";
                            entry["path"] == path.as_str()
                                && (index_descending == *descending) != reversed
                        })
            };
            matches(false) || matches(true)
        })
    });
    if served {
        return Ok(());
    }
    Err(ApiError::bad_request(
            "The order by query does not have a corresponding composite index that it can be served from.",
        ))
}
