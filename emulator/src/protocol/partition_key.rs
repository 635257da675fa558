//! Partition keys: a container's definition (`{"paths": ["/pk"], "kind": "Hash"}`),
//! the value extracted from an item, and the `x-ms-documentdb-partitionkey`
//! header (a JSON array: `["abc"]`, `[{}]` for "undefined", `[]` for none).
//!
//! Values are compared in one canonical text form: the JSON array of the
//! values, with integral numbers written as integers. As in the service, a
//! path that is absent from an item, or that holds an object or an array,
//! gives the component "undefined" (`{}`), distinct from `null`; in a
//! hierarchical (`MultiHash`) key each level is extracted this way, so an
//! item that lacks a level is addressed with `{}` at that level (the
//! JavaScript SDK's `["a", {}]`; `["a", null]` names another key).
//!
//! A container made without a partition key (the v2 SDKs, API versions
//! before 2018-12-31) is shown with the system key `/_partitionKey`
//! ([`system_key_definition`]) and keeps no key path: its items without a
//! `_partitionKey` share the empty key `[]` (the SDKs' `PartitionKey.NONE`,
//! sent as `[]` or `[{}]`), and an item with `"_partitionKey": "Doe"` is in
//! the logical partition `["Doe"]`, addressed with that header, as
//! Microsoft's "Migrate non-partitioned containers to partitioned
//! containers" describes (see `docs/src/partition-keys.md`).

use serde_json::{Map, Value};

use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::limits::{MAX_NESTING_DEPTH, MAX_PARTITION_KEY_BYTES};

#[derive(Debug, Clone, PartialEq)]
pub struct PartitionKeyDefinition {
    /// Each path split into property names: `/a/b` → `["a", "b"]`.
    paths: Vec<Vec<String>>,
    /// The definition as the client gave it (with defaults filled in), echoed back.
    pub wire: Value,
}

impl PartitionKeyDefinition {
    /// Parses a container's `partitionKey` property; absent, or the system
    /// key that the service shows of such a container
    /// ([`system_key_definition`]), means a container without partitions,
    /// addressed with the empty key `[]`.
    pub fn parse(value: Option<&Value>) -> ApiResult<Self> {
        let system_key = |v: &&Value| v.get("systemKey") == Some(&Value::Bool(true));
        let Some(value) = value.filter(|v| !v.is_null() && !system_key(v)) else {
            return Ok(PartitionKeyDefinition {
                paths: Vec::new(),
                wire: Value::Null,
            });
        };
        let invalid = |why: &str| {
            ApiError::bad_request(format!(
                "The partitionKey definition is invalid: {why}. Expected e.g. {{\"paths\": [\"/pk\"], \"kind\": \"Hash\"}}."
            ))
        };
        let object = value
            .as_object()
            .ok_or_else(|| invalid("it must be an object"))?;
        let paths = object
            .get("paths")
            .and_then(Value::as_array)
            .filter(|p| !p.is_empty())
            .ok_or_else(|| invalid("'paths' must be an array of one to three paths"))?;
        if paths.len() > 3 {
            // The service's words (the SDKs' subpartition tests look for them).
            return Err(invalid(&format!(
                "Too many partition key paths ({}) specified. A maximum of 3 is allowed",
                paths.len()
            )));
        }
        let parsed = paths
            .iter()
            .map(|p| {
                let text = p
                    .as_str()
                    .ok_or_else(|| invalid("each path must be a string starting with '/'"))?;
                let path = if text.starts_with('/') && text.len() > 1 {
                    split_path(text).map_err(|why| unaccepted_path(text, &why))?
                } else {
                    return Err(unaccepted_path(text, "a path starts with '/'"));
                };
                if path.len() >= MAX_NESTING_DEPTH {
                    return Err(invalid(&format!(
                        "a path may name at most {} nested properties, as items nest at most {MAX_NESTING_DEPTH} levels",
                        MAX_NESTING_DEPTH - 1
                    )));
                }
                Ok(path)
            })
            .collect::<ApiResult<Vec<_>>>()?;
        let mut wire = object.clone();
        let kind = if parsed.len() > 1 {
            "MultiHash"
        } else {
            "Hash"
        };
        wire.entry("kind").or_insert_with(|| Value::from(kind));
        // Without a version the service hashes with version 1, as the
        // large-partition-key documentation says (its JavaScript example
        // asks for version 2 explicitly) and as the JavaScript SDK's tests
        // find: their keys fall into ranges by the V1 hash. A hierarchical
        // key is version 2 only.
        let hierarchical = wire.get("kind").and_then(Value::as_str) == Some("MultiHash");
        let version = if hierarchical { 2 } else { 1 };
        wire.entry("version")
            .or_insert_with(|| Value::from(version));
        Ok(PartitionKeyDefinition {
            paths: parsed,
            wire: Value::Object(wire),
        })
    }

