//! One page of a query over a container, as a request asks for it, in one
//! call ([`page`]): what every protocol's front door calls, with the
//! request's scope already in its [`Source`].
//!
//! The pipeline reads the container through [`Source`], a data-only trait
//! the store implements for one request's scope (`data/store/query_source.rs`),
//! as DataFusion's `TableProvider` serves its `scan`: the settings a query
//! reads ([`Schema`]), the bodies of the UDFs it calls, the indexes it
//! could read built, its live items in scope under the store's lock, and
//! the next step of a walk over the ranges. The engine does the rest, once
//! per page: resolves the container's computed properties into the query
//! and checks ORDER BY against the indexing policy, keys and keeps a whole
//! result between pages (`results.rs`), runs the page in a context
//! (`context.rs`) that carries the container's search policies.
//!
//! A query that calls user-defined functions copies its items out under
//! the lock (the bytes are shared, not copied) and runs its page outside
//! it, on the thread its [`Host`] gives (the scripts' time bound: a UDF
//! that loops holds no lock); the run's context is made on that thread,
//! with the same policies as under the lock.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

use crate::data::index::DocumentPath;
use crate::data::query::context::Setting;
use crate::data::query::page::{Continuation, Page, PageLimit};
use crate::data::query::results::{ResultCache, Whole};
use crate::data::query::retrieved::Retrieved;
use crate::data::query::search::Policies;
use crate::data::query::udf::Runner;
use crate::data::query::view::{ContainerView, Row};
use crate::data::query::{ComputedProperties, PreparedQuery};
use crate::protocol::error::ApiResult;
use crate::protocol::item_key::ItemKey;

/// What a request asks of a page of its query.
pub struct PageRequest<'r> {
    /// The query as sent (its text and parameters): a query that
    /// [`PreparedQuery::needs_whole_result`] keeps that result between
    /// pages under a key that ends with it, unless it reads the clock
    /// (`GetCurrentDateTime`...), which moves every page.
    pub source: Option<&'r str>,
    pub continuation: Option<&'r Continuation>,
    pub limit: PageLimit,
}

/// The settings of a container that a query reads, read once per page.
pub struct Schema {
    pub computed: ComputedProperties,
    pub indexing_policy: Value,
    /// What search functions read (vector embeddings, full-text paths).
    pub policies: Arc<Policies>,
    /// Changes whenever the settings do (the container's etag).
    pub version: String,
}

/// A query's live items in the request's scope, chosen under the lock.
pub struct Scan<'c, 'i> {
    pub items: &'i mut dyn Iterator<Item = Row<'c>>,
    /// The container as the scope sees it, for a query that its index or
    /// a vector column can answer without the scan.
    pub view: &'i mut dyn ContainerView<'c>,
    /// Asked for by a request that keeps the query's whole result:
    /// everything the result depends on besides the query and its UDFs,
    /// i.e. the container's state (RID, settings, last LSN), the second
    /// of the clock that decides what is live, and the request's scope.
    pub state: Option<String>,
}

/// What one request's pages read of their container: implemented by the
/// store, for the scope the request names. Data only: it decides nothing
/// of the query.
pub trait Source {
    /// Where a page of a walk over the container's ranges reads.
    type Walk: Send + 'static;

    /// The container's settings a query reads.
    fn schema(&self) -> ApiResult<Schema>;

    /// The bodies (by id) and versions of the user-defined functions
    /// `names`; each must exist.
    fn udfs(&self, names: Vec<String>) -> ApiResult<CalledUdfs>;

    /// Builds the indexes of `paths` that the container lacks, so that the
    /// scan reads them under the read lock.
    fn build_indexes(&self, paths: &[DocumentPath]) -> ApiResult<()>;

    /// Under the store's read lock, while the settings are still at
    /// `version` (else `None`): runs `read` over the live items the request
    /// scopes, from where `continuation` left off. `modes` are `(streams,
    /// keyed)`: a query whose results come in write order lets a request
    /// across partitions walk the ranges one page each; a keyed one asks
    /// for [`Scan::state`].
    fn scan<T>(
        &self,
        version: &str,
        modes: (bool, bool),
        continuation: Option<&Continuation>,
        read: impl FnOnce(Scan<'_, '_>) -> ApiResult<T>,
    ) -> ApiResult<Option<Scanned<T, Self::Walk>>>;

