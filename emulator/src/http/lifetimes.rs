//! `POST /_emulator/lifetimes` `{"database", "container", "continuation"?,
//! "maxItems"?, "order"?}`: a page of a container's stored items with their
//! lifetimes explained (`store/lifetimes.rs`), for the data explorer.
//! Signed with the master key like every control route. 200 with
//! `{"now", "defaultTtl", "stored", "live", "nextExpiry", "items": [{"id",
//! "partitionKey", "_ts", "ttl", "rule", "effectiveTtl", "expiresAt",
//! "expired"}], "continuation"}`. `order` is `"key"` (the default: partition
//! key, then id) or `"expiry"` (soonest first, never-expiring last).

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;

use super::request::Body;
use super::AppState;
use crate::error::{ApiError, ApiResult};
use crate::query::Continuation;
use crate::store::{ItemKey, LifetimeOrder, LifetimeStart};

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
    #[serde(default)]
    order: Order,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Order {
    #[default]
    Key,
    Expiry,
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
    let order = match request.order {
        Order::Key => LifetimeOrder::Key,
        Order::Expiry => LifetimeOrder::Expiry,
    };
    let invalid = || {
        ApiError::bad_request(
            "Invalid continuation: pass back the continuation of the previous page unchanged, with the same order.",
        )
    };
    let start = match (
        order,
        request.continuation.as_deref().map(Continuation::parse),
    ) {
        (_, None) => LifetimeStart::After(None),
        (LifetimeOrder::Key, Some(Ok(Some(Continuation::After { pk, id })))) => {
            LifetimeStart::After(Some(ItemKey::new(&pk, &id)))
        }
        (LifetimeOrder::Expiry, Some(Ok(Some(Continuation::Offset { offset })))) => {
            LifetimeStart::Offset(offset)
        }
        _ => return Err(invalid()),
    };
    let page = state
        .store
        .lifetimes(&request.database, &request.container, order, start, limit)?;
    let mut body = page.body;
    body["continuation"] = page
        .next
        .map(|next| {
            match next {
                LifetimeStart::After(key) => {
                    let key = key.expect("a key page continues after a key");
                    Continuation::After {
                        pk: key.pk().to_string(),
                        id: key.id().to_string(),
                    }
                }
                LifetimeStart::Offset(offset) => Continuation::Offset { offset },
            }
            .to_token()
        })
        .into();
    Ok(Json(body).into_response())
}