    /// The canonical key of an item: its values at the definition's paths,
    /// `{}` (undefined) where a path is missing or holds an object or an
    /// array, as the service extracts them. In a container without a
    /// partition key: `[value]` of its system key `_partitionKey`, else `[]`.
    pub fn key_of(&self, item: &Map<String, Value>) -> String {
        if self.paths.is_empty() {
            return match item.get(SYSTEM_KEY) {
                Some(Value::Object(_) | Value::Array(_)) | None => "[]".to_owned(),
                Some(value) => Value::Array(vec![canonical_value(value)]).to_string(),
            };
        }
        let values: Vec<Value> = self
            .paths
            .iter()
            .map(|path| match lookup(item, path) {
                Some(Value::Object(_) | Value::Array(_)) | None => Value::Object(Map::new()),
                Some(value) => canonical_value(value),
            })
            .collect();
        Value::Array(values).to_string()
    }

    /// Each path split into property names: `/a/b` → `["a", "b"]`.
    pub fn paths(&self) -> &[Vec<String>] {
        &self.paths
    }

    /// The index a lookup by this key uses, as the service's index metrics
    /// name it: `/pk/?` for one path, `/_epk/?` (the hashed key) for several.
    pub fn index_spec(&self) -> Option<String> {
        match self.paths.as_slice() {
            [] => None,
            [one] => Some(format!("/{}/?", one.join("/"))),
            _ => Some("/_epk/?".to_string()),
        }
    }

    /// Whether the definition is hierarchical (`MultiHash`).
    pub fn is_hierarchical(&self) -> bool {
        self.paths.len() > 1 || self.wire.get("kind").and_then(Value::as_str) == Some("MultiHash")
    }

    /// The message of the service for a header whose key is not the
    /// item's: for a hierarchical key (an item lacking a level, sent with
    /// `null` for it), the definition message the service gives.
    pub fn mismatch_error(&self) -> ApiError {
        if self.is_hierarchical() {
            ApiError::bad_request(format!(
                "{NOT_THE_DEFINITION} The header's values are not the item's at {}. A level \
                 the item lacks (or that holds an object or an array) is undefined, sent as \
                 {{}}, not null.",
                self.paths_text()
            ))
        } else {
            ApiError::bad_request(
                "PartitionKey extracted from document doesn't match the one specified in the header.",
            )
        }
    }

