//! `GET .../pkranges` on the wire: a container's partition key ranges
//! (`operations/ranges.rs`).

use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;

use super::request::PathParams;
use super::response::from_operation;
use super::AppState;
use crate::operations::{ranges, ContainerPath};

/// The control API's split answer lists the ranges the same way.
pub use crate::operations::ranges::listing;

pub async fn read(
    State(state): State<AppState>,
    PathParams((db, coll)): PathParams<(String, String)>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let container = ContainerPath {
        database: &db,
        container: &coll,
    };
    from_operation(ranges::read(&state.serving(), container, &headers), &uri)
}
