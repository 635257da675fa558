//! Client encryption keys (`/dbs/{db}/clientencryptionkeys`): the data
//! encryption keys of Always Encrypted, kept in their database (deleting the
//! database deletes them) for containers' `clientEncryptionPolicy` to name.
//!
//! A key is stored *wrapped*: the SDK encrypts it with a customer-managed
//! key (e.g. in Azure Key Vault) before sending it, and `keyWrapMetadata`
//! says which. The service stores and serves it as sent; nothing here can
//! unwrap or use it.
//!
//! What the SDKs send and read (`@azure/cosmos` `Database.createClient
//! EncryptionKey`/`rewrapClientEncryptionKey`, .NET `ClientEncryptionKey
//! Properties` and `EncryptionKeyWrapMetadata`): `id`, `encryptionAlgorithm`
//! (only "AEAD_AES_256_CBC_HMAC_SHA256" exists), `wrappedDataEncryptionKey`
//! (base64, as .NET serialises a `byte[]` and JavaScript `toString("base64")`)
//! and `keyWrapMetadata` `{type, name, value, algorithm}`. A rewrap is a
//! replace with `If-Match`. No SDK deletes a key (the .NET `ClientEncryption
//! Key` has `ReadAsync` and `ReplaceAsync` only, JavaScript and Java
//! `create`/`read`/`rewrap`), nor does the management plane (PowerShell has
//! `New-`, `Get-`, `Update-AzCosmosDbClientEncryptionKey`): the HTTP layer
//! answers DELETE with 405.

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::{DecodePaddingMode, Engine};
use serde_json::{Map, Value};

use super::checks::check_if_match;
use super::client_encryption_key::ClientEncryptionKey;
use super::encryption_policy::ALGORITHM;
use super::lookup::by_name_or_rid;
use super::{item, validate_name, Database, Store};
use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::rid;

/// Standard base64, padded or not (what a client's encoder may leave out).
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// A key's body, checked.
#[derive(Debug)]
struct Parsed {
    id: String,
    encryption_algorithm: String,
    wrapped_key: String,
    key_wrap_metadata: Value,
}

fn invalid(why: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!(
        "The client encryption key is invalid: {why} A key is {{\"id\": \"key1\", \
         \"encryptionAlgorithm\": \"{ALGORITHM}\", \"wrappedDataEncryptionKey\": \"<base64>\", \
         \"keyWrapMetadata\": {{\"type\": \"AZURE_KEY_VAULT\", \"name\": \"...\", \"value\": \
         \"<key URL>\", \"algorithm\": \"RSA-OAEP\"}}}}."
    ))
}

fn parse(body: &Map<String, Value>) -> ApiResult<Parsed> {
    let id = validate_name(body.get("id"))?.to_string();
    let encryption_algorithm = match body.get("encryptionAlgorithm") {
        Some(Value::String(a)) if a == ALGORITHM => a.clone(),
        other => {
            return Err(invalid(format!(
                "'encryptionAlgorithm' is {}; the only data encryption key algorithm is \
                 '{ALGORITHM}'.",
                other.map_or("missing".to_string(), Value::to_string)
            )))
        }
    };
    let wrapped_key = body
        .get("wrappedDataEncryptionKey")
        .and_then(Value::as_str)
        .filter(|k| !k.is_empty() && BASE64.decode(k).is_ok())
        .ok_or_else(|| {
            invalid(format!(
                "'wrappedDataEncryptionKey' must be the wrapped key's bytes in base64; it is {}.",
                body.get("wrappedDataEncryptionKey")
                    .map_or("missing".to_string(), Value::to_string)
            ))
        })?
        .to_string();
    let metadata = body
        .get("keyWrapMetadata")
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("'keyWrapMetadata' must be an object."))?;
    for field in ["type", "name", "value"] {
        if !metadata.get(field).is_some_and(Value::is_string) {
            return Err(invalid(format!(
                "'keyWrapMetadata.{field}' must be a string (the key resolver's type, the \
                 customer-managed key's name and its path)."
            )));
        }
    }
    if metadata.get("algorithm").is_some_and(|a| !a.is_string()) {
        return Err(invalid("'keyWrapMetadata.algorithm' must be a string."));
    }
    Ok(Parsed {
        id,
        encryption_algorithm,
        wrapped_key,
        key_wrap_metadata: Value::Object(metadata.clone()),
    })
}

impl Database {
    fn client_encryption_key(&self, id: &str) -> ApiResult<&ClientEncryptionKey> {
        by_name_or_rid(
            &self.client_encryption_keys,
            id,
            |k| &k.rid,
            "client encryption key",
        )
    }

    /// Refuses a container policy that names keys the database lacks, in
    /// the service's words.
    pub(super) fn check_keys_exist(&self, ids: &[String]) -> ApiResult<()> {
        let missing: Vec<&str> = ids
            .iter()
            .map(String::as_str)
            .filter(|id| !self.client_encryption_keys.contains_key(*id))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(ApiError::bad_request(format!(
            "ClientEncryptionKey with id '[{}]' does not exist. (Create it first with \
             POST /dbs/{}/clientencryptionkeys: a clientEncryptionPolicy names keys of the \
             container's database.)",
            missing.join(", "),
            self.id
        )))
    }
}

