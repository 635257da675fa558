//! `POST .../docs` with `x-ms-documentdb-isquery: True`: a query of a
//! container's items, or its query plan; and the read feed's pages. The
//! request's headers become a [`PageRequest`] and a [`ContainerScope`] (the
//! pipeline's [`Source`] over the store); the query layer's pipeline
//! (`query/run/pipeline.rs`) makes the page, and this module writes it, with
//! the query metrics a client asks for. A query that calls user-defined
//! functions runs its page off the store's lock, on a thread the scripts'
//! time bound answers: a UDF that loops, even inside a native call the
//! interrupt cannot stop, holds no lock and the request is answered 408.

use std::sync::Arc;

use bytes::Bytes;

use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;

use super::container_context::{self, decorate, Refusal};
use super::metrics;
use super::range_walk::{self, Step};
use super::request::{Body, CosmosHeaders};
use super::response::{feed, resource, METADATA_READ};
use super::scope::FeedScope;
use super::AppState;
use crate::error::{ApiError, ApiResult};
use crate::index::DocumentPath;
use crate::partition_key::PartitionKeyDefinition;
use crate::query::pipeline::{self, CalledUdfs, PageRequest, Planned, Scope, Scoped, Source};
use crate::query::search::Policies;
use crate::query::udf::Runner;
use crate::query::{Continuation, PageLimit, PreparedQuery, QueryBody};
use crate::script::{missing_udf, run_bounded, Udfs};
use crate::store::ScopedView;
use crate::store::ScriptKind;

/// A query of the container `db`/`coll` (the body), or its plan.
pub(super) async fn query(
    state: &AppState,
    (db, coll): (&str, &str),
    uri: &Uri,
    headers: &HeaderMap,
    body: &Body,
) -> Result<Response, Refusal> {
    let query = PreparedQuery::prepare_at(
        &body.typed::<QueryBody>("query")?,
        state.store.clock.now_millis(),
    )?;
    if headers.flag("x-ms-cosmos-is-query-plan-request") {
        // The container must exist for its plan, as for its query; a
        // vector search's order is its embedding policy's.
        let policies = search_policies(state, db, coll)?;
        let supported = headers.text("x-ms-cosmos-supported-query-features");
        query.check_supported_features(supported)?;
        let plan = query.plan_for(supported, &policies)?;
        return Ok(resource(StatusCode::OK, &plan, METADATA_READ));
    }
    // Neither a partition key nor a range: every partition at once.
    if headers.partition_key().is_none()
        && headers
            .text("x-ms-documentdb-partitionkeyrangeid")
            .is_none()
        && headers.text("x-ms-start-epk").is_none()
    {
        let declared = headers.flag("x-ms-documentdb-query-enablecrosspartition");
        state.store.with_container(db, coll, |c, _| {
            // A filter that pins the whole key: the gateway routes the
            // query to that one partition.
            let pinned = query.pins_partition_key(c.partition_key().paths());
            if declared {
                // Declared across partitions: the gateway answers it if it
                // is pinned or needs no merging (the SDKs then plan it).
                query.check_servable_across_partitions(pinned)
            } else if pinned {
                Ok(())
            } else {
                check_cross_partition_enabled(c.partition_key())
            }
        })?;
    }
    let context = container_context::check(state, db, coll, headers, true)?;
    // The query as sent keys its whole result between pages, unless it
    // reads the clock (GetCurrentDateTime...), which moves every page.
    let source = (query.needs_whole_result() && !query.reads_clock())
        .then(|| std::str::from_utf8(&body.0).ok())
        .flatten();
    let mut response = page(state, (db, coll), headers, &query, source, Priced::Query).await?;
    decorate(&mut response, &context, context.lsn, None, uri);
    Ok(response)
}

/// How a page is charged: as a query, or as a read feed (no query base).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Priced {
    Query,
    ReadFeed,
}

