//! The search policies as a container body carries them: what is read,
//! what is refused (with the service's words), what a replace may change,
//! and what a stored body keeps.

use rstest::rstest;
use serde_json::{json, Value};

use super::ContainerSettings;
use crate::error::ApiResult;
use crate::query::search::policy::*;
use crate::store::Container;

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

// ---- the full-text policy ---------------------------------------------------

#[rstest]
#[case::microsoft(full_text())]
#[case::default_language_alone(json!({"defaultLanguage": "en-US"}))]
#[case::path_without_language(json!({"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/abstract"}]}))]
#[case::paths_alone(json!({"fullTextPaths": [{"path": "/abstract"}, {"path": "/a/b", "language": "de-DE"}]}))]
#[case::any_case(json!({"defaultLanguage": "EN-us", "fullTextPaths": [{"path": "/t", "language": "Fr-fr"}]}))]
#[case::empty(json!({}))]
fn valid_full_text_policies_are_echoed_as_sent(#[case] policy: Value) {
    let settings = settings(json!({"fullTextPolicy": policy})).unwrap();
    assert_eq!(
        serde_json::to_string(&settings.extra["fullTextPolicy"]).unwrap(),
        serde_json::to_string(&policy).unwrap()
    );
}

#[rstest]
fn every_supported_language_is_accepted(
    #[values("en-US", "fr-FR", "de-DE", "it-IT", "pt-BR", "pt-PT", "es-ES")] language: &str,
) {
    let policy = json!({"defaultLanguage": language, "fullTextPaths": [{"path": "/t", "language": language}]});
    let read = FullTextPolicy::parse(Some(&policy)).unwrap();
    assert_eq!(read.language_for("/t"), language);
}

#[test]
fn a_path_speaks_its_own_language_else_the_default_else_english() {
    let policy = FullTextPolicy::parse(Some(&json!({
        "defaultLanguage": "fr-FR",
        "fullTextPaths": [{"path": "/de", "language": "de-DE"}, {"path": "/plain"}]
    })))
    .unwrap();
    assert_eq!(policy.default_language.as_deref(), Some("fr-FR"));
    assert_eq!(
        policy.paths,
        vec![
            FullTextPath {
                path: "/de".into(),
                language: Some("de-DE".into())
            },
            FullTextPath {
                path: "/plain".into(),
                language: None
            },
        ]
    );
    assert_eq!(policy.language_for("/de"), "de-DE");
    assert_eq!(policy.language_for("/plain"), "fr-FR");
    assert_eq!(policy.language_for("/elsewhere"), "fr-FR");
    let no_default =
        FullTextPolicy::parse(Some(&json!({"fullTextPaths": [{"path": "/t"}]}))).unwrap();
    assert_eq!(no_default.language_for("/t"), "en-US");
    assert_eq!(FullTextPolicy::default().language_for("/t"), "en-US");
}

#[rstest]
#[case::default_language(json!({"defaultLanguage": "spa-SPA", "fullTextPaths": [{"path": "/abstract", "language": "en-US"}]}),
    &["The Full Text Policy contains an unsupported language spa-SPA. Supported languages are:"][..])]
#[case::path_language(json!({"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/abstract", "language": "spa-SPA"}]}),
    &["The Full Text Policy contains an unsupported language spa-SPA. Supported languages are:"][..])]
#[case::empty_default(json!({"defaultLanguage": ""}), &["unsupported language . Supported languages are:"][..])]
#[case::language_not_a_string(json!({"fullTextPaths": [{"path": "/t", "language": 7}]}), &["unsupported language 7."][..])]
#[case::relative_path(json!({"defaultLanguage": "en-US", "fullTextPaths": [{"path": "abstract", "language": "en-US"}]}),
    &["The Full Text Policy contains an invalid Path: abstract", "'path'"][..])]
#[case::path_missing(json!({"fullTextPaths": [{"language": "en-US"}]}), &["invalid Path: (none)", "'path'"][..])]
#[case::not_an_object(json!("en-US"), &["'fullTextPolicy'", "object"][..])]
#[case::paths_not_a_list(json!({"fullTextPaths": "/abstract"}), &["'fullTextPaths'", "array"][..])]
fn invalid_full_text_policies_are_refused(#[case] policy: Value, #[case] needles: &[&str]) {
    let message = refused(json!({"fullTextPolicy": policy}));
    assert_contains(&message, needles);
    if message.contains("unsupported language") {
        for language in LANGUAGES {
            assert!(message.contains(language), "{language} in {message}");
        }
    }
}

