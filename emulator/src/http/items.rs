//! `/dbs/{db}/colls/{coll}/docs` and `.../docs/{id}`: item CRUD, patch,
//! the read feed; a POST that is a batch, a query or a write with triggers
//! goes on to `batch.rs`, `query.rs` or `script_runs.rs`. TTL is the
//! store's business: expired items are absent here on every path (R5).

use std::sync::LazyLock;

use axum::extract::{Request, State};
use axum::http::header::IF_NONE_MATCH;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;

use super::container_context::{self, decorate, Refusal};
use super::request::{Body, CosmosHeaders, PathParams};
use super::response::{item, item_written, no_content, METADATA_WRITE};
use super::script_runs;
use super::AppState;
use crate::error::{ApiError, ApiResult};
use crate::patch::PatchBody;
use crate::query::{PreparedQuery, QueryBody};
use crate::request_units::{self, Charge, WriteKind as Priced};
use crate::script::WriteKind;
use crate::store::{ItemAddress, ItemWrite, WriteMode};

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
        return super::query::query(&state, (&db, &coll), &uri, &headers, &body).await;
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
    let body = body.object()?;
    let terms = indexed_terms(&context, &body);
    let write = ItemWrite {
        mode,
        url_id: None,
        partition_key_header: headers.partition_key(),
        if_match: headers.if_match(),
        body,
    };
    let (status, stored, range) = state.store.write_item(&db, &coll, write)?;
    context.range = range;
    let kind = match status {
        StatusCode::CREATED => Priced::Insert,
        _ => Priced::Replace,
    };
    let charge = state.charges.write(kind, stored.body.len(), terms);
    let mut response = item_written(status, &stored, charge, headers.return_minimal());
    decorate_write(&mut response, &context, &stored, &uri);
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
    let context = container_context::check(&state, &db, &coll, &headers, true)?;
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
    let mut response = super::query::page(
        &state,
        (&db, &coll),
        &headers,
        &ALL,
        None,
        super::query::Priced::ReadFeed,
    )
    .await?;
    decorate(&mut response, &context, context.lsn, None, &uri);
    Ok(response)
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
        let charge = state
            .charges
            .read(found.body.len(), state.reads_quorum(headers));
        item(StatusCode::OK, &found, charge)
    };
    decorate(
        &mut response,
        &context,
        context.lsn,
        Some(found.range_lsn),
        uri,
    );
    Ok(response)
}

/// The values a write of `body` indexes: none when the container's
/// indexing is off.
fn indexed_terms(
    context: &crate::store::ContainerContext,
    body: &serde_json::Map<String, serde_json::Value>,
) -> usize {
    match context.indexes_writes {
        true => request_units::indexed_terms(body),
        false => 0,
    }
}

/// A patch costs what a replace with its result costs.
fn patched_charge(
    state: &AppState,
    context: &crate::store::ContainerContext,
    stored: &crate::store::Item,
) -> Charge {
    let terms = match context.indexes_writes {
        true => serde_json::from_slice(&stored.body)
            .map_or(0, |body| request_units::indexed_terms(&body)),
        false => 0,
    };
    state
        .charges
        .write(Priced::Replace, stored.body.len(), terms)
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
    let body = body.object()?;
    let terms = indexed_terms(&context, &body);
    let write = ItemWrite {
        mode: WriteMode::Replace,
        url_id: Some(&id),
        partition_key_header: pk.as_deref(),
        if_match: headers.if_match(),
        body,
    };
    let (_, stored, range) = state.store.write_item(&db, &coll, write)?;
    context.range = range;
    let charge = state
        .charges
        .write(Priced::Replace, stored.body.len(), terms);
    let mut response = item_written(StatusCode::OK, &stored, charge, headers.return_minimal());
    decorate_write(&mut response, &context, &stored, &uri);
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
    let patch = body.typed::<PatchBody>("patch")?;
    let edit = patch.edit(state.store.clock.now_millis(), || {
        state.store.search_policies(&db, &coll)
    })?;
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
    let charge = patched_charge(&state, &context, &stored);
    let mut response = item_written(StatusCode::OK, &stored, charge, headers.return_minimal());
    decorate_write(&mut response, &context, &stored, &uri);
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
    let deleted = state.store.delete_item(ItemAddress {
        database: &db,
        container: &coll,
        partition_key: pk.as_deref(),
        id: &id,
        if_match: headers.if_match(),
    })?;
    context.range = deleted.range;
    let charge = state.charges.write(Priced::Delete, deleted.bytes, 0);
    let mut response = no_content(charge);
    decorate(&mut response, &context, deleted.lsn, None, &uri);
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
    // The service runs it in the background and charges the request alone.
    let mut response = no_content(METADATA_WRITE);
    *response.status_mut() = StatusCode::OK;
    Ok(response)
}

/// The headers of a write's answer: the LSN its item's range reached is
/// both the response's and the item's.
fn decorate_write(
    response: &mut Response,
    context: &crate::store::ContainerContext,
    stored: &crate::store::Item,
    uri: &Uri,
) {
    decorate(
        response,
        context,
        stored.range_lsn,
        Some(stored.range_lsn),
        uri,
    );
}