    /// The continuation after a page of `walk` that ended at `page`.
    fn walk_on(
        &self,
        walk: &Self::Walk,
        page: Option<Continuation>,
    ) -> ApiResult<Option<Continuation>>;
}

/// What [`Source::scan`] gives back: `read`'s value, the container's RID,
/// the partition key index used (for the index metrics), and, for a walk
/// over the ranges, where this page read.
pub struct Scanned<T, W> {
    pub value: T,
    pub rid: String,
    pub key_index: Option<String>,
    pub walk: Option<W>,
}

/// The bodies of the user-defined functions a query calls, by id, and
/// their versions (which key its whole result too).
pub type CalledUdfs = (HashMap<String, String>, Vec<String>);

/// Where a query that calls user-defined functions runs them
/// (`script/`): a runner of their bodies, on a thread whose time is
/// bounded.
pub trait Host: Clone + Send + 'static {
    /// The runner of the UDFs `bodies` (by id), made on the thread that
    /// runs the page.
    fn runner(&self, bodies: HashMap<String, String>) -> Box<dyn Runner>;

    /// Runs `work` off the caller's thread, answered as a timeout once the
    /// scripts' time bound is past, even if a UDF cannot be interrupted.
    fn bounded<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> ApiResult<T> + Send + 'static,
    ) -> impl Future<Output = ApiResult<T>> + Send;
}

/// A page as a response writes it.
pub struct Answer {
    /// The container's RID.
    pub rid: String,
    pub page: Page,
    /// The partition key index used, if any.
    pub key_index: Option<String>,
    pub retrieved: Retrieved,
}

/// One page of `query` as `request` asks, over `source`: answered under
/// the lock or, for a query that calls user-defined functions, off it on
/// `host`'s thread; whole results kept in `cache`.
pub async fn page<S: Source, H: Host>(
    source: &S,
    host: &H,
    query: &PreparedQuery,
    request: &PageRequest<'_>,
    cache: &ResultCache,
) -> ApiResult<Answer> {
    let kept = request
        .source
        .filter(|_| query.needs_whole_result() && !query.reads_clock());
    let udfs = match query.udf_names() {
        names if names.is_empty() => None,
        names => Some(source.udfs(names)?),
    };
    // A replace of the container between reading its settings and the
    // scan makes the resolved query stale: read them again.
    let (resolved, policies, scanned) = loop {
        let schema = source.schema()?;
        let resolved = resolve(query, &schema)?;
        let query = resolved.as_ref().unwrap_or(query);
        if udfs.is_none() {
            source.build_indexes(&query.index_paths())?;
        }
        let modes = (!query.needs_whole_result(), kept.is_some());
        let versions = udfs.as_ref().map(|(_, versions)| versions.as_slice());
        let scanned = source.scan(&schema.version, modes, request.continuation, |scan| {
            let key = cache_key(scan.state, versions, kept);
            match &udfs {
                None => {
                    let setting = Setting {
                        policies: schema.policies.clone(),
                        udfs: None,
                    };
                    let items = (scan.items, Some(scan.view));
                    let answered = page_of(query, setting, items, (cache, key), request)?;
                    Ok(Planned::Answered(answered))
                }
                // Copied out: the bytes are shared, not copied.
                Some(_) => Ok(Planned::Copied(
                    scan.items
                        .map(|(number, key, body)| (number, key.clone(), body.clone()))
                        .collect(),
                    key,
                )),
            }
        })?;
        if let Some(scanned) = scanned {
            break (resolved, schema.policies, scanned);
        }
    };
    let Scanned {
        value,
        rid,
        key_index,
        walk,
    } = scanned;
    let (mut page, retrieved) = match (value, udfs) {
        (Planned::Answered(answered), _) => answered,
        (Planned::Copied(items, key), Some((bodies, _))) => {
            let query = resolved.unwrap_or_else(|| query.clone());
            off_lock(host, query, items, policies, bodies, (cache, key), request).await?
        }
        (Planned::Copied(..), None) => unreachable!("copied only for UDFs"),
    };
    if let Some(walk) = &walk {
        page.continuation = source.walk_on(walk, page.continuation.take())?;
    }
    Ok(Answer {
        rid,
        page,
        key_index,
        retrieved,
    })
}

/// What a scan made of the page: answered, or its items copied out (and
/// the key of its whole result) for a run off the lock.
enum Planned {
    Answered((Page, Retrieved)),
    Copied(Vec<(u64, ItemKey, Bytes)>, Option<String>),
}

