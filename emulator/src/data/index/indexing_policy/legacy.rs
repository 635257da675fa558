//! The legacy (version 1) shape of an indexing policy, which the service
//! still accepts: the root path written `/`, and per-path index
//! specifications `indexes: [{"kind", "dataType", "precision"}]`.
//!
//! What the service does, from the tests Microsoft's SDK teams run against
//! it (the `azure-cosmos` 4.17.1 sdist):
//! - `/` is accepted as the root path, alone or with index specifications:
//!   `tests/test_orderby.py:52` and `tests/test_aggregate.py:212` (`/` with
//!   Range/Number and Range/String, the only included path: so it satisfies
//!   the mandatory root path), `tests/test_crud_container.py:568` (`/` with
//!   Hash/Number/precision 2 beside an excluded path: read back with 1
//!   included and 2 excluded paths, lines 588-593), `tests/test_crud.py:809`
//!   (`/` after `/"Location"/?` with Spatial/Point), and
//!   `samples/index_management.py:651`.
//! - Index specifications are accepted and dropped: `/*` with Hash/String
//!   and Range/Number reads back as the default policy, whose root path has
//!   no `indexes` (`tests/test_crud_container.py:644` and 762-764).
//! - `/` reads back as `/*`: the default policy's root path is `/*` (the
//!   same test, line 763), and the service's own refusal of a policy
//!   without a root path calls that path "/" and asks for "/*" (see
//!   `MANDATORY_ROOT` in the parent module). No SDK test reads back a policy
//!   created with `/`, so this one is inferred, not observed.
//!
//! Index specifications are checked against the documented values (kind
//! `Hash`, `Range` or `Spatial`; data type `String` or `Number` for the
//! first two, `Point`, `Polygon`, `LineString` or `MultiPolygon` for
//! `Spatial`; precision an integer, `-1` for the maximum) so that a typo is
//! refused with a message naming it rather than silently dropped.

use serde_json::Value;

use super::invalid;
use crate::protocol::error::ApiResult;

/// The legacy spelling of the root path.
const LEGACY_ROOT: &str = "/";
/// Its current spelling, which reads echo.
const ROOT: &str = "/*";

const KINDS: [&str; 3] = ["Hash", "Range", "Spatial"];
const SCALAR_TYPES: [&str; 2] = ["String", "Number"];
const SPATIAL_TYPES: [&str; 4] = ["Point", "Polygon", "LineString", "MultiPolygon"];

/// The path as the service stores it: `/` becomes `/*`, anything else is
/// returned unchanged (`None` when it is not the legacy root).
pub(super) fn root_alias(path: &str) -> Option<&'static str> {
    (path == LEGACY_ROOT).then_some(ROOT)
}

/// Checks the legacy `indexes` of one included or excluded path. They are
/// never stored: the service drops them.
pub(super) fn check_indexes(path: &str, value: Option<&Value>) -> ApiResult<()> {
    let indexes = match value {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(indexes)) => indexes,
        Some(other) => {
            return Err(invalid(format!(
                "'indexes' of the path '{path}' must be an array of {{\"kind\", \"dataType\", \"precision\"}} objects, got {other}"
            )))
        }
    };
    indexes
        .iter()
        .try_for_each(|index| check_index(path, index))
}

fn check_index(path: &str, index: &Value) -> ApiResult<()> {
    let Some(spec) = index.as_object() else {
        return Err(invalid(format!(
            "each index of the path '{path}' must be an object such as {{\"kind\": \"Range\", \"dataType\": \"Number\"}}, got {index}"
        )));
    };
    let kind = match spec.get("kind").and_then(Value::as_str) {
        Some(k) if KINDS.contains(&k) => k,
        other => {
            return Err(invalid(format!(
                "the index kind {} of the path '{path}' is invalid: use {}",
                shown(other, spec.get("kind")),
                KINDS.join(", ")
            )))
        }
    };
    let allowed: &[&str] = if kind == "Spatial" {
        &SPATIAL_TYPES
    } else {
        &SCALAR_TYPES
    };
    match spec.get("dataType").and_then(Value::as_str) {
        Some(t) if allowed.contains(&t) => {}
        other => {
            return Err(invalid(format!(
                "the dataType {} of the {kind} index of the path '{path}' is invalid: use {}",
                shown(other, spec.get("dataType")),
                allowed.join(", ")
            )))
        }
    }
    match spec.get("precision") {
        None | Some(Value::Null) => Ok(()),
        Some(p) if p.as_i64().is_some_and(|p| i16::try_from(p).is_ok()) => Ok(()),
        Some(other) => Err(invalid(format!(
            "the precision {other} of the {kind} index of the path '{path}' is invalid: use an integer, -1 for the maximum"
        ))),
    }
}

