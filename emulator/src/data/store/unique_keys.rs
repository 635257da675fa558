//! Unique keys (`uniqueKeyPolicy`): the policy as a container sets it, and
//! the index that enforces it.
//!
//! What the service does, and where it is written:
//! - "Unique key constraints in Azure Cosmos DB" (learn.microsoft.com,
//!   `azure/cosmos-db/unique-keys`; MicrosoftDocs/azure-databases-docs
//!   `articles/cosmos-db/unique-keys.md`, 2025-07):
//!   - a unique key is scoped to a **logical partition**: the partition key
//!     combined with the unique key is unique in the container;
//!   - the policy is set when the container is created and **cannot be
//!     changed** afterwards;
//!   - a policy has **at most 16 path values** in all (e.g. `/firstName`,
//!     `/lastName`, `/address/zipCode`) and **at most 10 unique keys**
//!     ("constraints or combinations");
//!   - values are JSON values and **case-sensitive** ("Gaby" ≠ "gaby");
//!     property names too (`/address/zipcode` does not see `ZipCode`);
//!   - sparse unique keys are not supported: a **missing value is treated as
//!     null** and takes part in the constraint, so only one item of a
//!     partition may lack (or hold null at) a single-path unique key;
//!   - a write that would duplicate is refused with "Resource with specified
//!     ID, name, or unique index already exists" (409 Conflict).
//! - The .NET and Java SDKs' `UniqueKey` remarks say the same of partition
//!   keys and of missing values.
//! - A container replace whose policy differs from the current one is
//!   refused **403 Forbidden** "The unique index cannot be modified. To change
//!   the unique index, remove the collection and re-create a new one."
//!   (Azure/azure-sdk-for-python#40070, Azure/ARO-RP#2401, Azure/azure-
//!   powershell#11383): a replace that omits the policy of a container that
//!   has one changes it, and is refused too.
//! - Types are told apart (1 ≠ "1", as JSON values are); numbers compare as
//!   numbers (1 = 1.0), as everywhere in the service.
//! - The official Python SDK's tests (azure-cosmos 4.17.1) send no
//!   `uniqueKeyPolicy`; its samples send
//!   `{"uniqueKeys": [{"paths": ["/field1/field2", "/field3"]}]}`, accepted
//!   here. The empty policy (`{"uniqueKeys": []}`, what .NET sends by
//!   default and the service echoes) is no policy.
//!
//! TTL (R5): an expired item holds no unique value, purged or not: a holder
//! is only honoured while it is live. Deleted and purged items let go of
//! theirs at the change log's door (`Container::forget`).
//!
//! Cost: nothing for a container without unique keys (no index). With them,
//! per item one entry per unique key (its partition key and values as one
//! string) and the list of its entries (to let go on delete without reading
//! the body); a write parses the stored body once more to find its values,
//! and looks each key up once.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::item_key::ItemKey;
use crate::protocol::partition_key::split_path;

/// The most unique keys a policy may have (the documented limit).
pub const MAX_UNIQUE_KEYS: usize = 10;
/// The most paths a policy may have, over all its keys (the documented limit).
pub const MAX_UNIQUE_KEY_PATHS: usize = 16;

/// One unique key: its paths as written, and each split into property names.
#[derive(Debug, Clone, PartialEq, Eq)]
struct UniqueKey {
    paths: Vec<String>,
    segments: Vec<Vec<String>>,
}

/// A container's unique keys; empty without a policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UniqueKeyPolicy {
    keys: Vec<UniqueKey>,
}

