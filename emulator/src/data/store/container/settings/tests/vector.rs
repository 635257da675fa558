//! The vector embedding policy and vector indexes in a container body.

use rstest::rstest;
use serde_json::{json, Value};

use super::*;

// ---- the vector embedding policy --------------------------------------------

#[test]
fn microsofts_embeddings_are_read_and_echoed_as_sent() {
    let sent = json!({"vectorEmbeddings": [
        embedding("/vector1", "float32", 256, "euclidean"),
        embedding("/vector2", "int8", 200, "dotproduct"),
        embedding("/vector3", "uint8", 400, "cosine"),
        embedding("/a/b", "Float16", 3, "DotProduct"),
    ]});
    let settings = settings(json!({"vectorEmbeddingPolicy": sent})).unwrap();
    let policy = &settings.vector_embeddings;
    assert_eq!(
        policy.embeddings[0],
        VectorEmbedding {
            path: "/vector1".into(),
            data_type: VectorDataType::Float32,
            dimensions: 256,
            distance_function: DistanceFunction::Euclidean,
        }
    );
    assert_eq!(policy.embeddings.len(), 4);
    assert_eq!(
        policy.for_path("/vector2").map(|e| e.data_type),
        Some(VectorDataType::Int8)
    );
    assert_eq!(
        policy
            .for_path("/a/b")
            .map(|e| (e.data_type, e.distance_function)),
        Some((VectorDataType::Float16, DistanceFunction::DotProduct))
    );
    assert_eq!(policy.for_path("/vector9"), None);
    assert_eq!(policy.for_path("vector1"), None);
    // Served back as sent: the same fields in the same order.
    assert_eq!(
        serde_json::to_string(&settings.extra["vectorEmbeddingPolicy"]).unwrap(),
        serde_json::to_string(&sent).unwrap()
    );
}

#[test]
fn absent_or_null_policies_are_empty() {
    assert_eq!(
        VectorEmbeddingPolicy::parse(None).unwrap(),
        VectorEmbeddingPolicy::default()
    );
    assert_eq!(
        VectorEmbeddingPolicy::parse(Some(&Value::Null)).unwrap(),
        VectorEmbeddingPolicy::default()
    );
    assert_eq!(
        VectorEmbeddingPolicy::parse(Some(&json!({}))).unwrap(),
        VectorEmbeddingPolicy::default()
    );
    assert_eq!(
        FullTextPolicy::parse(None).unwrap(),
        FullTextPolicy::default()
    );
    assert_eq!(
        FullTextPolicy::parse(Some(&Value::Null)).unwrap(),
        FullTextPolicy::default()
    );
    let plain = settings(json!({})).unwrap();
    assert!(plain.vector_embeddings.embeddings.is_empty());
    assert_eq!(plain.full_text, FullTextPolicy::default());
    assert!(plain.extra.get("vectorEmbeddingPolicy").is_none());
}

#[test]
fn an_embedding_source_and_unknown_fields_are_kept() {
    let sent = json!({"vectorEmbeddings": [{
        "path": "/vector1", "dataType": "float32", "dimensions": 1536, "distanceFunction": "cosine",
        "embeddingSource": {"sourcePath": "/text", "model": {"name": "text-embedding-3-small"}},
        "somethingNew": [1, 2]
    }]});
    let settings = settings(json!({"vectorEmbeddingPolicy": sent})).unwrap();
    assert_eq!(settings.vector_embeddings.embeddings[0].dimensions, 1536);
    assert_eq!(
        serde_json::to_string(&settings.extra["vectorEmbeddingPolicy"]).unwrap(),
        serde_json::to_string(&sent).unwrap()
    );
}

#[rstest]
#[case(1)]
#[case(4096)]
fn dimension_bounds_are_accepted(#[case] dimensions: i64) {
    let policy = json!({"vectorEmbeddings": [embedding("/v", "float32", dimensions, "cosine")]});
    let read = VectorEmbeddingPolicy::parse(Some(&policy)).unwrap();
    assert_eq!(read.embeddings[0].dimensions as i64, dimensions);
}

#[rstest]
#[case::data_type(embedding("/vector1", "float33", 256, "euclidean"), &[
    "The Vector Embedding Policy has an invalid DataType:float33. Supported types are float32, float16, int8 and uint8",
    "'dataType'", "/vector1"][..])]
#[case::data_type_missing(json!({"path": "/vector1", "dimensions": 256, "distanceFunction": "cosine"}),
    &["Vector Embedding Policy has an invalid DataType", "'dataType'"][..])]