/// One page of `query` as the response writes it. `source` (the query as
/// sent), given only for a query that [`PreparedQuery::needs_whole_result`],
/// keeps that result for its next pages (`query/results.rs`). Its charge
/// follows what it read and returned (`request_units`); the query metrics
/// count the same documents and bytes.
pub(super) async fn page(
    state: &AppState,
    (db, coll): (&str, &str),
    headers: &HeaderMap,
    query: &PreparedQuery,
    source: Option<&str>,
    priced: Priced,
) -> ApiResult<Response> {
    let started = metrics::wanted(headers).then(std::time::Instant::now);
    let limit = PageLimit::from_header(headers.max_item_count())?;
    let continuation = headers
        .continuation()
        .map(Continuation::parse)
        .transpose()?
        .flatten();
    let request = PageRequest {
        source,
        continuation: continuation.as_ref(),
        limit,
    };
    let scope = ContainerScope {
        state,
        db,
        coll,
        headers,
    };
    let answer = match pipeline::plan(&scope, query, &request, &state.query_results)? {
        Planned::Answered(answer) => answer,
        Planned::OffLock(job) => {
            let limits = state.scripts.limits;
            let worker = state.clone();
            let ran = run_bounded(limits, move || {
                let udfs = |bodies| Box::new(Udfs::new(bodies, limits)) as Box<dyn Runner>;
                job.run(udfs, &worker.query_results)
            })
            .await?;
            pipeline::walk_on(&scope, ran)?
        }
    };
    let token = answer.page.continuation.map(|c| c.to_token());
    let returned: usize = answer.page.documents.iter().map(Bytes::len).sum();
    let quorum = state.reads_quorum(headers);
    let charge = match priced {
        Priced::Query => state.charges.query(
            answer.retrieved.documents,
            answer.retrieved.bytes,
            returned,
            quorum,
        ),
        Priced::ReadFeed => {
            let count = answer.page.documents.len();
            state.charges.read_feed(count, returned, quorum)
        }
    };
    let mut response = feed(
        &answer.rid,
        "Documents",
        &answer.page.documents,
        token,
        charge,
    );
    if let Some(started) = started {
        let used = metrics::Used {
            documents: &answer.page.documents,
            retrieved: answer.retrieved,
            key_index: answer.key_index.as_deref(),
        };
        metrics::add(response.headers_mut(), headers, &used, started);
    }
    Ok(response)
}

/// A query of a partitioned container with neither a partition key nor a
/// range must say that it means every partition: the service refuses it
/// otherwise, whatever the number of physical partitions (the Python SDK's
/// `test_with_null_pk`, a query with `partition_key=None`).
pub(super) fn check_cross_partition_enabled(definition: &PartitionKeyDefinition) -> ApiResult<()> {
    if definition.wire.is_null() {
        return Ok(());
    }
    Err(ApiError::bad_request(
        "Cross partition query is required but disabled. Please set \
         x-ms-documentdb-query-enablecrosspartition to true, specify \
         x-ms-documentdb-partitionkey, or revise your query to avoid this exception.",
    ))
}

/// A container as one request's query reads it: the store's, in the
/// scope the request's headers name (its partition key, range, feed
/// range; or, across partitions, a walk over the ranges).
struct ContainerScope<'r> {
    state: &'r AppState,
    db: &'r str,
    coll: &'r str,
    headers: &'r HeaderMap,
}

