//! `POST .../sprocs/{id}` on the wire: a stored procedure's execution
//! (`operations/stored_procedures.rs`). (An item write that names triggers
//! is an item operation: `operations/items.rs`.)

use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;

use super::request::{Body, PathParams};
use super::response::from_operation;
use super::AppState;
use crate::operations::{stored_procedures, ItemPath};

pub async fn execute(
    State(state): State<AppState>,
    PathParams((db, coll, id)): PathParams<(String, String, String)>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let serving = state.serving();
    let sproc = ItemPath {
        database: &db,
        container: &coll,
        id: &id,
    };
    let answer = stored_procedures::execute(&serving, sproc, &headers, &body.0).await;
    from_operation(answer, &uri)
}
