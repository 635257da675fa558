//! `POST /_emulator/lifetimes` `{"database", "container", "continuation"?,
//! "maxItems"?}`: a page of a container's stored items with their
//! lifetimes explained (`store/lifetimes.rs`), for the data explorer.
//! Signed with the master key like every control route. 200 with
//! `{"now", "defaultTtl", "stored", "live", "items": [{"id",
//! "partitionKey", "_ts", "ttl", "rule", "effectiveTtl", "expiresAt",
//! "expired"}], "continuation"}`.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;

use super::request::Body;
use super::AppState;
use crate::error::{ApiError, ApiResult};
use crate::query::Continuation;
use crate::store::ItemKey;

/// Items per page unless asked otherwise, and the most a page may hold.
const DEFAULT_ITEMS: usize = 100;
const MAX_ITEMS: usize = 1000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct LifetimesRequest {
    database: String,
    container: String,
    #[serde(default)]
    continuation: Option<String>,
    #[serde(default)]
    max_items: Option<usize>,
}

pub async fn page(State(state): State<AppState>, body: Body) -> ApiResult<Response> {
    let request: LifetimesRequest = body.typed("lifetimes")?;
    let limit = match request.max_items {
        None => DEFAULT_ITEMS,
        Some(n @ 1..=MAX_ITEMS) => n,
        Some(n) => {
            return Err(ApiError::bad_request(format!(
                "maxItems is {n}: ask for 1 to {MAX_ITEMS} items a page."
            )))
        }
    };
    let after =
        match request.continuation.as_deref().map(Continuation::parse) {
            Some(Ok(Some(Continuation::After { pk, id }))) => Some(ItemKey::new(&pk, &id)),
            None => None,
            _ => return Err(ApiError::bad_request(
                "Invalid continuation: pass back the continuation of the previous page unchanged.",
            )),
        };
    let page =
        state
            .store
            .lifetimes(&request.database, &request.container, after.as_ref(), limit)?;
    let mut body = page.body;
    body["continuation"] = page
        .next
        .map(|key| {
            Continuation::After {
                pk: key.pk().to_string(),
                id: key.id().to_string(),
            }
            .to_token()
        })
        .into();
    Ok(Json(body).into_response())
}
