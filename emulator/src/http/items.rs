//! `/dbs/{db}/colls/{coll}/docs` and `.../docs/{id}`: item CRUD, patch,
//! read feed and queries. TTL is the store's business: expired items are
//! absent here on every path (R5).

use std::sync::{Arc, LazyLock};

use bytes::Bytes;

use axum::extract::{Request, State};
use axum::http::header::IF_NONE_MATCH;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;

use super::container_context::{self, decorate, Refusal};
use super::metrics;
use super::range_walk;
use super::request::{Body, CosmosHeaders, PathParams};
use super::response::{
    feed, item, item_written, no_content, resource, QUERY_CHARGE, READ_CHARGE, WRITE_CHARGE,
};
use super::scope::FeedScope;
use super::script_runs;
use super::AppState;
use crate::error::{ApiError, ApiResult};
use crate::partition_key::PartitionKeyDefinition;
use crate::patch::PatchBody;
use crate::query::retrieved::Retrieved;
use crate::query::search;
use crate::query::view::{ContainerView, ScopedView};
use crate::query::Setting;
use crate::query::{page_of_encoded, Continuation, Page, PageLimit, PreparedQuery, QueryBody};
use crate::script::{missing_udf, WriteKind};
use crate::store::index::IndexPath;
use crate::store::{Container, ItemAddress, ItemKey, ItemWrite, ScriptKind, WriteMode};

type ItemPath = PathParams<(String, String, String)>;

/// A response, or a refusal (which may carry headers of its own).
type Reply = Result<Response, Refusal>;

/// The (partition key header, id) an item path addresses: as given for
/// name-based paths, looked up for RID-based ones.
fn address(
    state: &AppState,
    db: &str,
    coll: &str,
    id: String,
    headers: &HeaderMap,
) -> ApiResult<(Option<String>, String)> {
    // Only a path whose database segment looks like a RID can be RID-based;
    // name-based paths (nearly all) skip the lookup.
    if !crate::rid::looks_like_database_rid(db) {
        return Ok((headers.partition_key().map(str::to_owned), id));
    }
    Ok(
        match state
            .store
            .item_by_rid(db, coll, &id, headers.partition_key())?
        {
            Some((pk, name)) => (Some(pk), name),
            None => (headers.partition_key().map(str::to_owned), id),
        },
    )
}

