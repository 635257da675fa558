//! `/dbs/{db}/colls/{coll}/docs` and `.../docs/{id}`: item CRUD, patch,
//! read feed and queries. TTL is the store's business: expired items are
//! absent here on every path (R5).

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::request::{Body, CosmosHeaders};
use super::response::{feed, item, no_content, QUERY_CHARGE, READ_CHARGE, WRITE_CHARGE};
use super::AppState;
use crate::error::{ApiError, ApiResult};
use crate::patch::{self, PatchBody};
use crate::query::{Continuation, PageLimit, PreparedQuery, QueryBody};
use crate::store::{ItemKey, ItemWrite, Store, WriteMode};

type ItemPath = Path<(String, String, String)>;

pub async fn create_or_query(
    State(state): State<AppState>,
    Path((db, coll)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    if headers.is_query() {
        if headers.flag("x-ms-cosmos-is-query-plan-request") {
            return Err(ApiError::bad_request(
                "Query plan requests are not supported by this emulator yet.",
            ));
        }
        let query = PreparedQuery::prepare(&body.typed::<QueryBody>("query")?)?;
        return run_query(&state, &db, &coll, &headers, &query, QUERY_CHARGE);
    }
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
    let (status, stored) = state.store.write_item(&db, &coll, write)?;
    Ok(item(status, &stored, WRITE_CHARGE))
}

/// `GET .../docs`: every live item, paged, as `SELECT * FROM c` would give.
pub async fn read_feed(
    State(state): State<AppState>,
    Path((db, coll)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let all = PreparedQuery::prepare(&QueryBody {
        query: "SELECT * FROM c".into(),
        parameters: Vec::new(),
    })?;
    run_query(&state, &db, &coll, &headers, &all, READ_CHARGE)
}

fn run_query(
    state: &AppState,
    db: &str,
    coll: &str,
    headers: &HeaderMap,
    query: &PreparedQuery,
    charge: &'static str,
) -> ApiResult<Response> {
    let limit = PageLimit::from_header(headers.max_item_count())?;
    let continuation = headers
        .continuation()
        .map(Continuation::parse)
        .transpose()?;
    let (rid, page) = state.store.with_container(db, coll, |c, now| {
        let scope = Store::partition_scope(c, headers.partition_key())?;
        let after = match &continuation {
            Some(Continuation::After { pk, id }) => Some(ItemKey::new(pk, id)),
            _ => None,
        };
        let items = c
            .live_items(scope.as_deref(), after.as_ref(), now)
            .map(|(key, item)| (&*key.pk, &*key.id, &item.body));
        Ok((
            c.rid.clone(),
            query.run_page(items, continuation.as_ref(), limit),
        ))
    })?;
    let token = page.continuation.map(|c| c.to_token());
    Ok(feed(&rid, "Documents", &page.documents, token, charge))
}

pub async fn read(
    State(state): State<AppState>,
    Path((db, coll, id)): ItemPath,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let found = state
        .store
        .read_item(&db, &coll, headers.partition_key(), &id)?;
    if headers.text("if-none-match") == Some(&*found.etag) {
        return Ok(no_content_not_modified());
    }
    Ok(item(StatusCode::OK, &found, READ_CHARGE))
}

fn no_content_not_modified() -> Response {
    use axum::response::IntoResponse;
    StatusCode::NOT_MODIFIED.into_response()
}

pub async fn replace(
    State(state): State<AppState>,
    Path((db, coll, id)): ItemPath,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let write = ItemWrite {
        mode: WriteMode::Replace,
        url_id: Some(&id),
        partition_key_header: headers.partition_key(),
        if_match: headers.if_match(),
        body: body.object()?,
    };
    let (_, stored) = state.store.write_item(&db, &coll, write)?;
    Ok(item(StatusCode::OK, &stored, WRITE_CHARGE))
}

pub async fn patch(
    State(state): State<AppState>,
    Path((db, coll, id)): ItemPath,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let request: PatchBody = body.typed("patch")?;
    request.validate()?;
    let condition = request
        .condition
        .as_deref()
        .map(|c| {
            PreparedQuery::prepare(&QueryBody {
                query: format!("SELECT * {c}"),
                parameters: Vec::new(),
            })
        })
        .transpose()?;
    let stored = state.store.edit_item(
        &db,
        &coll,
        headers.partition_key(),
        &id,
        headers.if_match(),
        |doc| {
            if let Some(condition) = &condition {
                let current = serde_json::Value::Object(doc.clone());
                if condition.run_values(std::iter::once(current)).is_empty() {
                    return Err(ApiError::precondition_failed());
                }
            }
            patch::apply(doc, &request.operations)
        },
    )?;
    Ok(item(StatusCode::OK, &stored, WRITE_CHARGE))
}

pub async fn delete(
    State(state): State<AppState>,
    Path((db, coll, id)): ItemPath,
    headers: HeaderMap,
) -> ApiResult<Response> {
    state
        .store
        .delete_item(&db, &coll, headers.partition_key(), &id, headers.if_match())?;
    Ok(no_content(WRITE_CHARGE))
}