#[case::data_type_not_a_string(json!({"path": "/v", "dataType": 32, "dimensions": 2, "distanceFunction": "cosine"}),
    &["Vector Embedding Policy has an invalid DataType:32"][..])]
#[case::too_many_dimensions(embedding("/vector1", "float32", 8000, "euclidean"), &[
    "Vector Embedding Policy has Dimensions:8000 which is more than the maximum supported value",
    "4096", "'dimensions'"][..])]
#[case::just_too_many(embedding("/vector1", "float32", 4097, "euclidean"),
    &["Dimensions:4097 which is more than the maximum supported value"][..])]
#[case::negative_dimensions(embedding("/vector1", "float32", -1, "euclidean"), &[
    "The Vector Embedding Policy has Dimensions:-1",
    "less than the minimum supported value of 1", "'dimensions'"][..])]
#[case::zero_dimensions(embedding("/vector1", "float32", 0, "euclidean"),
    &["The Vector Embedding Policy has Dimensions:0"][..])]
#[case::huge_dimensions(json!({"path": "/v", "dataType": "float32", "dimensions": u64::MAX, "distanceFunction": "cosine"}),
    &["Dimensions:18446744073709551615 which is more than the maximum"][..])]
#[case::fractional_dimensions(json!({"path": "/v", "dataType": "float32", "dimensions": 1.5, "distanceFunction": "cosine"}),
    &["invalid Dimensions:1.5", "'dimensions'", "whole number"][..])]
#[case::dimensions_as_text(json!({"path": "/v", "dataType": "float32", "dimensions": "256", "distanceFunction": "cosine"}),
    &["invalid Dimensions:256", "'dimensions'"][..])]
#[case::dimensions_missing(json!({"path": "/v", "dataType": "float32", "distanceFunction": "cosine"}),
    &["invalid Dimensions:(none)", "'dimensions'"][..])]
#[case::distance(embedding("/vector1", "float32", 256, "handMeasured"), &[
    "The Vector Embedding Policy has an invalid DistanceFunction:handMeasured",
    "cosine, dotproduct and euclidean", "'distanceFunction'"][..])]
#[case::distance_missing(json!({"path": "/v", "dataType": "float32", "dimensions": 2}),
    &["invalid DistanceFunction:(none)", "'distanceFunction'"][..])]
#[case::relative_path(embedding("vector1", "float32", 256, "cosine"),
    &["The Vector Embedding Policy has an invalid Path:vector1", "'path'"][..])]
#[case::trailing_slash(embedding("/embedding/", "float32", 256, "cosine"),
    &["The Vector Embedding Policy has an invalid Path:/embedding/", "'path'"][..])]
#[case::root_path(embedding("/", "float32", 256, "cosine"), &["invalid Path:/", "'path'"][..])]
#[case::empty_segment(embedding("/a//b", "float32", 256, "cosine"), &["invalid Path:/a//b"][..])]
#[case::path_missing(json!({"dataType": "float32", "dimensions": 2, "distanceFunction": "cosine"}),
    &["invalid Path:(none)", "'path'"][..])]
#[case::path_not_a_string(json!({"path": 1, "dataType": "float32", "dimensions": 2, "distanceFunction": "cosine"}),
    &["invalid Path:1", "'path'"][..])]
#[case::embedding_source(json!({"path": "/v", "dataType": "float32", "dimensions": 2, "distanceFunction": "cosine", "embeddingSource": "model"}),
    &["'embeddingSource'", "object"][..])]
#[case::not_an_object(json!("/vector1"), &["'vectorEmbeddings'", "object"][..])]
fn invalid_embeddings_are_refused(#[case] entry: Value, #[case] needles: &[&str]) {
    let message = refused(json!({"vectorEmbeddingPolicy": {"vectorEmbeddings": [entry]}}));
    assert_contains(&message, needles);
}

#[rstest]
#[case::duplicate_path(json!({"vectorEmbeddings": [
    embedding("/vector1", "float32", 256, "cosine"), embedding("/vector1", "int8", 3, "cosine")]}),
    &["The Vector Embedding Policy has a duplicate Path:/vector1", "'path'", "unique"][..])]
#[case::not_an_object(json!([]), &["'vectorEmbeddingPolicy'", "object"][..])]
#[case::embeddings_not_a_list(json!({"vectorEmbeddings": {"path": "/v"}}), &["'vectorEmbeddings'", "array"][..])]
fn invalid_embedding_policies_are_refused(#[case] policy: Value, #[case] needles: &[&str]) {
    assert_contains(&refused(json!({"vectorEmbeddingPolicy": policy})), needles);
}

