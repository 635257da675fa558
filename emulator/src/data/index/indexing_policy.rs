//! A container's indexing policy: validated as the service validates it
//! (types, path syntax, composite and spatial index shapes, the mandatory
//! root path, the documented limits) and stored in the service's normalised
//! shape, which is what reads echo. Nothing is stored when it is refused.
//!
//! Path syntax: `/` then labels separated by `/`, each a name or a quoted
//! `"name"` (or `[]` for array elements), ending in `?` (the scalar at the
//! path) or `*` (everything below it) for included and excluded paths, and
//! ending in a label for composite indexes (`/name`, `/address/city`).
//! The legacy shape (the root written `/`, per-path `indexes`) is accepted
//! and read back in this one, as the service does (legacy.rs).

use serde_json::{json, Map, Value};

use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::limits::{MAX_COMPOSITE_INDEX_PATHS, MAX_INDEXING_PATHS};

mod coverage;
mod legacy;

pub use coverage::{indexes, spatial_paths};

const INDEXING_MODES: [&str; 3] = ["consistent", "lazy", "none"];
const SPATIAL_TYPES: [&str; 4] = ["Point", "Polygon", "MultiPolygon", "LineString"];
const ORDERS: [&str; 2] = ["ascending", "descending"];
/// The excluded path of the system property `_etag`.
const ETAG_PATH: &str = "/\"_etag\"/?";
/// The service's refusal of a policy without the root path: it calls the
/// root "/" (its legacy spelling, still accepted) and asks for "/*".
const MANDATORY_ROOT: &str =
    "The special mandatory indexing path \"/\" is not provided in any of the path type sets. \
     Please provide this path in one of the sets: include or exclude \"/*\".";

/// Whether a normalised policy turns indexing off (R10 forbids TTL then).
pub fn is_mode_none(policy: &Value) -> bool {
    policy["indexingMode"].as_str() == Some("none")
}

/// Validates `indexingPolicy` and returns it normalised: the mode in lower
/// case, `automatic` and the default paths filled in, composite orders
/// spelled out, fields the service does not know dropped.
pub fn parse(value: Option<&Value>) -> ApiResult<Value> {
    let policy = match value {
        None | Some(Value::Null) => &Map::new(),
        Some(Value::Object(o)) => o,
        Some(other) => return Err(invalid(format!("it must be an object, got {other}"))),
    };
    let mode = match policy.get("indexingMode") {
        None => "consistent".to_string(),
        Some(Value::String(m)) if INDEXING_MODES.iter().any(|k| k.eq_ignore_ascii_case(m)) => {
            m.to_lowercase()
        }
        Some(other) => {
            return Err(invalid(format!(
                "indexingMode {other} is invalid: use 'consistent' or 'none' ('lazy' is accepted as the service does)"
            )))
        }
    };
    let none = mode == "none";
    let automatic = match policy.get("automatic") {
        None | Some(Value::Null) => !none,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(invalid(format!(
                "'automatic' must be true or false, got {other}"
            )))
        }
    };
    let mut normalised = Map::new();
    normalised.insert("indexingMode".into(), Value::from(mode));
    normalised.insert("automatic".into(), Value::Bool(automatic));
    let included = paths(policy, "includedPaths")?;
    let excluded = paths(policy, "excludedPaths")?;
    if none {
        // The service ignores paths when nothing is indexed, and echoes none.
        normalised.insert("includedPaths".into(), json!([]));
        normalised.insert("excludedPaths".into(), json!([]));
        return Ok(Value::Object(normalised));
    }
    let included = included.unwrap_or_else(|| vec![json!({"path": "/*"})]);
    // The service never indexes `_etag`: it adds the path to the excluded
    // ones a client sends (after them), so reads always show it.
    let mut excluded = excluded.unwrap_or_default();
    if !excluded.iter().any(|p| p["path"] == ETAG_PATH) {
        excluded.push(json!({ "path": ETAG_PATH }));
    }
    let names_root = |list: &[Value]| list.iter().any(|p| p["path"] == "/*");
    if !names_root(&included) && !names_root(&excluded) {
        return Err(ApiError::bad_request(MANDATORY_ROOT));
    }
    normalised.insert("includedPaths".into(), Value::Array(included));
    normalised.insert("excludedPaths".into(), Value::Array(excluded));
    if let Some(composite) = composite_indexes(policy.get("compositeIndexes"))? {
        normalised.insert("compositeIndexes".into(), composite);
    }
    if let Some(spatial) = spatial_indexes(policy.get("spatialIndexes"))? {
        normalised.insert("spatialIndexes".into(), spatial);
    }
    // Vector and full-text indexes are echoed as given. Their entries name
    // the container's vector embedding and full-text policies, against
    // which `ContainerSettings::parse` checks them (search_policy.rs).
    for field in ["vectorIndexes", "fullTextIndexes"] {
        match policy.get(field) {
            None | Some(Value::Null) => {}
            Some(Value::Array(list)) => {
                normalised.insert(field.into(), Value::Array(list.clone()));
            }
            Some(other) => {
                return Err(invalid(format!(
                    "'{field}' must be an array of objects with a string 'path', got {other}"
                )))
            }
        }
    }
    Ok(Value::Object(normalised))
}

