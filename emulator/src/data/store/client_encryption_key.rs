//! A client encryption key as the catalog keeps it in its database
//! (`catalog.rs`): the wrapped data encryption key and its metadata, as
//! sent; plain data, below the catalog. What the store does with keys,
//! and what a body must hold, is `client_encryption_keys.rs`.

use std::collections::BTreeMap;

use serde_json::{json, Value};

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ClientEncryptionKey {
    pub(super) id: String,
    pub(super) rid: String,
    pub(super) ts: i64,
    pub(super) etag: String,
    pub(super) encryption_algorithm: String,
    /// `wrappedDataEncryptionKey` as sent (base64).
    pub(super) wrapped_key: String,
    /// `keyWrapMetadata` as sent.
    pub(super) key_wrap_metadata: Value,
}

impl ClientEncryptionKey {
    pub(super) fn to_json(&self, database_rid: &str) -> Value {
        json!({
            "id": self.id,
            "encryptionAlgorithm": self.encryption_algorithm,
            "wrappedDataEncryptionKey": self.wrapped_key,
            "keyWrapMetadata": self.key_wrap_metadata,
            "_rid": self.rid,
            "_self": format!("dbs/{database_rid}/clientencryptionkeys/{}/", self.rid),
            "_etag": self.etag,
            "_ts": self.ts,
        })
    }
}

/// The keys of a database as its metadata piece lists them, by id.
pub fn by_id(keys: Vec<ClientEncryptionKey>) -> BTreeMap<String, ClientEncryptionKey> {
    keys.into_iter().map(|k| (k.id.clone(), k)).collect()
}
