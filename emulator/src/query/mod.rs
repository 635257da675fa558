//! Queries: `POST .../docs` with `x-ms-documentdb-isquery: True`.
//!
//! `parser` turns the text into a [`Select`], `eval` evaluates expressions
//! against one document, and this module runs a prepared query over a
//! container's live items, one page at a time. Every run starts at one
//! place, [`PreparedQuery`]'s `run`, which makes the run's context
//! (`context.rs`: its instant, budget, search policies, UDF runner and
//! counters) and hands it to the evaluator; `pipeline.rs` makes the page a
//! request asks for (its items, the cache of whole results, the thread of
//! a query that calls UDFs).

mod access;
mod ast;
mod budget;
mod computed;
mod context;
pub mod document_path;
mod eval;
mod execute;
mod functions;
mod gateway;
pub mod index;
pub mod indexing_policy;
mod lexer;
mod like;
mod now;
mod number;
mod page;
mod parser;
pub mod pipeline;
mod plan;
pub mod results;
pub mod retrieved;
mod rows;
pub mod search;
#[cfg(test)]
pub mod testing;
pub mod udf;
mod validate;
pub mod view;

use std::collections::HashMap;

use bytes::Bytes;
use serde::Deserialize;
use serde_json::{json, Value};

pub use ast::{From, Projection, Select};
pub use computed::ComputedProperties;
pub use context::{RunContext, Setting};
#[cfg(test)]
pub(crate) use eval::sort_order;
use execute::Executor;
pub(crate) use functions::spatial::{Reach, Region};
use page::{encode, page_of_values};
pub use page::{Continuation, Page, PageLimit};

use crate::error::ApiResult;
use crate::item_key::ItemKey;
use crate::query::index::vectors::VectorColumn;
use crate::query::index::{Numbered, PathIndex};
use access::{Access, Ends, OrderWalk};
pub use document_path::DocumentPath;
use retrieved::Retrieved;
use search::nearest::Nearest;
use view::ContainerView;

/// A stored item as a query reads it: (its number, the last part of its
/// RID, which orders items as they were first written; its key; its
/// stored JSON).
pub type Row<'a> = (u64, &'a ItemKey, &'a Bytes);

/// The JSON body of a query request.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryBody {
    pub query: String,
    #[serde(default)]
    pub parameters: Vec<Parameter>,
}

#[derive(Debug, Deserialize)]
pub struct Parameter {
    pub name: String,
    #[serde(default)]
    pub value: Value,
}

#[derive(Debug, Clone)]
pub struct PreparedQuery {
    pub select: Select,
    /// The projection computes aggregates: one row over all matching documents.
    aggregate: bool,
    /// What a stored document's JSON must contain to possibly match the filter.
    required: Vec<Vec<u8>>,
    /// Whether any part of the query reads document contents (not so for
    /// `SELECT VALUE COUNT(1) FROM c`, which only counts).
    reads_documents: bool,
    /// The instant `GetCurrent*` return, in epoch milliseconds (see `now.rs`).
    now_millis: Option<i64>,
    /// What of it the container's index can serve (`access.rs`).
    access: Access,
}

impl PreparedQuery {
    pub fn prepare(body: &QueryBody) -> ApiResult<Self> {
        let parameters: HashMap<String, Value> = body
            .parameters
            .iter()
            .map(|p| (p.name.clone(), p.value.clone()))
            .collect();
        let select = parser::parse(&body.query, &parameters)?;
        validate::validate(&select, &body.query, &[], false)?;
        Ok(Self::from_select(select))
    }

    /// A validated query, with what running it needs to know of it.
    fn from_select(select: Select) -> Self {
        let projected = select.projection.expressions();
        // One row over everything; with GROUP BY, one per group instead.
        let aggregate = execute::aggregates(&select);
        let required = match (&select.filter, &select.from) {
            (Some(filter), Some(from)) => eval::required_fragments(filter, from),
            _ => Vec::new(),
        };
        let reads_documents = select.filter.is_some()
            || !select.order_by.is_empty()
            || matches!(select.projection, Projection::Star)
            || projected.iter().any(|e| eval::reads_document(e))
            // JOINs and FROM paths read the item to know how many rows it makes.
            || select.from.as_ref().is_some_and(|f| !f.is_plain())
            || !select.group_by.is_empty();
        let access = Access::of(&select);
        PreparedQuery {
            select,
            aggregate,
            required,
            reads_documents,
            now_millis: None,
            access,
        }
    }