pub async fn create_or_query(
    State(state): State<AppState>,
    PathParams((db, coll)): PathParams<(String, String)>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Reply {
    if super::batch::is_batch(&headers) {
        // A stale container reference is refused here too (400/1024).
        container_context::check(&state, &db, &coll, &headers, false)?;
        return Ok(super::batch::execute(&state, &db, &coll, &headers, &body)?);
    }
    if headers.is_query() {
        let query = PreparedQuery::prepare_at(
            &body.typed::<QueryBody>("query")?,
            state.store.clock.now_millis(),
        )?;
        if headers.flag("x-ms-cosmos-is-query-plan-request") {
            // The container must exist for its plan, as for its query; a
            // vector search's order is its embedding policy's.
            let policies = state
                .store
                .with_container(&db, &coll, |c, _| Ok(search_policies(c)))?;
            query.check_supported_features(headers.text("x-ms-cosmos-supported-query-features"))?;
            let plan = query.plan_for(
                headers.text("x-ms-cosmos-supported-query-features"),
                &policies,
            )?;
            return Ok(resource(StatusCode::OK, &plan, READ_CHARGE));
        }
        // Neither a partition key nor a range: every partition at once.
        if headers.partition_key().is_none()
            && headers
                .text("x-ms-documentdb-partitionkeyrangeid")
                .is_none()
            && headers.text("x-ms-start-epk").is_none()
        {
            if headers.flag("x-ms-documentdb-query-enablecrosspartition") {
                // Declared across partitions: the gateway answers it only
                // if no merging is needed (the SDKs then plan it).
                query.check_servable_across_partitions()?;
            } else {
                // Undeclared: only a filter that pins the whole key, which
                // the gateway routes to its one partition, may run.
                state.store.with_container(&db, &coll, |c, _| {
                    if query.pins_partition_key(c.partition_key().paths()) {
                        Ok(())
                    } else {
                        check_cross_partition_enabled(c.partition_key())
                    }
                })?;
            }
        }
        let mut context = container_context::check(&state, &db, &coll, &headers, true)?;
        // The query as sent keys its whole result between pages, unless it
        // reads the clock (GetCurrentDateTime...), which moves every page.
        let source = query
            .needs_whole_result()
            .then(|| std::str::from_utf8(&body.0).ok())
            .flatten()
            .filter(|text| !text.to_ascii_lowercase().contains("getcurrent"));
        let mut response =
            run_query(&state, &db, &coll, &headers, &query, source, QUERY_CHARGE).await?;
        context.range = addressed_range(&headers).unwrap_or(context.range);
        decorate(&mut response, &context, context.lsn, None, &uri);
        return Ok(response);
    }
    if script_runs::has_triggers(&headers) {
        let kind = match headers.is_upsert() {
            true => WriteKind::Upsert,
            false => WriteKind::Create,
        };
        let pk = headers.partition_key().map(str::to_owned);
        let body = Some(body.object()?);
        return script_runs::write(&state, &db, &coll, kind, None, pk, body, &headers, &uri).await;
    }
    let mut context = container_context::check(&state, &db, &coll, &headers, false)?;
    let mode = if headers.is_upsert() {
        WriteMode::Upsert
    } else {
        WriteMode::Create
    };
    let write = ItemWrite {
        mode,
        url_id: None,
        partition_key_header: headers.partition_key(),
        if_match: headers.if_match(),
        body: body.object()?,
    };
    let (status, stored, range) = state.store.write_item(&db, &coll, write)?;
    context.range = range;
    let mut response = item_written(status, &stored, WRITE_CHARGE, headers.return_minimal());
    decorate(&mut response, &context, stored.lsn, Some(stored.lsn), &uri);
    Ok(response)
}

/// `GET .../docs`: every live item, paged, as `SELECT * FROM c` would give.
pub async fn read_feed(
    State(state): State<AppState>,
    PathParams((db, coll)): PathParams<(String, String)>,
    uri: Uri,
    headers: HeaderMap,
) -> Reply {
    // A change feed read is a read too: the stale-container and session
    // checks, and the headers naming its container, as for any feed.
    let mut context = container_context::check(&state, &db, &coll, &headers, true)?;
    context.range = addressed_range(&headers).unwrap_or(context.range);
    if super::change_feed::is_change_feed(&headers) {
        let mut response = super::change_feed::read(&state, &db, &coll, &headers)?;
        decorate(&mut response, &context, context.lsn, None, &uri);
        return Ok(response);
    }
    // Prepared once: SDKs read feeds (and poll them) often.
    static ALL: LazyLock<PreparedQuery> = LazyLock::new(|| {
        PreparedQuery::prepare(&QueryBody {
            query: "SELECT * FROM c".into(),
            parameters: Vec::new(),
        })
        .expect("a valid query")
    });
    let mut response = run_query(&state, &db, &coll, &headers, &ALL, None, READ_CHARGE).await?;
    decorate(&mut response, &context, context.lsn, None, &uri);
    Ok(response)
}

/// The id of the range a feed request names; it answered, so the range exists.
fn addressed_range(headers: &HeaderMap) -> Option<u32> {
    crate::store::parse_range_id(headers.text("x-ms-documentdb-partitionkeyrangeid")?)
}

/// One page of `query`. `source` (the query as sent), given only for a
/// query that [`PreparedQuery::needs_whole_result`], keeps that result for
/// its next pages (`query/results.rs`). A query that calls user-defined
/// functions runs outside the store's lock (`udf_query.rs`).
async fn run_query(
    state: &AppState,
    db: &str,
    coll: &str,
    headers: &HeaderMap,
    query: &PreparedQuery,
    source: Option<&str>,
    charge: &'static str,
) -> ApiResult<Response> {
    let started = metrics::wanted(headers).then(std::time::Instant::now);
    let limit = PageLimit::from_header(headers.max_item_count())?;
    let continuation = headers
        .continuation()
        .map(Continuation::parse)
        .transpose()?
        .flatten();
    let request = PageRequest {
        headers,
        source,
        continuation: continuation.as_ref(),
        limit,
    };
    let (rid, page, key_index, retrieved) = match udfs_called(state, db, coll, query)? {
        Some(udfs) => super::udf_query::page(state, db, coll, query, &request, udfs).await?,
        None => {
            build_indexes(state, db, coll, query)?;
            let ((rid, page, retrieved), key_index) =
                state.store.with_container(db, coll, |c, now| {
                    scoped_items(c, now, query, &request, None, |scoped| {
                        let (continuation, limit) = (request.continuation, request.limit);
                        let items = scoped.items.map(|(key, body)| (key.pk(), key.id(), body));
                        let setting = Setting {
                            policies: scoped.policies,
                            udfs: None,
                        };
                        let (mut page, retrieved) = page_of(
                            state,
                            scoped.query,
                            setting,
                            (items, Some(scoped.view)),
                            scoped.cache_key,
                            continuation,
                            limit,
                        )?;
                        if let Some(step) = &scoped.walk {
                            page.continuation = range_walk::next(c, step, page.continuation.take());
                        }
                        Ok((c.rid.clone(), page, retrieved))
                    })
                })?;
            (rid, page, key_index, retrieved)
        }
    };
    let token = page.continuation.map(|c| c.to_token());
    let mut response = feed(&rid, "Documents", &page.documents, token, charge);
    if let Some(started) = started {
        let used = metrics::Used {
            documents: &page.documents,
            retrieved,
            key_index: key_index.as_deref(),
        };
        metrics::add(response.headers_mut(), headers, &used, started);
    }
    Ok(response)
}

/// What a request asks of a page of its query.
pub(super) struct PageRequest<'r> {
    pub headers: &'r HeaderMap,
    pub source: Option<&'r str>,
    pub continuation: Option<&'r Continuation>,
    pub limit: PageLimit,
}

