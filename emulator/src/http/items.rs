//! `/dbs/{db}/colls/{coll}/docs` and `.../docs/{id}` on the wire: each
//! item operation (`operations/items.rs`) read from the request and
//! answered; a POST that is a batch or a query goes on to `batch.rs` or
//! `query.rs`; `GET .../docs` is the read feed or the change feed.

use std::sync::LazyLock;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Uri};
use axum::response::Response;

use super::container_context::{self, decorate, Refusal};
use super::request::{Body, CosmosHeaders, PathParams};
use super::response::from_operation;
use super::AppState;
use crate::error::ApiResult;
use crate::operations::{items, ContainerPath, ItemPath, Serving};
use crate::query::{PreparedQuery, QueryBody};

type ItemParams = PathParams<(String, String, String)>;

/// A response, or a refusal (which may carry headers of its own).
type Reply = Result<Response, Refusal>;

fn serving(state: &AppState) -> Serving<'_> {
    Serving::new(&state.account, state.region_index)
}

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
) -> Reply {
    if super::batch::is_batch(&headers) {
        // A stale container reference is refused here too (400/1024).
        container_context::check(&state, &db, &coll, &headers, false)?;
        return Ok(super::batch::execute(&state, &db, &coll, &headers, &body)?);
    }
    if headers.is_query() {
        return super::query::query(&state, (&db, &coll), &uri, &headers, &body).await;
    }
    let container = ContainerPath {
        database: &db,
        container: &coll,
    };
    let answer = items::create(&serving(&state), container, &headers, &body.0).await;
    Ok(from_operation(answer, &uri))
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
    PathParams((db, coll, id)): ItemParams,
    request: Request,
) -> Response {
    let answer = items::read(&serving(&state), item(&db, &coll, &id), request.headers());
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
    let answer = items::replace(&serving(&state), item, &headers, &body.0).await;
    from_operation(answer, &uri)
}

pub async fn patch(
    State(state): State<AppState>,
    PathParams((db, coll, id)): ItemParams,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let answer = items::patch(&serving(&state), item(&db, &coll, &id), &headers, &body.0);
    from_operation(answer, &uri)
}

pub async fn delete(
    State(state): State<AppState>,
    PathParams((db, coll, id)): ItemParams,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let answer = items::delete(&serving(&state), item(&db, &coll, &id), &headers).await;
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
    let answer = items::delete_partition(&serving(&state), container, &headers);
    Ok(from_operation(answer, &uri))
}
