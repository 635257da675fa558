//! A user and its permissions as the catalog keeps them in their database
//! (`catalog.rs`), and what a permission grants, resolved to RIDs: plain
//! data, below the catalog. The operations on them are `users.rs`.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::lookup::by_name_or_rid;
use super::ScriptKind;
use crate::protocol::error::{ApiError, ApiResult};

/// What a permission lets its holder do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PermissionMode {
    /// Read, write and delete.
    All,
    /// Read only: reads, read feeds and queries.
    Read,
}

impl PermissionMode {
    pub(super) fn parse(value: Option<&Value>) -> ApiResult<Self> {
        match value.and_then(Value::as_str) {
            Some(m) if m.eq_ignore_ascii_case("all") => Ok(PermissionMode::All),
            Some(m) if m.eq_ignore_ascii_case("read") => Ok(PermissionMode::Read),
            _ => Err(ApiError::bad_request(format!(
                "The input content is invalid: 'permissionMode' must be \"All\" or \"Read\", got {}.",
                value.map_or_else(|| "nothing".to_string(), Value::to_string)
            ))),
        }
    }

    pub(super) fn as_str(self) -> &'static str {
        match self {
            PermissionMode::All => "All",
            PermissionMode::Read => "Read",
        }
    }
}

/// What one permission covers, by RID: the token carries it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Grant {
    pub mode: PermissionMode,
    pub database_rid: String,
    pub container_rid: String,
    /// One item's id, for an item permission.
    pub item_id: Option<String>,
    /// The canonical partition key (as the store keys items) that a
    /// `resourcePartitionKey` restricts the grant to.
    pub partition_key: Option<String>,
    /// One script, for a permission on a stored procedure, trigger or
    /// user-defined function; absent in tokens and data from before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<ScriptGrant>,
}

/// The script a permission covers, by RID: a rename keeps it covered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ScriptGrant {
    pub kind: ScriptKind,
    pub rid: String,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct User {
    pub(super) id: String,
    pub(super) rid: String,
    pub(super) number: u32,
    pub(super) ts: i64,
    pub(super) etag: String,
    pub(super) permissions: BTreeMap<String, Permission>,
    pub(super) next_permission: u64,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct Permission {
    pub(super) id: String,
    pub(super) rid: String,
    pub(super) ts: i64,
    pub(super) etag: String,
    /// `resource` as the client wrote it.
    pub(super) resource: String,
    /// `resourcePartitionKey` as the client wrote it.
    pub(super) resource_partition_key: Option<Value>,
    /// `permissionMode` as the client wrote it ("all" stays "all", as the
    /// service echoes it); empty in data written before it was kept.
    #[serde(default)]
    pub(super) mode_as_sent: String,
    pub(super) grant: Grant,
}

/// A permission as the service shows it, with the grant its token carries.
pub struct PermissionView {
    pub json: Value,
    pub grant: Grant,
}

impl User {
    pub fn id(&self) -> &str {
        &self.id
    }

    pub(super) fn to_json(&self, database_rid: &str) -> Value {
        json!({
            "id": self.id,
            "_rid": self.rid,
            "_self": format!("dbs/{database_rid}/users/{}/", self.rid),
            "_etag": self.etag,
            "_permissions": "permissions/",
            "_ts": self.ts,
        })
    }

    pub(super) fn permission(&self, id: &str) -> ApiResult<&Permission> {
        by_name_or_rid(&self.permissions, id, |p| &p.rid, "permission")
    }
}

impl Permission {
    pub(super) fn view(&self, database_rid: &str, user_rid: &str) -> PermissionView {
        let mut json = json!({
            "id": self.id,
            "permissionMode": if self.mode_as_sent.is_empty() {
                self.grant.mode.as_str()
            } else {
                &self.mode_as_sent
            },
            "resource": self.resource,
            "_rid": self.rid,
            "_self": format!("dbs/{database_rid}/users/{user_rid}/permissions/{}/", self.rid),
            "_etag": self.etag,
            "_ts": self.ts,
        });
        if let Some(pk) = &self.resource_partition_key {
            json["resourcePartitionKey"] = pk.clone();
        }
        PermissionView {
            json,
            grant: self.grant.clone(),
        }
    }
}
