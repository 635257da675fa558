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
    /// array, as the service extracts them.
    pub fn key_of(&self, item: &Map<String, Value>) -> String {
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
        if self.paths.len() == 1 {
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
        if self.paths.is_empty() {
            if values.is_empty() || values == [Value::Object(Map::new())] {
                return Ok(KeyScope::Exact("[]".into()));
            }
            return Err(self.count_error(values.len()));
        }
        for value in &values {
            match value {
                Value::Object(o) if !o.is_empty() => return Err(component_error(header, value)),
                Value::Array(_) => return Err(component_error(header, value)),
                _ => {}
            }
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
        ApiError::bad_request(format!(
            "{NOT_THE_DEFINITION} The container's partition key has {} path(s) ({}), the header \
             gives {given} value(s).",
            self.paths.len(),
            self.paths_text()
        ))
        .with_substatus(1001)
    }
}

/// The partition key definition the service shows of a container made
/// without one: its items are addressed with the empty key `[]`.
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
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn def() -> PartitionKeyDefinition {
        PartitionKeyDefinition::parse(Some(&json!({"paths": ["/pk"]}))).unwrap()
    }

    #[test]
    fn a_plain_string_header_is_its_own_canonical_key() {
        for value in ["", "p1", "é ü 東京", "a b", "[x]", "a'b", "{}", "\u{7f}"] {
            let header = json!([value]).to_string();
            let key = def().key_from_header(&header).unwrap();
            assert_eq!(key, header);
            let item = json!({"id": "a", "pk": value});
            assert_eq!(def().key_of(item.as_object().unwrap()), key, "{value:?}");
        }
        // Escapes take the JSON path and come out canonical.
        assert_eq!(def().key_from_header(r#"["\u0041"]"#).unwrap(), r#"["A"]"#);
        assert_eq!(def().key_from_header(r#"["a\"b"]"#).unwrap(), r#"["a\"b"]"#);
        assert!(def().key_from_header(r#"["a","b"]"#).is_err());
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

    fn parsed(paths: Value) -> PartitionKeyDefinition {
        PartitionKeyDefinition::parse(Some(&json!({ "paths": paths }))).unwrap()
    }

    fn key(def: &PartitionKeyDefinition, item: Value) -> String {
        def.key_of(item.as_object().unwrap())
    }

    // The Python SDK's own tests of quoted paths
    // (test_partitioned_collection_partition_key_extraction_special_chars):
    // the SDK extracts ["val1", "val2"] and ["val3", "val4"] from these items.
    #[rstest]
    #[case(r#"/"first level' 1*()"/"le/vel2""#, &["first level' 1*()", "le/vel2"])]
    #[case(r#"/'first level" 1*()'/'first le/vel2'"#, &["first level\" 1*()", "first le/vel2"])]
    #[case(r#"/'level" 1*()'/'le/vel2'"#, &["level\" 1*()", "le/vel2"])]
    #[case("/a/b", &["a", "b"])]
    #[case("/ spaced /b/", &["spaced", "b"])]
    #[case(r#"/"say \"hi\"""#, &[r#"say \"hi\""#])]
    fn paths_split_as_the_sdks_parse_them(#[case] path: &str, #[case] expected: &[&str]) {
        assert_eq!(split_path(path).unwrap(), expected);
    }

    #[rstest]
    #[case("/'open")]
    #[case("/a//b")]
    #[case(r#"/"a"b"#)]
    fn malformed_paths_are_refused(#[case] path: &str) {
        assert!(split_path(path).is_err(), "{path}");
        let e = PartitionKeyDefinition::parse(Some(&json!({"paths": [path]}))).unwrap_err();
        assert_eq!(e.status.as_u16(), 400);
        assert!(e.message.contains(path), "{}", e.message);
    }

    #[test]
    fn quoted_paths_find_their_properties() {
        let def = parsed(json!([
            r#"/"first level' 1*()"/"le/vel2""#,
            r#"/'second level" 1*()'/'le/vel2'"#
        ]));
        let item = json!({
            "id": "document1",
            "first level' 1*()": {"le/vel2": "val1"},
            "second level\" 1*()": {"le/vel2": "val2"}
        });
        assert_eq!(key(&def, item), r#"["val1","val2"]"#);
    }

    /// Objects, arrays and absent paths are all "undefined", which the SDKs
    /// send as {}; null is a value of its own.
    #[rstest]
    #[case(json!({"id": "a"}), "[{}]")]
    #[case(json!({"pk": {"nested": 1}}), "[{}]")]
    #[case(json!({"pk": {}}), "[{}]")]
    #[case(json!({"pk": [1, 2]}), "[{}]")]
    #[case(json!({"pk": null}), "[null]")]
    #[case(json!({"pk": "x"}), r#"["x"]"#)]
    fn objects_arrays_and_absent_values_are_undefined(#[case] item: Value, #[case] expected: &str) {
        assert_eq!(key(&def(), item), expected);
        assert_eq!(def().key_from_header(expected).unwrap(), expected);
    }

    #[test]
    fn a_hierarchical_item_lacking_levels_is_addressed_with_undefined_levels() {
        let def = parsed(json!(["/city", "/zipcode"]));
        let vancouver = key(&def, json!({"id": "d", "city": "Vancouver"}));
        assert_eq!(vancouver, r#"["Vancouver",{}]"#);
        // The JavaScript SDK's header for it names it.
        assert_eq!(
            def.key_from_header(r#"["Vancouver",{}]"#).unwrap(),
            vancouver
        );
        // Python's ["Vancouver", null] names another key, and the service
        // refuses it for this item with its definition message.
        assert_ne!(
            def.key_from_header(r#"["Vancouver",null]"#).unwrap(),
            vancouver
        );
        let e = def.mismatch_error();
        assert!(e.message.starts_with(
            "Partition key provided either doesn't correspond to definition in the collection"
        ));
        assert_eq!(key(&def, json!({"id": "e"})), "[{},{}]");
        assert_eq!(
            key(&def, json!({"city": null, "zipcode": 1000.0})),
            "[null,1000]"
        );
        // A single-path key keeps the message the service gives there.
        assert!(self::def()
            .mismatch_error()
            .message
            .starts_with("PartitionKey extracted from document doesn't match"));
    }

    #[test]
    fn a_prefix_of_a_hierarchical_key_scopes_feeds_but_not_point_operations() {
        let def = parsed(json!(["/state", "/city", "/zipcode"]));
        let scope = def.scope_from_header(r#"["CA"]"#).unwrap();
        assert_eq!(
            scope,
            KeyScope::Prefix {
                text: r#"["CA","#.into(),
                components: 1
            }
        );
        for (pk, inside) in [
            (r#"["CA","Oxnard","93033"]"#, true),
            (r#"["CA",{},{}]"#, true),
            (r#"["CAL","Oxnard","93033"]"#, false),
            (r#"["WA","Seattle","98101"]"#, false),
        ] {
            assert_eq!(scope.contains(pk), inside, "{pk}");
        }
        let two = def.scope_from_header(r#"["CA", "Oxnard"]"#).unwrap();
        assert!(two.contains(r#"["CA","Oxnard","93030"]"#));
        assert!(!two.contains(r#"["CA","Oxnard2","93030"]"#));
        // 1.0 and 1 are one key in a prefix too.
        let numeric = def.scope_from_header("[1.0]").unwrap();
        assert!(numeric.contains(r#"[1,"a","b"]"#));
        assert_eq!(
            def.scope_from_header(r#"["CA","Oxnard","93033"]"#).unwrap(),
            KeyScope::Exact(r#"["CA","Oxnard","93033"]"#.into())
        );
        // A point operation needs the whole key (the Python SDK's test reads
        // with ["Redmond"] on two levels and expects this 400).
        let e = def.key_from_header(r#"["CA"]"#).unwrap_err();
        assert_eq!(e.status.as_u16(), 400);
        assert!(e.message.starts_with(
            "Partition key provided either doesn't correspond to definition in the collection"
        ));
        for bad in ["[]", r#"["a","b","c","d"]"#] {
            assert!(def.scope_from_header(bad).is_err(), "{bad}");
        }
        // A single-path key has no prefix.
        assert!(self::def().scope_from_header("[]").is_err());
    }

    #[rstest]
    #[case(r#"[{"a": 1}]"#)]
    #[case("[[1, 2]]")]
    #[case(r#"["x", [1]]"#)]
    fn objects_and_arrays_in_the_header_are_refused(#[case] header: &str) {
        let def = if header.starts_with("[\"x\"") {
            parsed(json!(["/a", "/b"]))
        } else {
            def()
        };
        let e = def.scope_from_header(header).unwrap_err();
        assert_eq!(e.status.as_u16(), 400);
        assert!(
            e.message.contains("never a partition key value"),
            "{}",
            e.message
        );
    }
}
