//! The client encryption key operations: list, query, create, read and
//! replace (a rewrap). No client deletes a key
//! (`data/store/client_encryption_keys.rs`).

use super::options::RequestOptions;
use super::paths::{DatabasePath, KeyPath};
use super::response::{Answer, Response};
use super::{body, resources, Serving};
use crate::data::store::Written;
use crate::protocol::error::ApiError;

/// The feed envelope's key, as the service names it.
const FEED: &str = "ClientEncryptionKeys";

/// Every key of a database.
pub fn list(serving: &Serving<'_>, database: DatabasePath<'_>) -> Answer {
    let (rid, keys) = serving
        .account
        .store
        .client_encryption_keys(database.database)?;
    Ok(resources::feed(&rid, FEED, &keys))
}

/// A query over a database's keys.
pub fn query(serving: &Serving<'_>, database: DatabasePath<'_>, body: &[u8]) -> Answer {
    let store = &serving.account.store;
    let (rid, keys) = store.client_encryption_keys(database.database)?;
    let now = store.clock.now_millis();
    Ok(resources::query(body, now, &rid, FEED, keys)?)
}

pub fn create(serving: &Serving<'_>, database: DatabasePath<'_>, body: &[u8]) -> Answer {
    let key = serving
        .account
        .store
        .create_client_encryption_key(database.database, &body::object(body)?)?;
    Ok(resources::written(Written::Created, &key))
}

/// A key, or 304 when the request's `IfNoneMatch` names its current etag:
/// how the SDKs' client-side encryption learns that the key they hold is
/// current (the JavaScript SDK's "key encryption key revoke test": a key
/// whose key encryption key is revoked and that is unchanged must be
/// rewrapped).
pub fn read(serving: &Serving<'_>, key: KeyPath<'_>, options: &dyn RequestOptions) -> Answer {
    let found = serving
        .account
        .store
        .client_encryption_key(key.database, key.id)?;
    let unchanged = options
        .if_none_match()
        .is_some_and(|tag| Some(tag.trim()) == found["_etag"].as_str());
    if unchanged {
        return Ok(Response::not_modified());
    }
    Ok(resources::read(&found))
}

/// Rewraps a key (new wrapped bytes and metadata); its id cannot change:
/// the containers' policies name it.
pub fn replace(
    serving: &Serving<'_>,
    key: KeyPath<'_>,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    let replaced = serving.account.store.replace_client_encryption_key(
        key.database,
        key.id,
        &body::object(body)?,
        options.if_match(),
    )?;
    Ok(resources::replaced(&replaced))
}

/// No client deletes a key: containers' policies and the data encrypted
/// with it depend on it. The key goes with its database.
pub fn delete() -> Answer {
    Err(ApiError::method_not_allowed()
        .with_message(
            "The requested verb is not supported on this resource: a client encryption key \
             cannot be deleted (no SDK deletes one; it is deleted with its database). To retire \
             it, rewrap it or stop naming it in new containers' clientEncryptionPolicy.",
        )
        .into())
}
