//! A container's vector embedding policy, full-text policy, vector indexes
//! and full-text indexes over HTTP: served back exactly as sent, refused
//! with the service's words (400, nothing stored), kept or changed by a
//! replace as the service allows, and kept by a restart (the rules and
//! their sources: `data/index/search_policy.rs`).

use crate::common::{Reply, TestClient, START};
use cosmos_emulator::{ClockMode, Config};
use serde_json::{json, Value};

const COLLS: &str = "/dbs/db/colls";

fn client() -> TestClient {
    let c = TestClient::start();
    assert_eq!(c.post("/dbs", &json!({"id": "db"}), &[]).status, 201);
    c
}

/// A container body: an id, a partition key, and `fields`.
fn container(id: &str, fields: Value) -> Value {
    let mut body = json!({"id": id, "partitionKey": {"paths": ["/id"], "kind": "Hash"}});
    for (k, v) in fields.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

fn embedding(path: &str, data_type: &str, dimensions: i64, distance: &str) -> Value {
    json!({"path": path, "dataType": data_type, "dimensions": dimensions, "distanceFunction": distance})
}

/// The embeddings of Microsoft's vector policy test.
fn microsoft_embeddings() -> Value {
    json!({"vectorEmbeddings": [
        embedding("/vector1", "float32", 256, "euclidean"),
        embedding("/vector2", "int8", 200, "dotproduct"),
        embedding("/vector3", "uint8", 400, "cosine"),
    ]})
}

fn full_text() -> Value {
    json!({"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/abstract", "language": "en-US"}]})
}

/// JSON text, to compare the order of fields too (the SDKs' tests compare
/// what they read with what they sent).
fn text(value: &Value) -> String {
    serde_json::to_string(value).unwrap()
}

#[track_caller]
fn created(c: &TestClient, body: &Value) -> Value {
    let reply = c.post(COLLS, body, &[]);
    assert_eq!(reply.status, 201, "{}", reply.body);
    reply.body
}

#[test]
fn create_serves_both_policies_and_the_indexes_as_sent() {
    let c = client();
    let vector_indexes = json!([
        {"path": "/vector1", "type": "flat"},
        {"path": "/vector2", "type": "quantizedFlat", "quantizerType": "product", "quantizationByteSize": 8},
        {"path": "/vector3", "type": "diskANN", "quantizerType": "product", "quantizationByteSize": 8,
         "vectorIndexShardKey": ["/city"], "indexingSearchListSize": 50}
    ]);
    let full_text_indexes = json!([{"path": "/abstract"}]);
    let body = container(
        "search",
        json!({
            "vectorEmbeddingPolicy": microsoft_embeddings(),
            "fullTextPolicy": full_text(),
            "indexingPolicy": {
                "includedPaths": [{"path": "/*"}],
                "excludedPaths": [{"path": "/vector1/*"}, {"path": "/vector2/*"}, {"path": "/vector3/*"}],
                "vectorIndexes": vector_indexes,
                "fullTextIndexes": full_text_indexes
            }
        }),
    );
    let answer = created(&c, &body);
    let read = c.get("/dbs/db/colls/search", &[]).body;
    let listed = c.get(COLLS, &[]).body["DocumentCollections"][0].clone();
    for served in [&answer, &read, &listed] {
        assert_eq!(
            text(&served["vectorEmbeddingPolicy"]),
            text(&microsoft_embeddings())
        );
        assert_eq!(text(&served["fullTextPolicy"]), text(&full_text()));
        let policy = &served["indexingPolicy"];
        assert_eq!(text(&policy["vectorIndexes"]), text(&vector_indexes));
        assert_eq!(text(&policy["fullTextIndexes"]), text(&full_text_indexes));
        // The vector paths stay excluded, as Microsoft recommends.
        assert_eq!(
            policy["excludedPaths"][0],
            json!({"path": "/vector1/*"}),
            "{policy}"
        );
    }
}

