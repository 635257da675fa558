//! The results of a run read through the container's view where it can
//! answer without the scan: the vector column of `ORDER BY
//! VectorDistance`, an index's candidates, an index's order for a bounded
//! `ORDER BY`, the ends of an index for `MIN`/`MAX`; else the scan.

use bytes::Bytes;
use serde_json::{json, Value};

use crate::data::index::vectors::VectorColumn;
use crate::data::index::{Numbered, PathIndex};
use crate::data::query::access::{Ends, OrderWalk};
use crate::data::query::context::RunContext;
use crate::data::query::execute::{self, Executor};
use crate::data::query::search::{self, nearest::Nearest};
use crate::data::query::view::{ContainerView, Row};
use crate::data::query::{order, PreparedQuery, Projection};

impl PreparedQuery {
    /// Every result, read the fastest way `view` allows: the vector
    /// column, the candidates of an index lookup, an index's order, or
    /// the scan (`items`).
    pub(super) fn values_through<'a>(
        &self,
        cx: &RunContext,
        view: &mut dyn ContainerView<'a>,
        items: impl Iterator<Item = Row<'a>>,
    ) -> Vec<Value> {
        if let Some(nearest) = Nearest::of(&self.select, &cx.policies) {
            if let Some(column) = nearest.column(view) {
                return self.nearest_values(cx, &nearest, column, view, items);
            }
        }
        if search::statistics::needs_statistics(&self.select) {
            return self.all_values(cx, items);
        }
        if let Some(keys) = self.access.candidates(cx, &*view) {
            return self.all_values(cx, live_rows(keys, view));
        }
        if let Some(walk) = &self.access.order {
            if let Some(index) = view.path_index(&walk.path) {
                cx.retrieved.used_index(&walk.path);
                return self.ordered_values(cx, walk, index, view);
            }
        }
        if let Some(ends) = &self.access.ends {
            if let Some(index) = view.path_index(&ends.path) {
                cx.retrieved.used_index(&ends.path);
                let keys = ends.candidates(index, |key| view.live_body(key).is_some());
                if !ends.count {
                    return self.all_values(cx, live_rows(keys, view));
                }
                return self.counted_ends_values(cx, ends, index, keys, view);
            }
        }
        self.all_values(cx, items)
    }

    /// The results of a bounded `ORDER BY path ...`, read in the order of
    /// the path's index: a run of equal values at a time, until the
    /// matches make `wanted` rows. The executor sorts those (further keys
    /// included) as it would sort every match: the rows it would keep
    /// are among them, and ties arrive in write order, as in the scan.
    pub(super) fn ordered_values<'a>(
        &self,
        cx: &RunContext,
        walk: &OrderWalk,
        index: &'a PathIndex,
        view: &mut dyn ContainerView<'a>,
    ) -> Vec<Value> {
        let executor = self.executor(cx);
        // With one key and no filter, the walk's order is the result's:
        // the rows before OFFSET are counted, not read.
        let unread = match (self.select.order_by.len(), &self.select.filter) {
            (1, None) => self.select.offset.unwrap_or(0),
            _ => 0,
        };
        let mut skipped = 0;
        let mut matches = Vec::new();
        for run in index.runs(walk.descending) {
            if skipped + matches.len() >= walk.wanted || cx.budget.exceeded() {
                break;
            }
            for (_, key) in run {
                let Some((_, body)) = view.live_body(key) else {
                    continue;
                };
                if skipped < unread {
                    skipped += 1;
                    continue;
                }
                if !self.may_match(cx, body) {
                    continue;
                }
                let doc = self.load(cx, body);
                if executor.matches(&[&doc]) {
                    matches.push(doc);
                }
            }
        }
        if skipped == 0 {
            return self.values(cx, matches.into_iter());
        }
        let mut rest = self.select.clone();
        rest.offset = Some(unread - skipped.min(unread));
        execute::run_select(cx, &rest, matches.into_iter())
    }

    /// MIN or MAX of a path with `COUNT(path)` beside them, from the ends
    /// of the path's index: the documents of the ends' candidates, then
    /// for every other live item with a scalar value a stand-in holding
    /// the extreme the candidates give (the least, with MIN asked). It
    /// counts as that item would, and cannot change MIN or MAX: it equals
    /// one of them and comes after the document holding it, which a tie
    /// keeps, as the scan keeps the first in write order.
    pub(super) fn counted_ends_values<'a>(
        &self,
        cx: &RunContext,
        ends: &Ends,
        index: &'a PathIndex,
        keys: Vec<Numbered<'a>>,
        view: &mut dyn ContainerView<'a>,
    ) -> Vec<Value> {
        let docs: Vec<Value> = live_rows(keys.clone(), view)
            .map(|(_, _, body)| self.load(cx, body))
            .collect();
        let at_path = |doc: &Value| -> Option<Value> {
            let value = ends.path.iter().try_fold(doc, |v, step| v.get(&**step))?;
            (!value.is_array() && !value.is_object()).then(|| value.clone())
        };
        let wanted = if ends.low {
            std::cmp::Ordering::Less
        } else {
            std::cmp::Ordering::Greater
        };
        let extreme = docs.iter().filter_map(at_path).reduce(|best, v| {
            match order::sort_order(&Some(v.clone()), &Some(best.clone())) == wanted {
                true => v,
                false => best,
            }
        });
        let Some(extreme) = extreme else {
            // No scalar value in scope: nothing else to count.
            return self.values(cx, docs.into_iter());
        };
        let stand_in = ends
            .path
            .iter()
            .rev()
            .fold(extreme, |inner, step| json!({ &**step: inner }));
        let others = ends
            .others(index, &keys)
            .filter(|(_, key)| view.live_body(key).is_some())
            .count();
        let stand_ins = std::iter::repeat_n(stand_in, others);
        self.values(cx, docs.into_iter().chain(stand_ins))
    }

    pub(super) fn all_values<'a>(
        &self,
        cx: &RunContext,
        items: impl Iterator<Item = Row<'a>>,
    ) -> Vec<Value> {
        if search::statistics::needs_statistics(&self.select) {
            // FullTextScore's statistics count every document in scope,
            // matching or not: no prefilter.
            return self.values(
                cx,
                items.map(|(_, _, body)| {
                    cx.retrieved.read(body.len());
                    parse(body)
                }),
            );
        }
        let candidates = items.filter(|(_, _, body)| self.may_match(cx, body));
        if self.reads_documents {
            self.values(cx, candidates.map(|(_, _, body)| self.load(cx, body)))
        } else {
            self.values(cx, candidates.map(|_| Value::Null))
        }
    }

    /// Every result of `ORDER BY VectorDistance` with a bound, in order,
    /// from `column`: candidates are parsed in the order of their scores
    /// until enough match, then (if too few did) the items without a
    /// score in write order (`items`), as the scan would have ordered them.
    pub(super) fn nearest_values<'a>(
        &self,
        cx: &RunContext,
        nearest: &Nearest,
        column: &'a VectorColumn,
        view: &mut dyn ContainerView<'a>,
        items: impl Iterator<Item = Row<'a>>,
    ) -> Vec<Value> {
        let executor = self.executor(cx);
        let mut rows = Vec::new();
        let keep =
            |body: &Bytes, rows: &mut Vec<Value>| rows.extend(self.result_of(&executor, body));
        let full = |rows: &Vec<Value>| rows.len() >= nearest.wanted || cx.budget.exceeded();
        let mut in_order = nearest.in_order(column);
        for key in in_order.by_ref() {
            if full(&rows) {
                break;
            }
            if let Some((_, body)) = view.live_body(key) {
                keep(body, &mut rows);
            }
        }
        if !full(&rows) {
            let scored = in_order.scored_slots();
            for (_, key, body) in items {
                if full(&rows) {
                    break;
                }
                if !column.slot(key).is_some_and(|slot| scored[slot]) {
                    keep(body, &mut rows);
                }
            }
        }
        let skip = self.select.offset.unwrap_or(0);
        rows.into_iter().skip(skip).collect()
    }

    /// The result a stored document gives on a plain `FROM c` (no JOIN,
    /// no aggregate): its projection, if it passes the prefilter and the
    /// filter.
    pub(super) fn result_of(&self, executor: &Executor<'_>, body: &Bytes) -> Option<Value> {
        let cx = executor.cx;
        if !self.may_match(cx, body) {
            return None;
        }
        let doc = self.load(cx, body);
        if !executor.matches(&[&doc]) {
            return None;
        }
        match self.select.projection {
            Projection::Star => Some(doc),
            _ => executor.project(&[&doc]),
        }
    }

    /// Every result, in order; for `FullTextScore`, with the statistics
    /// of `docs`, all of which it then holds.
    pub(super) fn values(&self, cx: &RunContext, docs: impl Iterator<Item = Value>) -> Vec<Value> {
        if search::statistics::needs_statistics(&self.select) {
            let docs: Vec<Value> = docs.collect();
            let statistics =
                search::statistics::gather_statistics(&cx.policies, &self.select, &docs);
            return cx.with_statistics(statistics, || {
                execute::run_select(cx, &self.select, docs.into_iter())
            });
        }
        execute::run_select(cx, &self.select, docs)
    }
}

/// The items at `keys` (in write order) that the view gives: live, in
/// scope, after a resumed page's item (skipped by number, unread).
pub(super) fn live_rows<'a, 'v>(
    keys: Vec<Numbered<'a>>,
    view: &'v mut dyn ContainerView<'a>,
) -> impl Iterator<Item = Row<'a>> + 'v
where
    'a: 'v,
{
    let after = view.after().unwrap_or(0);
    keys.into_iter()
        .filter(move |(number, _)| *number > after)
        .filter_map(move |(_, key)| {
            view.live_body(key)
                .map(|(number, body)| (number, key, body))
        })
}

/// A stored item as a value (stored items are JSON within the nesting
/// limit: the store checked them on write).
pub(super) fn parse(body: &Bytes) -> Value {
    crate::protocol::json::parse_unguarded(body)
        .expect("stored items are JSON within the nesting limit")
}
