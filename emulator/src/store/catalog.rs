//! The catalog the store's lock guards: its databases, each with its
//! containers, users and client encryption keys, and the offers; and how a
//! resource is found by its name or, for RID-based paths, by its RID.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{client_encryption_keys, offers, users, Container};
use crate::error::{ApiError, ApiResult};

#[derive(Debug)]
pub struct Database {
    pub id: String,
    pub rid: String,
    pub(super) number: u32,
    pub ts: i64,
    pub etag: String,
    pub(super) containers: BTreeMap<String, Container>,
    pub(super) next_container: u32,
    pub(super) users: BTreeMap<String, users::User>,
    pub(super) next_user: u32,
    pub(super) client_encryption_keys:
        BTreeMap<String, client_encryption_keys::ClientEncryptionKey>,
    pub(super) next_client_encryption_key: u32,
}

impl Database {
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "id": self.id,
            "_rid": self.rid,
            "_self": format!("dbs/{}/", self.rid),
            "_etag": self.etag,
            "_colls": "colls/",
            "_users": "users/",
            "_ts": self.ts,
        })
    }

    pub fn containers(&self) -> impl Iterator<Item = &Container> {
        self.containers.values()
    }

    /// A container by name, or by RID for RID-based paths.
    pub fn container(&self, id: &str) -> ApiResult<&Container> {
        by_name_or_rid(&self.containers, id, |c| &c.rid, "container")
    }

    pub(super) fn container_mut(&mut self, id: &str) -> ApiResult<&mut Container> {
        by_name_or_rid_mut(&mut self.containers, id, |c| &c.rid, "container")
    }

    pub(super) fn resolve_container(&self, id: &str) -> ApiResult<String> {
        self.container(id).map(|c| c.id.clone())
    }
}

#[derive(Debug, Default)]
pub(super) struct Catalog {
    pub(super) databases: BTreeMap<String, Database>,
    pub(super) next_database: u32,
    pub(super) offers: offers::Offers,
}

impl Catalog {
    pub(super) fn database(&self, id: &str) -> ApiResult<&Database> {
        by_name_or_rid(&self.databases, id, |d| &d.rid, "database")
    }

    pub(super) fn database_mut(&mut self, id: &str) -> ApiResult<&mut Database> {
        by_name_or_rid_mut(&mut self.databases, id, |d| &d.rid, "database")
    }
}

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
