//! `/dbs/{db}/colls` and `/dbs/{db}/colls/{coll}`.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;

use super::request::{Body, CosmosHeaders, PathParams};
use super::response::{no_content, resource, value_feed, READ_CHARGE, WRITE_CHARGE};
use super::AppState;
use crate::error::ApiResult;
use crate::query::{PreparedQuery, QueryBody};

pub async fn list(
    State(state): State<AppState>,
    PathParams(db): PathParams<String>,
) -> ApiResult<Response> {
    let rid = state.store.database(&db)?["_rid"]
        .as_str()
        .unwrap_or("")
        .to_string();
    Ok(value_feed(
        &rid,
        "DocumentCollections",
        &state.store.containers(&db)?,
    ))
}

pub async fn create_or_query(
    State(state): State<AppState>,
    PathParams(db): PathParams<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    if headers.is_query() {
        let query = PreparedQuery::prepare_at(
            &body.typed::<QueryBody>("query")?,
            state.store.clock.now_millis(),
        )?;
        let rid = state.store.database(&db)?["_rid"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let results = query.run_values(state.store.containers(&db)?.into_iter())?;
        return Ok(value_feed(&rid, "DocumentCollections", &results));
    }
    let throughput = super::offers::requested_throughput(&headers)?;
    let created = state
        .store
        .create_container(&db, &body.object()?, throughput)?;
    Ok(resource(StatusCode::CREATED, &created, WRITE_CHARGE))
}

pub async fn read(
    State(state): State<AppState>,
    PathParams((db, coll)): PathParams<(String, String)>,
) -> ApiResult<Response> {
    let (container, live_items) = state.store.container(&db, &coll)?;
    let mut response = resource(StatusCode::OK, &container, READ_CHARGE);
    let headers = response.headers_mut();
    headers.insert(
        "x-ms-resource-quota",
        HeaderValue::from_static(
            "documentSize=10240;documentsSize=10485760;documentsCount=-1;collectionSize=10485760;",
        ),
    );
    if let Ok(usage) = HeaderValue::from_str(&format!("documentsCount={live_items};")) {
        headers.insert("x-ms-resource-usage", usage);
    }
    headers.insert(
        "x-ms-alt-content-path",
        HeaderValue::from_str(&format!("dbs/{db}")).unwrap_or(HeaderValue::from_static("")),
    );
    Ok(response)
}

pub async fn replace(
    State(state): State<AppState>,
    PathParams((db, coll)): PathParams<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let replaced =
        state
            .store
            .replace_container(&db, &coll, &body.object()?, headers.if_match())?;
    Ok(resource(StatusCode::OK, &replaced, WRITE_CHARGE))
}

pub async fn delete(
    State(state): State<AppState>,
    PathParams((db, coll)): PathParams<(String, String)>,
) -> ApiResult<Response> {
    state.store.delete_container(&db, &coll)?;
    Ok(no_content(WRITE_CHARGE))
}
