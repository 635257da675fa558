//! `POST .../docs` that is a query (`x-ms-documentdb-isquery: True`, or
//! the query content type) on the wire: the query of a container's items,
//! or its plan (`x-ms-cosmos-is-query-plan-request: True`). The page, its
//! checks, charge and metrics are `operations/query.rs`'s; this reads
//! which of the two the request is and writes the answer.

use axum::http::{HeaderMap, Uri};
use axum::response::Response;

use super::request::{Body, CosmosHeaders};
use super::response::from_operation;
use super::AppState;
use crate::operations::{query, ContainerPath};

/// A query of the container `db`/`coll` (the body), or its plan.
pub(super) async fn query(
    state: &AppState,
    (db, coll): (&str, &str),
    uri: &Uri,
    headers: &HeaderMap,
    body: &Body,
) -> Response {
    let serving = state.serving();
    let container = ContainerPath {
        database: db,
        container: coll,
    };
    let answer = if headers.flag("x-ms-cosmos-is-query-plan-request") {
        query::plan(&serving, container, headers, &body.0)
    } else {
        query::query(&serving, container, headers, &body.0).await
    };
    from_operation(answer, uri)
}
