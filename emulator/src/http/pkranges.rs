//! `GET .../pkranges`: one range covering all keys, served as the incremental
//! feed the SDKs poll until they get a literal 304 (PROTOCOL.md, "the trap").

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::json;

use super::request::{CosmosHeaders, PathParams};
use super::response::{feed, READ_CHARGE};
use super::AppState;
use crate::error::ApiResult;

pub async fn read(
    State(state): State<AppState>,
    PathParams((db, coll)): PathParams<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let (container, _) = state.store.container(&db, &coll)?;
    let rid = container["_rid"].as_str().unwrap_or_default().to_string();
    let ts = container["_ts"].as_i64().unwrap_or_default();
    // The ranges never change, so one etag per container serves forever.
    let etag = format!("\"pkranges-{rid}\"");
    if headers.text("if-none-match") == Some(etag.as_str()) {
        let mut response = StatusCode::NOT_MODIFIED.into_response();
        response
            .headers_mut()
            .insert(header::ETAG, HeaderValue::from_str(&etag).expect("ascii"));
        return Ok(response);
    }
    let range = json!({
        "_rid": format!("{rid}AgAAAAAAAAA="),
        "id": "0",
        "_etag": etag,
        "minInclusive": "",
        "maxExclusive": "FF",
        "ridPrefix": 0,
        "_self": format!("{}pkranges/{rid}AgAAAAAAAAA=/", container["_self"].as_str().unwrap_or_default()),
        "throughputFraction": 1,
        "status": "online",
        "parents": [],
        "_ts": ts,
        "_lsn": 1,
    });
    let mut response = feed(
        &rid,
        "PartitionKeyRanges",
        &[Bytes::from(range.to_string())],
        None,
        READ_CHARGE,
    );
    response
        .headers_mut()
        .insert(header::ETAG, HeaderValue::from_str(&etag).expect("ascii"));
    Ok(response)
}