    /// The definition's paths as written in messages: `/a, /b/c`.
    fn paths_text(&self) -> String {
        self.paths
            .iter()
            .map(|p| format!("/{}", p.join("/")))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The partition key of the canonical `key` (`["a"]`) as the object the
    /// change feed's delete metadata carries: `{"pk": "a"}`, nested for a
    /// nested path (`/a/b` → `{"a": {"b": ...}}`), one member per path of a
    /// hierarchical key; undefined components are left out.
    pub fn key_object(&self, key: &str) -> Value {
        let components: Vec<Value> = serde_json::from_str(key).unwrap_or_default();
        let mut object = Value::Object(Map::new());
        let system = [vec![SYSTEM_KEY.to_owned()]];
        let paths = if self.paths.is_empty() {
            &system[..]
        } else {
            &self.paths[..]
        };
        for (path, component) in paths.iter().zip(components) {
            if component == Value::Object(Map::new()) {
                continue;
            }
            let mut at = &mut object;
            for (i, name) in path.iter().enumerate() {
                let Some(map) = at.as_object_mut() else { break };
                if i + 1 == path.len() {
                    map.insert(name.clone(), component.clone());
                    break;
                }
                at = map
                    .entry(name.clone())
                    .or_insert_with(|| Value::Object(Map::new()));
            }
        }
        object
    }

    /// Refuses a key whose values take more than [`MAX_PARTITION_KEY_BYTES`]
    /// (their JSON text, outside the enclosing array).
    pub fn check_size(key: &str) -> ApiResult<()> {
        let size = key.len().saturating_sub(2);
        if size > MAX_PARTITION_KEY_BYTES + 2 {
            return Err(ApiError::bad_request(format!(
                "The partition key value is {size} bytes long; the service allows at most \
                 {MAX_PARTITION_KEY_BYTES} bytes. Use a shorter value, e.g. a hash of it."
            )));
        }
        Ok(())
    }

    /// Parses the partition key header of a point operation into the
    /// canonical key: one value per path.
    pub fn key_from_header(&self, header: &str) -> ApiResult<String> {
        match self.scope_from_header(header)? {
            KeyScope::Exact(key) => Ok(key),
            KeyScope::Prefix { components, .. } => Err(self.count_error(components)),
        }
    }

    /// Parses the partition key header of a query, a feed or a delete by
    /// partition key: a whole key, or for a hierarchical key a prefix of
    /// its levels (the first one or two of three), which names every item
    /// under it.
    pub fn scope_from_header(&self, header: &str) -> ApiResult<KeyScope> {
        // The common case, one plain string (`["tenant-1"]`), is already its
        // own canonical text: no JSON round trip on every point operation.
        if self.paths.len() <= 1 {
            let inner = header
                .strip_prefix("[\"")
                .and_then(|h| h.strip_suffix("\"]"));
            if inner.is_some_and(|s| !s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20)) {
                return Ok(KeyScope::Exact(header.to_owned()));
            }
        }
        let invalid = || {
            ApiError::bad_request(format!(
                "The partition key header '{header}' is invalid: expected a JSON array such as [\"value\"]."
            ))
        };
        let Ok(Value::Array(values)) = serde_json::from_str::<Value>(header) else {
            return Err(invalid());
        };
        for value in &values {
            match value {
                Value::Object(o) if !o.is_empty() => return Err(component_error(header, value)),
                Value::Array(_) => return Err(component_error(header, value)),
                _ => {}
            }
        }
        if self.paths.is_empty() {
            // PartitionKey.NONE (`[]`, or `[{}]` as the SDKs send it), or
            // one value of the system key `_partitionKey`.
            return match values.as_slice() {
                [] | [Value::Object(_)] => Ok(KeyScope::Exact("[]".into())),
                [one] => Ok(KeyScope::Exact(
                    Value::Array(vec![canonical_value(one)]).to_string(),
                )),
                _ => Err(self.count_error(values.len())),
            };
        }
        let prefix =
            self.is_hierarchical() && !values.is_empty() && values.len() < self.paths.len();
        if values.len() != self.paths.len() && !prefix {
            return Err(self.count_error(values.len()));
        }
        let text = Value::Array(values.iter().map(canonical_value).collect()).to_string();
        if prefix {
            // `["a","b"]` → `["a","b",`: the start of every key under it.
            let text = format!("{},", &text[..text.len() - 1]);
            return Ok(KeyScope::Prefix {
                text,
                components: values.len(),
            });
        }
        Ok(KeyScope::Exact(text))
    }

    /// A header with too few or too many values: 400 with the service's
    /// partition key mismatch substatus (1001), as the Python SDK's
    /// subpartition tests expect of a point read given a prefix.
    fn count_error(&self, given: usize) -> ApiError {
        if self.paths.is_empty() {
            return ApiError::bad_request(format!(
                "{NOT_THE_DEFINITION} The container was made without a partition key: address \
                 its items with [] (PartitionKey.NONE) or with one value of its system key \
                 /_partitionKey, e.g. [\"Doe\"]; the header gives {given} value(s)."
            ))
            .with_substatus(1001);
        }
        ApiError::bad_request(format!(
            "{NOT_THE_DEFINITION} The container's partition key has {} path(s) ({}), the header \
             gives {given} value(s).",
            self.paths.len(),
            self.paths_text()
        ))
        .with_substatus(1001)
    }
}

/// The property a container made without a partition key partitions by.
pub const SYSTEM_KEY: &str = "_partitionKey";

/// The partition key definition the service shows of a container made
/// without one: its items without `_partitionKey` are addressed with the
/// empty key `[]`, the others with their `_partitionKey`.
pub fn system_key_definition() -> Value {
    serde_json::json!({"paths": ["/_partitionKey"], "kind": "Hash", "systemKey": true})
}

