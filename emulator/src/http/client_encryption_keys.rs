//! `/dbs/{db}/clientencryptionkeys[/{id}]`: create, read, read feed, query
//! and replace (a rewrap). Master key only, like users. DELETE is 405: no
//! SDK or management API deletes a key (`store/client_encryption_keys.rs`).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::request::{Body, CosmosHeaders, PathParams};
use super::response::{resource, value_feed, value_query, METADATA_READ, METADATA_WRITE};
use super::AppState;
use crate::error::{ApiError, ApiResult};

/// The feed envelope's key, as the service names it.
const FEED: &str = "ClientEncryptionKeys";

pub async fn list(
    State(state): State<AppState>,
    PathParams(db): PathParams<String>,
) -> ApiResult<Response> {
    let (rid, keys) = state.account.store.client_encryption_keys(&db)?;
    Ok(value_feed(&rid, FEED, &keys))
}

pub async fn create_or_query(
    State(state): State<AppState>,
    PathParams(db): PathParams<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    if headers.is_query() {
        let (rid, keys) = state.account.store.client_encryption_keys(&db)?;
        return value_query(
            &body,
            state.account.store.clock.now_millis(),
            &rid,
            FEED,
            keys,
        );
    }
    let key = state
        .account
        .store
        .create_client_encryption_key(&db, &body.object()?)?;
    Ok(resource(StatusCode::CREATED, &key, METADATA_WRITE))
}

/// A key, or 304 when `If-None-Match` names its current etag: how the
/// SDKs' client-side encryption learns that the key they hold is current
/// (the JavaScript SDK's "key encryption key revoke test": a key whose key
/// encryption key is revoked and that is unchanged must be rewrapped).
pub async fn read(
    State(state): State<AppState>,
    PathParams((db, id)): PathParams<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let key = state.account.store.client_encryption_key(&db, &id)?;
    let unchanged = headers
        .text("if-none-match")
        .is_some_and(|tag| Some(tag.trim()) == key["_etag"].as_str());
    if unchanged {
        use axum::response::IntoResponse;
        return Ok(StatusCode::NOT_MODIFIED.into_response());
    }
    Ok(resource(StatusCode::OK, &key, METADATA_READ))
}

pub async fn replace(
    State(state): State<AppState>,
    PathParams((db, id)): PathParams<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let key = state.account.store.replace_client_encryption_key(
        &db,
        &id,
        &body.object()?,
        headers.if_match(),
    )?;
    Ok(resource(StatusCode::OK, &key, METADATA_WRITE))
}

/// No client deletes a key: containers' policies and the data encrypted
/// with it depend on it. The key goes with its database.
pub async fn delete() -> ApiError {
    ApiError::method_not_allowed().with_message(
        "The requested verb is not supported on this resource: a client encryption key cannot \
         be deleted (no SDK deletes one; it is deleted with its database). To retire it, \
         rewrap it or stop naming it in new containers' clientEncryptionPolicy.",
    )
}
