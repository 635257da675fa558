//! The user and permission operations: list, query, create or upsert,
//! read, replace, delete. Every permission served carries a fresh
//! `_token`, valid for the request's expiry (`ExpirySeconds`) on the
//! emulator's clock (`resource_token.rs`).

use serde_json::Value;

use super::options::{RequestOption, RequestOptions};
use super::paths::{DatabasePath, PermissionPath, UserPath};
use super::response::Answer;
use super::{body, resources, Serving};
use crate::data::store::PermissionView;
use crate::operations::resource_token::{self, Claims};
use crate::protocol::error::ApiResult;

// ---- users ---------------------------------------------------------------

/// Every user of a database.
pub fn list_users(serving: &Serving<'_>, database: DatabasePath<'_>) -> Answer {
    let (rid, users) = serving.account.store.users(database.database)?;
    Ok(resources::feed(&rid, "Users", &users))
}

/// A query over a database's users.
pub fn query_users(serving: &Serving<'_>, database: DatabasePath<'_>, body: &[u8]) -> Answer {
    let store = &serving.account.store;
    let (rid, users) = store.users(database.database)?;
    let now = store.clock.now_millis();
    Ok(resources::query(body, now, &rid, "Users", users)?)
}

/// Creates a user, or replaces it when the request asks for an upsert.
pub fn create_user(
    serving: &Serving<'_>,
    database: DatabasePath<'_>,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    let (created, user) = serving.account.store.create_user(
        database.database,
        &body::object(body)?,
        resources::create_mode(options),
    )?;
    Ok(resources::written(created, &user))
}

pub fn read_user(serving: &Serving<'_>, user: UserPath<'_>) -> Answer {
    let found = serving.account.store.user(user.database, user.user)?;
    Ok(resources::read(&found))
}

pub fn replace_user(
    serving: &Serving<'_>,
    user: UserPath<'_>,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    let replaced = serving.account.store.replace_user(
        user.database,
        user.user,
        &body::object(body)?,
        options.if_match(),
    )?;
    Ok(resources::replaced(&replaced))
}

/// Deletes a user and its permissions.
pub fn delete_user(
    serving: &Serving<'_>,
    user: UserPath<'_>,
    options: &dyn RequestOptions,
) -> Answer {
    serving
        .account
        .store
        .delete_user(user.database, user.user, options.if_match())?;
    resources::deleted()
}

// ---- permissions -----------------------------------------------------------

/// The permission's JSON with a new `_token` that expires `expiry_seconds`
/// from now on the emulator's clock.
fn with_token(serving: &Serving<'_>, view: PermissionView, expiry_seconds: i64) -> Value {
    let account = serving.account;
    let mut json = view.json;
    let claims = Claims {
        grant: view.grant,
        permission_rid: json["_rid"].as_str().unwrap_or("").to_string(),
        expires_at: account.store.clock.now().saturating_add(expiry_seconds),
    };
    json["_token"] = resource_token::issue(&account.key, &claims).into();
    json
}

/// How long the tokens served stay valid, in seconds (the service's
/// default when the request does not say).
fn expiry(options: &dyn RequestOptions) -> ApiResult<i64> {
    resource_token::expiry_seconds(options.get(RequestOption::ExpirySeconds))
}

/// A user's permissions, each with a fresh token.
fn permissions(
    serving: &Serving<'_>,
    user: UserPath<'_>,
    expiry: i64,
) -> ApiResult<(String, Vec<Value>)> {
    let (rid, views) = serving
        .account
        .store
        .permissions(user.database, user.user)?;
    let permissions = views
        .into_iter()
        .map(|v| with_token(serving, v, expiry))
        .collect();
    Ok((rid, permissions))
}

/// Every permission of a user.
pub fn list_permissions(
    serving: &Serving<'_>,
    user: UserPath<'_>,
    options: &dyn RequestOptions,
) -> Answer {
    let expiry = expiry(options)?;
    let (rid, permissions) = permissions(serving, user, expiry)?;
    Ok(resources::feed(&rid, "Permissions", &permissions))
}

/// A query over a user's permissions.
pub fn query_permissions(
    serving: &Serving<'_>,
    user: UserPath<'_>,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    let expiry = expiry(options)?;
    let (rid, permissions) = permissions(serving, user, expiry)?;
    let now = serving.account.store.clock.now_millis();
    Ok(resources::query(
        body,
        now,
        &rid,
        "Permissions",
        permissions,
    )?)
}

/// Creates a permission, or replaces it when the request asks for an
/// upsert.
pub fn create_permission(
    serving: &Serving<'_>,
    user: UserPath<'_>,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    let expiry = expiry(options)?;
    let (created, view) = serving.account.store.create_permission(
        user.database,
        user.user,
        &body::object(body)?,
        resources::create_mode(options),
    )?;
    let permission = with_token(serving, view, expiry);
    Ok(resources::written(created, &permission))
}

pub fn read_permission(
    serving: &Serving<'_>,
    permission: PermissionPath<'_>,
    options: &dyn RequestOptions,
) -> Answer {
    let expiry = expiry(options)?;
    let PermissionPath { database, user, id } = permission;
    let view = serving.account.store.permission(database, user, id)?;
    Ok(resources::read(&with_token(serving, view, expiry)))
}

pub fn replace_permission(
    serving: &Serving<'_>,
    permission: PermissionPath<'_>,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    let expiry = expiry(options)?;
    let PermissionPath { database, user, id } = permission;
    let view = serving.account.store.replace_permission(
        database,
        user,
        id,
        &body::object(body)?,
        options.if_match(),
    )?;
    Ok(resources::replaced(&with_token(serving, view, expiry)))
}

pub fn delete_permission(
    serving: &Serving<'_>,
    permission: PermissionPath<'_>,
    options: &dyn RequestOptions,
) -> Answer {
    let PermissionPath { database, user, id } = permission;
    serving
        .account
        .store
        .delete_permission(database, user, id, options.if_match())?;
    resources::deleted()
}