fn invalid(why: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!("The indexingPolicy is invalid: {why}."))
}

/// `includedPaths` or `excludedPaths`: `[{"path": "/a/?"}, ...]`.
fn paths(policy: &Map<String, Value>, field: &str) -> ApiResult<Option<Vec<Value>>> {
    let list = match policy.get(field) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(list)) => list,
        Some(other) => {
            return Err(invalid(format!(
            "'{field}' must be an array of objects such as {{\"path\": \"/name/?\"}}, got {other}"
        )))
        }
    };
    if list.len() > MAX_INDEXING_PATHS {
        return Err(invalid(format!(
            "'{field}' has {} paths; a container may have at most {MAX_INDEXING_PATHS}",
            list.len()
        )));
    }
    list.iter()
        .map(|entry| {
            let Some(path) = entry.get("path").and_then(Value::as_str) else {
                return Err(invalid(format!(
                    "each entry of '{field}' must be an object with a string 'path', got {entry}"
                )));
            };
            let stored = match legacy::root_alias(path) {
                Some(root) => root,
                None => {
                    check_path(path, true)?;
                    path
                }
            };
            // Legacy per-path index specifications are checked, then dropped.
            legacy::check_indexes(path, entry.get("indexes"))?;
            Ok(json!({ "path": stored }))
        })
        .collect::<ApiResult<Vec<_>>>()
        .map(Some)
}

/// `compositeIndexes`: `[[{"path": "/a", "order": "ascending"}, ...], ...]`.
fn composite_indexes(value: Option<&Value>) -> ApiResult<Option<Value>> {
    let list = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(list)) => list,
        Some(other) => {
            return Err(invalid(format!(
                "'compositeIndexes' must be an array of arrays of paths, got {other}"
            )))
        }
    };
    let mut normalised = Vec::with_capacity(list.len());
    for index in list {
        let Some(paths) = index.as_array() else {
            return Err(invalid(format!(
                "each composite index must be an array of {{\"path\", \"order\"}} objects, got {index}"
            )));
        };
        if paths.len() < 2 || paths.len() > MAX_COMPOSITE_INDEX_PATHS {
            return Err(invalid(format!(
                "a composite index needs between 2 and {MAX_COMPOSITE_INDEX_PATHS} paths, got {}",
                paths.len()
            )));
        }
        let mut entries = Vec::with_capacity(paths.len());
        for entry in paths {
            let Some(path) = entry.get("path").and_then(Value::as_str) else {
                return Err(invalid(format!(
                    "each composite index path must be an object with a string 'path', got {entry}"
                )));
            };
            check_path(path, false)?;
            let order = match entry.get("order") {
                None | Some(Value::Null) => "ascending".to_string(),
                Some(Value::String(o)) if ORDERS.iter().any(|k| k.eq_ignore_ascii_case(o)) => {
                    o.to_lowercase()
                }
                Some(other) => {
                    return Err(invalid(format!(
                        "the order {other} of the composite path '{path}' is invalid: use 'ascending' or 'descending'"
                    )))
                }
            };
            entries.push(json!({"path": path, "order": order}));
        }
        normalised.push(Value::Array(entries));
    }
    Ok(Some(Value::Array(normalised)))
}

