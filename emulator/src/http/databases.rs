//! `/dbs` and `/dbs/{db}`.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::request::{Body, CosmosHeaders, PathParams};
use super::response::{
    no_content, resource, value_feed, value_query, METADATA_READ, METADATA_WRITE,
};
use super::AppState;
use crate::error::ApiResult;

pub async fn list(State(state): State<AppState>) -> Response {
    value_feed("", "Databases", &state.account.store.databases())
}

pub async fn create_or_query(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    if headers.is_query() {
        let now = state.account.store.clock.now_millis();
        return value_query(&body, now, "", "Databases", state.account.store.databases());
    }
    let throughput = super::offers::requested_throughput(&headers)?;
    let created = state
        .account
        .store
        .create_database(&body.object()?, throughput)?;
    Ok(resource(StatusCode::CREATED, &created, METADATA_WRITE))
}

pub async fn read(
    State(state): State<AppState>,
    PathParams(db): PathParams<String>,
) -> ApiResult<Response> {
    Ok(resource(
        StatusCode::OK,
        &state.account.store.database(&db)?,
        METADATA_READ,
    ))
}

pub async fn delete(
    State(state): State<AppState>,
    PathParams(db): PathParams<String>,
) -> ApiResult<Response> {
    state.account.store.delete_database(&db)?;
    Ok(no_content(METADATA_WRITE))
}
