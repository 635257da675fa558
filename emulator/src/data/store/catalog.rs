//! The catalog the store's lock guards: its databases, each with its
//! containers, users and client encryption keys, and the offers. What it
//! holds are plain data (`container/`, `user.rs`, `client_encryption_key.rs`,
//! `offer.rs`), found by name or RID (`lookup.rs`); the operations on
//! them are the `impl Store` blocks above it (`users.rs`, `scripts.rs`...).

use std::collections::BTreeMap;

use serde_json::Value;

use super::client_encryption_key::ClientEncryptionKey;
use super::lookup::{by_name_or_rid, by_name_or_rid_mut};
use super::offer::Offers;
use super::user::User;
use super::Container;
use crate::protocol::error::ApiResult;

#[derive(Debug)]
pub struct Database {
    pub id: String,
    pub rid: String,
    pub(super) number: u32,
    pub ts: i64,
    pub etag: String,
    pub(super) containers: BTreeMap<String, Container>,
    pub(super) next_container: u32,
    pub(super) users: BTreeMap<String, User>,
    pub(super) next_user: u32,
    pub(super) client_encryption_keys: BTreeMap<String, ClientEncryptionKey>,
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
    pub(super) offers: Offers,
}

impl Catalog {
    pub(super) fn database(&self, id: &str) -> ApiResult<&Database> {
        by_name_or_rid(&self.databases, id, |d| &d.rid, "database")
    }

    pub(super) fn database_mut(&mut self, id: &str) -> ApiResult<&mut Database> {
        by_name_or_rid_mut(&mut self.databases, id, |d| &d.rid, "database")
    }
}