// ---- vector indexes ---------------------------------------------------------

#[rstest]
#[case::flat(json!([{"path": "/vector1", "type": "flat"}]))]
#[case::microsoft_quantized_flat(json!([{"path": "/vector2", "type": "quantizedFlat", "quantizerType": "product", "quantizationByteSize": 8}]))]
#[case::microsoft_disk_ann(json!([{"path": "/vector3", "type": "diskANN", "quantizerType": "product", "quantizationByteSize": 8, "vectorIndexShardKey": ["/city"], "indexingSearchListSize": 50}]))]
#[case::microsoft_spherical(json!([{"path": "/vector4", "type": "diskANN", "quantizerType": "spherical", "indexingSearchListSize": 50}]))]
#[case::microsoft_hierarchical_shard(json!([{"path": "/vector2", "type": "diskANN", "quantizerType": "product", "quantizationByteSize": 64, "indexingSearchListSize": 100, "vectorIndexShardKey": ["/country/city"]}]))]
#[case::microsoft_three(json!([
    {"path": "/vector1", "type": "flat"},
    {"path": "/vector2", "type": "quantizedFlat", "quantizationByteSize": 8},
    {"path": "/vector3", "type": "diskANN", "quantizationByteSize": 8, "vectorIndexShardKey": ["/city"], "indexingSearchListSize": 50}]))]
#[case::names_in_any_case(json!([{"path": "/vector1", "type": "DiskANN", "quantizerType": "Spherical"}, {"path": "/vector2", "type": "QUANTIZEDFLAT", "quantizerType": "PRODUCT"}]))]
#[case::byte_size_bounds(json!([{"path": "/vector1", "type": "quantizedFlat", "quantizationByteSize": 256}, {"path": "/vector2", "type": "diskANN", "quantizationByteSize": 1}]))]
#[case::byte_size_at_most_512(json!([{"path": "/v550", "type": "quantizedFlat", "quantizationByteSize": 512}]))]
#[case::search_list_bounds(json!([{"path": "/vector1", "type": "diskANN", "indexingSearchListSize": 25}, {"path": "/vector2", "type": "diskANN", "indexingSearchListSize": 500}]))]
#[case::large_vectors(json!([{"path": "/v1000", "type": "diskANN"}, {"path": "/v550", "type": "quantizedFlat"}]))]
#[case::nulls(json!([{"path": "/vector1", "type": "diskANN", "quantizerType": null, "quantizationByteSize": null, "indexingSearchListSize": null, "vectorIndexShardKey": null}]))]
#[case::unknown_fields(json!([{"path": "/vector1", "type": "flat", "somethingNew": true}]))]
#[case::none(json!([]))]
fn valid_vector_indexes_are_echoed_as_sent(#[case] indexes: Value) {
    let settings = settings(with_vector_indexes(indexes.clone())).unwrap();
    assert_eq!(
        serde_json::to_string(&settings.indexing_policy["vectorIndexes"]).unwrap(),
        serde_json::to_string(&indexes).unwrap()
    );
}