/// A query's live items in the request's scope, chosen under the lock.
pub(super) struct Scoped<'c, 'i> {
    /// The query with the container's computed properties resolved.
    pub query: &'c PreparedQuery,
    pub items: &'i mut dyn Iterator<Item = (&'c ItemKey, &'c Bytes)>,
    /// The container as the scope sees it, for a query that its index or
    /// a vector column can answer without the scan.
    pub view: &'i mut dyn ContainerView<'c>,
    /// When the query walks the ranges: where this page is.
    pub walk: Option<range_walk::Step>,
    /// The key of its whole result between pages, for a query as sent.
    pub cache_key: Option<String>,
    /// The container's policies that search functions read.
    pub policies: Arc<search::Policies>,
}

/// Checks the query against the container, then runs `run` over the live
/// items the request scopes (its partition, range or page), returning the
/// partition key index used, if any (for the index metrics).
pub(super) fn scoped_items<T>(
    c: &Container,
    now: i64,
    query: &PreparedQuery,
    request: &PageRequest<'_>,
    udf_versions: Option<&[String]>,
    run: impl FnOnce(Scoped<'_, '_>) -> ApiResult<T>,
) -> ApiResult<(T, Option<String>)> {
    let headers = request.headers;
    query.check_order_by_index(&c.settings.indexing_policy)?;
    let resolved =
        query.resolve_computed(&c.settings.computed_properties, &c.settings.indexing_policy)?;
    let query = resolved.as_ref().unwrap_or(query);
    let FeedScope { key, mut epk } = FeedScope::from_headers(c, headers)?;
    // A query in one logical partition finds it by the key's order.
    let key_index = key.as_ref().and_then(|_| c.partition_key().index_spec());
    let walk = range_walk::step(
        c,
        headers,
        !query.needs_whole_result(),
        request.continuation,
    );
    let after = match (&walk, request.continuation) {
        (Some(step), _) => step.after.clone(),
        (None, Some(Continuation::After { pk, id })) => Some(ItemKey::new(pk, id)),
        _ => None,
    };
    if let Some(step) = &walk {
        epk.narrow_to((&step.min, &step.max));
    }
    let mut scope = FeedScope {
        key: key.clone(),
        epk: epk.clone(),
    };
    let mut view = ScopedView {
        c,
        in_scope: move |pk: &str| scope.contains(pk),
        after: after.clone(),
        now,
    };
    let mut items = c
        .live_items(key.as_ref(), after.as_ref(), now)
        .filter(move |(key, _)| epk.contains(key.pk()))
        .map(|(key, item)| (key, &item.body));
    // Everything the result depends on: a write, a settings change, a
    // second of the clock or a UDF's new version makes another key.
    let cache_key = request.source.map(|source| {
        format!(
            "{}\n{}\n{}\n{now}\n{:?}\n{:?}\n{:?}\n{:?}\n{udf_versions:?}\n{source}",
            c.rid,
            c.etag,
            c.log().last_lsn(),
            headers.partition_key(),
            headers.text("x-ms-documentdb-partitionkeyrangeid"),
            headers.text("x-ms-start-epk"),
            headers.text("x-ms-end-epk"),
        )
    });
    let result = run(Scoped {
        query,
        items: &mut items,
        view: &mut view,
        walk,
        cache_key,
        policies: Arc::new(search_policies(c)),
    })?;
    Ok((result, key_index))
}

