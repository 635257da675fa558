//! How a query reaches its items: through the container's index
//! (`index/`) or by the scan. The choice never changes the answer:
//! the index only narrows which items the executor reads, and every item
//! it gives is filtered, sorted and projected exactly as the scan would.
//!
//! - **Lookups**: each conjunct of the WHERE clause of the form
//!   `path op constant` (`=`, `<`, `<=`, `>`, `>=`, `BETWEEN`, `IN`,
//!   `STARTSWITH(path, 'prefix')`, or a bare `path`, true) over the item's
//!   own properties gives the items it can be true of: a superset of those
//!   it holds for, since a comparison across types is undefined and the
//!   index keeps each type apart. The lookup with the fewest items wins;
//!   they are read in write order (by item number), as the scan reads them.
//! - **Order walk**: `ORDER BY path` (the first key) with `TOP` or
//!   `OFFSET LIMIT` reads the items in the index's order, run of equal
//!   values by run, until enough match; the executor then sorts just
//!   those (by the further keys too) as it would have sorted them all.
//! - **Near**: `ST_DISTANCE(path, point) < r` (or `<=`, either way round),
//!   `ST_WITHIN(path, shape)` and `ST_INTERSECTS` on a path with a spatial
//!   index read the items whose point may lie in that region and every
//!   other shape there (`data/query/spatial_column.rs`).
//! - **Ends**: `MIN(path)` and `MAX(path)`, when they are all a query
//!   without WHERE reads of its items, take the first live run of values
//!   from the index's low or high end (and every array or object value,
//!   which make them undefined): the executor folds just those.

use std::ops::Bound;

use serde_json::Value;

use super::ast::{BinaryOp, Expr, From, Select};
use super::view::ContainerView;
use super::{eval, number as num, RunContext};
use crate::data::index::DocumentPath;
use crate::data::index::{IndexKey, KeyType, Numbered, PathIndex};

use ends::ends;
pub use ends::Ends;
use near::near;
pub use near::Near;

/// What a conjunct asks of the index of its path.
#[derive(Debug, Clone, PartialEq)]
pub enum Probe {
    /// Items whose value is one of these.
    Keys(Vec<IndexKey>),
    /// Items whose value is of `key_type` and within the bounds
    /// (`Unbounded`: the type's edge).
    Range {
        key_type: KeyType,
        low: Bound<IndexKey>,
        high: Bound<IndexKey>,
    },
    /// Items whose value is a string with this prefix.
    Prefix(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Lookup {
    pub path: DocumentPath,
    pub probe: Probe,
}

impl Lookup {
    /// The items the probe finds in `index`, in the index's order.
    fn items<'s, 'c: 's>(
        &'s self,
        index: &'c PathIndex,
    ) -> Box<dyn Iterator<Item = Numbered<'c>> + 's> {
        match &self.probe {
            Probe::Keys(keys) => Box::new(keys.iter().flat_map(move |key| {
                let one = Bound::Included(key);
                index.range(key.key_type(), one, one).map(|(_, item)| item)
            })),
            Probe::Range {
                key_type,
                low,
                high,
            } => Box::new(
                index
                    .range(*key_type, low.as_ref(), high.as_ref())
                    .map(|(_, item)| item),
            ),
            Probe::Prefix(prefix) => Box::new(index.with_prefix(prefix).map(|(_, item)| item)),
        }
    }
}

/// ORDER BY's first key, when it is a path of the item.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderWalk {
    pub path: DocumentPath,
    pub descending: bool,
    /// Rows to find: `OFFSET + LIMIT`, or `TOP`.
    pub wanted: usize,
}

/// What of a query the index can serve.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Access {
    pub lookups: Vec<Lookup>,
    pub near: Vec<Near>,
    pub order: Option<OrderWalk>,
    pub ends: Option<Ends>,
}

/// Beyond this many candidates from its lookups, a bounded ORDER BY
/// walks the order instead of sorting them.
const SORT_AT_MOST: usize = 4096;

impl Access {
    /// Reads `select`: its top-level WHERE conjuncts and ORDER BY. A
    /// FROM that is not the item itself (`FROM x IN c.a`, a derived
    /// table) gives nothing to look up.
    pub fn of(select: &Select) -> Self {
        let Some(from) = over_items(select.from.as_ref()) else {
            return Access::default();
        };
        let mut lookups: Vec<Lookup> = Vec::new();
        let found = select
            .filter
            .iter()
            .flat_map(conjuncts)
            .filter_map(|c| lookup(c, from));
        for lookup in found {
            // `c.n >= 1 AND c.n < 9`: one range, both bounds.
            let same_range = lookups
                .iter_mut()
                .find_map(|l| match (&mut l.probe, &lookup.probe) {
                    (
                        Probe::Range {
                            key_type: t,
                            low,
                            high,
                        },
                        Probe::Range {
                            key_type,
                            low: l2,
                            high: h2,
                        },
                    ) if l.path == lookup.path && t == key_type => Some((low, high, l2, h2)),
                    _ => None,
                });
            match same_range {
                Some((low, high, other_low, other_high)) => {
                    *low = tighter(low.clone(), other_low.clone(), true);
                    *high = tighter(high.clone(), other_high.clone(), false);
                }
                None => lookups.push(lookup),
            }
        }
        let near = select
            .filter
            .iter()
            .flat_map(conjuncts)
            .filter_map(near)
            .collect();
        Access {
            lookups,
            near,
            order: order_walk(select, from),
            ends: ends(select, from),
        }
    }

