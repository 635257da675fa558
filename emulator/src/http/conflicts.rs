//! `/dbs/{db}/colls/{coll}/conflicts`: the conflicts feed. A single-region
//! emulator never has write conflicts, so the feed, and any query on it, is
//! empty; it is served so that the SDKs' conflict APIs work as against a
//! single-write-region account.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;

use super::request::{Body, CosmosHeaders, PathParams};
use super::response::value_feed;
use super::AppState;
use crate::error::{ApiError, ApiResult};
use crate::query::{PreparedQuery, QueryBody};

/// The container's RID, once it is known to exist.
fn container_rid(state: &AppState, db: &str, coll: &str) -> ApiResult<String> {
    let (container, _) = state.account.store.container(db, coll)?;
    Ok(container["_rid"].as_str().unwrap_or("").to_string())
}

pub async fn read_feed(
    State(state): State<AppState>,
    PathParams((db, coll)): PathParams<(String, String)>,
) -> ApiResult<Response> {
    let rid = container_rid(&state, &db, &coll)?;
    Ok(value_feed(&rid, "Conflicts", &[]))
}

pub async fn query(
    State(state): State<AppState>,
    PathParams((db, coll)): PathParams<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let rid = container_rid(&state, &db, &coll)?;
    if !headers.is_query() {
        return Err(ApiError::bad_request(
            "Conflicts are recorded by the service, not created: POST to the conflicts feed only \
             queries it, with x-ms-documentdb-isquery: true.",
        ));
    }
    // Validated as any query, then run over no conflicts.
    let query = PreparedQuery::prepare_at(
        &body.typed::<QueryBody>("query")?,
        state.account.store.clock.now_millis(),
    )?;
    // Across partitions only when the client says so, as for items.
    if headers.partition_key().is_none()
        && headers
            .text("x-ms-documentdb-partitionkeyrangeid")
            .is_none()
        && !headers.flag("x-ms-documentdb-query-enablecrosspartition")
    {
        state.account.store.with_container(&db, &coll, |c, _| {
            crate::store::check_cross_partition_enabled(c.partition_key())
        })?;
    }
    let results = query.run_values(std::iter::empty())?;
    Ok(value_feed(&rid, "Conflicts", &results))
}

/// One conflict: there are none.
pub async fn read(
    State(state): State<AppState>,
    PathParams((db, coll, id)): PathParams<(String, String, String)>,
) -> ApiResult<Response> {
    container_rid(&state, &db, &coll)?;
    Err(ApiError::not_found().with_message(format!(
        "Resource Not Found: the conflict '{id}' does not exist; this emulator has one write region \
         and never records conflicts."
    )))
}