impl UniqueKeyPolicy {
    /// Reads and validates a container's `uniqueKeyPolicy` (absent or null:
    /// none).
    pub fn parse(value: Option<&Value>) -> ApiResult<Self> {
        let Some(value) = value.filter(|v| !v.is_null()) else {
            return Ok(Self::default());
        };
        let invalid = |why: String| {
            ApiError::bad_request(format!(
                "The uniqueKeyPolicy is invalid: {why}. Expected e.g. \
                 {{\"uniqueKeys\": [{{\"paths\": [\"/email\"]}}, {{\"paths\": [\"/firstName\", \"/lastName\"]}}]}}."
            ))
        };
        let object = value
            .as_object()
            .ok_or_else(|| invalid("it must be an object".into()))?;
        let keys = match object.get("uniqueKeys") {
            None | Some(Value::Null) => return Ok(Self::default()),
            Some(Value::Array(keys)) => keys,
            Some(_) => return Err(invalid("'uniqueKeys' must be an array".into())),
        };
        if keys.len() > MAX_UNIQUE_KEYS {
            return Err(invalid(format!(
                "'uniqueKeys' has {} unique keys; a policy may have at most {MAX_UNIQUE_KEYS}",
                keys.len()
            )));
        }
        let mut parsed: Vec<UniqueKey> = Vec::with_capacity(keys.len());
        let mut total = 0;
        for (n, key) in keys.iter().enumerate() {
            let paths = key
                .as_object()
                .and_then(|k| k.get("paths"))
                .and_then(Value::as_array)
                .filter(|p| !p.is_empty())
                .ok_or_else(|| {
                    invalid(format!(
                        "uniqueKeys[{n}] must be an object whose 'paths' is a non-empty array of paths"
                    ))
                })?;
            total += paths.len();
            if total > MAX_UNIQUE_KEY_PATHS {
                return Err(invalid(format!(
                    "its unique keys have more than {MAX_UNIQUE_KEY_PATHS} paths in all, the most a policy may have"
                )));
            }
            let mut key = UniqueKey {
                paths: Vec::with_capacity(paths.len()),
                segments: Vec::with_capacity(paths.len()),
            };
            for path in paths {
                let text = path
                    .as_str()
                    .filter(|s| s.starts_with('/') && s.trim_end_matches('/').len() > 1)
                    .ok_or_else(|| {
                        invalid(format!(
                            "uniqueKeys[{n}].paths holds {path}: each path must be a non-empty string starting with '/', e.g. \"/address/zipCode\""
                        ))
                    })?;
                let segments = split_path(text)
                    .map_err(|why| invalid(format!("uniqueKeys[{n}].paths: {why}")))?;
                if key.segments.contains(&segments) {
                    return Err(invalid(format!(
                        "uniqueKeys[{n}].paths names '{text}' twice"
                    )));
                }
                key.paths.push(text.to_string());
                key.segments.push(segments);
            }
            if parsed.iter().any(|other| same_paths(other, &key)) {
                return Err(invalid(format!(
                    "uniqueKeys[{n}] has the same paths as an earlier unique key"
                )));
            }
            parsed.push(key);
        }
        Ok(UniqueKeyPolicy { keys: parsed })
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Whether `other` is the same policy (same keys, each with the same
    /// paths, in any order).
    pub fn same_as(&self, other: &UniqueKeyPolicy) -> bool {
        self.keys.len() == other.keys.len()
            && self
                .keys
                .iter()
                .all(|key| other.keys.iter().any(|o| same_paths(o, key)))
    }

    /// The index entries of an item body in the partition `pk`: one per
    /// unique key, its number, the partition key and the values at its paths
    /// (null where missing) as one string.
    pub fn entries(&self, pk: &str, body: &Map<String, Value>) -> Vec<String> {
        self.keys
            .iter()
            .enumerate()
            .map(|(n, key)| {
                let mut entry = format!("{n}{pk}[");
                for (i, path) in key.segments.iter().enumerate() {
                    if i > 0 {
                        entry.push(',');
                    }
                    canonical(lookup(body, path).unwrap_or(&Value::Null), &mut entry);
                }
                entry.push(']');
                entry
            })
            .collect()
    }

    /// The conflict a write gets when its values at the unique key of
    /// `entry` are another live item's.
    pub fn conflict(&self, entry: &str) -> ApiError {
        let n: usize = entry
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|d| d.parse().ok())
            .unwrap_or(0);
        let paths = self
            .keys
            .get(n)
            .map(|k| k.paths.join(", "))
            .unwrap_or_default();
        ApiError::conflict().with_message(format!(
            "Unique index constraint violation: another item of this logical partition has the same values at the unique key ({paths}). \
             Resource with specified ID, name, or unique index already exists."
        ))
    }
}

/// Whether two unique keys have the same paths (in any order).
fn same_paths(a: &UniqueKey, b: &UniqueKey) -> bool {
    a.segments.len() == b.segments.len() && a.segments.iter().all(|s| b.segments.contains(s))
}

fn lookup<'a>(body: &'a Map<String, Value>, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter()
        .try_fold(body.get(first)?, |v, name| v.as_object()?.get(name))
}

/// Writes a value so that equal values write the same: numbers as numbers
/// (1 and 1.0 alike), objects with their properties in name order.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
                out.push_str(&(f as i64).to_string())
            }
            Some(f) => out.push_str(&Value::from(f).to_string()),
            None => out.push_str(&n.to_string()),
        },
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut names: Vec<&String> = map.keys().collect();
            names.sort();
            out.push('{');
            for (i, name) in names.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::from(name.as_str()).to_string());
                out.push(':');
                canonical(&map[name], out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Which item holds each unique value of a container: kept by the change
/// log's two doors, `install` and `forget`, so that every path (writes,
/// deletes, purge, delete by partition key, replay, restore) keeps it right.
/// An entry may still name an expired item until it is purged: holders are
/// only honoured while live ([`UniqueIndex::holder`]'s callers check).
#[derive(Debug, Default)]
pub struct UniqueIndex {
    policy: UniqueKeyPolicy,
    holders: FastMap<String, ItemKey>,
    /// Each item's entries, to let go of them without reading its body.
    entries: FastMap<ItemKey, Box<[String]>>,
}

impl UniqueIndex {
    /// The index of a policy; `None` without unique keys (nothing kept).
    pub fn for_policy(policy: &UniqueKeyPolicy) -> Option<Box<UniqueIndex>> {
        (!policy.is_empty()).then(|| {
            Box::new(UniqueIndex {
                policy: policy.clone(),
                ..UniqueIndex::default()
            })
        })
    }

    pub fn policy(&self) -> &UniqueKeyPolicy {
        &self.policy
    }

    /// The item that holds `entry`, live or (until purged) expired.
    pub fn holder(&self, entry: &str) -> Option<&ItemKey> {
        self.holders.get(entry)
    }

    /// Records the stored body (JSON bytes) of the item at `key` as the
    /// holder of its values, in place of its previous version's.
    pub fn insert(&mut self, key: &ItemKey, stored_body: &[u8]) {
        self.remove(key);
        let body: Map<String, Value> = serde_json::from_slice(stored_body).unwrap_or_default();
        let entries = self.policy.entries(key.pk(), &body);
        for entry in &entries {
            self.holders.insert(entry.clone(), key.clone());
        }
        self.entries.insert(key.clone(), entries.into_boxed_slice());
    }

    /// Lets go of the values of the item at `key` (those it still holds).
    pub fn remove(&mut self, key: &ItemKey) {
        let Some(entries) = self.entries.remove(key) else {
            return;
        };
        for entry in entries.iter() {
            if self.holders.get(entry) == Some(key) {
                self.holders.remove(entry);
            }
        }
    }

    /// How many values are held (for tests).
    pub fn held(&self) -> usize {
        self.holders.len()
    }
}

#[cfg(test)]
mod tests;