#[test]
fn the_vector_path_may_be_excluded_from_the_range_index() {
    // As Microsoft recommends, for cheaper writes.
    let settings = settings(json!({
        "vectorEmbeddingPolicy": embeddings(),
        "indexingPolicy": {
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": "/vector1/*"}, {"path": "/\"_etag\"/?"}],
            "vectorIndexes": [{"path": "/vector1", "type": "quantizedFlat"}]
        }
    }))
    .unwrap();
    assert_eq!(
        settings.indexing_policy["excludedPaths"],
        json!([{"path": "/vector1/*"}, {"path": "/\"_etag\"/?"}])
    );
}

#[test]
fn a_flat_index_holds_at_most_505_dimensions() {
    let at = |dimensions| {
        settings(json!({
            "vectorEmbeddingPolicy": {"vectorEmbeddings": [embedding("/v", "float32", dimensions, "cosine")]},
            "indexingPolicy": {"vectorIndexes": [{"path": "/v", "type": "flat"}]}
        }))
    };
    assert!(at(505).is_ok());
    let message = at(506).unwrap_err().message;
    assert_contains(&message, &["path::/v", "flat", "505", "Dimensions:506"]);
}

#[rstest]
#[case::invalid_type(json!([{"path": "/vector1", "type": "notFlat"}]),
    &["Index Type::notFlat is invalid", "'type'"][..])]
#[case::type_missing(json!([{"path": "/vector1"}]), &["Index Type::(none) is invalid", "'type'"][..])]
#[case::path_not_embedded(json!([{"path": "/vector3x", "type": "flat"}]),
    &["The Vector Indexing Policy's path::/vector3x not matching in Embedding's path.", "/vector1"][..])]
#[case::path_missing(json!([{"type": "flat"}]), &["'path'"][..])]
#[case::not_an_object(json!(["/vector1"]), &["'vectorIndexes'", "object"][..])]
#[case::flat_too_long(json!([{"path": "/v1000", "type": "flat"}]), &["505", "Dimensions:1000"][..])]
#[case::byte_size_zero(json!([{"path": "/vector1", "type": "quantizedFlat", "quantizationByteSize": 0}]),
    &["The Vector Indexing Policy parameter QuantizationByteSize value :: 0 is out of range. The allowed range is between 1 and 256.",
      "'quantizationByteSize' of the vector index on /vector1"][..])]
#[case::byte_size_over_512(json!([{"path": "/v550", "type": "quantizedFlat", "quantizationByteSize": 513}]),
    &["The Vector Indexing Policy parameter QuantizationByteSize value :: 513 is out of range.", "between 1 and 512."][..])]
#[case::byte_size_over_dimensions(json!([{"path": "/vector2", "type": "diskANN", "quantizationByteSize": 201}]),
    &["QuantizationByteSize value :: 201 is out of range. The allowed range is between 1 and 200."][..])]
#[case::byte_size_negative(json!([{"path": "/vector2", "type": "diskANN", "quantizationByteSize": -3}]),
    &["QuantizationByteSize value :: -3 is out of range"][..])]
#[case::byte_size_as_text(json!([{"path": "/vector2", "type": "diskANN", "quantizationByteSize": "8"}]),
    &["QuantizationByteSize value :: \"8\" is out of range", "whole number"][..])]
#[case::search_list_too_small(json!([{"path": "/vector1", "type": "diskANN", "indexingSearchListSize": 5}]),
    &["IndexingSearchListSize value :: 5 is out of range. The allowed range is between 25 and 500.",
      "'indexingSearchListSize' of the vector index on /vector1"][..])]
#[case::search_list_too_large(json!([{"path": "/vector1", "type": "diskANN", "indexingSearchListSize": 501}]),
    &["IndexingSearchListSize value :: 501 is out of range."][..])]
#[case::quantizer(json!([{"path": "/vector1", "type": "diskANN", "quantizerType": "scalar"}]),
    &["QuantizerType:scalar", "product and spherical", "'quantizerType'"][..])]
#[case::shard_key_a_string(json!([{"path": "/vector2", "type": "diskANN", "vectorIndexShardKey": "/country"}]),
    &["One of the specified inputs is invalid", "'vectorIndexShardKey'"][..])]
#[case::shard_key_numbers(json!([{"path": "/vector2", "type": "diskANN", "vectorIndexShardKey": [1]}]),
    &["One of the specified inputs is invalid"][..])]
#[case::shard_path(json!([{"path": "/vector2", "type": "diskANN", "vectorIndexShardKey": ["country"]}]),
    &["The Vector Indexing Policy has an invalid Shard Path: country.", "'vectorIndexShardKey'"][..])]
#[case::shard_paths(json!([{"path": "/vector2", "type": "diskANN", "vectorIndexShardKey": ["/country", "/city", "/zipcode"]}]),
    &["The number of shard paths defined in the Vector Indexing Policy: 3 exceeds the maximum: 1.",
      "'vectorIndexShardKey' of the vector index on /vector2"][..])]
#[case::two_on_one_path(json!([{"path": "/vector1", "type": "flat"}, {"path": "/vector1", "type": "diskANN"}]),
    &["more than one index on path::/vector1"][..])]
#[case::not_a_list(json!({"path": "/vector1", "type": "flat"}), &["'vectorIndexes'"][..])]
fn invalid_vector_indexes_are_refused(#[case] indexes: Value, #[case] needles: &[&str]) {
    assert_contains(&refused(with_vector_indexes(indexes)), needles);
}

#[test]
fn a_vector_index_needs_an_embedding_policy() {
    let message = refused(
        json!({"indexingPolicy": {"vectorIndexes": [{"path": "/vector1", "type": "flat"}]}}),
    );
    assert_contains(
        &message,
        &["The Vector Indexing Policy's path::/vector1 not matching in Embedding's path."],
    );
}