#[test]
fn the_other_shapes_microsoft_sends_are_served_as_sent() {
    let c = client();
    let cases = [
        json!({
            "vectorEmbeddingPolicy": microsoft_embeddings(),
            "indexingPolicy": {"vectorIndexes": [{"path": "/vector2", "type": "diskANN", "quantizerType": "product",
                "quantizationByteSize": 64, "indexingSearchListSize": 100, "vectorIndexShardKey": ["/country/city"]}]}
        }),
        json!({
            "vectorEmbeddingPolicy": {"vectorEmbeddings": [
                embedding("/vector4", "float16", 400, "cosine"),
                {"path": "/vector5", "dataType": "float32", "dimensions": 3, "distanceFunction": "cosine",
                 "embeddingSource": {"sourcePath": "/text"}}
            ]},
            "indexingPolicy": {"vectorIndexes": [{"path": "/vector4", "type": "diskANN", "quantizerType": "spherical", "indexingSearchListSize": 50}]}
        }),
        json!({"fullTextPolicy": {"defaultLanguage": "en-US"}}),
        json!({"fullTextPolicy": {"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/abstract"}]}}),
        json!({"fullTextPolicy": {"defaultLanguage": "de-DE", "fullTextPaths": [{"path": "/a/b", "language": "fr-FR"}]},
               "indexingPolicy": {"fullTextIndexes": [{"path": "/a/b"}], "vectorIndexes": []}}),
    ];
    for (n, fields) in cases.iter().enumerate() {
        let id = format!("shape{n}");
        created(&c, &container(&id, fields.clone()));
        let read = c.get(&format!("{COLLS}/{id}"), &[]).body;
        for (field, sent) in fields.as_object().unwrap() {
            if field == "indexingPolicy" {
                for (index, list) in sent.as_object().unwrap() {
                    assert_eq!(text(&read[field][index]), text(list), "{id}");
                }
            } else {
                assert_eq!(text(&read[field]), text(sent), "{id}");
            }
        }
    }
}

