//! `/dbs/{db}/colls` and `/dbs/{db}/colls/{coll}`.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;

use super::request::{Body, CosmosHeaders, PathParams};
use super::response::{
    no_content, resource, value_feed, value_query, METADATA_READ, METADATA_WRITE,
};
use super::AppState;
use crate::error::ApiResult;

pub async fn list(
    State(state): State<AppState>,
    PathParams(db): PathParams<String>,
) -> ApiResult<Response> {
    let rid = state.account.store.database(&db)?["_rid"]
        .as_str()
        .unwrap_or("")
        .to_string();
    Ok(value_feed(
        &rid,
        "DocumentCollections",
        &state.account.store.containers(&db)?,
    ))
}

pub async fn create_or_query(
    State(state): State<AppState>,
    PathParams(db): PathParams<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    if headers.is_query() {
        let rid = state.account.store.database(&db)?["_rid"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let now = state.account.store.clock.now_millis();
        let containers = state.account.store.containers(&db)?;
        return value_query(&body, now, &rid, "DocumentCollections", containers);
    }
    let throughput = super::offers::requested_throughput(&headers)?;
    let created = state
        .account
        .store
        .create_container(&db, &body.object()?, throughput)?;
    Ok(resource(StatusCode::CREATED, &created, METADATA_WRITE))
}

pub async fn read(
    State(state): State<AppState>,
    PathParams((db, coll)): PathParams<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let (mut container, live_items) = state.account.store.container(&db, &coll)?;
    if headers.flag("x-ms-documentdb-populatepartitionstatistics") {
        container["statistics"] = state.account.store.partition_statistics(&db, &coll)?.into();
    }
    let mut response = resource(StatusCode::OK, &container, METADATA_READ);
    // The service's quota and usage, in its `name=value;` form (sizes in
    // KB). The sizes take a pass over the items: only when asked for
    // (`x-ms-documentdb-populatequotainfo`, Python's `populate_quota_info`,
    // JavaScript's `populateQuotaInfo`); the count is always there.
    let quota = headers.flag("x-ms-documentdb-populatequotainfo");
    let usage = if quota {
        let kb = state.account.store.live_bytes(&db, &coll)?.div_ceil(1024);
        let scripts = super::scripts::usage(state.account.store.script_counts(&db, &coll)?);
        format!(
            "{scripts}documentSize={kb};documentsSize={kb};documentsCount={live_items};\
             collectionSize={kb};"
        )
    } else {
        format!("documentsCount={live_items};")
    };
    let headers = response.headers_mut();
    headers.insert(
        "x-ms-resource-quota",
        HeaderValue::from_static(
            "functions=25;storedProcedures=100;triggers=25;documentSize=10240;\
             documentsSize=10485760;documentsCount=-1;collectionSize=10485760;",
        ),
    );
    if let Ok(usage) = HeaderValue::from_str(&usage) {
        headers.insert("x-ms-resource-usage", usage);
    }
    // A new indexing policy rebuilds the indexes in use in the background
    // (`reindex.rs`): the percentage of items indexed again, 100 when done.
    if quota {
        let progress = state
            .account
            .store
            .index_transformation_progress(&db, &coll)?;
        headers.insert(
            "x-ms-documentdb-collection-index-transformation-progress",
            HeaderValue::from(u16::from(progress)),
        );
    }
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
            .account
            .store
            .replace_container(&db, &coll, &body.object()?, headers.if_match())?;
    Ok(resource(StatusCode::OK, &replaced, METADATA_WRITE))
}

pub async fn delete(
    State(state): State<AppState>,
    PathParams((db, coll)): PathParams<(String, String)>,
) -> ApiResult<Response> {
    state.account.store.delete_container(&db, &coll)?;
    Ok(no_content(METADATA_WRITE))
}
