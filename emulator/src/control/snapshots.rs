//! Named in-memory snapshots of the whole account, for test isolation
//! (`data/store/account.rs`): `PUT /_emulator/snapshots/{name}`, `POST
//! /_emulator/snapshots/{name}/restore`, `GET /_emulator/snapshots`,
//! `DELETE /_emulator/snapshots/{name}`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::{blocking, optional_body, NoParameters};
use crate::http::{AppState, Body};
use crate::protocol::error::ApiResult;

/// Takes the snapshot `name`: 201, or 200 when it replaced one.
pub async fn take(
    State(state): State<AppState>,
    Path(name): Path<String>,
    body: Body,
) -> ApiResult<Response> {
    let NoParameters {} = optional_body(&body, "snapshot")?;
    let store = state.account.store.clone();
    let (summary, written) =
        blocking("The snapshot failed.", move || store.take_snapshot(&name)).await?;
    Ok((StatusCode::from(written.status()), Json(summary)).into_response())
}

/// Restores the snapshot `name`: 200 with what it holds, 404 if none.
pub async fn restore(
    State(state): State<AppState>,
    Path(name): Path<String>,
    body: Body,
) -> ApiResult<Response> {
    let NoParameters {} = optional_body(&body, "restore")?;
    let store = state.account.store.clone();
    let summary = blocking("The restore failed.", move || store.restore_snapshot(&name)).await?;
    state.account.query_results.clear();
    Ok(Json(summary).into_response())
}

/// `{"snapshots": [...]}`, by name.
pub async fn list(State(state): State<AppState>) -> Response {
    Json(json!({"snapshots": state.account.store.snapshots()})).into_response()
}

/// Forgets the snapshot `name`: 204, or 404.
pub async fn delete(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Response> {
    state.account.store.delete_snapshot(&name)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
