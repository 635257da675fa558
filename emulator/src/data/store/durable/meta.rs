//! The catalog's metadata in the data directory, piece by piece: the
//! counters, each offer, each database (with its users, their permissions
//! and its client encryption keys)
//! and each container (settings, ranges, scripts) is one piece under a key. An
//! operation that changes metadata journals only the pieces that differ
//! from what the journal already holds, so a change costs the size of what
//! changed, not of the account; a snapshot holds every piece.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::super::catalog::{Catalog, Database};
use super::super::client_encryption_key::{self, ClientEncryptionKey};
use super::super::container::Container;
use super::super::offer::Offer;
use super::super::ranges::RangeMap;
use super::super::records::Record;
use super::super::script::Scripts;
use super::super::user::User;

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Counters {
    next_database: u32,
    next_offer: u32,
}

/// A database without its containers (each is a piece of its own).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DatabaseMeta {
    id: String,
    number: u32,
    ts: i64,
    etag: String,
    next_container: u32,
    next_user: u32,
    users: Vec<User>,
    /// Absent in data written before keys were kept.
    #[serde(default)]
    next_client_encryption_key: u32,
    #[serde(default)]
    client_encryption_keys: Vec<ClientEncryptionKey>,
}

/// A container's metadata: its resource as served (which its settings are
/// parsed back from), its ranges and its scripts. Its counters come back
/// from its items' records (and a snapshot's `Counters`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerMeta {
    pub id: String,
    pub rid: String,
    pub number: u32,
    pub ts: i64,
    pub etag: String,
    pub resource: Value,
    pub ranges: RangeMap,
    /// Absent while the container never had a script (and in data written
    /// before scripts were kept).
    #[serde(default, skip_serializing_if = "Scripts::is_empty")]
    pub scripts: Scripts,
}

const COUNTERS: &str = "counters";

fn json(value: &impl Serialize) -> Vec<u8> {
    serde_json::to_vec(value).expect("metadata serialises")
}

impl Catalog {
    /// Every piece of metadata: counters, offers, databases, containers
    /// (in an order where each piece's parent comes first).
    pub(in crate::data::store) fn meta_pieces(&self) -> Vec<(String, Vec<u8>)> {
        let mut pieces = vec![(
            COUNTERS.to_string(),
            json(&Counters {
                next_database: self.next_database,
                next_offer: self.offers.next_number(),
            }),
        )];
        pieces.extend(
            self.offers
                .iter()
                .map(|(rid, offer)| (format!("offer/{rid}"), json(offer))),
        );
        for db in self.databases.values() {
            pieces.push((
                format!("db/{}", db.rid),
                json(&DatabaseMeta {
                    id: db.id.clone(),
                    number: db.number,
                    ts: db.ts,
                    etag: db.etag.clone(),
                    next_container: db.next_container,
                    next_user: db.next_user,
                    users: db.users.values().cloned().collect(),
                    next_client_encryption_key: db.next_client_encryption_key,
                    client_encryption_keys: db.client_encryption_keys.values().cloned().collect(),
                }),
            ));
        }
        for db in self.databases.values() {
            pieces.extend(
                db.containers()
                    .map(|c| (format!("coll/{}/{}", db.rid, c.rid), json(&c.meta(&db.rid)))),
            );
        }
        pieces
    }

