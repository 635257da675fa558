//! Maintenance: `POST /_emulator/purge`, which returns once every item due
//! at the emulator's time is purged (its TTL delete in the change log), a
//! deterministic wait for tests; `POST /_emulator/split` `{"database",
//! "container", "range"}`, which splits one partition key range in two
//! (`data/store/ranges.rs`), with either clock; `POST /_emulator/compact`, which
//! writes a snapshot of the data directory now (`data/store/durable/mod.rs`);
//! `POST /_emulator/reset` (every database dropped; `{"clock": s}` also
//! sets the test clock), for test isolation.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::{blocking, optional_body};
use crate::http::{pk_range_listing, AppState, Body};
use crate::protocol::error::ApiResult;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Split {
    database: String,
    container: String,
    range: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Reset {
    clock: Option<i64>,
}

/// Purges everything due now, then answers `{"purged": n}`: after it, every
/// expired item's TTL delete is in the change feed.
pub async fn purge(State(state): State<AppState>) -> ApiResult<Response> {
    let store = state.account.store.clone();
    let purged = blocking("The purge failed.", move || {
        let mut total = 0;
        loop {
            let (purged, _) = store.purge_batch(crate::data::purge::BATCH);
            total += purged;
            if purged < crate::data::purge::BATCH {
                return Ok(total);
            }
        }
    })
    .await?;
    Ok(Json(json!({"purged": purged})).into_response())
}

/// Splits a range: 200 `{"PartitionKeyRanges": [left, right]}`, the
/// children as `pkranges` lists them from now on.
pub async fn split(State(state): State<AppState>, body: Body) -> ApiResult<Response> {
    let Split {
        database,
        container,
        range,
    } = body.typed("split")?;
    let children = state
        .account
        .store
        .split_range(&database, &container, &range)?;
    let (resource, _) = state.account.store.container(&database, &container)?;
    let ranges = state
        .account
        .store
        .with_container(&database, &container, |c, _| Ok(c.ranges().clone()))?;
    let listing = pk_range_listing(&resource, &ranges);
    let children: Vec<_> = listing
        .documents
        .into_iter()
        .filter(|d| {
            let id = d["id"].as_str().and_then(|id| id.parse::<u32>().ok());
            children.iter().any(|c| Some(c.id) == id)
        })
        .collect();
    Ok(Json(json!({"PartitionKeyRanges": children})).into_response())
}

/// Compacts the data directory: 200 with the snapshot's generation and
/// size, the log's size before and the time taken; 400 without --data-dir.
pub async fn compact(State(state): State<AppState>) -> ApiResult<Response> {
    let store = state.account.store.clone();
    let report = blocking("The compaction failed.", move || store.compact()).await?;
    Ok(Json(report).into_response())
}

/// Drops every database, and with them the query results kept, the
/// budgets spent, the fault rules and the regions' conditions: 200
/// `{"databases": dropped, "now": clock}`. Snapshots are kept.
pub async fn reset(State(state): State<AppState>, body: Body) -> ApiResult<Response> {
    let Reset { clock } = optional_body(&body, "reset")?;
    let store = state.account.store.clone();
    let dropped = blocking("The reset failed.", move || store.reset(clock)).await?;
    state.account.query_results.clear();
    if let Some(limiter) = &state.account.limiter {
        limiter.clear();
    }
    state.account.faults.clear();
    state.account.topology.reset();
    super::regions::settled(&state).await;
    Ok(Json(json!({"databases": dropped, "now": state.account.store.clock.now()})).into_response())
}