/// Builds the indexes the query could read that the container lacks
/// (`store/index`), so that it runs under the read lock with them.
fn build_indexes(state: &AppState, db: &str, coll: &str, query: &PreparedQuery) -> ApiResult<()> {
    // Resolving computed properties turns a path into an expression, never
    // the reverse: a query with no path to look up has none once resolved
    // (the read feed, `SELECT * FROM c`), and needs no look at the container.
    if query.index_paths().is_empty() {
        return Ok(());
    }
    let missing: Vec<IndexPath> = state.store.with_container(db, coll, |c, _| {
        // The query as it runs: computed properties resolved. A query
        // they refuse is refused when it runs, not here.
        let resolved = query
            .resolve_computed(&c.settings.computed_properties, &c.settings.indexing_policy)
            .unwrap_or(None);
        let paths = resolved.as_ref().unwrap_or(query).index_paths();
        Ok(c.missing_indexes(&paths).into_iter().cloned().collect())
    })?;
    state.store.ensure_indexes(db, coll, &missing);
    Ok(())
}

/// The container's policies that search functions read.
pub(super) fn search_policies(c: &Container) -> search::Policies {
    search::Policies {
        vectors: c.settings.vector_embeddings.clone(),
        full_text: c.settings.full_text.clone(),
    }
}

/// One page of `query` over `items`, run in `setting`: from its whole
/// result, kept between pages under `cache_key`, or streamed; and what
/// the run retrieved.
pub(super) fn page_of<'a>(
    state: &AppState,
    query: &PreparedQuery,
    setting: Setting,
    (items, view): (
        impl Iterator<Item = (&'a str, &'a str, &'a Bytes)>,
        Option<&mut dyn ContainerView<'a>>,
    ),
    cache_key: Option<String>,
    continuation: Option<&Continuation>,
    limit: PageLimit,
) -> ApiResult<(Page, Retrieved)> {
    match cache_key {
        Some(key) => {
            let (results, retrieved) = match state.query_results.get(&key) {
                Some(results) => (results, Retrieved::default()),
                None => {
                    let (results, retrieved) = query.run_whole(setting, items, view)?;
                    let results = Arc::new(results);
                    state.query_results.insert(key, results.clone());
                    (results, retrieved)
                }
            };
            Ok((page_of_encoded(&results, continuation, limit), retrieved))
        }
        None => query.run_page(setting, items, view, continuation, limit),
    }
}

/// The bodies of the user-defined functions a query calls, by id, and
/// their versions; `None` when it calls none. Each must exist.
pub(super) type CalledUdfs = (std::collections::HashMap<String, String>, Vec<String>);

