//! `/dbs/{db}/users[/{user}]` and `.../users/{user}/permissions[/{id}]`.
//! Every permission served carries a fresh `_token`, valid for
//! `x-ms-documentdb-expiry-seconds` on the emulator's clock.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::Value;

use super::request::{create_mode, Body, CosmosHeaders, PathParams};
use super::response::{
    no_content, resource, value_feed, value_query, written_status, METADATA_READ, METADATA_WRITE,
};
use super::AppState;
use crate::error::ApiResult;
use crate::resource_token::{self, Claims};
use crate::store::PermissionView;

// ---- users ---------------------------------------------------------------

pub async fn list_users(
    State(state): State<AppState>,
    PathParams(db): PathParams<String>,
) -> ApiResult<Response> {
    let (rid, users) = state.account.store.users(&db)?;
    Ok(value_feed(&rid, "Users", &users))
}

pub async fn create_or_query_users(
    State(state): State<AppState>,
    PathParams(db): PathParams<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    if headers.is_query() {
        let (rid, users) = state.account.store.users(&db)?;
        return value_query(
            &body,
            state.account.store.clock.now_millis(),
            &rid,
            "Users",
            users,
        );
    }
    let (created, user) =
        state
            .account
            .store
            .create_user(&db, &body.object()?, create_mode(&headers))?;
    Ok(resource(written_status(created), &user, METADATA_WRITE))
}

pub async fn read_user(
    State(state): State<AppState>,
    PathParams((db, user)): PathParams<(String, String)>,
) -> ApiResult<Response> {
    Ok(resource(
        StatusCode::OK,
        &state.account.store.user(&db, &user)?,
        METADATA_READ,
    ))
}

pub async fn replace_user(
    State(state): State<AppState>,
    PathParams((db, user)): PathParams<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let replaced =
        state
            .account
            .store
            .replace_user(&db, &user, &body.object()?, headers.if_match())?;
    Ok(resource(StatusCode::OK, &replaced, METADATA_WRITE))
}

pub async fn delete_user(
    State(state): State<AppState>,
    PathParams((db, user)): PathParams<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    state
        .account
        .store
        .delete_user(&db, &user, headers.if_match())?;
    Ok(no_content(METADATA_WRITE))
}

// ---- permissions -----------------------------------------------------------

/// The permission's JSON with a new `_token` that expires `expiry_seconds`
/// from now on the emulator's clock.
fn with_token(state: &AppState, view: PermissionView, expiry_seconds: i64) -> Value {
    let mut json = view.json;
    let claims = Claims {
        grant: view.grant,
        permission_rid: json["_rid"].as_str().unwrap_or("").to_string(),
        expires_at: state
            .account
            .store
            .clock
            .now()
            .saturating_add(expiry_seconds),
    };
    json["_token"] = resource_token::issue(&state.account.key, &claims).into();
    json
}

fn expiry(headers: &HeaderMap) -> ApiResult<i64> {
    resource_token::expiry_seconds(headers.text("x-ms-documentdb-expiry-seconds"))
}

pub async fn list_permissions(
    State(state): State<AppState>,
    PathParams((db, user)): PathParams<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let expiry = expiry(&headers)?;
    let (rid, views) = state.account.store.permissions(&db, &user)?;
    let permissions: Vec<Value> = views
        .into_iter()
        .map(|v| with_token(&state, v, expiry))
        .collect();
    Ok(value_feed(&rid, "Permissions", &permissions))
}

pub async fn create_or_query_permissions(
    State(state): State<AppState>,
    PathParams((db, user)): PathParams<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let expiry = expiry(&headers)?;
    if headers.is_query() {
        let (rid, views) = state.account.store.permissions(&db, &user)?;
        let permissions = views
            .into_iter()
            .map(|v| with_token(&state, v, expiry))
            .collect();
        return value_query(
            &body,
            state.account.store.clock.now_millis(),
            &rid,
            "Permissions",
            permissions,
        );
    }
    let (created, view) = state.account.store.create_permission(
        &db,
        &user,
        &body.object()?,
        create_mode(&headers),
    )?;
    Ok(resource(
        written_status(created),
        &with_token(&state, view, expiry),
        METADATA_WRITE,
    ))
}

pub async fn read_permission(
    State(state): State<AppState>,
    PathParams((db, user, id)): PathParams<(String, String, String)>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let expiry = expiry(&headers)?;
    let view = state.account.store.permission(&db, &user, &id)?;
    Ok(resource(
        StatusCode::OK,
        &with_token(&state, view, expiry),
        METADATA_READ,
    ))
}

pub async fn replace_permission(
    State(state): State<AppState>,
    PathParams((db, user, id)): PathParams<(String, String, String)>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let expiry = expiry(&headers)?;
    let view = state.account.store.replace_permission(
        &db,
        &user,
        &id,
        &body.object()?,
        headers.if_match(),
    )?;
    Ok(resource(
        StatusCode::OK,
        &with_token(&state, view, expiry),
        METADATA_WRITE,
    ))
}

pub async fn delete_permission(
    State(state): State<AppState>,
    PathParams((db, user, id)): PathParams<(String, String, String)>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    state
        .account
        .store
        .delete_permission(&db, &user, &id, headers.if_match())?;
    Ok(no_content(METADATA_WRITE))
}
