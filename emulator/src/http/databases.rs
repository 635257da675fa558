//! `/dbs` and `/dbs/{db}` on the wire: the database operations
//! (`operations/databases.rs`); a POST is a query or a create.

use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;

use super::request::{Body, CosmosHeaders, PathParams};
use super::response::from_operation;
use super::AppState;
use crate::operations::{databases, DatabasePath};

pub async fn list(State(state): State<AppState>, uri: Uri) -> Response {
    from_operation(databases::list(&state.serving()), &uri)
}

pub async fn create_or_query(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let serving = state.serving();
    let answer = match headers.is_query() {
        true => databases::query(&serving, &body.0),
        false => databases::create(&serving, &headers, &body.0),
    };
    from_operation(answer, &uri)
}

pub async fn read(
    State(state): State<AppState>,
    PathParams(db): PathParams<String>,
    uri: Uri,
) -> Response {
    let database = DatabasePath { database: &db };
    from_operation(databases::read(&state.serving(), database), &uri)
}

pub async fn delete(
    State(state): State<AppState>,
    PathParams(db): PathParams<String>,
    uri: Uri,
) -> Response {
    let database = DatabasePath { database: &db };
    from_operation(databases::delete(&state.serving(), database), &uri)
}
