//! `MIN(path)` and `MAX(path)` from the ends of the path's index.

use std::ops::Bound;

use super::property_path;
use crate::query::ast::{Aggregate, Expr, From, Projection, Select};
use crate::store::index::{IndexKey, IndexPath, KeyType, PathIndex};
use crate::store::ItemKey;

/// `MIN(path)` (the low end) and `MAX(path)` (the high end) of a query
/// that reads nothing else of its items.
#[derive(Debug, Clone, PartialEq)]
pub struct Ends {
    pub path: IndexPath,
    pub low: bool,
    pub high: bool,
}

impl Ends {
    /// The items whose values can decide the aggregates, in key order:
    /// at each end wanted, the first run of defined scalar values holding
    /// a live item in scope (`live`), and every array or object value.
    pub fn candidates<'c>(
        &self,
        index: &'c PathIndex,
        mut live: impl FnMut(&ItemKey) -> bool,
    ) -> Vec<&'c ItemKey> {
        let scalar = |key: &IndexKey| {
            !matches!(
                key.key_type(),
                KeyType::Undefined | KeyType::Array | KeyType::Object
            )
        };
        let mut keys: Vec<&'c ItemKey> = Vec::new();
        for (wanted, descending) in [(self.low, false), (self.high, true)] {
            if !wanted {
                continue;
            }
            let first_live = index
                .keyed_runs(descending)
                .filter(|(key, _)| scalar(key))
                .map(|(_, run)| run)
                .find(|run| run.iter().any(|item| live(item)));
            keys.extend(first_live.into_iter().flatten());
        }
        for key_type in [KeyType::Array, KeyType::Object] {
            let all = index.range(key_type, Bound::Unbounded, Bound::Unbounded);
            keys.extend(all.map(|(_, item)| item));
        }
        keys.sort_unstable();
        keys.dedup();
        keys
    }
}

/// The ends a query's aggregates read: every read of its items is
/// `MIN(path)` or `MAX(path)` of one path, in a query over the items
/// themselves without WHERE, GROUP BY, DISTINCT or ORDER BY.
pub(super) fn ends(select: &Select, from: &From) -> Option<Ends> {
    if !from.is_plain()
        || select.filter.is_some()
        || select.distinct
        || !select.group_by.is_empty()
        || !select.order_by.is_empty()
    {
        return None;
    }
    let exprs: Vec<&Expr> = match &select.projection {
        Projection::Star => return None,
        Projection::Value(e) => vec![e],
        Projection::Fields(fields) => fields.iter().map(|(e, _)| e).collect(),
    };
    let mut ends = None;
    exprs
        .into_iter()
        .all(|e| only_extremes(e, &mut ends))
        .then_some(ends)
        .flatten()
}

/// Whether `expr` reads the item only through `MIN(path)` or `MAX(path)`
/// of the one path `ends` gathers.
fn only_extremes(expr: &Expr, ends: &mut Option<Ends>) -> bool {
    match expr {
        Expr::Call(name, args) if Aggregate::from_name(name).is_some() => {
            let low = match Aggregate::from_name(name) {
                Some(Aggregate::Min) => true,
                Some(Aggregate::Max) => false,
                _ => return false,
            };
            let [arg] = args.as_slice() else {
                return false;
            };
            let Some(path) = property_path(arg) else {
                return false;
            };
            let end = ends.get_or_insert_with(|| Ends {
                path: path.clone(),
                low: false,
                high: false,
            });
            if end.path != path {
                return false;
            }
            if low {
                end.low = true;
            } else {
                end.high = true;
            }
            true
        }
        Expr::Var(_) | Expr::Subquery(..) => false,
        other => other.children().into_iter().all(|e| only_extremes(e, ends)),
    }
}
