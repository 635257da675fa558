//! `/offers` and `/offers/{rid}` on the wire: the offer operations
//! (`operations/offers.rs`). Signed with resource type `offers` and, for one
//! offer, its RID in lower case (`auth.rs`).

use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;

use super::request::{Body, CosmosHeaders, PathParams};
use super::response::from_operation;
use super::AppState;
use crate::operations::offers;

pub async fn list(State(state): State<AppState>, uri: Uri) -> Response {
    from_operation(offers::list(&state.serving()), &uri)
}

/// `POST /offers`: only a query.
pub async fn query(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let answer = match headers.is_query() {
        true => offers::query(&state.serving(), &body.0),
        false => offers::create(),
    };
    from_operation(answer, &uri)
}

pub async fn read(
    State(state): State<AppState>,
    PathParams(rid): PathParams<String>,
    uri: Uri,
) -> Response {
    from_operation(offers::read(&state.serving(), &rid), &uri)
}

/// A path under `/offers/{rid}/`: not an offer's link.
pub async fn malformed(uri: Uri) -> Response {
    from_operation(offers::malformed(uri.path()), &uri)
}

pub async fn replace(
    State(state): State<AppState>,
    PathParams(rid): PathParams<String>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let answer = offers::replace(&state.serving(), &rid, &headers, &body.0);
    from_operation(answer, &uri)
}
