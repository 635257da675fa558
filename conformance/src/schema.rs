//! The JSON Schemas of the fixture files, derived from the serde types the
//! runner reads them with: `cases.schema.json` for `fixtures/cases/*.toml`
//! ([`CaseFile`]) and `expectations.schema.json` for
//! `fixtures/expectations/*.toml` ([`Expectations`]). Draft 7, which the
//! TOML language servers of editors (Taplo, Even Better TOML) read.
//!
//! The checked-in copies live in `fixtures/schema/`;
//! `cosmos-conformance --schemas DIR` writes them, and the crate's tests
//! fail when they differ from these and validate every fixture against
//! them. A schema says less than the loader checks (the JSON inside
//! strings, the expectation grammar in full, time that never goes back):
//! it gives the shape, for editors.

use crate::expectations::Expectations;
use crate::fixtures::file::CaseFile;
use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Where the checked-in schemas live, under the fixtures directory.
pub const DIR: &str = "schema";

/// The schema of a case file.
pub fn cases() -> Value {
    generate::<CaseFile>()
}

/// The schema of an expectations file.
pub fn expectations() -> Value {
    generate::<Expectations>()
}

/// Every schema: its file name and its text (pretty JSON with its keys
/// sorted, whatever order serde_json's map keeps, one newline at the end).
pub fn files() -> Vec<(&'static str, String)> {
    [
        ("cases.schema.json", cases()),
        ("expectations.schema.json", expectations()),
    ]
    .into_iter()
    .map(|(name, schema)| {
        let text = serde_json::to_string_pretty(&sorted(schema)).expect("a schema serialises");
        (name, format!("{text}\n"))
    })
    .collect()
}

/// Writes every schema into `dir` (made if missing); the paths written.
pub fn write(dir: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    files()
        .into_iter()
        .map(|(name, text)| {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(path)
        })
        .collect()
}

fn generate<T: JsonSchema>() -> Value {
    let mut schema = SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    without_null(&mut schema);
    if let Value::Object(map) = &mut schema {
        map.insert(
            "$comment".to_string(),
            Value::String(
                "Generated from cosmos-conformance's serde types by `cosmos-conformance --schemas DIR`; do not edit."
                    .to_string(),
            ),
        );
    }
    schema
}

/// TOML has no null: an optional key is absent or has a value, so the
/// schema's `"type": ["string", "null"]` of an `Option` is its `"string"`.
fn without_null(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if let [single] = &types[..] {
                    let single = single.clone();
                    map.insert("type".to_string(), single);
                }
            }
            map.values_mut().for_each(without_null);
        }
        Value::Array(items) => items.iter_mut().for_each(without_null),
        _ => {}
    }
}

/// The value with every object's keys in order.
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|(a, _), (b, _)| a.cmp(b));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}
