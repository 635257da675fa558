//! One page of a query over a container, as a request asks for it: the
//! indexes the query could read built first, the items the request scopes
//! chosen under the store's lock, then the page, from the query's whole
//! result kept between pages (`results.rs`) or streamed, in a run whose
//! context (`context.rs`) carries the container's search policies.
//!
//! A query that calls user-defined functions copies its items out under
//! the lock (the bytes are shared, not copied) and runs its page outside
//! it ([`OffLock`]), on a thread its caller chooses (the scripts' time
//! bound: a UDF that loops holds no lock); the run's context is made on
//! that thread, with the same policies as under the lock.
//!
//! The pipeline reads the container through [`Source`], which the HTTP
//! layer implements over the store for one request (its partition, range,
//! feed range or range walk): it knows neither headers nor store maps.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;

use crate::error::ApiResult;
use crate::item_key::ItemKey;
use crate::query::context::Setting;
use crate::query::page::{Continuation, Page, PageLimit};
use crate::query::results::{ResultCache, Whole};
use crate::query::retrieved::Retrieved;
use crate::query::search::Policies;
use crate::query::udf::Runner;
use crate::query::view::{ContainerView, Row};
use crate::query::PreparedQuery;

/// What a request asks of a page of its query.
pub struct PageRequest<'r> {
    /// The query as sent, given only for a query that
    /// [`PreparedQuery::needs_whole_result`]: its whole result is kept
    /// between pages under a key that ends with it.
    pub source: Option<&'r str>,
    pub continuation: Option<&'r Continuation>,
    pub limit: PageLimit,
}

/// A query's live items in the request's scope, chosen under the lock.
pub struct Scoped<'c, 'i> {
    /// The query with the container's computed properties resolved.
    pub query: &'c PreparedQuery,
    pub items: &'i mut dyn Iterator<Item = Row<'c>>,
    /// The container as the scope sees it, for a query that its index or
    /// a vector column can answer without the scan.
    pub view: &'i mut dyn ContainerView<'c>,
    /// The container's policies that search functions read.
    pub policies: Arc<Policies>,
    /// For a request that keeps the query's whole result (it gave the
    /// query as sent): everything the result depends on besides the query
    /// and its UDFs, i.e. the container's state (RID, settings, last LSN),
    /// the second of the clock that decides what is live, and the
    /// request's scope.
    pub state: Option<String>,
}

/// What one request's pages read of their container. Implemented by the
/// HTTP layer over the store, for the scope its headers name.
pub trait Source {
    /// Where a page of a walk over the container's ranges reads.
    type Walk: Send + 'static;

    /// The bodies (by id) and versions of the user-defined functions
    /// `names`; each must exist.
    fn udfs(&self, names: Vec<String>) -> ApiResult<CalledUdfs>;

    /// Builds the indexes `query` could read that the container lacks, so
    /// that it runs under the read lock with them.
    fn build_indexes(&self, query: &PreparedQuery) -> ApiResult<()>;

    /// Under the store's read lock: checks `query` against the container,
    /// then runs `run` over the live items the request scopes.
    fn scoped<T>(
        &self,
        query: &PreparedQuery,
        request: &PageRequest<'_>,
        run: impl FnOnce(Scoped<'_, '_>) -> ApiResult<T>,
    ) -> ApiResult<Scope<T, Self::Walk>>;

    /// The continuation after a page of `walk` that ended at `page`.
    fn walk_on(
        &self,
        walk: &Self::Walk,
        page: Option<Continuation>,
    ) -> ApiResult<Option<Continuation>>;
}

/// What [`Source::scoped`] gives back: `run`'s value, the container's RID,
/// the partition key index used (for the index metrics), and, for a walk
/// over the ranges, where this page read.
pub struct Scope<T, W> {
    pub value: T,
    pub rid: String,
    pub key_index: Option<String>,
    pub walk: Option<W>,
}

/// The bodies of the user-defined functions a query calls, by id, and
/// their versions (which key its whole result too).
pub type CalledUdfs = (HashMap<String, String>, Vec<String>);

/// A page as the response writes it.
pub struct Answer {
    /// The container's RID.
    pub rid: String,
    pub page: Page,
    /// The partition key index used, if any.
    pub key_index: Option<String>,
    pub retrieved: Retrieved,
}

/// A page ready: answered under the lock, or to be run off it.
pub enum Planned<W> {
    Answered(Answer),
    OffLock(Box<OffLock<W>>),
}