/// The service's refusal of a partition key path (its words, then what is
/// wrong): `pk` for `/pk` fails at position 0, as in Azure.
fn unaccepted_path(path: &str, why: &str) -> ApiError {
    // Near: the service counts characters into the path; this emulator
    // names the first one (no slash) or the one after it.
    let position = usize::from(path.starts_with('/'));
    ApiError::bad_request(format!(
        "The partition key component definition path '{path}' could not be accepted, failed \
         near position '{position}'. Partition key paths must contain only valid characters and \
         not contain a trailing slash or wildcard character. ({why}.)"
    ))
}

/// The service's message for a partition key that does not fit the container
/// (the SDKs' tests look for it whole, with its period).
const NOT_THE_DEFINITION: &str = "Partition key provided either doesn't correspond to definition \
    in the collection or doesn't match partition key field values specified in the document.";

fn component_error(header: &str, value: &Value) -> ApiError {
    ApiError::bad_request(format!(
        "The partition key header '{header}' is invalid: the component {value} is neither a \
         string, a number, a boolean, null nor {{}} (undefined); an object or an array is never \
         a partition key value."
    ))
}

/// The items a partition key header names, as a canonical key or the start
/// of canonical keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyScope {
    /// One logical partition: the canonical key (`["a","b"]`).
    Exact(String),
    /// Every key under a prefix of a hierarchical key: the canonical text
    /// that each of their keys starts with (`["a",`), and how many levels
    /// the prefix gives.
    Prefix { text: String, components: usize },
}

impl KeyScope {
    /// Whether the canonical key `pk` is in scope.
    pub fn contains(&self, pk: &str) -> bool {
        match self {
            KeyScope::Exact(key) => pk == key,
            KeyScope::Prefix { text, .. } => pk.starts_with(text.as_str()),
        }
    }
}

/// Splits a partition key path into property names as the service and
/// the SDKs do (`PathParser` in .NET, `ParsePaths` in Python): segments
/// between `/`, trimmed, or quoted with `"` or `'` to hold any character
/// (`/'a/b'/"it's"` → `["a/b", "it's"]`); a quote preceded by a backslash
/// does not end the segment, and is kept as written.
pub(crate) fn split_path(path: &str) -> Result<Vec<String>, String> {
    let mut tokens = Vec::new();
    let mut rest = path;
    while let Some(after_slash) = rest.strip_prefix('/') {
        rest = after_slash;
        if rest.is_empty() {
            break; // a trailing slash, as the SDKs allow
        }
        let Some(quote) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            let end = rest.find('/').unwrap_or(rest.len());
            let token = rest[..end].trim();
            if token.is_empty() {
                return Err(format!("the path '{path}' has an empty segment"));
            }
            // Unquoted, a segment holds letters, digits and '_' only (the
            // JavaScript SDK's "Path contains anything other than
            // AlphaNumeric + '_'": `/id ds` is refused); quoted, anything.
            if let Some(c) = token.chars().find(|c| !c.is_alphanumeric() && *c != '_') {
                return Err(format!(
                    "the segment '{token}' holds '{c}': unquoted, a segment holds only letters, \
                     digits and '_'; quote it (\"...\") to hold any character"
                ));
            }
            tokens.push(token.to_string());
            rest = &rest[end..];
            continue;
        };
        let body = &rest[1..];
        let mut search = 0;
        let close = loop {
            let Some(found) = body[search..].find(quote).map(|i| search + i) else {
                return Err(format!(
                    "the path '{path}' opens a {quote}-quoted segment that never closes"
                ));
            };
            if found > 0 && body.as_bytes()[found - 1] == b'\\' {
                search = found + 1;
                continue;
            }
            break found;
        };
        tokens.push(body[..close].to_string());
        rest = &body[close + 1..];
        if !rest.is_empty() && !rest.starts_with('/') {
            return Err(format!(
                "in the path '{path}' a quoted segment must be followed by '/' or end the path"
            ));
        }
    }
    if !rest.is_empty() || tokens.is_empty() {
        return Err(format!("the path '{path}' is not a sequence of /segments"));
    }
    Ok(tokens)
}

fn lookup<'a>(item: &'a Map<String, Value>, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter()
        .try_fold(item.get(first)?, |v, name| v.as_object()?.get(name))
}

/// Integral numbers as integers, so `1` and `1.0` name the same partition.
fn canonical_value(value: &Value) -> Value {
    match value {
        Value::Number(n) if n.is_f64() => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
            _ => value.clone(),
        },
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests;