/// Each refusal: its body's fields and what its message says.
fn refusals() -> Vec<(&'static str, Value, &'static str)> {
    let embeddings = microsoft_embeddings;
    let indexes = |list: Value| json!({"vectorEmbeddingPolicy": embeddings(), "indexingPolicy": {"vectorIndexes": list}});
    let one = |e: Value| json!({"vectorEmbeddingPolicy": {"vectorEmbeddings": [e]}});
    let full_text_indexes = |list: Value| json!({"fullTextPolicy": full_text(), "indexingPolicy": {"fullTextIndexes": list}});
    vec![
        ("data type", one(embedding("/vector1", "float33", 256, "euclidean")),
            "The Vector Embedding Policy has an invalid DataType:float33. Supported types are float32, float16, int8 and uint8"),
        ("too many dimensions", one(embedding("/vector1", "float32", 8000, "euclidean")),
            "Vector Embedding Policy has Dimensions:8000 which is more than the maximum supported value"),
        ("negative dimensions", one(embedding("/vector1", "float32", -1, "euclidean")),
            "The Vector Embedding Policy has Dimensions:-1"),
        ("no dimensions", one(embedding("/vector1", "float32", 0, "euclidean")),
            "The Vector Embedding Policy has Dimensions:0"),
        ("distance function", one(embedding("/vector1", "float32", 256, "handMeasured")),
            "The Vector Embedding Policy has an invalid DistanceFunction:handMeasured"),
        ("embedding path", one(embedding("/embedding/", "float32", 256, "cosine")),
            "The Vector Embedding Policy has an invalid Path:/embedding/"),
        ("duplicate embedding", json!({"vectorEmbeddingPolicy": {"vectorEmbeddings": [
            embedding("/v", "float32", 3, "cosine"), embedding("/v", "float32", 3, "cosine")]}}),
            "duplicate Path:/v"),
        ("index type", indexes(json!([{"path": "/vector1", "type": "notFlat"}])),
            "Index Type::notFlat is invalid"),
        ("index path", indexes(json!([{"path": "/vector9", "type": "flat"}])),
            "The Vector Indexing Policy's path::/vector9 not matching in Embedding's path."),
        ("no embedding policy", json!({"indexingPolicy": {"vectorIndexes": [{"path": "/vector1", "type": "flat"}]}}),
            "The Vector Indexing Policy's path::/vector1 not matching in Embedding's path."),
        ("flat too long", json!({
            "vectorEmbeddingPolicy": {"vectorEmbeddings": [embedding("/v", "float32", 1000, "cosine")]},
            "indexingPolicy": {"vectorIndexes": [{"path": "/v", "type": "flat"}]}}),
            "most 505 dimensions, but its embedding has Dimensions:1000"),
        ("quantization bytes", indexes(json!([{"path": "/vector1", "type": "quantizedFlat", "quantizationByteSize": 0}])),
            "The Vector Indexing Policy parameter QuantizationByteSize value :: 0 is out of range. The allowed range is between 1 and 256."),
        ("quantization bytes over 512", json!({
            "vectorEmbeddingPolicy": {"vectorEmbeddings": [embedding("/vector1", "float32", 550, "euclidean")]},
            "indexingPolicy": {"vectorIndexes": [{"path": "/vector1", "type": "quantizedFlat", "quantizationByteSize": 513}]}}),
            "The Vector Indexing Policy parameter QuantizationByteSize value :: 513 is out of range."),
        ("search list", indexes(json!([{"path": "/vector1", "type": "diskANN", "indexingSearchListSize": 5}])),
            "IndexingSearchListSize value :: 5 is out of range. The allowed range is between 25 and 500."),
        ("quantizer", indexes(json!([{"path": "/vector1", "type": "diskANN", "quantizerType": "scalar"}])),
            "invalid QuantizerType:scalar"),
        ("shard key type", indexes(json!([{"path": "/vector2", "type": "diskANN", "vectorIndexShardKey": "/country"}])),
            "One of the specified inputs is invalid"),
        ("shard path", indexes(json!([{"path": "/vector2", "type": "diskANN", "vectorIndexShardKey": ["country"]}])),
            "The Vector Indexing Policy has an invalid Shard Path: country."),
        ("shard paths", indexes(json!([{"path": "/vector2", "type": "diskANN", "vectorIndexShardKey": ["/country", "/city", "/zipcode"]}])),
            "The number of shard paths defined in the Vector Indexing Policy: 3 exceeds the maximum: 1."),
        ("default language", json!({"fullTextPolicy": {"defaultLanguage": "spa-SPA", "fullTextPaths": [{"path": "/abstract", "language": "en-US"}]}}),
            "The Full Text Policy contains an unsupported language spa-SPA. Supported languages are:"),
        ("path language", json!({"fullTextPolicy": {"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/abstract", "language": "spa-SPA"}]}}),
            "The Full Text Policy contains an unsupported language spa-SPA. Supported languages are:"),
        ("full-text path", json!({"fullTextPolicy": {"defaultLanguage": "en-US", "fullTextPaths": [{"path": "abstract", "language": "en-US"}]}}),
            "The Full Text Policy contains an invalid Path: abstract"),
        ("full-text index path missing", full_text_indexes(json!([{"not_path": "abstract"}])),
            "Missing path in full-text index specification at index (0)"),
        ("full-text index path", full_text_indexes(json!([{"path": "abstract"}])),
            "Full-text index specification at index (0) contains invalid path"),
        ("full-text index not in the policy", full_text_indexes(json!([{"path": "/path"}])),
            "The path of the Full Text Index /path does not match the path specified in the Full Text Policy"),
        ("full-text index without a policy", json!({"indexingPolicy": {"fullTextIndexes": [{"path": "/abstract"}]}}),
            "The path of the Full Text Index /abstract does not match"),
    ]
}

