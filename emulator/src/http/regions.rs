//! A multi-region account on the wire (`--regions`; the model is
//! `regions.rs`): what each region's endpoint answers while its region is
//! down, the 403/3 of a write sent to a region that does not take writes,
//! the account document's locations, and the control routes
//! (`docs/src/regions.md`):
//!
//! - `GET /_emulator/regions`: every region, its endpoint and condition;
//! - `POST /_emulator/regions/{name}/down` `{"mode", "forMs"}`, `.../up`;
//! - `POST /_emulator/failover` `{"writeRegion"}`;
//! - `POST /_emulator/regions/{name}/replication` `{"lagMs"}` or
//!   `{"paused": true|false}`.
//!
//! Control requests are never refused by an outage: a test brings a region
//! back through any endpoint, the one that is down included (unless it
//! refuses connections).

use axum::extract::{Path, Request, State};
use axum::http::uri::Authority;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::operation::{classify, Operation};
use super::request::{optional_body, Body, CosmosHeaders, NoParameters};
use super::AppState;
use crate::error::{ApiError, ApiResult, Status};
use crate::regions::{Outage, Refusal};
use crate::store::MAX_ITEM_BYTES;
use crate::transport::{Break, ConnectionControl};

/// Substatus of a write sent to a region that takes none.
const WRITE_FORBIDDEN: u32 = 3;
/// Substatus of a request to a region the account no longer has.
const DATABASE_ACCOUNT_NOT_FOUND: u32 = 1008;

/// Answers a request as its endpoint's region would: down, or refusing a
/// write; otherwise lets it through to the budget, the fault rules and the
/// handler.
/// Called by `authenticate` for accounts of more than one region.
pub async fn admit(state: &AppState, request: Request, next: Next) -> Response {
    let classified = classify(request.method(), request.uri().path(), request.headers());
    let operation = classified.operation;
    if operation == Operation::Control {
        return next.run(request).await;
    }
    let now = state.store.clock.now_millis();
    if let Some(outage) = state.topology.outage(state.region_index, now) {
        return down(state, outage, request).await;
    }
    let query = super::request::CosmosHeaders::is_query(request.headers());
    let write = is_write(operation, request.method(), query);
    if write && !state.topology.takes_writes(state.region_index) {
        let _ = axum::body::to_bytes(request.into_body(), 8 * MAX_ITEM_BYTES).await;
        return ApiError::new(
            Status::FORBIDDEN,
            format!(
                "The requested operation cannot be performed at this region: '{}' is a read \
                 region of this account; writes go to '{}' (the account document's \
                 writableLocations).",
                state.region,
                state.topology.name(state.topology.write_region())
            ),
        )
        .with_substatus(WRITE_FORBIDDEN)
        .into_response();
    }
    let response = Box::pin(super::throttling::throttle(state, request, next)).await;
    if write {
        // What a lagging replica will have applied, and when; for a write
        // to a container, the LSN its range reached (its session tokens
        // name that one).
        let store_lsn = state.store.session_lsn();
        state.topology.record(now, store_lsn);
        let headers = response.headers();
        let range_lsn = headers
            .text(super::names::LSN)
            .and_then(|v| v.parse::<u64>().ok());
        let range = headers.range_id().unwrap_or(0);
        if let Some((rid, lsn)) = headers.get(super::names::CONTENT_PATH).zip(range_lsn) {
            state
                .topology
                .record_range(rid.as_bytes(), range, store_lsn, lsn);
        }
    }
    response
}

/// Whether an operation changes the account (a metadata request that is
/// not a read or a query counts).
fn is_write(operation: Operation, method: &Method, query: bool) -> bool {
    match operation {
        Operation::Create
        | Operation::Upsert
        | Operation::Replace
        | Operation::Patch
        | Operation::Delete
        | Operation::Batch
        | Operation::Script => true,
        Operation::Metadata => method != Method::GET && !query,
        _ => false,
    }
}

/// What a region that is down answers.
async fn down(state: &AppState, outage: Outage, request: Request) -> Response {
    let control = request.extensions().get::<ConnectionControl>().cloned();
    let _ = axum::body::to_bytes(request.into_body(), 8 * MAX_ITEM_BYTES).await;
    let broken = |how| match &control {
        Some(control) => {
            control.break_with(how);
            StatusCode::SERVICE_UNAVAILABLE.into_response()
        }
        None => unavailable(state),
    };
    match outage {
        // Connections made before the listener closed: reset.
        Outage::Refuse | Outage::Reset => broken(Break::Reset),
        Outage::Hang => broken(Break::Hang),
        Outage::Unavailable => unavailable(state),
        Outage::Removed => ApiError::new(
            Status::FORBIDDEN,
            format!(
                "Database Account not found in region '{}' (taken down with \
                 POST /_emulator/regions/.../down).",
                state.region
            ),
        )
        .with_substatus(DATABASE_ACCOUNT_NOT_FOUND)
        .into_response(),
    }
}

