//! `/dbs/{db}/colls/{coll}/docs` and `.../docs/{id}` on the wire: each
//! item operation (`operations/items.rs`) read from the request and
//! answered. A POST is a batch (`x-ms-cosmos-is-batch-request: true`:
//! `operations/batch.rs`), a query (`query.rs`) or an item create; a
//! `GET .../docs` is the change feed when it carries `A-IM`
//! (`operations/change_feed.rs`), the read feed otherwise
//! (`operations/query.rs`).

use axum::extract::{Request, State};
use axum::http::header::CONTENT_LOCATION;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;

use super::names;
use super::request::{Body, CosmosHeaders, PathParams};
use super::response::from_operation;
use super::AppState;
use crate::operations::{batch, change_feed, items, query, ContainerPath, ItemPath};
use crate::protocol::error::ApiResult;

type ItemParams = PathParams<(String, String, String)>;

fn item<'a>(db: &'a str, coll: &'a str, id: &'a str) -> ItemPath<'a> {
    ItemPath {
        database: db,
        container: coll,
        id,
    }
}

/// `POST .../docs`: a batch, a query, or an item create (or upsert).
pub async fn create_or_query(
    State(state): State<AppState>,
    PathParams((db, coll)): PathParams<(String, String)>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let container = ContainerPath {
        database: &db,
        container: &coll,
    };
    if headers.flag("x-ms-cosmos-is-batch-request") {
        let answer = batch::execute(&state.serving(), container, &headers, &body.0);
        let mut response = from_operation(answer, &uri);
        // A batch's answer names its container and LSN without the
        // request's path.
        response.headers_mut().remove(CONTENT_LOCATION);
        return response;
    }
    if headers.is_query() {
        return super::query::query(&state, (&db, &coll), &uri, &headers, &body).await;
    }
    let answer = items::create(&state.serving(), container, &headers, &body.0).await;
    from_operation(answer, &uri)
}

/// `GET .../docs`: the change feed (with `A-IM`), or every live item,
/// paged, as `SELECT * FROM c` would give.
pub async fn read_feed(
    State(state): State<AppState>,
    PathParams((db, coll)): PathParams<(String, String)>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let container = ContainerPath {
        database: &db,
        container: &coll,
    };
    let answer = if headers.text(names::A_IM).is_some() {
        change_feed::read(&state.serving(), container, &headers)
    } else {
        query::read_feed(&state.serving(), container, &headers).await
    };
    from_operation(answer, &uri)
}

/// A point read: the hottest path, so it borrows the request's headers and
/// URI instead of taking copies of them as extractors would.
pub async fn read(
    State(state): State<AppState>,
    PathParams((db, coll, id)): ItemParams,
    request: Request,
) -> Response {
    let answer = items::read(&state.serving(), item(&db, &coll, &id), request.headers());
    from_operation(answer, request.uri())
}

pub async fn replace(
    State(state): State<AppState>,
    PathParams((db, coll, id)): ItemParams,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let item = item(&db, &coll, &id);
    let answer = items::replace(&state.serving(), item, &headers, &body.0).await;
    from_operation(answer, &uri)
}

pub async fn patch(
    State(state): State<AppState>,
    PathParams((db, coll, id)): ItemParams,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let answer = items::patch(&state.serving(), item(&db, &coll, &id), &headers, &body.0);
    from_operation(answer, &uri)
}

pub async fn delete(
    State(state): State<AppState>,
    PathParams((db, coll, id)): ItemParams,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let answer = items::delete(&state.serving(), item(&db, &coll, &id), &headers).await;
    from_operation(answer, &uri)
}

/// `POST .../operations/partitionkeydelete`.
pub async fn delete_partition(
    State(state): State<AppState>,
    PathParams((db, coll)): PathParams<(String, String)>,
    uri: Uri,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let container = ContainerPath {
        database: &db,
        container: &coll,
    };
    let answer = items::delete_partition(&state.serving(), container, &headers);
    Ok(from_operation(answer, &uri))
}