    /// The property paths whose index could serve this query: the
    /// container builds those it lacks before the query runs.
    pub fn index_paths(&self) -> Vec<DocumentPath> {
        let nearest = Nearest::of(&self.select, &search::Policies::default());
        if search::needs_statistics(&self.select) || nearest.is_some() {
            return Vec::new();
        }
        self.access.paths()
    }

    /// Whether the query calls a function that reads the clock
    /// (`GetCurrentDateTime`...): its result moves with every page, so it
    /// is never kept between pages.
    pub fn reads_clock(&self) -> bool {
        let mut reads = false;
        self.select.each_expression(&mut |e| {
            if let ast::Expr::Call(name, _) = e {
                reads |= functions::reads_clock(name);
            }
        });
        reads
    }

    /// The ids of the user-defined functions the query calls.
    pub fn udf_names(&self) -> Vec<String> {
        udf::names(&self.select)
    }

    /// Whether each item is one row, itself (`FROM c`, no JOIN).
    fn is_plain_from(&self) -> bool {
        self.select.from.as_ref().is_some_and(From::is_plain)
    }

    /// Whether results come in write order one document at a time, so that
    /// a page can resume after an item instead of re-running the whole query.
    pub fn streams_in_write_order(&self) -> bool {
        let s = &self.select;
        !self.aggregate
            && self.is_plain_from()
            && s.order_by.is_empty()
            && s.group_by.is_empty()
            && !s.distinct
            && s.top.is_none()
            && s.offset.is_none()
    }

    /// Whether the query returns documents as stored, unfiltered (no parsing needed).
    fn is_plain_scan(&self) -> bool {
        self.streams_in_write_order()
            && self.select.filter.is_none()
            && self.select.projection == Projection::Star
    }

    /// Whether a stored document may match, judged from its bytes alone.
    fn may_match(&self, cx: &RunContext, body: &[u8]) -> bool {
        if self.required.is_empty() {
            return true;
        }
        // The prefilter reads the document: retrieved, whether it matches.
        cx.retrieved.read(body.len());
        self.required
            .iter()
            .all(|fragment| memchr::memmem::find(body, fragment).is_some())
    }

    /// A stored document as a value, counted as retrieved unless the
    /// prefilter already read it.
    fn load(&self, cx: &RunContext, body: &Bytes) -> Value {
        if self.required.is_empty() {
            cx.retrieved.read(body.len());
        }
        parse(body)
    }

    /// The executor of this query's SELECT in the run `cx`.
    fn executor<'q>(&'q self, cx: &'q RunContext) -> Executor<'q> {
        Executor::new(cx, &self.select)
    }

    /// The one way a run starts: its context, made here (on the thread
    /// that runs it) from `setting` and the query's instant, then `work`
    /// in it, then the run's verdict: the result and what it retrieved,
    /// or the refusal it earned (a UDF's failure, a row over budget).
    fn run<T>(
        &self,
        setting: Setting,
        work: impl FnOnce(&RunContext) -> T,
    ) -> ApiResult<(T, Retrieved)> {
        let cx = RunContext::new(self.now(), setting);
        let result = work(&cx);
        let retrieved = cx.verdict()?;
        Ok((result, retrieved))
    }

    /// Runs the query over documents (already parsed), outside a container
    /// (default search policies, no UDFs), returning every result; refused
    /// if evaluating one row copies too much (see `budget`).
    pub fn run_values(&self, docs: impl Iterator<Item = Value>) -> ApiResult<Vec<Value>> {
        self.run_values_in(Setting::default(), docs)
    }

    /// [`Self::run_values`] in `setting` (a container's search policies,
    /// the runner of its UDFs).
    pub fn run_values_in(
        &self,
        setting: Setting,
        docs: impl Iterator<Item = Value>,
    ) -> ApiResult<Vec<Value>> {
        let (values, _) = self.run(setting, |cx| self.values(cx, docs))?;
        Ok(values)
    }

    /// Whether pages of this query resume at an offset into its whole
    /// result (ORDER BY, aggregates, ...): [`Self::run_whole`] computes it
    /// once for [`results::ResultCache`].
    pub fn needs_whole_result(&self) -> bool {
        !self.streams_in_write_order()
    }

