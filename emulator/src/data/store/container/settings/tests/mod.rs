//! The search policies as a container body carries them: what is read,
//! what is refused (with the service's words), what a replace may change
//! (`replace.rs`), and what a stored body keeps; the vector embedding
//! policy and its indexes in `vector.rs`, the full-text policy and its
//! indexes in `full_text.rs`.

use rstest::rstest;
use serde_json::{json, Value};

use super::ContainerSettings;
use crate::data::index::search_policy::*;
use crate::data::store::Container;
use crate::protocol::error::ApiResult;

/// A container body with `fields` added to an id and a partition key.
fn body(fields: Value) -> serde_json::Map<String, Value> {
    let mut body = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
    for (k, v) in fields.as_object().expect("an object") {
        body[k] = v.clone();
    }
    body.as_object().unwrap().clone()
}

fn settings(fields: Value) -> ApiResult<ContainerSettings> {
    ContainerSettings::parse(&body(fields))
}

/// The message of a refusal, which must be a 400.
#[track_caller]
fn refused(fields: Value) -> String {
    let e = settings(fields.clone()).expect_err(&format!("refused: {fields}"));
    assert_eq!(e.status.as_u16(), 400, "{}", e.message);
    e.message
}

#[track_caller]
fn assert_contains(message: &str, needles: &[&str]) {
    for needle in needles {
        assert!(message.contains(needle), "{needle:?} not in {message:?}");
    }
}

fn embedding(path: &str, data_type: &str, dimensions: i64, distance: &str) -> Value {
    json!({"path": path, "dataType": data_type, "dimensions": dimensions, "distanceFunction": distance})
}

/// The embedding policy of Microsoft's tests: /vector1 (256), /vector2
/// (200), /vector3 (400), /vector4 (400), /v550 (550), /v1000 (1000).
fn embeddings() -> Value {
    json!({"vectorEmbeddings": [
        embedding("/vector1", "float32", 256, "euclidean"),
        embedding("/vector2", "int8", 200, "dotproduct"),
        embedding("/vector3", "uint8", 400, "cosine"),
        embedding("/vector4", "float16", 400, "cosine"),
        embedding("/v550", "float32", 550, "euclidean"),
        embedding("/v1000", "float32", 1000, "euclidean"),
    ]})
}

/// A body with Microsoft's embeddings and these vector indexes.
fn with_vector_indexes(indexes: Value) -> Value {
    json!({"vectorEmbeddingPolicy": embeddings(), "indexingPolicy": {"vectorIndexes": indexes}})
}

fn full_text() -> Value {
    json!({"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/abstract", "language": "en-US"}]})
}

mod full_text;
mod replace;
mod vector;

// ---- names ------------------------------------------------------------------

#[rstest]
#[case("float32", Some(VectorDataType::Float32))]
#[case("Float16", Some(VectorDataType::Float16))]
#[case("INT8", Some(VectorDataType::Int8))]
#[case("uint8", Some(VectorDataType::Uint8))]
#[case("float33", None)]
#[case("float", None)]
#[case("", None)]
fn data_types(#[case] name: &str, #[case] expected: Option<VectorDataType>) {
    assert_eq!(VectorDataType::parse(name), expected);
}

#[rstest]
#[case("cosine", Some(DistanceFunction::Cosine))]
#[case("dotProduct", Some(DistanceFunction::DotProduct))]
#[case("DOTPRODUCT", Some(DistanceFunction::DotProduct))]
#[case("Euclidean", Some(DistanceFunction::Euclidean))]
#[case("handMeasured", None)]
#[case("dot_product", None)]
fn distance_functions(#[case] name: &str, #[case] expected: Option<DistanceFunction>) {
    assert_eq!(DistanceFunction::parse(name), expected);
}

// ---- stored bodies ----------------------------------------------------------

#[test]
fn a_stored_body_opens_whatever_the_new_checks_say() {
    // What the emulator stored before these checks: each part is refused
    // now, and must not stop the container from opening.
    let old = body(json!({
        "indexingPolicy": {
            "vectorIndexes": [{"path": "/nowhere", "type": "weird"}, {"type": "flat"}],
            "fullTextIndexes": [{"path": "/untexted"}]
        },
        "vectorEmbeddingPolicy": {"vectorEmbeddings": [
            embedding("/good", "float32", 3, "cosine"),
            embedding("/bad", "float33", 3, "cosine"),
            embedding("/good", "int8", 4, "cosine")
        ]},
        "fullTextPolicy": {"defaultLanguage": "spa-SPA", "fullTextPaths": [
            {"path": "/t", "language": "xx-YY"}, {"path": "relative", "language": "de-DE"}, {"language": "en-US"}
        ]}
    }));
    assert!(ContainerSettings::parse(&old).is_err());
    let stored = ContainerSettings::parse_stored(&old).unwrap();
    assert_eq!(stored.vector_embeddings.embeddings.len(), 1);
    assert_eq!(
        stored
            .vector_embeddings
            .for_path("/good")
            .map(|e| e.dimensions),
        Some(3)
    );
    assert_eq!(stored.full_text.default_language, None);
    assert_eq!(stored.full_text.language_for("/t"), "en-US");
    assert_eq!(stored.full_text.language_for("relative"), "de-DE");
    // Served as stored.
    assert_eq!(
        stored.extra["vectorEmbeddingPolicy"],
        old["vectorEmbeddingPolicy"]
    );
    assert_eq!(
        stored.indexing_policy["vectorIndexes"],
        old["indexingPolicy"]["vectorIndexes"]
    );
    // A valid body reads the same either way.
    let valid = body(json!({
        "vectorEmbeddingPolicy": embeddings(),
        "fullTextPolicy": full_text(),
        "indexingPolicy": {"vectorIndexes": [{"path": "/vector1", "type": "flat"}], "fullTextIndexes": [{"path": "/abstract"}]}
    }));
    let checked = ContainerSettings::parse(&valid).unwrap();
    let stored = ContainerSettings::parse_stored(&valid).unwrap();
    assert_eq!(checked.vector_embeddings, stored.vector_embeddings);
    assert_eq!(checked.full_text, stored.full_text);
}
