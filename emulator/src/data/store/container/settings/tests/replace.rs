//! What a replace of a container may change of its search policies.

use serde_json::{json, Value};

use super::*;

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
