//! The emulator's own control API (`docs/src/clock.md`, "The routes"):
//! `GET /_emulator/clock` → `{"now": s}`; `POST` `{"advance": s}` (a
//! fraction of a second too, to the millisecond) or `{"set": s}` (whole
//! epoch seconds) → `{"now": s}`, 404 unless started with `--clock manual`;
//! `GET /_emulator/stats`, the items stored per container (expired or not
//! yet purged included), with either clock; and `POST /_emulator/purge`,
//! which returns once every item due at the emulator's time is purged (its
//! TTL delete in the change log): a deterministic wait for tests; and
//! `POST /_emulator/split` `{"database", "container", "range"}`, which
//! splits one partition key range in two (see `store/ranges.rs`), with
//! either clock, and answers the children as `pkranges` lists them; and
//! `POST /_emulator/compact`, which writes a snapshot of the data directory
//! now (see `store/durable/mod.rs`) and answers what it did; and, for test
//! isolation (`store/account.rs`), `POST /_emulator/reset` (every database
//! dropped; `{"clock": s}` also sets the test clock), and named in-memory
//! snapshots of the whole account: `PUT /_emulator/snapshots/{name}`,
//! `POST /_emulator/snapshots/{name}/restore`, `GET /_emulator/snapshots`,
//! `DELETE /_emulator/snapshots/{name}`; and the fault rules
//! (`faults/`, `docs/src/faults.md`): `POST /_emulator/faults` (201, the
//! rule with its id), `GET /_emulator/faults` (`{"faults": [...]}` with
//! their `hitCount`s), `GET` and `DELETE /_emulator/faults/{id}`, and
//! `DELETE /_emulator/faults` (all); reset clears them too.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::request::{optional_body, Body, NoParameters};
use super::response::written_status;
use super::AppState;
use crate::error::{ApiError, ApiResult, Status};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Split {
    database: String,
    container: String,
    range: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClockChange {
    advance: Option<serde_json::Number>,
    set: Option<serde_json::Number>,
}

/// `advance`'s seconds in milliseconds: a whole number, or a fraction to
/// the millisecond (`1.5`; `_ts` stays in whole seconds, as the service's).
/// A negative amount passes, for the clock to refuse as a move backwards.
fn advance_millis(seconds: &serde_json::Number) -> ApiResult<i64> {
    let overflow = || ApiError::bad_request("'advance' would overflow the clock.");
    if let Some(whole) = seconds.as_i64() {
        return whole.checked_mul(1000).ok_or_else(overflow);
    }
    if seconds.is_u64() {
        return Err(overflow());
    }
    let millis = seconds.as_f64().unwrap_or(f64::NAN) * 1000.0;
    let whole = millis.round();
    // Finer than a millisecond would be rounded away unseen: refused.
    if !whole.is_finite() || (millis - whole).abs() > 1e-6 {
        return Err(ApiError::bad_request(format!(
            "'advance' is in seconds, to the millisecond at the finest (such as 60 or 1.5), \
             got {seconds}."
        )));
    }
    if whole.abs() >= i64::MAX as f64 {
        return Err(overflow());
    }
    Ok(whole as i64)
}

/// `set`'s epoch second: whole, as `_ts` is.
fn set_seconds(instant: &serde_json::Number) -> ApiResult<i64> {
    instant.as_i64().ok_or_else(|| {
        ApiError::bad_request(format!(
            "'set' must be whole epoch seconds (such as 1700000000), got {instant}."
        ))
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Reset {
    clock: Option<i64>,
}

fn manual_only(state: &AppState) -> ApiResult<()> {
    if state.store.clock.is_manual() {
        Ok(())
    } else {
        Err(ApiError::not_found().with_message(
            "The test clock is off: start the emulator with --clock manual to move time through /_emulator/clock.",
        ))
    }
}

pub async fn stats(State(state): State<AppState>) -> Response {
    let clock = if state.store.clock.is_manual() {
        "manual"
    } else {
        "system"
    };
    Json(json!({
        "now": state.store.clock.now(),
        "clock": clock,
        "containers": state.store.stats(),
    }))
    .into_response()
}

pub async fn read_clock(State(state): State<AppState>) -> ApiResult<Response> {
    manual_only(&state)?;
    Ok(Json(json!({"now": state.store.clock.now()})).into_response())
}

pub async fn update_clock(State(state): State<AppState>, body: Body) -> ApiResult<Response> {
    manual_only(&state)?;
    let change: ClockChange = body.typed("clock")?;
    let now = match (&change.advance, &change.set) {
        // Each kept before it is acknowledged: time never goes backwards across a restart.
        (Some(seconds), None) => state.store.advance_clock_millis(advance_millis(seconds)?)?,
        (None, Some(instant)) => state.store.set_clock(set_seconds(instant)?)?,
        _ => {
            return Err(ApiError::bad_request(
                "Send exactly one of {\"advance\": <seconds>} or {\"set\": <epoch seconds>}.",
            ))
        }
    };
    // A region whose outage the move ended listens again before the answer.
    super::regions::settled(&state).await;
    Ok(Json(json!({"now": now})).into_response())
}

/// Purges everything due now, then answers `{"purged": n}`: after it, every
/// expired item's TTL delete is in the change feed.
pub async fn purge(State(state): State<AppState>) -> ApiResult<Response> {
    let store = state.store.clone();
    let purged = blocking("The purge failed.", move || {
        let mut total = 0;
        loop {
            let (purged, _) = store.purge_batch(crate::purge::BATCH);
            total += purged;
            if purged < crate::purge::BATCH {
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
    let children = state.store.split_range(&database, &container, &range)?;
    let (resource, _) = state.store.container(&database, &container)?;
    let ranges = state
        .store
        .with_container(&database, &container, |c, _| Ok(c.ranges().clone()))?;
    let listing = super::pkranges::listing(&resource, &ranges);
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
    let store = state.store.clone();
    let report = blocking("The compaction failed.", move || store.compact()).await?;
    Ok(Json(report).into_response())
}

/// Drops every database: 200 `{"databases": dropped, "now": clock}`.
pub async fn reset(State(state): State<AppState>, body: Body) -> ApiResult<Response> {
    let Reset { clock } = optional_body(&body, "reset")?;
    let store = state.store.clone();
    let dropped = blocking("The reset failed.", move || store.reset(clock)).await?;
    state.query_results.clear();
    if let Some(limiter) = &state.limiter {
        limiter.clear();
    }
    state.faults.clear();
    state.topology.reset();
    super::regions::settled(&state).await;
    Ok(Json(json!({"databases": dropped, "now": state.store.clock.now()})).into_response())
}

/// Takes the snapshot `name`: 201, or 200 when it replaced one.
pub async fn take_snapshot(
    State(state): State<AppState>,
    Path(name): Path<String>,
    body: Body,
) -> ApiResult<Response> {
    let NoParameters {} = optional_body(&body, "snapshot")?;
    let store = state.store.clone();
    let (summary, written) =
        blocking("The snapshot failed.", move || store.take_snapshot(&name)).await?;
    Ok((written_status(written), Json(summary)).into_response())
}

/// Restores the snapshot `name`: 200 with what it holds, 404 if none.
pub async fn restore_snapshot(
    State(state): State<AppState>,
    Path(name): Path<String>,
    body: Body,
) -> ApiResult<Response> {
    let NoParameters {} = optional_body(&body, "restore")?;
    let store = state.store.clone();
    let summary = blocking("The restore failed.", move || store.restore_snapshot(&name)).await?;
    state.query_results.clear();
    Ok(Json(summary).into_response())
}

/// `{"snapshots": [...]}`, by name.
pub async fn snapshots(State(state): State<AppState>) -> Response {
    Json(json!({"snapshots": state.store.snapshots()})).into_response()
}

/// Forgets the snapshot `name`: 204, or 404.
pub async fn delete_snapshot(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Response> {
    state.store.delete_snapshot(&name)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Adds a fault rule: 201 with the rule as stored (its `id`, `hitCount` 0).
pub async fn add_fault(State(state): State<AppState>, body: Body) -> ApiResult<Response> {
    let rule: serde_json::Value = body.typed("fault rule")?;
    let rule = state.faults.add(rule, state.store.clock.now_millis())?;
    Ok((StatusCode::CREATED, Json(rule)).into_response())
}

/// `{"faults": [...]}`: every rule in creation order, with its `hitCount`.
pub async fn list_faults(State(state): State<AppState>) -> Response {
    Json(json!({"faults": state.faults.list()})).into_response()
}

/// The rule `id`, or 404.
pub async fn read_fault(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    Ok(Json(state.faults.get(&id)?).into_response())
}

/// Removes the rule `id`: 204, or 404.
pub async fn delete_fault(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    state.faults.remove(&id)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Removes every rule: 200 `{"deleted": n}`.
pub async fn clear_faults(State(state): State<AppState>) -> Response {
    Json(json!({"deleted": state.faults.clear()})).into_response()
}

/// Runs store work that holds its lock for a while (a purge, a
/// compaction, copying or swapping the whole account) off the threads that
/// serve requests; `failed` is the 500's message should it panic.
async fn blocking<T: Send + 'static>(
    failed: &'static str,
    work: impl FnOnce() -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|_| ApiError::new(Status::INTERNAL_SERVER_ERROR, failed))?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(text: &str) -> serde_json::Number {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn advance_takes_seconds_to_the_millisecond() {
        for (text, millis) in [
            ("0", 0),
            ("60", 60_000),
            ("1.5", 1_500),
            ("0.001", 1),
            ("2.25", 2_250),
            ("1e3", 1_000_000),
            ("-1", -1_000),
            ("-0.5", -500),
        ] {
            assert_eq!(advance_millis(&number(text)).unwrap(), millis, "{text}");
        }
        for text in [
            "0.0001",
            "1.0005",
            "1e300",
            "9223372036854775807",
            "18446744073709551615",
        ] {
            let refused = advance_millis(&number(text)).unwrap_err();
            assert_eq!(refused.status, Status::BAD_REQUEST, "{text}");
        }
        let message = advance_millis(&number("0.0001")).unwrap_err().message;
        assert!(message.contains("millisecond"), "{message}");
    }

    #[test]
    fn set_takes_whole_epoch_seconds() {
        assert_eq!(set_seconds(&number("1700000000")).unwrap(), 1_700_000_000);
        let message = set_seconds(&number("1700000000.5")).unwrap_err().message;
        assert!(message.contains("whole epoch seconds"), "{message}");
    }
}
