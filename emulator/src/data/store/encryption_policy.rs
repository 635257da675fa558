//! A container's `clientEncryptionPolicy`: which top-level properties the
//! SDKs encrypt (Always Encrypted), with which client encryption key of the
//! database. The service never sees plaintext; it keeps the policy, checks
//! it, and serves it back for the SDKs to read.
//!
//! The rules, and where they are written:
//! - .NET `ClientEncryptionPolicy.cs` and `ClientEncryptionIncludedPath`
//!   (Azure/azure-cosmos-dotnet-v3, `Microsoft.Azure.Cosmos/src/Resource/
//!   Settings/`), and the JavaScript SDK's `validateClientEncryptionPolicy`
//!   (`@azure/cosmos` `common/helper.js`):
//!   - `policyFormatVersion` is 1 or 2 ("Supported versions of client
//!     encryption policy are 1 and 2."); absent, it is 1 (what JavaScript
//!     fills in);
//!   - a path is a top-level property, `/name`: it starts with '/' and has
//!     no other ("Invalid path '...'"); no path twice ("Duplicate Path
//!     found: /p.");
//!   - `clientEncryptionKeyId` is a non-empty string; `encryptionType` is
//!     "Deterministic" or "Randomized"; `encryptionAlgorithm` is
//!     "AEAD_AES_256_CBC_HMAC_SHA256";
//!   - `/id` only with version 2 ("Path: /id cannot be encrypted with
//!     PolicyFormatVersion: 1. Please use PolicyFormatVersion: 2.") and
//!     Deterministic ("Only Deterministic encryption type is supported for
//!     path: /id."); the same for the first property of each partition key
//!     path ("Path: /pk which is part of the partition key cannot be
//!     encrypted with PolicyFormatVersion: 1. ...", "... has to be encrypted
//!     with Deterministic type Encryption.").
//! - The service itself (the .NET SDK's emulator tests, `CosmosContainer
//!   Tests.ContainerCreationFailsWithUnknownClientEncryptionKey` and
//!   `ClientEncryptionPolicyTest`, Azure/azure-cosmos-dotnet-v3#2349):
//!   a policy naming a key the database does not have is 400 "ClientEncryption
//!   Key with id '[unknownKey]' does not exist." (checked in
//!   `data/store/containers.rs`, where the database is at hand, before the path
//!   rules: the test sends the path "/"), and a replace that changes the
//!   policy, or drops it, is 400
//!   "'clientEncryptionPolicy' cannot be changed as part of collection
//!   replace operation."; one that sends it unchanged succeeds.

use serde_json::{json, Value};

use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::partition_key::PartitionKeyDefinition;

/// The one algorithm of data encryption keys and encrypted properties.
pub const ALGORITHM: &str = "AEAD_AES_256_CBC_HMAC_SHA256";

/// The service's refusal of a replace that changes the policy.
pub const IMMUTABLE: &str = "'clientEncryptionPolicy' cannot be changed as part of collection \
    replace operation. (Send the container's current clientEncryptionPolicy unchanged, as read; \
    a container's policy is set once, when it is created.)";

/// One encrypted property.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct IncludedPath {
    path: String,
    key_id: String,
    deterministic: bool,
}

/// A validated policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncryptionPolicy {
    paths: Vec<IncludedPath>,
    version: u8,
}

fn invalid(why: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!(
        "The clientEncryptionPolicy is invalid: {why} Expected e.g. {{\"includedPaths\": \
         [{{\"path\": \"/ssn\", \"clientEncryptionKeyId\": \"key1\", \"encryptionType\": \
         \"Deterministic\", \"encryptionAlgorithm\": \"{ALGORITHM}\"}}], \"policyFormatVersion\": 2}}."
    ))
}

