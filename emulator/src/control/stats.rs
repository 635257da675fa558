//! `GET /_emulator/stats`: the emulator's time, which clock it runs, and
//! the items stored per container (expired ones not yet purged included),
//! with either clock.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::http::AppState;

/// `{"now", "clock": "manual"|"system", "containers": [...]}`.
pub async fn read(State(state): State<AppState>) -> Response {
    let clock = if state.account.store.clock.is_manual() {
        "manual"
    } else {
        "system"
    };
    Json(json!({
        "now": state.account.store.clock.now(),
        "clock": clock,
        "containers": state.account.store.stats(),
    }))
    .into_response()
}
