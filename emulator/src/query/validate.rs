//! What the service refuses in a query before reading any item, checked
//! once per query (and per subquery): unknown functions, aggregates where
//! they cannot stand, with aggregates or GROUP BY a projection that reads
//! something neither grouped nor aggregated, `TOP`, `ORDER BY` and
//! `OFFSET LIMIT` in a subquery, and ORDER BY keys that are not paths of
//! the items.

use super::ast::{Aggregate, Expr, From, Projection, Select};
use super::eval;
use super::lexer::{query_error, truncated};
use crate::error::{ApiError, ApiResult};

/// Refuses what the service refuses in `select`; `text` is the query, quoted
/// in messages; `outer` the names bound around a subquery.
pub(super) fn validate(select: &Select, text: &str, outer: &[String]) -> ApiResult<()> {
    if !outer.is_empty() || select.from.as_ref().is_some_and(|f| f.scope > 0) {
        subquery_clauses(select)?;
    } else {
        order_by_paths(select)?;
    }
    let projected: Vec<&Expr> = match &select.projection {
        Projection::Star => Vec::new(),
        Projection::Value(e) => vec![e],
        Projection::Fields(fields) => fields.iter().map(|(e, _)| e).collect(),
    };
    for e in &projected {
        eval::check_functions(e, true)?;
    }
    let elsewhere = select
        .filter
        .iter()
        .chain(select.order_by.iter().map(|k| &k.expr))
        .chain(&select.group_by)
        .chain(
            select
                .from
                .iter()
                .flat_map(|f| f.source.iter().chain(&f.joins)),
        );
    let mut all = projected.clone();
    for e in elsewhere {
        eval::check_functions(e, false)?;
        all.push(e);
    }
    let names: Vec<String> = outer.iter().chain(select.aliases()).cloned().collect();
    let aggregating = projected.iter().any(|e| eval::contains_aggregate(e));
    if aggregating || !select.group_by.is_empty() {
        for e in &projected {
            grouped_only(e, &select.group_by, &names, text)?;
        }
    }
    for e in all {
        for subquery in eval::subqueries(e) {
            validate(subquery, text, &names)?;
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
    let all_paths = keys.iter().all(|k| is_item_path(&k.expr, from));
    if all_paths || (keys.len() == 1 && distance(&keys[0].expr)) {
        return Ok(());
    }
    Err(ApiError::bad_request(
        "Unsupported ORDER BY clause. ORDER BY item expression could not be mapped to a document path.",
    ))
}

/// Whether `expr` reads a path of the item: properties and constant
/// indexes from a name FROM binds to the item, a path of it, or the
/// elements of one (`x IN c.tags`, `JOIN t IN c.tags`).
fn is_item_path(expr: &Expr, from: &From) -> bool {
    match expr {
        Expr::Property(base, _) => is_path_base(base, from),
        Expr::Index(base, index) => {
            matches!(index.as_ref(), Expr::Literal(_)) && is_path_base(base, from)
        }
        // A name alone is a path when it stands for part of the item.
        Expr::Var(0) => from.source.as_ref().is_some_and(is_container_path),
        Expr::Var(i) => from
            .joins
            .get(i - 1)
            .is_some_and(|join| is_item_path(join, from)),
        _ => false,
    }
}

fn is_path_base(expr: &Expr, from: &From) -> bool {
    match expr {
        Expr::Var(0) => from.source.as_ref().is_none_or(is_container_path),
        Expr::Var(i) => from
            .joins
            .get(i - 1)
            .is_some_and(|join| is_item_path(join, from)),
        other => is_item_path(other, from),
    }
}

/// A path from the container's items (`Var(0)` is the item in FROM's source).
fn is_container_path(expr: &Expr) -> bool {
    match expr {
        Expr::Var(0) => true,
        Expr::Property(base, _) => is_container_path(base),
        Expr::Index(base, index) => {
            matches!(index.as_ref(), Expr::Literal(_)) && is_container_path(base)
        }
        _ => false,
    }
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

impl super::PreparedQuery {
    /// Refuses, as the service does, ORDER BY over several keys that no
    /// composite index of the container's indexing `policy` serves: one with
    /// exactly the keys' paths, in order, in the keys' directions or all
    /// reversed.
    pub fn check_order_by_index(&self, policy: &serde_json::Value) -> ApiResult<()> {
        let keys = &self.select.order_by;
        let Some(from) = self.select.from.as_ref().filter(|_| keys.len() > 1) else {
            return Ok(());
        };
        let wanted: Option<Vec<(String, bool)>> = keys
            .iter()
            .map(|k| Some((index_path(&k.expr, from)?, k.descending)))
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
}

/// The index path (`/a/b`) of an ORDER BY key read from the item itself.
fn index_path(expr: &Expr, from: &From) -> Option<String> {
    match expr {
        Expr::Var(0) if from.source.is_none() => Some(String::new()),
        Expr::Property(base, name) => Some(format!("{}/{name}", index_path(base, from)?)),
        Expr::Index(base, index) => match index.as_ref() {
            Expr::Literal(serde_json::Value::String(name)) => {
                Some(format!("{}/{name}", index_path(base, from)?))
            }
            _ => None,
        },
        _ => None,
    }
}
