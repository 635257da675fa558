//! What the service refuses in a query before reading any item, checked
//! once per query (and per subquery): unknown functions, aggregates where
//! they cannot stand, and with aggregates or GROUP BY, a projection that
//! reads something neither grouped nor aggregated.

use super::ast::{Aggregate, Expr, Projection, Select};
use super::eval;
use super::lexer::truncated;
use crate::error::{ApiError, ApiResult};

/// Refuses what the service refuses in `select`; `text` is the query, quoted
/// in messages; `outer` the names bound around a subquery.
pub(super) fn validate(select: &Select, text: &str, outer: &[String]) -> ApiResult<()> {
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