/// One page of `query` as `request` asks: answered under the lock, or,
/// for a query that calls user-defined functions, its items copied out
/// for [`OffLock::run`].
pub fn plan<S: Source>(
    source: &S,
    query: &PreparedQuery,
    request: &PageRequest<'_>,
    cache: &ResultCache,
) -> ApiResult<Planned<S::Walk>> {
    let names = query.udf_names();
    if !names.is_empty() {
        let (bodies, versions) = source.udfs(names)?;
        let job = OffLock::copied(source, query, request, bodies, versions)?;
        return Ok(Planned::OffLock(Box::new(job)));
    }
    source.build_indexes(query)?;
    let scope = source.scoped(query, request, |scoped| {
        let key = cache_key(scoped.state, None, request.source);
        let setting = Setting {
            policies: scoped.policies,
            udfs: None,
        };
        let items = (scoped.items, Some(scoped.view));
        page_of(scoped.query, setting, items, (cache, key), request)
    })?;
    let (mut page, retrieved) = scope.value;
    if let Some(walk) = &scope.walk {
        page.continuation = source.walk_on(walk, page.continuation.take())?;
    }
    Ok(Planned::Answered(Answer {
        rid: scope.rid,
        page,
        key_index: scope.key_index,
        retrieved,
    }))
}

/// A page of a query that calls user-defined functions: its items, copied
/// out under the lock, and all its run needs but the UDFs' runner.
pub struct OffLock<W> {
    query: PreparedQuery,
    items: Vec<(u64, ItemKey, Bytes)>,
    policies: Arc<Policies>,
    cache_key: Option<String>,
    continuation: Option<Continuation>,
    limit: PageLimit,
    rid: String,
    key_index: Option<String>,
    walk: Option<W>,
    /// The bodies of the UDFs, by id, for their runner.
    bodies: HashMap<String, String>,
}

impl<W> OffLock<W> {
    fn copied<S: Source<Walk = W>>(
        source: &S,
        query: &PreparedQuery,
        request: &PageRequest<'_>,
        bodies: HashMap<String, String>,
        versions: Vec<String>,
    ) -> ApiResult<Self> {
        let scope = source.scoped(query, request, |scoped| {
            let items: Vec<(u64, ItemKey, Bytes)> = scoped
                .items
                .map(|(number, key, body)| (number, key.clone(), body.clone()))
                .collect();
            let cache_key = cache_key(scoped.state, Some(&versions), request.source);
            Ok((scoped.query.clone(), items, scoped.policies, cache_key))
        })?;
        let (query, items, policies, cache_key) = scope.value;
        Ok(OffLock {
            query,
            items,
            policies,
            cache_key,
            continuation: request.continuation.cloned(),
            limit: request.limit,
            rid: scope.rid,
            key_index: scope.key_index,
            walk: scope.walk,
            bodies,
        })
    }

    /// Runs the page, its UDFs evaluated by the runner `udfs` makes of
    /// their bodies (on the thread that runs the page, where the run's
    /// context is made too); [`walk_on`] then finds a range walk's next
    /// step.
    pub fn run(
        self,
        udfs: impl FnOnce(HashMap<String, String>) -> Box<dyn Runner>,
        cache: &ResultCache,
    ) -> ApiResult<(Answer, Option<W>)> {
        let setting = Setting {
            policies: self.policies,
            udfs: Some(udfs(self.bodies)),
        };
        let items = self
            .items
            .iter()
            .map(|(number, key, body)| (*number, key, body));
        let request = PageRequest {
            source: None,
            continuation: self.continuation.as_ref(),
            limit: self.limit,
        };
        let (page, retrieved) = page_of(
            &self.query,
            setting,
            (items, None),
            (cache, self.cache_key),
            &request,
        )?;
        let answer = Answer {
            rid: self.rid,
            page,
            key_index: self.key_index,
            retrieved,
        };
        Ok((answer, self.walk))
    }
}

/// The next page of an off-lock run that walks the ranges: its
/// continuation moved on by `source` under the lock.
pub fn walk_on<S: Source>(
    source: &S,
    (mut answer, walk): (Answer, Option<S::Walk>),
) -> ApiResult<Answer> {
    if let Some(walk) = &walk {
        answer.page.continuation = source.walk_on(walk, answer.page.continuation.take())?;
    }
    Ok(answer)
}

/// The key of a query's whole result between pages: everything it depends
/// on (the container's state and the request's scope, the versions of its
/// UDFs, the query as sent); none for a query that streams.
fn cache_key(
    state: Option<String>,
    udf_versions: Option<&[String]>,
    source: Option<&str>,
) -> Option<String> {
    let (state, source) = state.zip(source)?;
    Some(format!("{state}\n{udf_versions:?}\n{source}"))
}

/// One page of `query` over `items`: from its whole result, kept in
/// `cache` under its key, or streamed.
fn page_of<'a>(
    query: &PreparedQuery,
    setting: Setting,
    (items, view): (
        impl Iterator<Item = Row<'a>>,
        Option<&mut dyn ContainerView<'a>>,
    ),
    (cache, key): (&ResultCache, Option<String>),
    request: &PageRequest<'_>,
) -> ApiResult<(Page, Retrieved)> {
    let Some(key) = key else {
        return query.run_page(setting, items, view, request.continuation, request.limit);
    };
    let whole = match cache.get(&key) {
        Some(whole) => whole,
        None => {
            let (documents, retrieved) = query.run_whole(setting, items, view)?;
            let whole = Arc::new(Whole {
                documents,
                retrieved,
            });
            cache.insert(key, whole.clone());
            whole
        }
    };
    Ok(whole.page(request.continuation, request.limit))
}
