//! `/dbs/{db}/colls` and `/dbs/{db}/colls/{coll}` on the wire: the
//! container operations (`operations/containers.rs`); a POST is a query or
//! a create.

use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;

use super::request::{Body, CosmosHeaders, PathParams};
use super::response::from_operation;
use super::AppState;
use crate::operations::{containers, ContainerPath, DatabasePath};

type ContainerParams = PathParams<(String, String)>;

fn container<'a>(db: &'a str, coll: &'a str) -> ContainerPath<'a> {
    ContainerPath {
        database: db,
        container: coll,
    }
}

pub async fn list(
    State(state): State<AppState>,
    PathParams(db): PathParams<String>,
    uri: Uri,
) -> Response {
    let database = DatabasePath { database: &db };
    from_operation(containers::list(&state.serving(), database), &uri)
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
        true => containers::query(&serving, database, &body.0),
        false => containers::create(&serving, database, &headers, &body.0),
    };
    from_operation(answer, &uri)
}

pub async fn read(
    State(state): State<AppState>,
    PathParams((db, coll)): ContainerParams,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let answer = containers::read(&state.serving(), container(&db, &coll), &headers);
    from_operation(answer, &uri)
}

pub async fn replace(
    State(state): State<AppState>,
    PathParams((db, coll)): ContainerParams,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let container = container(&db, &coll);
    let answer = containers::replace(&state.serving(), container, &headers, &body.0);
    from_operation(answer, &uri)
}

pub async fn delete(
    State(state): State<AppState>,
    PathParams((db, coll)): ContainerParams,
    uri: Uri,
) -> Response {
    let answer = containers::delete(&state.serving(), container(&db, &coll));
    from_operation(answer, &uri)
}