impl Store {
    /// Creates a key; 409 if the database has one of that id.
    pub fn create_client_encryption_key(
        &self,
        database: &str,
        body: &Map<String, Value>,
    ) -> ApiResult<Value> {
        let parsed = parse(body)?;
        let now = self.clock.now();
        let mut catalog = self.write()?;
        let db = catalog.database_mut(database)?;
        if db.client_encryption_keys.contains_key(&parsed.id) {
            return Err(ApiError::conflict());
        }
        db.next_client_encryption_key += 1;
        let key = ClientEncryptionKey {
            rid: rid::client_encryption_key(db.number, db.next_client_encryption_key),
            id: parsed.id.clone(),
            ts: now,
            etag: item::new_etag(),
            encryption_algorithm: parsed.encryption_algorithm,
            wrapped_key: parsed.wrapped_key,
            key_wrap_metadata: parsed.key_wrap_metadata,
        };
        let json = key.to_json(&db.rid);
        db.client_encryption_keys.insert(parsed.id, key);
        catalog.meta_changed();
        self.wrote();
        Ok(json)
    }

    pub fn client_encryption_key(&self, database: &str, id: &str) -> ApiResult<Value> {
        let catalog = self.read();
        let db = catalog.database(database)?;
        Ok(db.client_encryption_key(id)?.to_json(&db.rid))
    }

    /// The database's RID and its keys.
    pub fn client_encryption_keys(&self, database: &str) -> ApiResult<(String, Vec<Value>)> {
        let catalog = self.read();
        let db = catalog.database(database)?;
        let keys = db
            .client_encryption_keys
            .values()
            .map(|k| k.to_json(&db.rid))
            .collect();
        Ok((db.rid.clone(), keys))
    }

    /// Replaces a key (a rewrap: new wrapped bytes and metadata). Its id
    /// cannot change: the containers' policies name it.
    pub fn replace_client_encryption_key(
        &self,
        database: &str,
        id: &str,
        body: &Map<String, Value>,
        if_match: Option<&str>,
    ) -> ApiResult<Value> {
        let parsed = parse(body)?;
        let now = self.clock.now();
        let mut catalog = self.write()?;
        let db = catalog.database_mut(database)?;
        let current = db.client_encryption_key(id)?;
        let name = current.id.clone();
        check_if_match(if_match, &current.etag)?;
        if parsed.id != name {
            return Err(ApiError::bad_request(format!(
                "The id '{}' in the body does not match the client encryption key '{name}' \
                 addressed by the URL: a key cannot be renamed.",
                parsed.id
            )));
        }
        let db_rid = db.rid.clone();
        let key = db.client_encryption_keys.get_mut(&name).expect("resolved");
        key.encryption_algorithm = parsed.encryption_algorithm;
        key.wrapped_key = parsed.wrapped_key;
        key.key_wrap_metadata = parsed.key_wrap_metadata;
        key.ts = now;
        key.etag = item::new_etag();
        let json = key.to_json(&db_rid);
        catalog.meta_changed();
        self.wrote();
        Ok(json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    fn valid() -> Value {
        json!({
            "id": "key1",
            "encryptionAlgorithm": ALGORITHM,
            "wrappedDataEncryptionKey": "AAECAw==",
            "keyWrapMetadata": {"type": "AZURE_KEY_VAULT", "name": "k", "value": "https://v/keys/k", "algorithm": "RSA-OAEP"}
        })
    }

    #[test]
    fn a_valid_body_parses_and_padding_is_optional() {
        assert!(parse(&body(valid())).is_ok());
        let mut unpadded = valid();
        unpadded["wrappedDataEncryptionKey"] = json!("AAECAw");
        assert!(parse(&body(unpadded)).is_ok());
    }

    #[test]
    fn each_field_is_checked() {
        let refused = |field: &str, value: Value, says: &str| {
            let mut b = valid();
            b[field] = value;
            let message = parse(&body(b)).unwrap_err().message;
            assert!(message.contains(says), "{field}: {message}");
        };
        refused(
            "encryptionAlgorithm",
            json!("RSA-OAEP"),
            "'encryptionAlgorithm'",
        );
        refused(
            "wrappedDataEncryptionKey",
            json!("not base64!"),
            "'wrappedDataEncryptionKey'",
        );
        refused(
            "wrappedDataEncryptionKey",
            json!(""),
            "'wrappedDataEncryptionKey'",
        );
        refused(
            "wrappedDataEncryptionKey",
            json!([1, 2]),
            "'wrappedDataEncryptionKey'",
        );
        refused("keyWrapMetadata", json!("kv"), "'keyWrapMetadata'");
        refused(
            "keyWrapMetadata",
            json!({"type": "t", "name": "n"}),
            "'keyWrapMetadata.value'",
        );
        refused(
            "keyWrapMetadata",
            json!({"type": "t", "name": "n", "value": "v", "algorithm": 1}),
            "algorithm",
        );
        refused("id", json!("a/b"), "");
    }
}