    /// The whole result of a query that [`Self::needs_whole_result`], over
    /// a container's live items as [`Self::run_page`] takes them, each
    /// document serialised. With `view`, the container itself, whose
    /// index or vector column may answer without the scan.
    pub fn run_whole<'a>(
        &self,
        setting: Setting,
        items: impl Iterator<Item = Row<'a>>,
        view: Option<&mut dyn ContainerView<'a>>,
    ) -> ApiResult<(Vec<Bytes>, Retrieved)> {
        self.run(setting, |cx| {
            let results = match view {
                Some(view) => self.values_through(cx, view, items),
                None => self.all_values(cx, items),
            };
            if cx.budget.exceeded() {
                return Vec::new();
            }
            results.iter().map(encode).collect()
        })
    }

    /// Every result, read the fastest way `view` allows: the vector
    /// column, the candidates of an index lookup, an index's order, or
    /// the scan (`items`).
    fn values_through<'a>(
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
        if search::needs_statistics(&self.select) {
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
    fn ordered_values<'a>(
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
    fn counted_ends_values<'a>(
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
            match eval::sort_order(&Some(v.clone()), &Some(best.clone())) == wanted {
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

    fn all_values<'a>(&self, cx: &RunContext, items: impl Iterator<Item = Row<'a>>) -> Vec<Value> {
        if search::needs_statistics(&self.select) {
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
    fn nearest_values<'a>(
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
    fn result_of(&self, executor: &Executor<'_>, body: &Bytes) -> Option<Value> {
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
    fn values(&self, cx: &RunContext, docs: impl Iterator<Item = Value>) -> Vec<Value> {
        if search::needs_statistics(&self.select) {
            let docs: Vec<Value> = docs.collect();
            let statistics = search::gather_statistics(&cx.policies, &self.select, &docs);
            return cx.with_statistics(statistics, || {
                execute::run_select(cx, &self.select, docs.into_iter())
            });
        }
        execute::run_select(cx, &self.select, docs)
    }

    /// Runs one page of the query over a container's live items, given in
    /// write order as [`Row`]s, starting where `continuation` says (the
    /// caller started the iterator after its item).
    /// With `view`, an index lookup may give the items instead.
    pub fn run_page<'a>(
        &self,
        setting: Setting,
        items: impl Iterator<Item = Row<'a>>,
        view: Option<&mut dyn ContainerView<'a>>,
        continuation: Option<&Continuation>,
        limit: PageLimit,
    ) -> ApiResult<(Page, Retrieved)> {
        self.run(setting, |cx| {
            let candidates = view
                .filter(|_| !search::needs_statistics(&self.select))
                .and_then(|view| {
                    let keys = self.access.candidates(cx, &*view)?;
                    Some(live_rows(keys, view))
                });
            match candidates {
                Some(rows) => self.page(cx, rows, continuation, limit),
                None => self.page(cx, items, continuation, limit),
            }
        })
    }

    fn page<'a>(
        &self,
        cx: &RunContext,
        items: impl Iterator<Item = Row<'a>>,
        continuation: Option<&Continuation>,
        limit: PageLimit,
    ) -> Page {
        if !self.streams_in_write_order() {
            let offset = match continuation {
                Some(Continuation::Offset { offset }) => *offset,
                _ => 0,
            };
            let results = self.all_values(cx, items);
            if cx.budget.exceeded() {
                return Page::default();
            }
            return page_of_values(results, offset, limit);
        }
        let mut page = Page::default();
        let mut bytes = 0;
        let plain = self.is_plain_scan();
        let executor = self.executor(cx);
        for (number, _, body) in items {
            let result = if plain {
                cx.retrieved.read(body.len());
                Some(body.clone())
            } else {
                match self.result_of(&executor, body) {
                    // Refused when the run is over: serialise nothing more.
                    _ if cx.budget.exceeded() => return page,
                    projected => projected.map(|v| encode(&v)),
                }
            };
            if let Some(result) = result {
                bytes += result.len();
                page.documents.push(result);
            }
            // A full page always continues, whether or not anything is
            // left, as the service's scans do (they do not look ahead):
            // 20 items in pages of 5 are 4 pages and an empty fifth (the Go
            // SDK's TestCrossPartitionQuery; the JavaScript SDK's readAll
            // of 4 items in pages of 2 takes 3 pages).
            if page.documents.len() >= limit.items || bytes >= limit.bytes {
                page.continuation = Some(Continuation::After { after: number });
                break;
            }
        }
        page
    }
}

/// The items at `keys` (in write order) that the view gives: live, in
/// scope, after a resumed page's item (skipped by number, unread).
fn live_rows<'a, 'v>(
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

fn parse(body: &Bytes) -> Value {
    crate::json::parse_unguarded(body).expect("stored items are JSON within the nesting limit")
}

#[cfg(test)]
pub(crate) mod tests;
