//! `/dbs/{db}/clientencryptionkeys[/{id}]` on the wire: the client
//! encryption key operations (`operations/keys.rs`); a POST is a query or a
//! create. Master key only, like users. DELETE is 405.

use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;

use super::request::{Body, CosmosHeaders, PathParams};
use super::response::from_operation;
use super::AppState;
use crate::operations::{keys, DatabasePath, KeyPath};

type KeyParams = PathParams<(String, String)>;

pub async fn list(
    State(state): State<AppState>,
    PathParams(db): PathParams<String>,
    uri: Uri,
) -> Response {
    let database = DatabasePath { database: &db };
    from_operation(keys::list(&state.serving(), database), &uri)
}

pub async fn create_or_query(
    State(state): State<AppState>,
    PathParams(db): PathParams<String>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let (serving, database) = (state.serving(), DatabasePath { database: &db });
    let answer = match headers.is_query() {
        true => keys::query(&serving, database, &body.0),
        false => keys::create(&serving, database, &body.0),
    };
    from_operation(answer, &uri)
}

pub async fn read(
    State(state): State<AppState>,
    PathParams((db, id)): KeyParams,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let key = KeyPath {
        database: &db,
        id: &id,
    };
    from_operation(keys::read(&state.serving(), key, &headers), &uri)
}

pub async fn replace(
    State(state): State<AppState>,
    PathParams((db, id)): KeyParams,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let key = KeyPath {
        database: &db,
        id: &id,
    };
    let answer = keys::replace(&state.serving(), key, &headers, &body.0);
    from_operation(answer, &uri)
}

pub async fn delete(uri: Uri) -> Response {
    from_operation(keys::delete(), &uri)
}
