//! How a resource of the catalog is found: by its name, or by its RID for
//! RID-based paths (`dbs/{rid}/colls/{rid}`), with the service's 404 when
//! neither names one.

use std::collections::BTreeMap;

use crate::protocol::error::{ApiError, ApiResult};

/// A resource of a map keyed by name: by its name, or by its RID for
/// RID-based paths (rare, so a scan).
pub(super) fn by_name_or_rid<'a, T>(
    map: &'a BTreeMap<String, T>,
    id: &str,
    rid: impl Fn(&T) -> &str,
    kind: &str,
) -> ApiResult<&'a T> {
    map.get(id)
        .or_else(|| map.values().find(|v| rid(v) == id))
        .ok_or_else(|| not_found(kind, id))
}

pub(super) fn by_name_or_rid_mut<'a, T>(
    map: &'a mut BTreeMap<String, T>,
    id: &str,
    rid: impl Fn(&T) -> &str,
    kind: &str,
) -> ApiResult<&'a mut T> {
    if map.contains_key(id) {
        return Ok(map.get_mut(id).expect("just checked"));
    }
    map.values_mut()
        .find(|v| rid(v) == id)
        .ok_or_else(|| not_found(kind, id))
}

fn not_found(kind: &str, id: &str) -> ApiError {
    ApiError::not_found().with_message(format!(
        "Resource Not Found: the {kind} '{id}' does not exist. Entity with the specified id does not exist in the system."
    ))
}
