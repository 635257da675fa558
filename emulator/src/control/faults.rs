//! The fault rules' routes (the rules are `faults/`, applied by
//! `operations/around.rs`; the guide's `docs/src/faults.md`): `POST
//! /_emulator/faults` (201, the rule with its id), `GET /_emulator/faults`
//! (`{"faults": [...]}` with their `hitCount`s), `GET` and `DELETE
//! /_emulator/faults/{id}`, and `DELETE /_emulator/faults` (all). A reset
//! clears them too.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::http::{AppState, Body};
use crate::protocol::error::ApiResult;

/// Adds a fault rule: 201 with the rule as stored (its `id`, `hitCount` 0).
pub async fn add(State(state): State<AppState>, body: Body) -> ApiResult<Response> {
    let rule: serde_json::Value = body.typed("fault rule")?;
    let rule = state
        .account
        .faults
        .add(rule, state.account.store.clock.now_millis())?;
    Ok((StatusCode::CREATED, Json(rule)).into_response())
}

/// `{"faults": [...]}`: every rule in creation order, with its `hitCount`.
pub async fn list(State(state): State<AppState>) -> Response {
    Json(json!({"faults": state.account.faults.list()})).into_response()
}

/// The rule `id`, or 404.
pub async fn read(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Response> {
    Ok(Json(state.account.faults.get(&id)?).into_response())
}

/// Removes the rule `id`: 204, or 404.
pub async fn delete(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Response> {
    state.account.faults.remove(&id)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Removes every rule: 200 `{"deleted": n}`.
pub async fn clear(State(state): State<AppState>) -> Response {
    Json(json!({"deleted": state.account.faults.clear()})).into_response()
}
