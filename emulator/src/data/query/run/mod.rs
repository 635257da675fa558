//! The ways to run a prepared query, in one place. Every run starts at
//! [`PreparedQuery`]'s `run`, which makes the run's context
//! (`context.rs`: its instant, budget, search policies, UDF runner and
//! counters) on the thread that runs it and hands it to the executor:
//!
//! - over values, outside a container: [`PreparedQuery::run_values`],
//!   [`PreparedQuery::run_values_in`] (a patch's condition, a script's
//!   query);
//! - over a container's live items: one page ([`PreparedQuery::run_page`],
//!   streamed in write order) or the whole result
//!   ([`PreparedQuery::run_whole`], kept between pages), reading through
//!   the container's view where an index or a column answers (`read.rs`);
//! - the page a request asks for, in its scope (`pipeline.rs`).

pub mod pipeline;
mod read;

use bytes::Bytes;
use serde_json::Value;

use super::context::{RunContext, Setting};
use super::execute::{self, Executor};
use super::page::{encode, page_of_values, Continuation, Page, PageLimit};
use super::retrieved::Retrieved;
use super::search;
use super::view::{ContainerView, Row};
use super::PreparedQuery;
use crate::protocol::error::ApiResult;
use read::{live_rows, parse};

impl PreparedQuery {
    /// Whether a stored document may match, judged from its bytes alone.
    pub(super) fn may_match(&self, cx: &RunContext, body: &[u8]) -> bool {
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
    pub(super) fn load(&self, cx: &RunContext, body: &Bytes) -> Value {
        if self.required.is_empty() {
            cx.retrieved.read(body.len());
        }
        parse(body)
    }

    /// The executor of this query's SELECT in the run `cx`.
    pub(super) fn executor<'q>(&'q self, cx: &'q RunContext) -> Executor<'q> {
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
        let cx = RunContext::new(self.now(), setting, execute::subquery);
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
                .filter(|_| !search::statistics::needs_statistics(&self.select))
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
