//! Partition keys: a container's definition (`{"paths": ["/pk"], "kind": "Hash"}`),
//! the value extracted from an item, and the `x-ms-documentdb-partitionkey`
//! header (a JSON array: `["abc"]`, `[{}]` for "undefined", `[]` for none).
//!
//! Values are compared in one canonical text form: the JSON array of the
//! values, with integral numbers written as integers.

use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::limits::{MAX_NESTING_DEPTH, MAX_PARTITION_KEY_BYTES};

#[derive(Debug, Clone, PartialEq)]
pub struct PartitionKeyDefinition {
    /// Each path split into property names: `/a/b` → `["a", "b"]`.
    paths: Vec<Vec<String>>,
    /// The definition as the client gave it (with defaults filled in), echoed back.
    pub wire: Value,
}

impl PartitionKeyDefinition {
    /// Parses a container's `partitionKey` property; absent means a container
    /// without partitions, addressed with the empty key `[]`.
    pub fn parse(value: Option<&Value>) -> ApiResult<Self> {
        let Some(value) = value.filter(|v| !v.is_null()) else {
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
            .filter(|p| !p.is_empty() && p.len() <= 3)
            .ok_or_else(|| invalid("'paths' must be an array of one to three paths"))?;
        let parsed = paths
            .iter()
            .map(|p| {
                let path = p
                    .as_str()
                    .filter(|s| s.starts_with('/') && s.len() > 1)
                    .map(split_path)
                    .ok_or_else(|| invalid("each path must be a string starting with '/'"))?;
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
        wire.entry("version").or_insert_with(|| Value::from(2));
        Ok(PartitionKeyDefinition {
            paths: parsed,
            wire: Value::Object(wire),
        })
    }

    /// The canonical key of an item: its values at the definition's paths,
    /// `{}` where a path is missing.
    pub fn key_of(&self, item: &Map<String, Value>) -> String {
        let values: Vec<Value> = self
            .paths
            .iter()
            .map(|path| {
                lookup(item, path).map_or_else(|| Value::Object(Map::new()), canonical_value)
            })
            .collect();
        Value::Array(values).to_string()
    }

    /// Refuses a key whose values take more than [`MAX_PARTITION_KEY_BYTES`]
    /// (their JSON text, outside the enclosing array).
    /// The partition key of the canonical `key` (`["a"]`) as the object the
    /// change feed's delete metadata carries: `{"pk": "a"}`, nested for a
    /// nested path (`/a/b` → `{"a": {"b": ...}}`), one member per path of a
    /// hierarchical key; undefined components are left out.
    pub fn key_object(&self, key: &str) -> Value {
        let components: Vec<Value> = serde_json::from_str(key).unwrap_or_default();
        let mut object = Value::Object(Map::new());
        for (path, component) in self.paths.iter().zip(components) {
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

    /// Parses the partition key header into the canonical key.
    pub fn key_from_header(&self, header: &str) -> ApiResult<String> {
        let value: Value = serde_json::from_str(header).map_err(|_| {
            ApiError::bad_request(format!(
                "The partition key header '{header}' is invalid: expected a JSON array such as [\"value\"]."
            ))
        })?;
        let Value::Array(values) = value else {
            return Err(ApiError::bad_request(format!(
                "The partition key header '{header}' is invalid: expected a JSON array such as [\"value\"]."
            )));
        };
        if values.len() != self.paths.len()
            && !(self.paths.is_empty() && values == [Value::Object(Map::new())])
        {
            return Err(ApiError::bad_request(format!(
                "Partition key provided either doesn't correspond to definition in the collection or \
                 doesn't match partition key field values specified in the document: the container's \
                 partition key has {} path(s), the header gives {} value(s).",
                self.paths.len(),
                values.len()
            )));
        }
        if self.paths.is_empty() {
            return Ok("[]".into());
        }
        Ok(Value::Array(values.iter().map(canonical_value).collect()).to_string())
    }
}

fn split_path(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_matches('"').to_string())
        .collect()
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
mod tests {
    use super::*;
    use serde_json::json;

    fn def() -> PartitionKeyDefinition {
        PartitionKeyDefinition::parse(Some(&json!({"paths": ["/pk"]}))).unwrap()
    }

    #[test]
    fn item_and_header_give_the_same_key() {
        let item = json!({"id": "a", "pk": "x"});
        let key = def().key_of(item.as_object().unwrap());
        assert_eq!(key, def().key_from_header(r#"["x"]"#).unwrap());
        let missing = def().key_of(json!({"id": "a"}).as_object().unwrap());
        assert_eq!(missing, def().key_from_header("[{}]").unwrap());
        let n = def().key_of(json!({"pk": 1.0}).as_object().unwrap());
        assert_eq!(n, def().key_from_header("[1]").unwrap());
    }

    #[test]
    fn nested_paths_and_bad_input() {
        let d = PartitionKeyDefinition::parse(Some(&json!({"paths": ["/a/b"]}))).unwrap();
        assert_eq!(
            d.key_of(json!({"a": {"b": "v"}}).as_object().unwrap()),
            r#"["v"]"#
        );
        assert!(def().key_from_header("x").is_err());
        assert!(def().key_from_header(r#"["a","b"]"#).is_err());
        assert!(PartitionKeyDefinition::parse(Some(&json!({"paths": "pk"}))).is_err());
        assert!(PartitionKeyDefinition::parse(Some(&json!({"paths": ["pk"]}))).is_err());
    }
}