/// `spatialIndexes`: `[{"path": "/location/*", "types": ["Point", ...]}]`.
fn spatial_indexes(value: Option<&Value>) -> ApiResult<Option<Value>> {
    let list = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(list)) => list,
        Some(other) => {
            return Err(invalid(format!(
                "'spatialIndexes' must be an array of {{\"path\", \"types\"}} objects, got {other}"
            )))
        }
    };
    let mut normalised = Vec::with_capacity(list.len());
    for entry in list {
        let Some(path) = entry.get("path").and_then(Value::as_str) else {
            return Err(invalid(format!(
                "each spatial index must be an object with a string 'path', got {entry}"
            )));
        };
        check_path(path, true)?;
        let types = match entry.get("types") {
            Some(Value::Array(types)) => types,
            other => {
                return Err(invalid(format!(
                    "the spatial index '{path}' needs 'types', an array of {}, got {}",
                    SPATIAL_TYPES.join(", "),
                    other.map_or("nothing".to_string(), Value::to_string)
                )))
            }
        };
        for t in types {
            if !t.as_str().is_some_and(|t| SPATIAL_TYPES.contains(&t)) {
                return Err(invalid(format!(
                    "the spatial type {t} of '{path}' is invalid: use {}",
                    SPATIAL_TYPES.join(", ")
                )));
            }
        }
        normalised.push(json!({"path": path, "types": types}));
    }
    Ok(Some(Value::Array(normalised)))
}

