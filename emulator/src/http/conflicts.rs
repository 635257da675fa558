//! `/dbs/{db}/colls/{coll}/conflicts[/{id}]` on the wire: the conflicts
//! feed (`operations/conflicts.rs`); a POST is only a query.

use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;

use super::request::{Body, CosmosHeaders, PathParams};
use super::response::from_operation;
use super::AppState;
use crate::operations::{conflicts, ConflictPath, ContainerPath};

pub async fn read_feed(
    State(state): State<AppState>,
    PathParams((db, coll)): PathParams<(String, String)>,
    uri: Uri,
) -> Response {
    let container = ContainerPath {
        database: &db,
        container: &coll,
    };
    from_operation(conflicts::list(&state.serving(), container), &uri)
}

pub async fn query(
    State(state): State<AppState>,
    PathParams((db, coll)): PathParams<(String, String)>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let serving = state.serving();
    let container = ContainerPath {
        database: &db,
        container: &coll,
    };
    let answer = match headers.is_query() {
        true => conflicts::query(&serving, container, &headers, &body.0),
        false => conflicts::create(&serving, container),
    };
    from_operation(answer, &uri)
}

/// One conflict (GET or DELETE).
pub async fn read(
    State(state): State<AppState>,
    PathParams((db, coll, id)): PathParams<(String, String, String)>,
    uri: Uri,
) -> Response {
    let conflict = ConflictPath {
        database: &db,
        container: &coll,
        id: &id,
    };
    from_operation(conflicts::read(&state.serving(), conflict), &uri)
}