    /// Every path whose index the query could read.
    pub fn paths(&self) -> Vec<DocumentPath> {
        let mut paths: Vec<DocumentPath> = self.lookups.iter().map(|l| l.path.clone()).collect();
        paths.extend(self.order.iter().map(|o| o.path.clone()));
        paths.extend(self.ends.iter().map(|e| e.path.clone()));
        paths.sort();
        paths.dedup();
        paths
    }

    /// The items the best lookup finds, in write order (by number), if
    /// one has an index; with an order walk at hand, only if they are few.
    pub fn candidates<'c>(
        &self,
        cx: &RunContext,
        view: &dyn ContainerView<'c>,
    ) -> Option<Vec<Numbered<'c>>> {
        // The spatial index gives its items in no order: counted whole.
        let mut near: Option<(Vec<Numbered<'c>>, &DocumentPath)> = None;
        for n in &self.near {
            let Some(column) = view.spatial_column(&n.path) else {
                continue;
            };
            let keys: Vec<Numbered<'c>> = column.within(&n.region).collect();
            if near
                .as_ref()
                .is_none_or(|(best, _)| keys.len() < best.len())
            {
                near = Some((keys, &n.path));
            }
        }
        let mut best: Option<(usize, &Lookup, &'c PathIndex)> = None;
        for lookup in &self.lookups {
            let Some(path_index) = view.path_index(&lookup.path) else {
                continue;
            };
            // Counted no further than the best so far.
            let bound = best
                .map(|(n, _, _)| n)
                .or(near.as_ref().map(|(keys, _)| keys.len()))
                .unwrap_or(usize::MAX);
            let n = lookup.items(path_index).take(bound).count();
            if n < bound {
                best = Some((n, lookup, path_index));
            }
        }
        let (mut keys, path): (Vec<Numbered<'c>>, &DocumentPath) = match (best, near) {
            (Some((_, lookup, path_index)), _) => {
                (lookup.items(path_index).collect(), &lookup.path)
            }
            (None, Some((keys, path))) => (keys, path),
            (None, None) => return None,
        };
        if self.order.is_some() && keys.len() > SORT_AT_MOST {
            return None;
        }
        cx.retrieved.used_index(path);
        // An equality's items come in number order already: then the sort
        // only checks.
        keys.sort_unstable_by_key(|(number, _)| *number);
        keys.dedup_by_key(|(number, _)| *number);
        Some(keys)
    }
}

/// The conjuncts of a filter: `a AND (b AND c)` is a, b, c.
fn conjuncts(filter: &Expr) -> Vec<&Expr> {
    match filter {
        Expr::Chain(first, rest) if rest.iter().all(|(op, _)| *op == BinaryOp::And) => {
            let mut all = conjuncts(first);
            for (_, e) in rest {
                all.extend(conjuncts(e));
            }
            all
        }
        other => vec![other],
    }
}

/// A query's FROM, if its first name is each item itself (not `x IN
/// c.a`, a derived table or a subquery's): where `Var(0)` is the item.
fn over_items(from: Option<&From>) -> Option<&From> {
    from.filter(|f| f.source.is_none() && f.derived.is_none() && f.scope == 0)
}

/// The value of an expression that reads nothing of the row, if it is a
/// scalar the index keeps apart (not an array or object, not a computed
/// NaN or infinity).
fn constant(expr: &Expr) -> Option<IndexKey> {
    if !expr.is_constant() {
        return None;
    }
    let value = eval::constant(expr)?;
    if num::is_non_finite(&value) || matches!(value, Value::Array(_) | Value::Object(_)) {
        return None;
    }
    Some(IndexKey::of(Some(&value)))
}

/// The index path of what a conjunct compares: a property of the item,
/// or the name of a `JOIN x IN c.path` (the elements of `c.path`).
fn indexed(expr: &Expr, from: &From) -> Option<DocumentPath> {
    match expr {
        Expr::Var(k) if *k >= 1 && from.scope == 0 => {
            Some(DocumentPath::of_property(from.joins.get(k - 1)?, None)?.elements())
        }
        other => DocumentPath::of_property(other, None),
    }
}

