//! `POST /_emulator/lifetimes` `{"database", "container", "continuation"?,
//! "maxItems"?, "order"?}`: a page of a container's stored items with their
//! lifetimes explained (`data/store/lifetimes.rs`), for the data explorer.
//! Signed with the master key like every control route. 200 with
//! `{"now", "defaultTtl", "stored", "live", "nextExpiry", "items": [{"id",
//! "partitionKey", "_ts", "ttl", "rule", "effectiveTtl", "expiresAt",
//! "expired"}], "continuation"}`. `order` is `"key"` (the default: partition
//! key, then id) or `"expiry"` (soonest first, never-expiring last).

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};

use crate::data::store::LifetimeCursor;
use crate::http::{AppState, Body};
use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::item_key::ItemKey;

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

/// A page's continuation, as the explorer passes it back: after an item
/// in key order, or at an offset into the expiry order.
#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum Cursor {
    Key { pk: String, id: String },
    Offset { offset: usize },
}

/// The order asked for; the cursor carries it from then on.
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
    let continuation = request
        .continuation
        .as_deref()
        .map(serde_json::from_str::<Cursor>);
    let cursor = match (request.order, continuation) {
        (Order::Key, None) => LifetimeCursor::Key(None),
        (Order::Expiry, None) => LifetimeCursor::Expiry(0),
        (Order::Key, Some(Ok(Cursor::Key { pk, id }))) => {
            LifetimeCursor::Key(Some(ItemKey::new(&pk, &id)))
        }
        (Order::Expiry, Some(Ok(Cursor::Offset { offset }))) => LifetimeCursor::Expiry(offset),
        _ => return Err(ApiError::bad_request(
            "Invalid continuation: pass back the continuation of the previous page unchanged, with the same order.",
        )),
    };
    let page =
        state
            .account
            .store
            .lifetimes(&request.database, &request.container, cursor, limit)?;
    let mut body = page.body;
    body["continuation"] = page
        .next
        .and_then(|next| match next {
            LifetimeCursor::Key(after) => after.map(|key| Cursor::Key {
                pk: key.pk().to_string(),
                id: key.id().to_string(),
            }),
            LifetimeCursor::Expiry(offset) => Some(Cursor::Offset { offset }),
        })
        .map(|cursor| serde_json::to_string(&cursor).expect("serialises"))
        .into();
    Ok(Json(body).into_response())
}
