//! The checks an item write passes before it is stored, shared by single
//! writes and patches (`item_ops.rs`) and by transactional batch and bulk
//! (`batch.rs`); and `If-Match`, which every resource's replace and delete
//! checks.

use serde_json::{Map, Value};

use super::{check_nesting, strip_system_properties, validate_id, Container, Item};
use crate::data::ttl;
use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::item_key::ItemKey;
use crate::protocol::partition_key::PartitionKeyDefinition;

/// Validates an item body for create, upsert or replace (its system
/// properties dropped): its id and its `ttl` (R9). A replace whose body
/// names another id than the URL renames the item, as the service does.
pub(super) fn checked_write(
    body: &mut Map<String, Value>,
) -> ApiResult<(String, Option<ttl::Ttl>)> {
    strip_system_properties(body);
    let id = validate_id(body.get("id"))?.to_string();
    let item_ttl = ttl::item_ttl(body.get("ttl"))?;
    Ok((id, item_ttl))
}

/// The partition key of an item body, within the size limit and equal to
/// the one the request names, if it names one.
pub(super) fn checked_partition_key(
    c: &Container,
    body: &Map<String, Value>,
    header: Option<&str>,
) -> ApiResult<String> {
    let pk = c.partition_key().key_of(body);
    PartitionKeyDefinition::check_size(&pk)?;
    if let Some(header) = header {
        if c.partition_key().key_from_header(header)? != pk {
            // Substatus 1001, as the service: SDKs refresh their container
            // cache on it.
            return Err(c.partition_key().mismatch_error().with_substatus(1001));
        }
    }
    Ok(pk)
}

/// The body `edit` (a patch) makes of the live item `current` at `key`,
/// checked as a write: it keeps the id and the partition key, nests within
/// the limit, and has a valid `ttl` (R9).
pub(super) fn edited(
    c: &Container,
    key: &ItemKey,
    id: &str,
    current: &Item,
    edit: impl FnOnce(Map<String, Value>) -> ApiResult<Map<String, Value>>,
) -> ApiResult<(Map<String, Value>, Option<ttl::Ttl>)> {
    let mut body = current.parse();
    strip_system_properties(&mut body);
    let mut body = edit(body)?;
    strip_system_properties(&mut body);
    check_nesting(&body)?;
    if validate_id(body.get("id"))? != id {
        return Err(ApiError::bad_request("A patch cannot change an item's id."));
    }
    if c.partition_key().key_of(&body) != key.pk() {
        return Err(ApiError::bad_request(
            "A patch cannot change an item's partition key value.",
        ));
    }
    let item_ttl = ttl::item_ttl(body.get("ttl"))?;
    Ok((body, item_ttl))
}

/// `If-Match`: absent or `*` always matches; otherwise the current etag must.
pub(super) fn check_if_match(
    if_match: Option<&str>,
    etag: impl std::fmt::Display,
) -> ApiResult<()> {
    match if_match {
        Some(expected) if expected != "*" && expected != etag.to_string() => {
            Err(ApiError::precondition_failed())
        }
        _ => Ok(()),
    }
}