/// `query` as it runs on the container of `schema`: ORDER BY checked
/// against its indexing policy, its computed properties resolved (`None`:
/// it reads none, and runs as prepared).
fn resolve(query: &PreparedQuery, schema: &Schema) -> ApiResult<Option<PreparedQuery>> {
    query.check_order_by_index(&schema.indexing_policy)?;
    query.resolve_computed(&schema.computed, &schema.indexing_policy)
}

/// A page of a query that calls user-defined functions, over its items
/// copied out under the lock, on `host`'s thread: its whole result, if it
/// is kept, looked up first and kept after.
async fn off_lock<H: Host>(
    host: &H,
    query: PreparedQuery,
    items: Vec<(u64, ItemKey, Bytes)>,
    policies: Arc<Policies>,
    bodies: HashMap<String, String>,
    (cache, key): (&ResultCache, Option<String>),
    request: &PageRequest<'_>,
) -> ApiResult<(Page, Retrieved)> {
    if let Some(whole) = key.as_deref().and_then(|key| cache.get(key)) {
        return Ok(whole.page(request.continuation, request.limit));
    }
    let worker = host.clone();
    let (continuation, limit) = (request.continuation.cloned(), request.limit);
    let whole_result = key.is_some();
    let ran = host
        .bounded(move || {
            let setting = Setting {
                policies,
                udfs: Some(worker.runner(bodies)),
            };
            let rows = items.iter().map(|(number, key, body)| (*number, key, body));
            if whole_result {
                let (documents, retrieved) = query.run_whole(setting, rows, None)?;
                return Ok(Err(Whole {
                    documents,
                    retrieved,
                }));
            }
            let page = query.run_page(setting, rows, None, continuation.as_ref(), limit)?;
            Ok(Ok(page))
        })
        .await?;
    match (ran, key) {
        (Ok(page), _) => Ok(page),
        (Err(whole), Some(key)) => {
            let whole = Arc::new(whole);
            cache.insert(key, whole.clone());
            Ok(whole.page(request.continuation, request.limit))
        }
        (Err(_), None) => unreachable!("a whole result only under a key"),
    }
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

#[cfg(test)]
mod tests {
    //! The pipeline over a source that is no store, driven without HTTP:
    //! what it asks of the source, page by page.

    use std::cell::{Cell, RefCell};

    use serde_json::json;

    use super::*;
    use crate::data::index::vectors::VectorColumn;
    use crate::data::index::PathIndex;
    use crate::data::query::spatial_column::SpatialColumn;
    use crate::data::query::QueryBody;

    /// Items in memory, whose settings change once before a chosen scan.
    struct Memory {
        items: Vec<(u64, ItemKey, Bytes)>,
        computed: Value,
        schemas: Cell<usize>,
        /// Scans that find the settings changed, from the first.
        stale_scans: Cell<usize>,
        /// Whether each scan was asked for the result's key.
        keyed: RefCell<Vec<bool>>,
    }

    impl Memory {
        fn new(docs: &[Value], computed: Value) -> Self {
            let items = docs
                .iter()
                .enumerate()
                .map(|(i, doc)| {
                    let key = ItemKey::new("[\"p\"]", &i.to_string());
                    (i as u64 + 1, key, Bytes::from(doc.to_string()))
                })
                .collect();
            Memory {
                items,
                computed,
                schemas: Cell::new(0),
                stale_scans: Cell::new(0),
                keyed: RefCell::new(Vec::new()),
            }
        }
    }

    /// A view with no index and no column: every query scans.
    struct NoIndexes;

    impl<'c> ContainerView<'c> for NoIndexes {
        fn vector_column(&self, _: &DocumentPath) -> Option<&'c VectorColumn> {
            None
        }
        fn path_index(&self, _: &DocumentPath) -> Option<&'c PathIndex> {
            None
        }
        fn spatial_column(&self, _: &DocumentPath) -> Option<&'c SpatialColumn> {
            None
        }
        fn after(&self) -> Option<u64> {
            None
        }
        fn live_body(&mut self, _: &ItemKey) -> Option<(u64, &'c Bytes)> {
            None
        }
    }

    impl Source for Memory {
        type Walk = ();

        fn schema(&self) -> ApiResult<Schema> {
            self.schemas.set(self.schemas.get() + 1);
            Ok(Schema {
                computed: ComputedProperties::parse(Some(&self.computed))?,
                indexing_policy: json!({"indexingMode": "consistent", "includedPaths": [{"path": "/*"}]}),
                policies: Arc::default(),
                version: format!("v{}", self.schemas.get()),
            })
        }

        fn udfs(&self, _: Vec<String>) -> ApiResult<CalledUdfs> {
            unreachable!("no query here calls a UDF")
        }

        fn build_indexes(&self, _: &[DocumentPath]) -> ApiResult<()> {
            Ok(())
        }

        fn scan<T>(
            &self,
            _: &str,
            (_, keyed): (bool, bool),
            _: Option<&Continuation>,
            read: impl FnOnce(Scan<'_, '_>) -> ApiResult<T>,
        ) -> ApiResult<Option<Scanned<T, ()>>> {
            self.keyed.borrow_mut().push(keyed);
            if self.stale_scans.get() > 0 {
                self.stale_scans.set(self.stale_scans.get() - 1);
                return Ok(None);
            }
            let mut items = self.items.iter().map(|(n, key, body)| (*n, key, body));
            let value = read(Scan {
                items: &mut items,
                view: &mut NoIndexes,
                state: keyed.then(|| "state".to_string()),
            })?;
            Ok(Some(Scanned {
                value,
                rid: "rid".into(),
                key_index: None,
                walk: None,
            }))
        }

        fn walk_on(&self, _: &(), page: Option<Continuation>) -> ApiResult<Option<Continuation>> {
            Ok(page)
        }
    }

    /// Runs nothing: no query here calls a UDF.
    #[derive(Clone)]
    struct NoUdfs;

    impl Host for NoUdfs {
        fn runner(&self, _: HashMap<String, String>) -> Box<dyn Runner> {
            unreachable!("no query here calls a UDF")
        }

        async fn bounded<T: Send + 'static>(
            &self,
            work: impl FnOnce() -> ApiResult<T> + Send + 'static,
        ) -> ApiResult<T> {
            work()
        }
    }

    fn prepared(text: &str) -> PreparedQuery {
        PreparedQuery::prepare_at(
            &QueryBody {
                query: text.into(),
                parameters: vec![],
            },
            1_700_000_000_000,
        )
        .unwrap()
    }

    async fn documents(source: &Memory, text: &str) -> Vec<String> {
        let request = PageRequest {
            source: Some(text),
            continuation: None,
            limit: PageLimit {
                items: 100,
                bytes: usize::MAX,
            },
        };
        let cache = ResultCache::default();
        let answer = page(source, &NoUdfs, &prepared(text), &request, &cache)
            .await
            .unwrap();
        let texts = answer.page.documents.iter();
        texts.map(|d| String::from_utf8_lossy(d).into()).collect()
    }

    #[tokio::test]
    async fn computed_properties_are_read_once_a_page_and_again_when_they_change() {
        let computed = json!([{"name": "twice", "query": "SELECT VALUE c.a * 2 FROM c"}]);
        let source = Memory::new(&[json!({"a": 1}), json!({"a": 2})], computed);
        let text = "SELECT VALUE c.twice FROM c";
        assert_eq!(documents(&source, text).await, ["2", "4"]);
        assert_eq!(source.schemas.get(), 1, "one read of the settings a page");
        // The container is replaced between the settings and the scan.
        source.stale_scans.set(1);
        assert_eq!(documents(&source, text).await, ["2", "4"]);
        assert_eq!(source.schemas.get(), 3, "read again after the change");
    }

    #[tokio::test]
    async fn a_whole_result_is_kept_unless_the_query_reads_the_clock() {
        let source = Memory::new(&[json!({"a": 2}), json!({"a": 1})], Value::Null);
        let sorted = "SELECT VALUE c.a FROM c ORDER BY c.a";
        assert_eq!(documents(&source, sorted).await, ["1", "2"]);
        let clock = "SELECT VALUE GetCurrentTimestamp() - c.a FROM c ORDER BY c.a";
        assert_eq!(documents(&source, clock).await.len(), 2);
        let streamed = "SELECT VALUE c.a FROM c";
        assert_eq!(documents(&source, streamed).await, ["2", "1"]);
        assert_eq!(*source.keyed.borrow(), [true, false, false]);
    }
}