fn udfs_called(
    state: &AppState,
    db: &str,
    coll: &str,
    query: &PreparedQuery,
) -> ApiResult<Option<CalledUdfs>> {
    let names = query.udf_names();
    if names.is_empty() {
        return Ok(None);
    }
    let stored = state
        .store
        .scripts(db, coll, ScriptKind::UserDefinedFunction)?;
    let mut bodies = std::collections::HashMap::new();
    let mut versions = Vec::new();
    for name in names {
        let Some(udf) = stored.iter().find(|u| u.id == name) else {
            return Err(missing_udf(&name));
        };
        versions.push(format!("{}:{}", udf.id, udf.etag));
        bodies.insert(name, udf.body.clone());
    }
    Ok(Some((bodies, versions)))
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

/// A point read: the hottest path, so it borrows the request's headers and
/// URI instead of taking copies of them as extractors would.
pub async fn read(
    State(state): State<AppState>,
    PathParams((db, coll, id)): ItemPath,
    request: Request,
) -> Reply {
    let (headers, uri) = (request.headers(), request.uri());
    let (pk, id) = address(&state, &db, &coll, id, headers)?;
    // One hold of the lock for the container's context and the item.
    let (context, found) = state
        .store
        .read_item_in_context(&db, &coll, pk.as_deref(), &id)?;
    container_context::verify(&state, &context, headers, true)?;
    let found = found?;
    let unchanged = headers
        .text(IF_NONE_MATCH)
        .is_some_and(|tag| tag == found.etag.encode(&mut [0; 38]));
    let mut response = if unchanged {
        not_modified()
    } else {
        item(StatusCode::OK, &found, READ_CHARGE)
    };
    decorate(&mut response, &context, context.lsn, Some(found.lsn), uri);
    Ok(response)
}

fn not_modified() -> Response {
    use axum::response::IntoResponse;
    StatusCode::NOT_MODIFIED.into_response()
}

pub async fn replace(
    State(state): State<AppState>,
    PathParams((db, coll, id)): ItemPath,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Reply {
    if script_runs::has_triggers(&headers) {
        let (pk, id) = address(&state, &db, &coll, id, &headers)?;
        let body = Some(body.object()?);
        let kind = WriteKind::Replace;
        return script_runs::write(&state, &db, &coll, kind, Some(id), pk, body, &headers, &uri)
            .await;
    }
    let mut context = container_context::check(&state, &db, &coll, &headers, false)?;
    let (pk, id) = address(&state, &db, &coll, id, &headers)?;
    let write = ItemWrite {
        mode: WriteMode::Replace,
        url_id: Some(&id),
        partition_key_header: pk.as_deref(),
        if_match: headers.if_match(),
        body: body.object()?,
    };
    let (_, stored, range) = state.store.write_item(&db, &coll, write)?;
    context.range = range;
    let mut response = item_written(
        StatusCode::OK,
        &stored,
        WRITE_CHARGE,
        headers.return_minimal(),
    );
    decorate(&mut response, &context, stored.lsn, Some(stored.lsn), &uri);
    Ok(response)
}

pub async fn patch(
    State(state): State<AppState>,
    PathParams((db, coll, id)): ItemPath,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Reply {
    if script_runs::has_triggers(&headers) {
        return Err(ApiError::bad_request(
            "This emulator runs triggers on create, upsert, replace and delete, not on patch: \
             send a replace with the triggers, or patch without them.",
        )
        .into());
    }
    let mut context = container_context::check(&state, &db, &coll, &headers, false)?;
    let edit = body
        .typed::<PatchBody>("patch")?
        .edit(state.store.clock.now_millis())?;
    let (pk, id) = address(&state, &db, &coll, id, &headers)?;
    let target = ItemAddress {
        database: &db,
        container: &coll,
        partition_key: pk.as_deref(),
        id: &id,
        if_match: headers.if_match(),
    };
    let (stored, range) = state.store.edit_item(target, edit)?;
    context.range = range;
    let mut response = item_written(
        StatusCode::OK,
        &stored,
        WRITE_CHARGE,
        headers.return_minimal(),
    );
    decorate(&mut response, &context, stored.lsn, Some(stored.lsn), &uri);
    Ok(response)
}

pub async fn delete(
    State(state): State<AppState>,
    PathParams((db, coll, id)): ItemPath,
    uri: Uri,
    headers: HeaderMap,
) -> Reply {
    if script_runs::has_triggers(&headers) {
        let (pk, id) = address(&state, &db, &coll, id, &headers)?;
        let kind = WriteKind::Delete;
        return script_runs::write(&state, &db, &coll, kind, Some(id), pk, None, &headers, &uri)
            .await;
    }
    let mut context = container_context::check(&state, &db, &coll, &headers, false)?;
    let (pk, id) = address(&state, &db, &coll, id, &headers)?;
    let (lsn, range) = state.store.delete_item(ItemAddress {
        database: &db,
        container: &coll,
        partition_key: pk.as_deref(),
        id: &id,
        if_match: headers.if_match(),
    })?;
    context.range = range;
    let mut response = no_content(WRITE_CHARGE);
    decorate(&mut response, &context, lsn, None, &uri);
    Ok(response)
}

/// `POST .../operations/partitionkeydelete`: deletes every item of the
/// logical partition in the partition key header, or of every partition
/// under a hierarchical key's prefix. The service runs it in the
/// background but hides the items at once; here they are gone at once.
/// Answers 200 with no body, as the service does.
pub async fn delete_partition(
    State(state): State<AppState>,
    PathParams((db, coll)): PathParams<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let deleted = state
        .store
        .delete_partition(&db, &coll, headers.partition_key())?;
    tracing::debug!(db, coll, deleted, "deleted by partition key");
    let mut response = no_content(WRITE_CHARGE);
    *response.status_mut() = StatusCode::OK;
    Ok(response)
}