// ---- full-text indexes ------------------------------------------------------

#[test]
fn full_text_indexes_are_echoed_as_sent() {
    let indexes = json!([{"path": "/abstract"}]);
    let settings = settings(json!({
        "fullTextPolicy": full_text(),
        "indexingPolicy": {"fullTextIndexes": indexes}
    }))
    .unwrap();
    assert_eq!(settings.indexing_policy["fullTextIndexes"], indexes);
    // An empty list needs no policy (the SDKs send one).
    let empty = settings_with_indexes(json!([]), None).unwrap();
    assert_eq!(empty.indexing_policy["fullTextIndexes"], json!([]));
}

fn settings_with_indexes(indexes: Value, policy: Option<Value>) -> ApiResult<ContainerSettings> {
    let mut fields = json!({"indexingPolicy": {"fullTextIndexes": indexes}});
    if let Some(policy) = policy {
        fields["fullTextPolicy"] = policy;
    }
    settings(fields)
}

#[rstest]
#[case::path_missing(json!([{"not_path": "abstract"}]), Some(full_text()),
    &["Missing path in full-text index specification at index (0)"][..])]
#[case::not_an_object(json!(["/abstract"]), Some(full_text()),
    &["Missing path in full-text index specification at index (0)"][..])]
#[case::relative_path(json!([{"path": "abstract"}]), Some(full_text()),
    &["Full-text index specification at index (0) contains invalid path"][..])]
#[case::not_in_the_policy(json!([{"path": "/abstract"}, {"path": "/path"}]), Some(full_text()),
    &["The path of the Full Text Index /path does not match the path specified in the Full Text Policy", "/abstract"][..])]
#[case::no_policy(json!([{"path": "/path"}]), None,
    &["The path of the Full Text Index /path does not match the path specified in the Full Text Policy"][..])]
#[case::second_entry(json!([{"path": "/abstract"}, {"path": "x"}]), Some(full_text()),
    &["at index (1) contains invalid path x"][..])]
fn invalid_full_text_indexes_are_refused(
    #[case] indexes: Value,
    #[case] policy: Option<Value>,
    #[case] needles: &[&str],
) {
    let e = settings_with_indexes(indexes, policy).unwrap_err();
    assert_eq!(e.status.as_u16(), 400);
    assert_contains(&e.message, needles);
}

// ---- replace ----------------------------------------------------------------

fn container(fields: Value) -> Container {
    Container::new("c".into(), "db", 1, 1, settings(fields).unwrap(), 0, 60)
}

fn replace(container: &mut Container, fields: Value) -> ApiResult<()> {
    container
        .replace_settings(settings(fields)?, 1, 60)
        .map(|_| ())
}

fn one_embedding(dimensions: i64) -> Value {
    json!({"vectorEmbeddings": [embedding("/vector1", "float32", dimensions, "euclidean")]})
}

fn vector_body(indexes: Value, policy: Value) -> Value {
    json!({"vectorEmbeddingPolicy": policy, "indexingPolicy": {"vectorIndexes": indexes}})
}