/// Checks an indexing path's syntax; `terminal` paths (included, excluded,
/// spatial) end in `?` or `*`, composite paths end in a label.
fn check_path(path: &str, terminal: bool) -> ApiResult<()> {
    let refuse = |position: usize| {
        ApiError::bad_request(format!(
            "The indexing path '{path}' could not be accepted, failed near position {position}. \
             Please ensure that the path is a valid path. Common errors include invalid characters \
             or absence of quotes around labels.{}",
            if terminal {
                " Included and excluded paths end in '/?' or '/*', e.g. '/name/?'."
            } else {
                " Composite index paths name a property, e.g. '/name'."
            }
        ))
    };
    let bytes = path.as_bytes();
    if bytes.first() != Some(&b'/') {
        return Err(refuse(0));
    }
    let mut i = 1;
    loop {
        // One segment, starting at i.
        match bytes.get(i) {
            Some(b'?') | Some(b'*') if terminal => {
                return if i + 1 == bytes.len() {
                    Ok(())
                } else {
                    Err(refuse(i + 1))
                };
            }
            Some(b'"') => {
                let close = path[i + 1..].find('"').ok_or_else(|| refuse(path.len()))?;
                if close == 0 {
                    return Err(refuse(i + 1));
                }
                i += close + 2;
            }
            Some(b'[') => {
                if bytes.get(i + 1) != Some(&b']') {
                    return Err(refuse(i + 1));
                }
                i += 2;
            }
            Some(_) => {
                let start = i;
                while i < bytes.len() && !matches!(bytes[i], b'/') {
                    if matches!(bytes[i], b'"' | b'*' | b'?' | b'[' | b']')
                        || bytes[i].is_ascii_whitespace()
                    {
                        return Err(refuse(i));
                    }
                    i += 1;
                }
                if i == start {
                    return Err(refuse(i));
                }
            }
            None => return Err(refuse(i)),
        }
        match bytes.get(i) {
            None if !terminal => return Ok(()),
            Some(b'/') => i += 1,
            _ => return Err(refuse(i)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn policy(v: Value) -> ApiResult<Value> {
        parse(Some(&v))
    }

    #[rstest]
    #[case("/*", true)]
    #[case("/", true)]
    #[case("/?", true)]
    #[case("/name/?", true)]
    #[case("/name/*", true)]
    #[case("/tags/[]/?", true)]
    #[case("/\"_etag\"/?", true)]
    #[case("/\"a b/c\"/?", true)]
    #[case("/a/b/c/*", true)]
    #[case("name/?", false)]
    #[case("/name", false)]
    #[case("/name/", false)]
    #[case("//?", false)]
    #[case("/na me/?", false)]
    #[case("/name/?/x", false)]
    #[case("/\"open/?", false)]
    #[case("/\"\"/?", false)]
    #[case("/a/[/?", false)]
    #[case("", false)]
    fn included_path_syntax(#[case] path: &str, #[case] valid: bool) {
        let result =
            policy(json!({"includedPaths": [{"path": path}], "excludedPaths": [{"path": "/*"}]}));
        assert_eq!(result.is_ok(), valid, "{path}: {result:?}");
        if let Err(e) = result {
            assert!(e.message.contains("could not be accepted"), "{}", e.message);
        }
    }

    #[rstest]
    #[case("/name", true)]
    #[case("/address/city", true)]
    #[case("/\"odd name\"", true)]
    #[case("/name/?", false)]
    #[case("/name/*", false)]
    #[case("name", false)]
    fn composite_path_syntax(#[case] path: &str, #[case] valid: bool) {
        let result = policy(json!({"compositeIndexes": [[{"path": path}, {"path": "/other"}]]}));
        assert_eq!(result.is_ok(), valid, "{path}: {result:?}");
    }

    /// The wrong-typed fields the hardening issue found stored and echoed.
    #[rstest]
    #[case(json!({"includedPaths": "x"}), "includedPaths")]
    #[case(json!({"includedPaths": [{"path": 5}]}), "path")]
    #[case(json!({"includedPaths": [5]}), "path")]
    #[case(json!({"automatic": "yes"}), "automatic")]
    #[case(json!({"spatialIndexes": 7}), "spatialIndexes")]
    #[case(json!({"spatialIndexes": [{"path": "/loc/*", "types": ["Circle"]}]}), "Circle")]
    #[case(json!({"spatialIndexes": [{"path": "/loc/*"}]}), "types")]
    #[case(json!({"compositeIndexes": [[{"path": 1}]]}), "composite")]
    #[case(json!({"compositeIndexes": [[{"path": "/a"}, {"path": 1}]]}), "path")]
    #[case(json!({"compositeIndexes": [[{"path": "/a"}, {"path": "/b", "order": "up"}]]}), "order")]
    #[case(json!({"compositeIndexes": {"path": "/a"}}), "compositeIndexes")]
    #[case(json!({"compositeIndexes": [[{"path": "/a"}]]}), "between 2 and 8")]
    #[case(json!({"indexingMode": "eager"}), "indexingMode")]
    #[case(json!({"includedPaths": [{"path": "/a/?"}], "excludedPaths": []}), "mandatory indexing path")]
    #[case(json!([]), "object")]
    fn wrong_shapes_are_refused_naming_the_field(#[case] body: Value, #[case] named: &str) {
        let e = policy(body.clone()).unwrap_err();
        assert_eq!(e.status.as_u16(), 400);
        assert!(e.message.contains(named), "{body}: {}", e.message);
    }

    #[test]
    fn accepted_policies_come_back_normalised() {
        assert_eq!(
            parse(None).unwrap(),
            json!({"indexingMode": "consistent", "automatic": true,
                   "includedPaths": [{"path": "/*"}], "excludedPaths": [{"path": "/\"_etag\"/?"}]})
        );
        assert_eq!(
            policy(json!({"indexingMode": "None"})).unwrap(),
            json!({"indexingMode": "none", "automatic": false, "includedPaths": [], "excludedPaths": []})
        );
        let full = policy(json!({
            "indexingMode": "Consistent",
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": "/big/*"}],
            "compositeIndexes": [[{"path": "/a"}, {"path": "/b", "order": "Descending"}]],
            "spatialIndexes": [{"path": "/loc/*", "types": ["Point", "Polygon"]}],
            "somethingElse": 1
        }))
        .unwrap();
        assert_eq!(
            full,
            json!({
                "indexingMode": "consistent", "automatic": true,
                "includedPaths": [{"path": "/*"}],
                // The service adds `_etag` after the client's excluded paths.
                "excludedPaths": [{"path": "/big/*"}, {"path": "/\"_etag\"/?"}],
                "compositeIndexes": [[{"path": "/a", "order": "ascending"}, {"path": "/b", "order": "descending"}]],
                "spatialIndexes": [{"path": "/loc/*", "types": ["Point", "Polygon"]}]
            })
        );
    }

    #[test]
    fn the_etag_path_is_excluded_once() {
        let etag = json!({"path": "/\"_etag\"/?"});
        for (included, excluded) in [
            (json!([{"path": "/*"}]), json!([])),
            (
                json!([{"path": "/*"}]),
                json!([etag.clone(), {"path": "/big/*"}]),
            ),
            (json!([{"path": "/a/?"}]), json!([{"path": "/*"}])),
        ] {
            let normalised =
                policy(json!({"includedPaths": included, "excludedPaths": excluded})).unwrap();
            let paths = normalised["excludedPaths"].as_array().unwrap();
            assert_eq!(
                paths.iter().filter(|p| **p == etag).count(),
                1,
                "{normalised}"
            );
        }
    }

    #[test]
    fn path_counts_are_bounded() {
        let many: Vec<Value> = (0..=MAX_INDEXING_PATHS)
            .map(|i| json!({"path": format!("/p{i}/?")}))
            .collect();
        let e = policy(json!({"excludedPaths": many})).unwrap_err();
        assert!(e.message.contains("1500"), "{}", e.message);
    }
}