impl Source for ContainerScope<'_> {
    type Walk = Step;

    fn udfs(&self, names: Vec<String>) -> ApiResult<CalledUdfs> {
        let stored =
            self.state
                .store
                .scripts(self.db, self.coll, ScriptKind::UserDefinedFunction)?;
        let mut bodies = std::collections::HashMap::new();
        let mut versions = Vec::new();
        for name in names {
            let Some(udf) = stored.iter().find(|u| u.id == name) else {
                return Err(missing_udf(&name));
            };
            versions.push(format!("{}:{}", udf.id, udf.etag));
            bodies.insert(name, udf.body.clone());
        }
        Ok((bodies, versions))
    }

    fn build_indexes(&self, query: &PreparedQuery) -> ApiResult<()> {
        // Resolving computed properties turns a path into an expression,
        // never the reverse: a query with no path to look up has none once
        // resolved (the read feed, `SELECT * FROM c`), and needs no look at
        // the container.
        if query.index_paths().is_empty() {
            return Ok(());
        }
        let store = &self.state.store;
        let missing: Vec<DocumentPath> = store.with_container(self.db, self.coll, |c, _| {
            // The query as it runs: computed properties resolved. A query
            // they refuse is refused when it runs, not here.
            let resolved = query
                .resolve_computed(&c.settings.computed_properties, &c.settings.indexing_policy)
                .unwrap_or(None);
            let paths = resolved.as_ref().unwrap_or(query).index_paths();
            Ok(c.missing_indexes(&paths).into_iter().cloned().collect())
        })?;
        store.ensure_indexes(self.db, self.coll, &missing);
        Ok(())
    }

    fn scoped<T>(
        &self,
        query: &PreparedQuery,
        request: &PageRequest<'_>,
        run: impl FnOnce(Scoped<'_, '_>) -> ApiResult<T>,
    ) -> ApiResult<Scope<T, Step>> {
        let (headers, continuation) = (self.headers, request.continuation);
        self.state
            .store
            .with_container(self.db, self.coll, |c, now| {
                query.check_order_by_index(&c.settings.indexing_policy)?;
                let resolved = query.resolve_computed(
                    &c.settings.computed_properties,
                    &c.settings.indexing_policy,
                )?;
                let query = resolved.as_ref().unwrap_or(query);
                let FeedScope { key, mut epk, .. } = FeedScope::from_headers(c, headers)?;
                // A query in one logical partition finds it by the key's order.
                let key_index = key.as_ref().and_then(|_| c.partition_key().index_spec());
                let walk = range_walk::step(c, headers, !query.needs_whole_result(), continuation);
                let after = match (&walk, continuation) {
                    (Some(step), _) => step.after,
                    (None, Some(Continuation::After { after })) => Some(*after),
                    _ => None,
                };
                if let Some(step) = &walk {
                    epk.narrow_to((&step.min, &step.max));
                }
                let mut scope = FeedScope {
                    key: key.clone(),
                    epk: epk.clone(),
                    range: None,
                };
                let mut view = ScopedView {
                    c,
                    in_scope: move |pk: &str| scope.contains(pk),
                    after,
                    now,
                };
                let mut items = c
                    .live_items(key.as_ref(), after, now)
                    .filter(move |(_, key, _)| epk.contains(key.pk()))
                    .map(|(number, key, item)| (number, key, &item.body));
                // Everything the result depends on: a write, a settings
                // change, a second of the clock makes another key.
                let state = request.source.map(|_| {
                    format!(
                        "{}\n{}\n{}\n{now}\n{:?}\n{:?}\n{:?}\n{:?}",
                        c.rid,
                        c.etag,
                        c.log().last_lsn(),
                        headers.partition_key(),
                        headers.text("x-ms-documentdb-partitionkeyrangeid"),
                        headers.text("x-ms-start-epk"),
                        headers.text("x-ms-end-epk"),
                    )
                });
                let value = run(Scoped {
                    query,
                    items: &mut items,
                    view: &mut view,
                    policies: Arc::new(c.settings.search_policies()),
                    state,
                })?;
                Ok(Scope {
                    value,
                    rid: c.rid.clone(),
                    key_index,
                    walk,
                })
            })
    }

    fn walk_on(&self, walk: &Step, page: Option<Continuation>) -> ApiResult<Option<Continuation>> {
        self.state.store.with_container(self.db, self.coll, |c, _| {
            Ok(range_walk::next(c, walk, page))
        })
    }
}

/// The search policies of container `coll` (its vector embeddings and
/// full-text languages), for an expression evaluated outside a query's
/// page: a query plan, a patch's `condition`.
pub(super) fn search_policies(state: &AppState, db: &str, coll: &str) -> ApiResult<Arc<Policies>> {
    let policies = state
        .store
        .with_container(db, coll, |c, _| Ok(c.settings.search_policies()))?;
    Ok(Arc::new(policies))
}