    /// Applies one piece (`None`: it is gone).
    pub(in crate::data::store) fn apply_piece(
        &mut self,
        key: &str,
        value: Option<&[u8]>,
        default_retention: i64,
    ) -> Result<(), String> {
        let unreadable = |e: serde_json::Error| format!("the metadata '{key}' does not read: {e}");
        let (kind, rest) = key.split_once('/').unwrap_or((key, ""));
        match (kind, value) {
            (COUNTERS, Some(value)) => {
                let counters: Counters = serde_json::from_slice(value).map_err(unreadable)?;
                self.next_database = self.next_database.max(counters.next_database);
                self.offers.restore_next_number(counters.next_offer);
            }
            ("offer", Some(value)) => {
                let offer: Offer = serde_json::from_slice(value).map_err(unreadable)?;
                self.offers.restore(rest.to_string(), offer);
            }
            ("offer", None) => self.offers.forget(rest),
            ("db", Some(value)) => {
                let meta: DatabaseMeta = serde_json::from_slice(value).map_err(unreadable)?;
                let users = meta
                    .users
                    .into_iter()
                    .map(|u| (u.id().to_string(), u))
                    .collect();
                let keys = client_encryption_key::by_id(meta.client_encryption_keys);
                match self.databases.values_mut().find(|db| db.rid == rest) {
                    Some(db) => {
                        db.ts = meta.ts;
                        db.etag = meta.etag;
                        db.next_container = meta.next_container;
                        db.next_user = meta.next_user;
                        db.users = users;
                        db.next_client_encryption_key = meta.next_client_encryption_key;
                        db.client_encryption_keys = keys;
                    }
                    None => {
                        let db = Database {
                            id: meta.id.clone(),
                            rid: rest.to_string(),
                            number: meta.number,
                            ts: meta.ts,
                            etag: meta.etag,
                            containers: Default::default(),
                            next_container: meta.next_container,
                            users,
                            next_user: meta.next_user,
                            client_encryption_keys: keys,
                            next_client_encryption_key: meta.next_client_encryption_key,
                        };
                        self.databases.insert(meta.id, db);
                    }
                }
            }
            ("db", None) => self.databases.retain(|_, db| db.rid != rest),
            ("coll", value) => {
                let (db_rid, rid) = rest
                    .split_once('/')
                    .ok_or_else(|| format!("the metadata key '{key}' names no container"))?;
                let db = self
                    .databases
                    .values_mut()
                    .find(|db| db.rid == db_rid)
                    .ok_or_else(|| format!("the metadata '{key}' names an unknown database"))?;
                let Some(value) = value else {
                    db.containers.retain(|_, c| c.rid != rid);
                    return Ok(());
                };
                let meta: ContainerMeta = serde_json::from_slice(value).map_err(unreadable)?;
                let bad = |e: crate::protocol::error::ApiError| {
                    format!("the settings of '{key}' do not apply: {}", e.message)
                };
                match db.containers.values_mut().find(|c| c.rid == rid) {
                    Some(c) => c.update_from_meta(&meta, default_retention).map_err(bad)?,
                    None => {
                        let c = Container::from_meta(&meta, &db.id, db.number, default_retention)
                            .map_err(bad)?;
                        db.containers.insert(meta.id, c);
                    }
                }
            }
            _ => return Err(format!("unknown metadata '{key}'")),
        }
        Ok(())
    }
}

/// What the journal holds of the metadata: a hash of each piece's JSON.
#[derive(Debug, Default)]
pub struct WrittenMeta(HashMap<String, u64>);

impl WrittenMeta {
    /// The records that bring the journal from what it holds to `pieces`
    /// (puts of what changed or is new, then removals of what is gone,
    /// children first), and remembers `pieces` as held.
    pub fn diff(&mut self, pieces: Vec<(String, Vec<u8>)>) -> Vec<Record> {
        let mut records = Vec::new();
        let mut held = HashMap::with_capacity(pieces.len());
        for (key, value) in pieces {
            let hash = digest(&value);
            if self.0.get(&key) != Some(&hash) {
                records.push(Record::Meta {
                    key: key.clone(),
                    value: Some(value),
                });
            }
            held.insert(key, hash);
        }
        let mut gone: Vec<&String> = self.0.keys().filter(|k| !held.contains_key(*k)).collect();
        // Containers, then databases, then offers.
        gone.sort_by_key(|k| match k.split('/').next() {
            Some("coll") => 0,
            Some("db") => 1,
            _ => 2,
        });
        records.extend(gone.into_iter().map(|key| Record::Meta {
            key: key.clone(),
            value: None,
        }));
        self.0 = held;
        records
    }
}

fn digest(bytes: &[u8]) -> u64 {
    let mut hasher = DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}
