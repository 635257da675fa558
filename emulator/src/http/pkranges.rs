//! `GET .../pkranges`: the container's physical partition key ranges (one
//! `["", "FF")` by default, several for a container with more throughput;
//! see `store/ranges.rs`), served as the incremental feed the SDKs poll
//! until they get a literal 304 (PROTOCOL.md, "the trap").

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
    let link = container["_self"].as_str().unwrap_or_default().to_string();
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
    let ranges = state
        .store
        .with_container(&db, &coll, |c, _| Ok(c.ranges().clone()))?;
    let count = ranges.count();
    // Each range's share of the container's throughput (`1` for the one range).
    let fraction = if count == 1 {
        json!(1)
    } else {
        json!(1.0 / count as f64)
    };
    let documents: Vec<Bytes> = (0..count)
        .map(|index| {
            let (min, max) = ranges.bounds(index);
            let range_rid = crate::rid::partition_key_range(&rid, index as u32);
            let range = json!({
                "_rid": range_rid,
                "id": index.to_string(),
                "_etag": etag,
                "minInclusive": min,
                "maxExclusive": max,
                "ridPrefix": index,
                "_self": format!("{link}pkranges/{range_rid}/"),
                "throughputFraction": fraction,
                "status": "online",
                "parents": [],
                "_ts": ts,
                "_lsn": 1,
            });
            Bytes::from(range.to_string())
        })
        .collect();
    let mut response = feed(&rid, "PartitionKeyRanges", &documents, None, READ_CHARGE);
    response
        .headers_mut()
        .insert(header::ETAG, HeaderValue::from_str(&etag).expect("ascii"));
    Ok(response)
}
