//! The regions' routes (`docs/src/regions.md`; the model is `regions.rs`,
//! what each region's endpoint answers is `http/regions.rs`):
//!
//! - `GET /_emulator/regions`: every region, its endpoint and condition;
//! - `POST /_emulator/regions/{name}/down` `{"mode", "forMs"}`, `.../up`;
//! - `POST /_emulator/failover` `{"writeRegion"}`;
//! - `POST /_emulator/regions/{name}/replication` `{"lagMs"}` or
//!   `{"paused": true|false}`.
//!
//! Each answers `{"regions": [...]}` as the list does, once every region's
//! listener is as its condition wants it ([`settled`]).

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{optional_body, NoParameters};
use crate::account::regions::{Outage, Refusal};
use crate::http::{AppState, Body};
use crate::protocol::error::{ApiError, ApiResult};

/// `GET /_emulator/regions`.
pub async fn list(State(state): State<AppState>) -> Response {
    regions_answer(&state)
}

/// `{"regions": [...]}`: what every region route answers.
fn regions_answer(state: &AppState) -> Response {
    Json(json!({"regions": regions_json(state)})).into_response()
}

fn regions_json(state: &AppState) -> Vec<Value> {
    let now = state.account.store.clock.now_millis();
    let topology = &state.account.topology;
    (0..topology.names().len())
        .map(|region| {
            let (lag_ms, paused_at) = topology.replication(region);
            json!({
                "name": topology.name(region),
                "endpoint": format!("{}://{}/", state.scheme, state.region_addrs[region]),
                "writes": topology.takes_writes(region),
                "down": topology.outage(region, now).map(Outage::name),
                "lagMs": lag_ms,
                "paused": paused_at.is_some(),
            })
        })
        .collect()
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Down {
    mode: Option<String>,
    for_ms: Option<i64>,
}

/// `POST /_emulator/regions/{name}/down`: `mode` refuse (the default),
/// reset, hang, 503 or 403-1008; `forMs` on the emulator's clock.
pub async fn take_down(
    State(state): State<AppState>,
    Path(name): Path<String>,
    body: Body,
) -> ApiResult<Response> {
    let Down { mode, for_ms } = optional_body(&body, "region outage")?;
    let mode = match mode.as_deref() {
        None => Outage::Refuse,
        Some(text) => Outage::parse(text).ok_or_else(|| {
            ApiError::bad_request(format!(
                "'mode' must be one of refuse, reset, hang, 503 or 403-1008, got '{text}'."
            ))
        })?,
    };
    if for_ms.is_some_and(|ms| ms <= 0) {
        return Err(ApiError::bad_request(
            "'forMs' must be a positive number of milliseconds of the emulator's clock, or absent \
             (down until POST .../up).",
        ));
    }
    let until = for_ms.map(|ms| state.account.store.clock.now_millis().saturating_add(ms));
    state
        .account
        .topology
        .take_down(&name, mode, until)
        .map_err(refused)?;
    settled(&state).await;
    Ok(regions_answer(&state))
}

/// `POST /_emulator/regions/{name}/up`.
pub async fn bring_up(
    State(state): State<AppState>,
    Path(name): Path<String>,
    body: Body,
) -> ApiResult<Response> {
    let NoParameters {} = optional_body(&body, "region")?;
    state.account.topology.bring_up(&name).map_err(refused)?;
    settled(&state).await;
    Ok(regions_answer(&state))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Failover {
    write_region: Option<String>,
}

/// `POST /_emulator/failover` `{"writeRegion": name}`: the region that
/// takes writes from now on; the others answer writes with 403/3 until
/// clients read the account again.
pub async fn fail_over(State(state): State<AppState>, body: Body) -> ApiResult<Response> {
    let Failover { write_region } = optional_body(&body, "failover")?;
    let Some(name) = write_region else {
        return Err(ApiError::bad_request(
            "A failover needs 'writeRegion', the name of the region to write to, e.g. \
             {\"writeRegion\": \"East US\"}.",
        ));
    };
    if state.account.topology.multi_write() {
        return Err(ApiError::bad_request(
            "Every region of this account takes writes (--multi-write): there is no write region \
             to move.",
        ));
    }
    state.account.topology.fail_over(&name).map_err(refused)?;
    Ok(regions_answer(&state))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Replication {
    lag_ms: Option<i64>,
    paused: Option<bool>,
}

/// `POST /_emulator/regions/{name}/replication`.
pub async fn replicate(
    State(state): State<AppState>,
    Path(name): Path<String>,
    body: Body,
) -> ApiResult<Response> {
    let Replication { lag_ms, paused } = optional_body(&body, "replication")?;
    if lag_ms.is_none() && paused.is_none() {
        return Err(ApiError::bad_request(
            "Say how the region replicates: {\"lagMs\": 500} (behind the write region by that \
             much of the emulator's clock) or {\"paused\": true} (false resumes).",
        ));
    }
    let lsn = state.account.store.session_lsn();
    state
        .account
        .topology
        .set_replication(&name, lag_ms, paused, lsn)
        .map_err(refused)?;
    Ok(regions_answer(&state))
}

/// Waits (up to two seconds) until every region's listener is as its
/// condition wants it, so that a route that took a region down with
/// `refuse`, or brought one up, answers once clients see the change.
pub async fn settled(state: &AppState) {
    if state.account.topology.names().len() == 1 {
        return;
    }
    for _ in 0..200 {
        if state
            .account
            .topology
            .listeners_settled(state.account.store.clock.now_millis())
        {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

fn refused(refusal: Refusal) -> ApiError {
    match refusal {
        Refusal::UnknownRegion(name) => ApiError::not_found().with_message(format!(
            "The account has no region '{name}': GET /_emulator/regions lists them (--regions \
             names them at start)."
        )),
        Refusal::Invalid(why) => ApiError::bad_request(why),
    }
}