#[test]
fn each_refusal_is_a_400_with_the_services_words_and_stores_nothing() {
    let c = client();
    for (case, fields, said) in refusals() {
        let reply = c.post(COLLS, &container("refused", fields), &[]);
        reply.assert_error(400, "BadRequest");
        assert!(
            reply.message().contains(said),
            "{case}: {said:?} not in {:?}",
            reply.message()
        );
        c.get("/dbs/db/colls/refused", &[])
            .assert_error(404, "NotFound");
    }
    assert_eq!(c.get(COLLS, &[]).body["_count"], json!(0));
}

#[track_caller]
fn refused(reply: Reply, said: &str) {
    reply.assert_error(400, "BadRequest");
    assert!(reply.message().contains(said), "{}", reply.message());
}

#[test]
fn a_replace_keeps_the_vector_indexes_and_embeddings() {
    let c = client();
    let policy = json!({"vectorEmbeddings": [embedding("/vector1", "float32", 256, "euclidean")]});
    let indexing = json!({"vectorIndexes": [{"path": "/vector1", "type": "flat"}]});
    let body = container(
        "v",
        json!({"vectorEmbeddingPolicy": policy, "indexingPolicy": indexing}),
    );
    let before = created(&c, &body);
    let path = "/dbs/db/colls/v";

    // Microsoft's three refusals, in its words.
    refused(
        c.put(
            path,
            &container("v", json!({"indexingPolicy": indexing})),
            &[],
        ),
        "The Vector Indexing Policy's path::/vector1 not matching in Embedding's path.",
    );
    let quantized = json!({"vectorIndexes": [{"path": "/vector1", "type": "quantizedFlat"}]});
    refused(
        c.put(
            path,
            &container(
                "v",
                json!({"vectorEmbeddingPolicy": policy, "indexingPolicy": quantized}),
            ),
            &[],
        ),
        "Paths in existing vector indexing policy cannot be modified in Collection Replace",
    );
    let longer = json!({"vectorEmbeddings": [embedding("/vector1", "float32", 384, "euclidean")]});
    refused(
        c.put(
            path,
            &container(
                "v",
                json!({"vectorEmbeddingPolicy": longer, "indexingPolicy": indexing}),
            ),
            &[],
        ),
        "Paths in existing embedding policy cannot be modified in Collection Replace",
    );
    // Dropping the embeddings is a change too (the indexes alone may go:
    // "They can only be added or removed").
    refused(
        c.put(path, &container("v", json!({})), &[]),
        "cannot be modified in Collection Replace",
    );
    let unchanged = c.get(path, &[]).body;
    assert_eq!(unchanged["_etag"], before["_etag"]);
    assert_eq!(unchanged["indexingPolicy"], before["indexingPolicy"]);

    // Other paths, the same vector indexes and embeddings: fine (Microsoft's
    // replace test), and an embedding may be added.
    let added = json!({"vectorEmbeddings": [
        embedding("/vector1", "float32", 256, "euclidean"),
        embedding("/vector2", "int8", 8, "cosine")
    ]});
    let narrower = json!({
        "indexingMode": "consistent",
        "automatic": true,
        "includedPaths": [{"path": "/color/?"}, {"path": "/description/?"}, {"path": "/cost/?"}],
        "excludedPaths": [{"path": "/*"}, {"path": "/vector1/*"}, {"path": "/\"_etag\"/?"}],
        "fullTextIndexes": [],
        "vectorIndexes": [{"path": "/vector1", "type": "flat"}]
    });
    let reply = c.put(
        path,
        &container(
            "v",
            json!({"vectorEmbeddingPolicy": added, "indexingPolicy": narrower}),
        ),
        &[],
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let read = c.get(path, &[]).body;
    assert_eq!(text(&read["vectorEmbeddingPolicy"]), text(&added));
    assert_eq!(
        read["indexingPolicy"]["includedPaths"],
        narrower["includedPaths"]
    );
    assert_eq!(
        read["indexingPolicy"]["vectorIndexes"],
        narrower["vectorIndexes"]
    );
}

#[test]
fn a_container_without_vector_indexes_may_get_some() {
    let c = client();
    let policy = json!({"vectorEmbeddings": [embedding("/vector1", "float32", 1536, "cosine")]});
    created(
        &c,
        &container("v", json!({"vectorEmbeddingPolicy": policy})),
    );
    let indexes = json!([{"path": "/vector1", "type": "diskANN", "quantizationByteSize": 96, "indexingSearchListSize": 100}]);
    let reply = c.put(
        "/dbs/db/colls/v",
        &container(
            "v",
            json!({"vectorEmbeddingPolicy": policy, "indexingPolicy": {"vectorIndexes": indexes}}),
        ),
        &[],
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        text(&c.get("/dbs/db/colls/v", &[]).body["indexingPolicy"]["vectorIndexes"]),
        text(&indexes)
    );
}

#[test]
fn a_replace_may_change_the_full_text_policy_and_indexes() {
    // Microsoft's test: a container without either gets both, then moves
    // the path /abstract to /new_path.
    let c = client();
    let plain = created(&c, &container("t", json!({})));
    let path = "/dbs/db/colls/t";
    let indexes = json!({"fullTextIndexes": [{"path": "/abstract"}]});
    let reply = c.put(
        path,
        &container(
            "t",
            json!({"fullTextPolicy": full_text(), "indexingPolicy": indexes}),
        ),
        &[],
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let read = c.get(path, &[]).body;
    assert_eq!(text(&read["fullTextPolicy"]), text(&full_text()));
    assert_eq!(
        read["indexingPolicy"]["fullTextIndexes"],
        indexes["fullTextIndexes"]
    );
    assert_ne!(read["indexingPolicy"], plain["indexingPolicy"]);

    let moved = json!({"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/new_path", "language": "en-US"}]});
    let moved_indexes = json!({"fullTextIndexes": [{"path": "/new_path"}]});
    let reply = c.put(
        path,
        &container(
            "t",
            json!({"fullTextPolicy": moved, "indexingPolicy": moved_indexes}),
        ),
        &[],
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let read = c.get(path, &[]).body;
    assert_eq!(text(&read["fullTextPolicy"]), text(&moved));
    assert_eq!(
        read["indexingPolicy"]["fullTextIndexes"],
        moved_indexes["fullTextIndexes"]
    );
    // A replace's full-text index is checked against the policy it sends.
    refused(
        c.put(
            path,
            &container("t", json!({"indexingPolicy": moved_indexes})),
            &[],
        ),
        "The path of the Full Text Index /new_path does not match",
    );
}

#[test]
fn the_policies_survive_a_restart() {
    let dir = crate::common::scratch_dir("search-policies");
    let config = || Config {
        clock: ClockMode::Manual { start: Some(START) },
        data_dir: Some(dir.clone()),
        ..Config::for_tests()
    };
    let policy = json!({"vectorEmbeddings": [embedding("/vector1", "float32", 256, "euclidean")]});
    let body = container(
        "v",
        json!({
            "vectorEmbeddingPolicy": policy,
            "fullTextPolicy": full_text(),
            "indexingPolicy": {
                "vectorIndexes": [{"path": "/vector1", "type": "quantizedFlat", "quantizationByteSize": 64}],
                "fullTextIndexes": [{"path": "/abstract"}]
            }
        }),
    );
    let before = {
        let c = TestClient::start_config(config());
        assert_eq!(c.post("/dbs", &json!({"id": "db"}), &[]).status, 201);
        created(&c, &body);
        c.get("/dbs/db/colls/v", &[]).body
    };
    let c = TestClient::start_config(config());
    let after = c.get("/dbs/db/colls/v", &[]).body;
    assert_eq!(after, before);
    // Each policy in the order of its fields, as sent.
    for (policy, sent) in [
        (
            &after["vectorEmbeddingPolicy"],
            &body["vectorEmbeddingPolicy"],
        ),
        (&after["fullTextPolicy"], &body["fullTextPolicy"]),
        (
            &after["indexingPolicy"]["vectorIndexes"],
            &body["indexingPolicy"]["vectorIndexes"],
        ),
        (
            &after["indexingPolicy"]["fullTextIndexes"],
            &body["indexingPolicy"]["fullTextIndexes"],
        ),
    ] {
        assert_eq!(text(policy), text(sent));
    }
    // The restored container still knows its embeddings and indexes.
    let longer = json!({"vectorEmbeddings": [embedding("/vector1", "float32", 384, "euclidean")]});
    refused(
        c.put(
            "/dbs/db/colls/v",
            &container(
                "v",
                json!({"vectorEmbeddingPolicy": longer, "indexingPolicy": {"vectorIndexes": body["indexingPolicy"]["vectorIndexes"]}}),
            ),
            &[],
        ),
        "Paths in existing embedding policy cannot be modified in Collection Replace",
    );
    let changed = json!({"vectorIndexes": [{"path": "/vector1", "type": "quantizedFlat"}]});
    refused(
        c.put(
            "/dbs/db/colls/v",
            &container(
                "v",
                json!({"vectorEmbeddingPolicy": policy, "indexingPolicy": changed}),
            ),
            &[],
        ),
        "Paths in existing vector indexing policy cannot be modified in Collection Replace",
    );
    drop(c);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Container `v` whose policies are not the defaults: Euclidean distance
/// on `/v` (not cosine) and German text on `/text` (not English), so that
/// a search function run with the defaults gives another answer.
fn euclidean_and_german(c: &TestClient) {
    created(
        c,
        &container(
            "v",
            json!({
                "vectorEmbeddingPolicy": {"vectorEmbeddings": [embedding("/v", "float32", 2, "euclidean")]},
                "fullTextPolicy": {"defaultLanguage": "de-DE", "fullTextPaths": [{"path": "/text", "language": "de-DE"}]},
            }),
        ),
    );
}

/// A query that calls a user-defined function runs its page off the
/// store's lock, on another thread: its search functions read the
/// container's policies all the same (issue 38), the vector's distance
/// function (Euclidean here, not the default cosine) and the text's
/// language (German: "Häuser" is "Haus").
#[test]
fn a_query_that_calls_a_udf_reads_the_container_s_policies() {
    let c = client();
    euclidean_and_german(&c);
    let udf = json!({"id": "ident", "body": "function (x) { return x; }"});
    assert_eq!(c.post("/dbs/db/colls/v/udfs", &udf, &[]).status, 201);
    for (id, v, text) in [
        ("a", [1, 0], "Das Haus ist alt"),
        ("b", [3, 4], "Häuser bauen"),
        ("c", [-2, 1], "Ein Garten"),
    ] {
        let pk = json!([id]).to_string();
        let item = json!({"id": id, "v": v, "text": text});
        let reply = c.post(
            "/dbs/db/colls/v/docs",
            &item,
            &[("x-ms-documentdb-partitionkey", &pk)],
        );
        assert_eq!(reply.status, 201, "{}", reply.body);
    }
    for udf in ["", ", udf.ident(c.id) AS u"] {
        let query = format!(
            "SELECT c.id, VectorDistance(c.v, [1, 1]) AS d{udf} FROM c \
             WHERE FullTextContains(c.text, 'Häuser')"
        );
        let reply = c.post(
            "/dbs/db/colls/v/docs",
            &json!({"query": query}),
            &[
                ("x-ms-documentdb-isquery", "True"),
                ("content-type", "application/query+json"),
                ("x-ms-documentdb-query-enablecrosspartition", "True"),
                ("x-ms-documentdb-partitionkeyrangeid", "0"),
            ],
        );
        assert_eq!(reply.status, 200, "{}", reply.body);
        let rows = reply.body["Documents"].as_array().unwrap();
        let found: Vec<(&str, f64)> = rows
            .iter()
            .map(|r| (r["id"].as_str().unwrap(), r["d"].as_f64().unwrap()))
            .collect();
        assert_eq!(found.len(), 2, "{query}: {rows:?}");
        assert_eq!(found[0].0, "a");
        assert!((found[0].1 - 1.0).abs() < 1e-6, "{query}: {rows:?}");
        assert_eq!(found[1].0, "b");
        assert!(
            (found[1].1 - 13f64.sqrt()).abs() < 1e-6,
            "{query}: {rows:?}"
        );
    }
}

/// A stored procedure's query of its partition reads the container's
/// policies too (it ran with the defaults: cosine, English).
#[test]
fn a_stored_procedure_s_query_reads_the_container_s_policies() {
    let c = client();
    euclidean_and_german(&c);
    let pk = json!(["a"]).to_string();
    let pk = [("x-ms-documentdb-partitionkey", pk.as_str())];
    let item = json!({"id": "a", "v": [1, 0], "text": "Das Haus ist alt"});
    assert_eq!(c.post("/dbs/db/colls/v/docs", &item, &pk).status, 201);
    let sproc = json!({"id": "probe", "body": r#"function () {
        var c = getContext().getCollection();
        c.queryDocuments(c.getSelfLink(),
            "SELECT VALUE VectorDistance(c.v, [1, 1]) FROM c WHERE FullTextContains(c.text, 'Häuser')",
            function (err, docs) { getContext().getResponse().setBody(docs); });
    }"#});
    assert_eq!(c.post("/dbs/db/colls/v/sprocs", &sproc, &[]).status, 201);
    let reply = c.post("/dbs/db/colls/v/sprocs/probe", &json!([]), &pk);
    assert_eq!(reply.status, 200, "{}", reply.body);
    // The Euclidean distance of [1, 0] to [1, 1] (cosine would be 0.707).
    let distances = reply.body.as_array().unwrap();
    assert_eq!(distances.len(), 1, "{}", reply.body);
    assert!(
        (distances[0].as_f64().unwrap() - 1.0).abs() < 1e-6,
        "{}",
        reply.body
    );
}

/// A patch's `condition` reads the container's policies too, alone and in
/// a transactional batch: German stems "Häuser" as "Haus", so the condition
/// holds and the patch applies (with English it would not: 412).
#[test]
fn a_patch_condition_reads_the_container_s_policies() {
    let c = client();
    euclidean_and_german(&c);
    let pk = json!(["a"]).to_string();
    let pk = [("x-ms-documentdb-partitionkey", pk.as_str())];
    let item = json!({"id": "a", "v": [1, 0], "text": "Das Haus ist alt"});
    assert_eq!(c.post("/dbs/db/colls/v/docs", &item, &pk).status, 201);
    // The Euclidean distance of [1, 0] to [1, 1] is 1 (cosine: 0.707).
    let condition = "FROM c WHERE FullTextContains(c.text, 'Häuser') \
                     AND VectorDistance(c.v, [1, 1]) > 0.99";
    let patch = json!({
        "operations": [{"op": "set", "path": "/n", "value": 1}],
        "condition": condition,
    });
    let reply = c.send(
        reqwest::Method::PATCH,
        "/dbs/db/colls/v/docs/a",
        &pk,
        Some(&patch),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["n"], 1);

    let batch = json!([{
        "operationType": "Patch",
        "id": "a",
        "resourceBody": {
            "operations": [{"op": "set", "path": "/n", "value": 2}],
            "condition": condition,
        },
    }]);
    let reply = c.post(
        "/dbs/db/colls/v/docs",
        &batch,
        &[
            ("x-ms-cosmos-is-batch-request", "True"),
            ("x-ms-cosmos-batch-atomic", "True"),
            pk[0],
        ],
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body[0]["statusCode"], 200, "{}", reply.body);
    assert_eq!(c.get("/dbs/db/colls/v/docs/a", &pk).body["n"], 2);
}