#[test]
fn a_replace_keeps_the_vector_index_of_each_path_but_may_add_or_remove_some() {
    let flat = json!([{"path": "/vector1", "type": "flat"}]);
    let policy = json!({"vectorEmbeddings": [
        embedding("/vector1", "float32", 256, "euclidean"),
        embedding("/vector2", "float32", 3, "cosine")]});
    // The service's words: "They can only be added or removed."
    for (indexes, why) in [
        (json!([]), "removed"),
        (Value::Null, "dropped"),
        (
            json!([{"path": "/vector1", "type": "flat"}, {"path": "/vector2", "type": "flat"}]),
            "added",
        ),
    ] {
        let mut c = container(vector_body(flat.clone(), one_embedding(256)));
        replace(&mut c, vector_body(indexes.clone(), policy.clone())).expect(why);
        assert_eq!(
            c.settings
                .indexing_policy
                .get("vectorIndexes")
                .cloned()
                .unwrap_or(json!([])),
            if indexes.is_null() {
                json!([])
            } else {
                indexes
            },
            "{why}"
        );
    }
    let mut c = container(vector_body(flat.clone(), one_embedding(256)));
    let changed = json!([{"path": "/vector1", "type": "quantizedFlat"}]);
    let e = replace(&mut c, vector_body(changed, policy)).unwrap_err();
    assert_contains(
        &e.message,
        &[
            "Paths in existing vector indexing policy cannot be modified in Collection Replace. \
             They can only be added or removed.",
            "/vector1",
        ],
    );
    // Without the embedding policy, the path check speaks first.
    let e = replace(&mut c, json!({"indexingPolicy": {"vectorIndexes": flat}})).unwrap_err();
    assert_contains(
        &e.message,
        &["The Vector Indexing Policy's path::/vector1 not matching in Embedding's path."],
    );
    // Nothing changed by the refusals.
    assert_eq!(c.settings.indexing_policy["vectorIndexes"], flat);
    // The same indexes (the type's name in another case), other paths: fine.
    let same = json!({
        "vectorEmbeddingPolicy": one_embedding(256),
        "indexingPolicy": {
            "includedPaths": [{"path": "/color/?"}],
            "excludedPaths": [{"path": "/*"}, {"path": "/vector1/*"}],
            "vectorIndexes": [{"path": "/vector1", "type": "Flat"}]
        }
    });
    replace(&mut c, same).unwrap();
    assert_eq!(
        c.settings.indexing_policy["includedPaths"],
        json!([{"path": "/color/?"}])
    );
}

#[test]
fn a_container_without_vector_indexes_may_get_some() {
    let mut c = container(json!({"vectorEmbeddingPolicy": one_embedding(256)}));
    let indexes = json!([{"path": "/vector1", "type": "diskANN", "indexingSearchListSize": 100}]);
    replace(&mut c, vector_body(indexes.clone(), one_embedding(256))).unwrap();
    assert_eq!(c.settings.indexing_policy["vectorIndexes"], indexes);
}

#[test]
fn a_replace_keeps_the_embeddings_and_may_add_some() {
    let mut c = container(json!({"vectorEmbeddingPolicy": one_embedding(256)}));
    for (policy, why) in [
        (one_embedding(384), "changed"),
        (json!({"vectorEmbeddings": []}), "removed"),
        (Value::Null, "dropped"),
        (
            json!({"vectorEmbeddings": [embedding("/vector1", "int8", 256, "euclidean")]}),
            "retyped",
        ),
    ] {
        let e = replace(&mut c, json!({"vectorEmbeddingPolicy": policy})).expect_err(why);
        assert_contains(
            &e.message,
            &[
                "Paths in existing embedding policy cannot be modified in Collection Replace",
                "/vector1",
            ],
        );
    }
    let added = json!({"vectorEmbeddings": [
        embedding("/vector0", "float32", 3, "cosine"),
        embedding("/vector1", "Float32", 256, "Euclidean")]});
    replace(&mut c, json!({"vectorEmbeddingPolicy": added.clone()})).unwrap();
    assert_eq!(c.settings.vector_embeddings.embeddings.len(), 2);
    assert_eq!(c.settings.extra["vectorEmbeddingPolicy"], added);
}

#[test]
fn a_replace_may_change_the_full_text_policy_and_indexes() {
    let mut c = container(json!({
        "fullTextPolicy": full_text(),
        "indexingPolicy": {"fullTextIndexes": [{"path": "/abstract"}]}
    }));
    let moved = json!({"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/new_path", "language": "en-US"}]});
    replace(
        &mut c,
        json!({"fullTextPolicy": moved, "indexingPolicy": {"fullTextIndexes": [{"path": "/new_path"}]}}),
    )
    .unwrap();
    assert_eq!(c.settings.full_text.paths[0].path, "/new_path");
    replace(&mut c, json!({})).unwrap();
    assert_eq!(c.settings.full_text, FullTextPolicy::default());
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
