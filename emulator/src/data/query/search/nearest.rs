//! `ORDER BY VectorDistance(c.path, <vector>)` with `TOP` or `LIMIT`,
//! answered from the container's float32 column for the path
//! (`data/index/vectors.rs`) instead of parsing every document.
//!
//! Same answer as the scan, in the same order: every vector of the column
//! is scored by the kernel the scan uses ([`vector::score`]), then items
//! come most similar first, equal scores in write order (the scan's stable
//! sort keeps them in the write order it reads them in), and items with no
//! score (no vector at the path, or one cosine cannot compare) after all
//! scored ones, in write order. Only the candidates taken in that order are
//! parsed, filtered and projected, until the page's `OFFSET + LIMIT` (or
//! `TOP`) rows are found: a few windows of the order are selected
//! (`select_nth_unstable`) and sorted, never the whole column.

use std::cmp::Ordering;

use super::super::ast::{Expr, Select, SortKind};
use super::super::{eval, execute};
use super::{comparison, vector, Policies};
use crate::data::index::search_policy::DistanceFunction;
use crate::data::index::vectors::VectorColumn;
use crate::data::index::DocumentPath;
use crate::data::query::view::ContainerView;
use crate::protocol::item_key::ItemKey;

/// A query the column can answer, with what it compares.
#[derive(Debug)]
pub(in crate::data::query) struct Nearest {
    path: DocumentPath,
    query: Vec<f32>,
    /// Whether the document's vector is `VectorDistance`'s first argument.
    document_first: bool,
    distance: DistanceFunction,
    /// Rows to find before the page's `OFFSET` is skipped.
    pub wanted: usize,
}

impl Nearest {
    /// The fast path's reading of `select`, if it has the one shape it
    /// answers: `FROM c` (no JOIN), no DISTINCT, GROUP BY or aggregate, a
    /// bound (TOP or LIMIT), and one ORDER BY key, `VectorDistance` of a
    /// document path and a constant vector (constant options too).
    pub fn of(select: &Select, policies: &Policies) -> Option<Nearest> {
        let plain = select.from.as_ref().is_some_and(|f| f.is_plain());
        if !plain || select.distinct || !select.group_by.is_empty() {
            return None;
        }
        if execute::aggregates(select) {
            return None;
        }
        let [key] = select.order_by.as_slice() else {
            return None;
        };
        let Expr::Call(name, args) = &key.expr else {
            return None;
        };
        if key.kind != SortKind::Similarity || name != "VECTORDISTANCE" || args.len() < 2 {
            return None;
        }
        let take = select
            .limit
            .unwrap_or(usize::MAX)
            .min(select.top.unwrap_or(usize::MAX));
        if take == usize::MAX {
            return None;
        }
        let constant = |e: &Expr| match eval::reads_document(e) {
            true => None,
            false => eval::constant(e),
        };
        let path_of = |e: &Expr| DocumentPath::of_property(e, None);
        let (document_first, path, other) = match (path_of(&args[0]), path_of(&args[1])) {
            (Some(path), None) => (true, path, &args[1]),
            (None, Some(path)) => (false, path, &args[0]),
            _ => return None,
        };
        let query = vector::read(&constant(other)?)?;
        let options = match args.get(3) {
            Some(e) => Some(constant(e)?),
            None => None,
        };
        let distance = comparison(policies, args, options.as_ref())?.distance;
        Some(Nearest {
            path,
            query,
            document_first,
            distance,
            wanted: select.offset.unwrap_or(0).saturating_add(take),
        })
    }

    /// The column that answers this query, if `view` keeps one for its
    /// path with vectors of the query's length.
    pub fn column<'c>(&self, view: &dyn ContainerView<'c>) -> Option<&'c VectorColumn> {
        view.vector_column(&self.path)
            .filter(|c| c.dimensions() == self.query.len())
    }

    /// The column's items in ORDER BY order, scored.
    pub fn in_order<'c>(&self, column: &'c VectorColumn) -> InOrder<'c> {
        let greater_is_closer = vector::greater_is_closer(self.distance);
        let query_norm = vector::dot(&self.query, &self.query);
        let scored = column
            .vectors()
            .enumerate()
            .filter_map(|(slot, (v, norm))| {
                let (distance, q) = (self.distance, &self.query[..]);
                let score = match self.document_first {
                    true => vector::score_with(distance, v, q, || (norm, query_norm)),
                    false => vector::score_with(distance, q, v, || (query_norm, norm)),
                }?;
                let relevance = if greater_is_closer { score } else { -score };
                Some((relevance, slot as u32))
            })
            .collect();
        InOrder {
            column,
            scored,
            sorted: 0,
            next: 0,
            window: 64,
        }
    }
}

/// The scored items of a column, most relevant first, equal relevances
/// in write order; sorted a window at a time as they are taken.
pub struct InOrder<'c> {
    column: &'c VectorColumn,
    /// (relevance, slot): greater relevance is more similar.
    scored: Vec<(f64, u32)>,
    /// `scored[..sorted]` is in order, and before everything after it.
    sorted: usize,
    next: usize,
    /// The size of the next window to sort; grows fourfold each time.
    window: usize,
}

impl<'c> InOrder<'c> {
    fn order(column: &VectorColumn, a: &(f64, u32), b: &(f64, u32)) -> Ordering {
        // Scores are finite: partial_cmp is total here, and -0 equals 0 as
        // the scan compares them.
        b.0.partial_cmp(&a.0)
            .unwrap_or(Ordering::Equal)
            .then_with(|| {
                let number = |slot: u32| column.number_at(slot as usize);
                number(a.1).cmp(&number(b.1))
            })
    }

    /// Which slots have a score (by slot): the items without one come
    /// after every scored one, in write order.
    pub fn scored_slots(&self) -> Vec<bool> {
        let mut scored = vec![false; self.column.len()];
        for (_, slot) in &self.scored {
            scored[*slot as usize] = true;
        }
        scored
    }
}

impl<'c> Iterator for InOrder<'c> {
    type Item = &'c ItemKey;

    fn next(&mut self) -> Option<&'c ItemKey> {
        if self.next == self.sorted {
            let rest = &mut self.scored[self.sorted..];
            if rest.is_empty() {
                return None;
            }
            let column = self.column;
            let order = |a: &(f64, u32), b: &(f64, u32)| Self::order(column, a, b);
            let m = self.window.min(rest.len());
            if m < rest.len() {
                rest.select_nth_unstable_by(m - 1, order);
            }
            rest[..m].sort_unstable_by(order);
            self.sorted += m;
            self.window = self.window.saturating_mul(4);
        }
        let (_, slot) = self.scored[self.next];
        self.next += 1;
        Some(self.column.key_at(slot as usize))
    }
}
