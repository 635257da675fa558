//! `MIN(path)` and `MAX(path)` from the ends of the path's index, and
//! `COUNT(path)` beside them (as the SDKs' cross-partition plans ask each
//! range for `{"min": MIN(path), "count": COUNT(path)}`).

use std::ops::Bound;

use crate::data::index::document_path::DocumentPath;
use crate::data::index::{IndexKey, KeyType, Numbered, PathIndex};
use crate::data::query::ast::{Aggregate, Expr, From, Projection, Select};
use crate::protocol::item_key::ItemKey;

/// `MIN(path)` (the low end), `MAX(path)` (the high end) and
/// `COUNT(path)` (`count`) of a query that reads nothing else of its items.
#[derive(Debug, Clone, PartialEq)]
pub struct Ends {
    pub path: DocumentPath,
    pub low: bool,
    pub high: bool,
    pub count: bool,
}

impl Ends {
    /// The items whose values can decide the aggregates, in write order
    /// (by number): at each end wanted, the first run of defined scalar
    /// values holding a live item in scope (`live`), and every array or
    /// object value.
    pub fn candidates<'c>(
        &self,
        index: &'c PathIndex,
        mut live: impl FnMut(&ItemKey) -> bool,
    ) -> Vec<Numbered<'c>> {
        let scalar = |key: &IndexKey| {
            !matches!(
                key.key_type(),
                KeyType::Undefined | KeyType::Array | KeyType::Object
            )
        };
        let mut keys: Vec<Numbered<'c>> = Vec::new();
        for (wanted, descending) in [(self.low, false), (self.high, true)] {
            if !wanted {
                continue;
            }
            let first_live = index
                .keyed_runs(descending)
                .filter(|(key, _)| scalar(key))
                .map(|(_, run)| run)
                .find(|run| run.iter().any(|(_, item)| live(item)));
            keys.extend(first_live.into_iter().flatten());
        }
        for key_type in [KeyType::Array, KeyType::Object] {
            let all = index.range(key_type, Bound::Unbounded, Bound::Unbounded);
            keys.extend(all.map(|(_, item)| item));
        }
        keys.sort_unstable_by_key(|(number, _)| *number);
        keys.dedup_by_key(|(number, _)| *number);
        keys
    }

    /// The items with a scalar value that are not among `candidates`
    /// (sorted by number): what `COUNT(path)` counts besides them.
    pub fn others<'c, 'k>(
        &self,
        index: &'c PathIndex,
        candidates: &'k [Numbered<'c>],
    ) -> impl Iterator<Item = Numbered<'c>> + 'k
    where
        'c: 'k,
    {
        let all = [
            KeyType::Null,
            KeyType::Bool,
            KeyType::Number,
            KeyType::String,
        ]
        .into_iter()
        .flat_map(move |key_type| index.range(key_type, Bound::Unbounded, Bound::Unbounded));
        let in_candidates = |number: u64| {
            candidates
                .binary_search_by_key(&number, |(n, _)| *n)
                .is_ok()
        };
        all.map(|(_, item)| item)
            .filter(move |(number, _)| !in_candidates(*number))
    }
}

/// The ends a query's aggregates read: every read of its items is
/// `MIN(path)`, `MAX(path)` or `COUNT(path)` of one path (not `COUNT`
/// alone: that needs no index), in a query over the items
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
        .filter(|e| e.low || e.high)
}

/// Whether `expr` reads the item only through `MIN(path)`, `MAX(path)`
/// or `COUNT(path)` of the one path `ends` gathers.
fn only_extremes(expr: &Expr, ends: &mut Option<Ends>) -> bool {
    match expr {
        Expr::Call(name, args) if Aggregate::from_name(name).is_some() => {
            let aggregate = Aggregate::from_name(name);
            if !matches!(
                aggregate,
                Some(Aggregate::Min | Aggregate::Max | Aggregate::Count)
            ) {
                return false;
            }
            let [arg] = args.as_slice() else {
                return false;
            };
            let Some(path) = DocumentPath::of_property(arg, None) else {
                return false;
            };
            let end = ends.get_or_insert_with(|| Ends {
                path: path.clone(),
                low: false,
                high: false,
                count: false,
            });
            if end.path != path {
                return false;
            }
            match aggregate {
                Some(Aggregate::Min) => end.low = true,
                Some(Aggregate::Max) => end.high = true,
                _ => end.count = true,
            }
            true
        }
        Expr::Var(_) | Expr::Subquery(..) => false,
        other => other.children().into_iter().all(|e| only_extremes(e, ends)),
    }
}