fn unavailable(state: &AppState) -> Response {
    ApiError::new(
        Status::SERVICE_UNAVAILABLE,
        format!(
            "Service is currently unavailable: region '{}' is down (POST \
             /_emulator/regions/.../down).",
            state.region
        ),
    )
    .into_response()
}

/// The account document's `writableLocations` and `readableLocations`:
/// each region with the endpoint a client reaches it at, the host as the
/// client addressed this endpoint (`addressed`, `host:port`), the port the
/// region's.
pub fn locations(state: &AppState, scheme: &str, addressed: &str) -> (Value, Value) {
    let authority = addressed.parse::<Authority>().ok();
    let host = authority
        .as_ref()
        .map_or(addressed.to_string(), |a| a.host().to_string());
    let client_port = authority.as_ref().and_then(Authority::port_u16);
    let own_port = state.region_addrs[state.region_index].port();
    let location = |region: usize| {
        let port = state.region_addrs[region].port();
        // The port the client used, moved as far as the region's is from
        // this endpoint's (a container's published ports keep the offsets).
        let port = match client_port {
            Some(used) => i32::from(used) + i32::from(port) - i32::from(own_port),
            None => i32::from(port),
        };
        json!({
            "name": state.topology.name(region),
            "databaseAccountEndpoint": format!("{scheme}://{host}:{port}/"),
        })
    };
    let writable = state
        .topology
        .writable()
        .into_iter()
        .map(location)
        .collect();
    let readable = state
        .topology
        .in_failover_order()
        .into_iter()
        .map(location)
        .collect();
    (Value::Array(writable), Value::Array(readable))
}

/// `GET /_emulator/regions`.
pub async fn list(State(state): State<AppState>) -> Response {
    regions_answer(&state)
}

/// `{"regions": [...]}`: what every region route answers.
fn regions_answer(state: &AppState) -> Response {
    Json(json!({"regions": regions_json(state)})).into_response()
}

fn regions_json(state: &AppState) -> Vec<Value> {
    let now = state.store.clock.now_millis();
    let topology = &state.topology;
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
    let until = for_ms.map(|ms| state.store.clock.now_millis().saturating_add(ms));
    state
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
    state.topology.bring_up(&name).map_err(refused)?;
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
    if state.topology.multi_write() {
        return Err(ApiError::bad_request(
            "Every region of this account takes writes (--multi-write): there is no write region \
             to move.",
        ));
    }
    state.topology.fail_over(&name).map_err(refused)?;
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
    let lsn = state.store.session_lsn();
    state
        .topology
        .set_replication(&name, lag_ms, paused, lsn)
        .map_err(refused)?;
    Ok(regions_answer(&state))
}

/// Waits (up to two seconds) until every region's listener is as its
/// condition wants it, so that a route that took a region down with
/// `refuse`, or brought one up, answers once clients see the change.
pub async fn settled(state: &AppState) {
    if state.topology.names().len() == 1 {
        return;
    }
    for _ in 0..200 {
        if state
            .topology
            .listeners_settled(state.store.clock.now_millis())
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

/// The LSN reads at this endpoint's region can see now: the store's at the
/// write region, a lagging replica's elsewhere.
pub fn visible_lsn(state: &AppState) -> u64 {
    let current = state.store.session_lsn();
    if state.topology.names().len() == 1 {
        return current;
    }
    let now = state.store.clock.now_millis();
    state
        .topology
        .replicated_lsn(state.region_index, now, current)
}

/// The LSN of the range `range` of the container `rid` (at `current`) that
/// reads at this endpoint's region can see now: what session tokens name
/// and are checked against.
pub fn visible_range_lsn(state: &AppState, rid: &[u8], range: u32, current: u64) -> u64 {
    if state.topology.names().len() == 1 {
        return current;
    }
    let store_lsn = visible_lsn(state);
    if store_lsn >= state.store.session_lsn() {
        return current; // all applied (the write region, or no lag)
    }
    state.topology.range_lsn_at(rid, range, store_lsn, current)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_the_operations_that_change_the_account() {
        for operation in [
            Operation::Create,
            Operation::Upsert,
            Operation::Replace,
            Operation::Patch,
            Operation::Delete,
            Operation::Batch,
            Operation::Script,
        ] {
            assert!(is_write(operation, &Method::POST, false), "{operation:?}");
        }
        for operation in [
            Operation::Read,
            Operation::Query,
            Operation::ChangeFeed,
            Operation::Account,
        ] {
            assert!(!is_write(operation, &Method::GET, false), "{operation:?}");
        }
        assert!(!is_write(Operation::Metadata, &Method::GET, false));
        assert!(
            !is_write(Operation::Metadata, &Method::POST, true),
            "a query of databases"
        );
        assert!(is_write(Operation::Metadata, &Method::POST, false));
        assert!(is_write(Operation::Metadata, &Method::PUT, false));
        assert!(is_write(Operation::Metadata, &Method::DELETE, false));
    }
}