/// A field's value as the message shows it (`nothing` when absent).
fn shown(text: Option<&str>, raw: Option<&Value>) -> String {
    match (text, raw) {
        (Some(t), _) => format!("'{t}'"),
        (None, Some(v)) => v.to_string(),
        (None, None) => "nothing".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use rstest::rstest;
    use serde_json::{json, Value};

    fn policy(v: Value) -> crate::protocol::error::ApiResult<Value> {
        parse(Some(&v))
    }

    /// The shapes the SDK test files send, each read back in the modern
    /// shape: `/` as `/*`, no `indexes`.
    #[rstest]
    #[case::orderby_and_aggregate(
        json!({"includedPaths": [{"path": "/", "indexes": [
            {"kind": "Range", "dataType": "Number"}, {"kind": "Range", "dataType": "String"}]}]}),
        json!([{"path": "/*"}]), json!([{"path": "/\"_etag\"/?"}]))]
    #[case::hash_with_precision(
        json!({"automatic": true, "indexingMode": "consistent",
               "includedPaths": [{"path": "/", "indexes": [{"kind": "Hash", "dataType": "Number", "precision": 2}]}],
               "excludedPaths": [{"path": "/\"systemMetadata\"/*"}]}),
        json!([{"path": "/*"}]), json!([{"path": "/\"systemMetadata\"/*"}, {"path": "/\"_etag\"/?"}]))]
    #[case::spatial_then_root(
        json!({"includedPaths": [
            {"path": "/\"Location\"/?", "indexes": [{"kind": "Spatial", "dataType": "Point"}]},
            {"path": "/"}]}),
        json!([{"path": "/\"Location\"/?"}, {"path": "/*"}]), json!([{"path": "/\"_etag\"/?"}]))]
    #[case::modern_root_with_specs(
        json!({"includedPaths": [{"path": "/*", "indexes": [
            {"kind": "Hash", "dataType": "String"}, {"kind": "Range", "dataType": "Number", "precision": -1}]}]}),
        json!([{"path": "/*"}]), json!([{"path": "/\"_etag\"/?"}]))]
    #[case::every_spatial_type(
        json!({"includedPaths": [{"path": "/*"}, {"path": "/geo/*", "indexes": [
            {"kind": "Spatial", "dataType": "Point"}, {"kind": "Spatial", "dataType": "Polygon"},
            {"kind": "Spatial", "dataType": "LineString"}, {"kind": "Spatial", "dataType": "MultiPolygon"}]}]}),
        json!([{"path": "/*"}, {"path": "/geo/*"}]), json!([{"path": "/\"_etag\"/?"}]))]
    #[case::excluded_legacy_root(
        json!({"includedPaths": [{"path": "/a/?", "indexes": [{"kind": "Range", "dataType": "String", "precision": null}]}],
               "excludedPaths": [{"path": "/"}]}),
        json!([{"path": "/a/?"}]), json!([{"path": "/*"}, {"path": "/\"_etag\"/?"}]))]
    fn legacy_shapes_are_accepted_and_echoed_modern(
        #[case] body: Value,
        #[case] included: Value,
        #[case] excluded: Value,
    ) {
        let normalised = policy(body.clone()).unwrap_or_else(|e| panic!("{body}: {e:?}"));
        assert_eq!(normalised["includedPaths"], included, "{body}");
        assert_eq!(normalised["excludedPaths"], excluded, "{body}");
        assert_eq!(normalised["indexingMode"], "consistent");
    }

    #[rstest]
    #[case(json!([{"kind": "Btree", "dataType": "Number"}]), "index kind 'Btree'")]
    #[case(json!([{"dataType": "Number"}]), "index kind nothing")]
    #[case(json!([{"kind": 1, "dataType": "Number"}]), "index kind 1")]
    #[case(json!([{"kind": "Range", "dataType": "Boolean"}]), "dataType 'Boolean'")]
    #[case(json!([{"kind": "Range"}]), "dataType nothing")]
    #[case(json!([{"kind": "Hash", "dataType": "Point"}]), "use String, Number")]
    #[case(json!([{"kind": "Spatial", "dataType": "String"}]), "use Point, Polygon")]
    #[case(json!([{"kind": "Range", "dataType": "Number", "precision": "max"}]), "precision \"max\"")]
    #[case(json!([{"kind": "Range", "dataType": "Number", "precision": 1.5}]), "precision 1.5")]
    #[case(json!([{"kind": "Range", "dataType": "Number", "precision": 70000}]), "precision 70000")]
    #[case(json!(["Range"]), "must be an object")]
    #[case(json!({"kind": "Range"}), "must be an array")]
    fn malformed_index_specifications_are_refused(#[case] indexes: Value, #[case] named: &str) {
        let body = json!({"includedPaths": [{"path": "/", "indexes": indexes}]});
        let e = policy(body.clone()).unwrap_err();
        assert_eq!(e.status.as_u16(), 400);
        assert!(
            e.message.starts_with("The indexingPolicy is invalid:") && e.message.contains(named),
            "{body}: {}",
            e.message
        );
    }

    /// `/` is the root alone: other paths keep the modern syntax, and the
    /// modern `spatialIndexes` and composite paths do not take it.
    #[rstest]
    #[case(json!({"includedPaths": [{"path": "/name/"}]}), "could not be accepted")]
    #[case(json!({"includedPaths": [{"path": "/name"}]}), "could not be accepted")]
    #[case(json!({"includedPaths": [{"path": "//"}]}), "could not be accepted")]
    #[case(json!({"spatialIndexes": [{"path": "/", "types": ["Point"]}]}), "could not be accepted")]
    #[case(json!({"compositeIndexes": [[{"path": "/"}, {"path": "/b"}]]}), "could not be accepted")]
    fn only_the_root_takes_the_legacy_spelling(#[case] body: Value, #[case] named: &str) {
        let e = policy(body.clone()).unwrap_err();
        assert!(e.message.contains(named), "{body}: {}", e.message);
    }
}