/// The key ids a policy names, read leniently (the existence check comes
/// before the other rules, as the service orders them).
pub fn key_ids(policy: Option<&Value>) -> Vec<String> {
    let mut ids: Vec<String> = policy
        .and_then(|p| p.get("includedPaths"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("clientEncryptionKeyId").and_then(Value::as_str))
        .filter(|id| !id.trim().is_empty())
        .map(str::to_string)
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

impl EncryptionPolicy {
    /// Reads and validates `clientEncryptionPolicy` (absent or null: none)
    /// for a container of partition key `partition_key`.
    pub fn parse(
        value: Option<&Value>,
        partition_key: &PartitionKeyDefinition,
    ) -> ApiResult<Option<Self>> {
        let Some(value) = value.filter(|v| !v.is_null()) else {
            return Ok(None);
        };
        let object = value
            .as_object()
            .ok_or_else(|| invalid("it must be an object."))?;
        let version = match object.get("policyFormatVersion") {
            None | Some(Value::Null) => 1,
            Some(v) => match v.as_u64() {
                Some(n @ 1..=2) => n as u8,
                _ => {
                    return Err(invalid(format!(
                        "'policyFormatVersion' is {v}: Supported versions of client encryption \
                         policy are 1 and 2."
                    )))
                }
            },
        };
        let included = object
            .get("includedPaths")
            .and_then(Value::as_array)
            .ok_or_else(|| invalid("'includedPaths' must be an array of paths to encrypt."))?;
        let mut paths: Vec<IncludedPath> = Vec::with_capacity(included.len());
        for (n, entry) in included.iter().enumerate() {
            let path = IncludedPath::parse(n, entry, version)?;
            if paths.iter().any(|p| p.path == path.path) {
                return Err(invalid(format!("Duplicate Path found: {}.", path.path)));
            }
            paths.push(path);
        }
        let policy = EncryptionPolicy { paths, version };
        policy.check_partition_key(partition_key)?;
        Ok(Some(policy))
    }

    /// Each partition key path whose first property is encrypted needs
    /// version 2 and Deterministic encryption: the SDKs encrypt the
    /// partition key header too, and only a deterministic value routes.
    fn check_partition_key(&self, partition_key: &PartitionKeyDefinition) -> ApiResult<()> {
        for tokens in partition_key.paths() {
            let Some(first) = tokens.first() else {
                continue;
            };
            let Some(encrypted) = self.paths.iter().find(|p| p.path[1..] == *first) else {
                continue;
            };
            if self.version < 2 {
                return Err(invalid(format!(
                    "Path: /{first} which is part of the partition key cannot be encrypted with \
                     PolicyFormatVersion: {}. Please use PolicyFormatVersion: 2.",
                    self.version
                )));
            }
            if !encrypted.deterministic {
                return Err(invalid(format!(
                    "Path: /{first} which is part of the partition key has to be encrypted with \
                     Deterministic type Encryption."
                )));
            }
        }
        Ok(())
    }

    /// The policy as the service serves it.
    pub fn to_json(&self) -> Value {
        let paths: Vec<Value> = self
            .paths
            .iter()
            .map(|p| {
                json!({
                    "path": p.path,
                    "clientEncryptionKeyId": p.key_id,
                    "encryptionType": if p.deterministic { "Deterministic" } else { "Randomized" },
                    "encryptionAlgorithm": ALGORITHM,
                })
            })
            .collect();
        json!({"includedPaths": paths, "policyFormatVersion": self.version})
    }

    /// Whether `other` is the same policy: the same version and paths, in
    /// any order.
    pub fn same_as(&self, other: &EncryptionPolicy) -> bool {
        let sorted = |p: &EncryptionPolicy| {
            let mut paths = p.paths.clone();
            paths.sort();
            paths
        };
        self.version == other.version && sorted(self) == sorted(other)
    }
}

/// A container replace keeps the policy: sending another one, or none for
/// a container that has one (or one for a container without), is refused.
pub fn check_unchanged(
    current: Option<&EncryptionPolicy>,
    sent: Option<&EncryptionPolicy>,
) -> ApiResult<()> {
    let unchanged = match (current, sent) {
        (None, None) => true,
        (Some(current), Some(sent)) => current.same_as(sent),
        _ => false,
    };
    if unchanged {
        Ok(())
    } else {
        Err(ApiError::bad_request(IMMUTABLE))
    }
}

impl IncludedPath {
    fn parse(n: usize, entry: &Value, version: u8) -> ApiResult<Self> {
        let field = |name: &str| {
            entry
                .get(name)
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .ok_or_else(|| {
                    invalid(format!(
                        "includedPaths[{n}] needs '{name}', a non-empty string; it has {}.",
                        entry.get(name).map_or("none".to_string(), Value::to_string)
                    ))
                })
        };
        let path = field("path")?;
        if !path.starts_with('/') || path.rfind('/') != Some(0) || path.len() == 1 {
            return Err(invalid(format!(
                "Invalid path '{path}' in includedPaths[{n}]: only top-level properties can be \
                 encrypted, named like '/ssn' (no nested paths such as '/a/b')."
            )));
        }
        let key_id = field("clientEncryptionKeyId")?;
        let deterministic = match field("encryptionType")? {
            "Deterministic" => true,
            "Randomized" => false,
            other => {
                return Err(invalid(format!(
                    "includedPaths[{n}].encryptionType is '{other}': EncryptionType should be \
                     either 'Deterministic' or 'Randomized'."
                )))
            }
        };
        let algorithm = field("encryptionAlgorithm")?;
        if algorithm != ALGORITHM {
            return Err(invalid(format!(
                "includedPaths[{n}].encryptionAlgorithm is '{algorithm}': EncryptionAlgorithm \
                 should be '{ALGORITHM}'."
            )));
        }
        if path == "/id" {
            if version < 2 {
                return Err(invalid(format!(
                    "Path: /id cannot be encrypted with PolicyFormatVersion: {version}. Please use \
                     PolicyFormatVersion: 2."
                )));
            }
            if !deterministic {
                return Err(invalid(
                    "Only Deterministic encryption type is supported for path: /id.",
                ));
            }
        }
        Ok(IncludedPath {
            path: path.to_string(),
            key_id: key_id.to_string(),
            deterministic,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pk(paths: &[&str]) -> PartitionKeyDefinition {
        PartitionKeyDefinition::parse(Some(&json!({"paths": paths, "kind": "Hash"}))).unwrap()
    }

    fn path(p: &str, kind: &str) -> Value {
        json!({"path": p, "clientEncryptionKeyId": "k", "encryptionType": kind, "encryptionAlgorithm": ALGORITHM})
    }

    fn parse(policy: Value, pk_paths: &[&str]) -> ApiResult<Option<EncryptionPolicy>> {
        EncryptionPolicy::parse(Some(&policy), &pk(pk_paths))
    }

    fn refusal(policy: Value, pk_paths: &[&str]) -> String {
        parse(policy, pk_paths).unwrap_err().message
    }

    #[test]
    fn a_valid_policy_is_served_in_the_service_shape() {
        let policy = parse(
            json!({"includedPaths": [path("/ssn", "Randomized")]}),
            &["/pk"],
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            policy.to_json(),
            json!({"includedPaths": [path("/ssn", "Randomized")], "policyFormatVersion": 1})
        );
        assert!(parse(Value::Null, &["/pk"]).unwrap().is_none());
    }

    #[test]
    fn id_and_partition_key_need_version_2_and_deterministic() {
        let v =
            |p: Value, version: u64| json!({"includedPaths": [p], "policyFormatVersion": version});
        assert!(refusal(v(path("/id", "Deterministic"), 1), &["/pk"])
            .contains("Path: /id cannot be encrypted with PolicyFormatVersion: 1"));
        assert!(refusal(v(path("/id", "Randomized"), 2), &["/pk"])
            .contains("Only Deterministic encryption type is supported for path: /id."));
        assert!(refusal(v(path("/pk", "Deterministic"), 1), &["/pk"])
            .contains("Path: /pk which is part of the partition key cannot be encrypted"));
        assert!(refusal(v(path("/a", "Randomized"), 2), &["/a", "/b"])
            .contains("Path: /a which is part of the partition key has to be encrypted with Deterministic"));
        // The first property of a nested partition key path counts.
        assert!(refusal(v(path("/a", "Randomized"), 2), &["/a/b"]).contains("partition key"));
        assert!(parse(v(path("/pk", "Deterministic"), 2), &["/pk"]).is_ok());
        assert!(parse(v(path("/id", "Deterministic"), 2), &["/pk"]).is_ok());
    }

    #[test]
    fn shapes_the_sdks_refuse_are_refused() {
        let one = |p: Value| json!({"includedPaths": [p], "policyFormatVersion": 2});
        assert!(refusal(one(path("/a/b", "Randomized")), &["/pk"]).contains("Invalid path '/a/b'"));
        assert!(refusal(one(path("a", "Randomized")), &["/pk"]).contains("Invalid path 'a'"));
        assert!(refusal(one(path("/", "Randomized")), &["/pk"]).contains("Invalid path '/'"));
        assert!(refusal(one(path("/a", "Plaintext")), &["/pk"])
            .contains("'Deterministic' or 'Randomized'"));
        let mut legacy = path("/a", "Randomized");
        legacy["encryptionAlgorithm"] = json!("AEAes256CbcHmacSha256Randomized");
        assert!(refusal(one(legacy), &["/pk"]).contains("EncryptionAlgorithm should be"));
        let mut keyless = path("/a", "Randomized");
        keyless["clientEncryptionKeyId"] = json!("");
        assert!(refusal(one(keyless), &["/pk"]).contains("'clientEncryptionKeyId'"));
        let twice =
            json!({"includedPaths": [path("/a", "Randomized"), path("/a", "Deterministic")]});
        assert!(refusal(twice, &["/pk"]).contains("Duplicate Path found: /a."));
        let v3 = json!({"includedPaths": [], "policyFormatVersion": 3});
        assert!(refusal(v3, &["/pk"])
            .contains("Supported versions of client encryption policy are 1 and 2."));
        assert!(refusal(json!({"policyFormatVersion": 2}), &["/pk"]).contains("'includedPaths'"));
        assert!(refusal(json!([]), &["/pk"]).contains("must be an object"));
    }

    #[test]
    fn the_same_policy_in_another_order_is_the_same() {
        let a = json!({"includedPaths": [path("/a", "Randomized"), path("/b", "Deterministic")], "policyFormatVersion": 2});
        let b = json!({"includedPaths": [path("/b", "Deterministic"), path("/a", "Randomized")], "policyFormatVersion": 2});
        let c = json!({"includedPaths": [path("/b", "Deterministic")], "policyFormatVersion": 2});
        let (a, b, c) = (
            parse(a, &["/pk"]).unwrap().unwrap(),
            parse(b, &["/pk"]).unwrap().unwrap(),
            parse(c, &["/pk"]).unwrap().unwrap(),
        );
        assert!(a.same_as(&b));
        assert!(!a.same_as(&c));
    }

    #[test]
    fn key_ids_are_read_leniently() {
        let policy = json!({"includedPaths": [
            {"path": "/", "clientEncryptionKeyId": "b"},
            {"clientEncryptionKeyId": "a"},
            {"clientEncryptionKeyId": "b"},
            {"clientEncryptionKeyId": 3}
        ]});
        assert_eq!(key_ids(Some(&policy)), ["a", "b"]);
        assert!(key_ids(None).is_empty());
    }
}