fn lookup(conjunct: &Expr, from: &From) -> Option<Lookup> {
    let path_of = |expr: &Expr| indexed(expr, from);
    let (path, probe) = match conjunct {
        Expr::Binary(op, a, b) => {
            let (path, op, value) = match (path_of(a), path_of(b)) {
                (Some(path), _) => (path, *op, constant(b)?),
                (None, Some(path)) => (path, flipped(*op)?, constant(a)?),
                _ => return None,
            };
            (path, comparison(op, value)?)
        }
        Expr::Between(x, low, high) => {
            let (low, high) = (constant(low)?, constant(high)?);
            if low.key_type() != high.key_type() {
                return None;
            }
            let probe = Probe::Range {
                key_type: low.key_type(),
                low: Bound::Included(low),
                high: Bound::Included(high),
            };
            (path_of(x)?, probe)
        }
        Expr::In(x, list, false) => {
            let keys: Option<Vec<IndexKey>> = list.iter().map(constant).collect();
            (path_of(x)?, Probe::Keys(keys?))
        }
        // `ARRAY_CONTAINS(c.tags, 'x')`: items with an element 'x'. (With
        // `true`, a partial match of objects: left to the scan.)
        Expr::Call(name, args) if name == "ARRAY_CONTAINS" => match args.as_slice() {
            [array, value] | [array, value, Expr::Literal(Value::Bool(false))] => {
                let path = DocumentPath::of_property(array, None)?.elements();
                (path, Probe::Keys(vec![constant(value)?]))
            }
            _ => return None,
        },
        Expr::Call(name, args) if name == "STARTSWITH" => {
            let case_sensitive = match args.get(2) {
                None => true,
                Some(Expr::Literal(Value::Bool(ignore_case))) => !ignore_case,
                Some(_) => false,
            };
            match (args.first(), args.get(1)) {
                (Some(x), Some(Expr::Literal(Value::String(prefix)))) if case_sensitive => {
                    (path_of(x)?, Probe::Prefix(prefix.clone()))
                }
                _ => return None,
            }
        }
        // `WHERE c.done`: true only where the value is true.
        bare => (path_of(bare)?, Probe::Keys(vec![IndexKey::Bool(true)])),
    };
    Some(Lookup { path, probe })
}

/// The tighter of two bounds of one type: the greater low bound
/// (`is_low`), or the lesser high one; of equal values, the excluding one.
fn tighter(a: Bound<IndexKey>, b: Bound<IndexKey>, is_low: bool) -> Bound<IndexKey> {
    let value = |bound: &Bound<IndexKey>| match bound {
        Bound::Included(k) | Bound::Excluded(k) => Some(k.clone()),
        Bound::Unbounded => None,
    };
    match (value(&a), value(&b)) {
        (None, _) => b,
        (_, None) => a,
        (Some(x), Some(y)) => match x.cmp(&y) {
            std::cmp::Ordering::Equal => match a {
                Bound::Excluded(_) => a,
                _ => b,
            },
            order => match (order == std::cmp::Ordering::Greater) == is_low {
                true => a,
                false => b,
            },
        },
    }
}

/// `constant op path` as `path op' constant`.
fn flipped(op: BinaryOp) -> Option<BinaryOp> {
    Some(match op {
        BinaryOp::Eq => BinaryOp::Eq,
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::Le => BinaryOp::Ge,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::Ge => BinaryOp::Le,
        _ => return None,
    })
}

/// `path op value` as a probe: within the value's type only.
fn comparison(op: BinaryOp, value: IndexKey) -> Option<Probe> {
    let key_type = value.key_type();
    let (low, high) = match op {
        BinaryOp::Eq => return Some(Probe::Keys(vec![value])),
        BinaryOp::Lt => (Bound::Unbounded, Bound::Excluded(value)),
        BinaryOp::Le => (Bound::Unbounded, Bound::Included(value)),
        BinaryOp::Gt => (Bound::Excluded(value), Bound::Unbounded),
        BinaryOp::Ge => (Bound::Included(value), Bound::Unbounded),
        _ => return None,
    };
    Some(Probe::Range {
        key_type,
        low,
        high,
    })
}

/// The order walk of a plain `SELECT ... FROM c [WHERE] ORDER BY c.path
/// ...` with a bound (no DISTINCT, GROUP BY or aggregate: each item is at
/// most one row, and only the first rows in order are wanted).
fn order_walk(select: &Select, from: &From) -> Option<OrderWalk> {
    let first = select.order_by.first()?;
    if !from.is_plain()
        || select.distinct
        || !select.group_by.is_empty()
        || first.kind != super::ast::SortKind::Value
        || super::execute::aggregates(select)
    {
        return None;
    }
    let take = match (select.top, select.limit) {
        (Some(top), Some(limit)) => top.min(limit),
        (Some(top), None) => top,
        (None, Some(limit)) => limit,
        (None, None) => return None,
    };
    Some(OrderWalk {
        path: DocumentPath::of_property(&first.expr, None)?,
        descending: first.descending,
        wanted: select.offset.unwrap_or(0).saturating_add(take),
    })
}

mod ends;
mod near;
#[cfg(test)]
mod tests;
