//! Bad input gets a clear Cosmos error and changes nothing: R9 (ttl values),
//! R10 (indexing), malformed bodies, ids, sizes, unknown paths and methods;
//! and what the service accepts is accepted (the legacy indexing policy).

use crate::common::{TestClient, COLL};
use reqwest::Method;
use rstest::rstest;
use serde_json::{json, Value};

/// Every invalid value of R9 (and an explicit null, `docs/src/reference/protocol.md#errors`).
fn invalid_ttls() -> Vec<Value> {
    vec![
        json!(0),
        json!(-2),
        json!(-1000),
        json!(1.5),
        json!(2_147_483_648_i64),
        json!("100"),
        json!(true),
        json!([10]),
        json!({"s": 1}),
        json!(1e10),
    ]
}

#[rstest]
#[case::create("create")]
#[case::upsert_new("upsert")]
#[case::replace("replace")]
#[case::upsert_existing("upsert-existing")]
#[case::patch("patch")]
fn invalid_item_ttl_is_refused_and_changes_nothing(#[case] operation: &str) {
    let c = TestClient::with_container(Some(json!(1000)));
    let original = c.create_item(&json!({"id": "existing", "pk": "p", "v": 1}));
    let mut values = invalid_ttls();
    values.push(Value::Null);
    for ttl in values {
        let id = if operation == "create" || operation == "upsert" {
            "new"
        } else {
            "existing"
        };
        let body = json!({"id": id, "pk": "p", "v": 2, "ttl": ttl});
        let reply = match operation {
            "create" => c.create_item(&body),
            "upsert" | "upsert-existing" => c.upsert_item(&body),
            "replace" => c.replace_item(&body),
            _ => c.patch_item("existing", "p", json!([{"op": "set", "path": "/ttl", "value": ttl}, {"op": "set", "path": "/v", "value": 2}])),
        };
        reply.assert_error(400, "BadRequest");
        let shown = match &ttl {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        assert_eq!(
            reply.message(),
            format!("The input ttl '{shown}' is invalid. Ensure to provide a nonzero positive integer less than or equal to '2147483647', or '-1' which means never expire."),
        );
    }
    // Nothing stored, nothing changed.
    assert!(!c.is_visible("new", "p"));
    let now = c.read_item("existing", "p");
    assert_eq!(now.body, original.body);
}

#[rstest]
#[case(json!(-1))]
#[case(json!(1))]
#[case(json!(2_147_483_647))]
fn boundary_ttl_values_are_accepted(#[case] ttl: Value) {
    let c = TestClient::with_container(Some(ttl.clone()));
    assert_eq!(
        c.create_item(&json!({"id": "a", "pk": "p", "ttl": ttl}))
            .status,
        201
    );
}

/// Items in a container without TTL are validated all the same.
#[test]
fn invalid_item_ttl_is_refused_without_container_ttl() {
    let c = TestClient::with_container(None);
    c.create_item(&json!({"id": "a", "pk": "p", "ttl": 0}))
        .assert_error(400, "BadRequest");
    assert!(!c.is_visible("a", "p"));
}

#[test]
fn invalid_default_ttl_is_refused_on_create_and_replace() {
    let c = TestClient::with_container(Some(json!(1000)));
    for ttl in invalid_ttls() {
        let reply = c.create_container("other", Some(ttl.clone()));
        reply.assert_error(400, "BadRequest");
        assert!(
            reply.message().contains("defaultTtl"),
            "{}",
            reply.message()
        );
        c.get("/dbs/db/colls/other", &[])
            .assert_error(404, "NotFound");

        let reply = c.set_default_ttl(Some(ttl));
        reply.assert_error(400, "BadRequest");
        assert!(
            reply.message().contains("defaultTtl"),
            "{}",
            reply.message()
        );
        assert_eq!(
            c.get(COLL, &[]).body["defaultTtl"],
            json!(1000),
            "unchanged"
        );
    }
}

/// R10: no defaultTtl with indexing mode none, both ways.
#[test]
fn r10_no_ttl_with_indexing_none() {
    let c = TestClient::with_container(None);
    let none = json!({"indexingMode": "none", "automatic": false});
    c.post("/dbs/db/colls", &json!({"id": "x", "partitionKey": {"paths": ["/pk"]}, "defaultTtl": 100, "indexingPolicy": none}), &[])
        .assert_error(400, "BadRequest");
    c.get("/dbs/db/colls/x", &[]).assert_error(404, "NotFound");
    // A container with TTL cannot switch indexing off...
    assert_eq!(c.set_default_ttl(Some(json!(100))).status, 200);
    let reply = c.put(COLL, &json!({"id": "c", "partitionKey": {"paths": ["/pk"]}, "defaultTtl": 100, "indexingPolicy": none}), &[]);
    reply.assert_error(400, "BadRequest");
    assert!(
        reply.message().contains("indexingMode"),
        "{}",
        reply.message()
    );
    assert_eq!(
        c.get(COLL, &[]).body["indexingPolicy"]["indexingMode"],
        json!("consistent")
    );
    // ...and a container without indexing cannot turn TTL on; without TTL, none is fine.
    let created = c.post(
        "/dbs/db/colls",
        &json!({"id": "y", "partitionKey": {"paths": ["/pk"]}, "indexingPolicy": none}),
        &[],
    );
    assert_eq!(created.status, 201, "{}", created.body);
    c.put("/dbs/db/colls/y", &json!({"id": "y", "partitionKey": {"paths": ["/pk"]}, "defaultTtl": 5, "indexingPolicy": none}), &[])
        .assert_error(400, "BadRequest");
    // Lazy indexing allows TTL.
    let lazy = c.post("/dbs/db/colls", &json!({"id": "z", "partitionKey": {"paths": ["/pk"]}, "defaultTtl": 5, "indexingPolicy": {"indexingMode": "lazy"}}), &[]);
    assert_eq!(lazy.status, 201, "{}", lazy.body);
}

/// The legacy indexing policy the SDKs' own tests send (the root written
/// `/`, per-path `indexes`) is accepted, read back in the modern shape, and
/// the container behaves as with it: ORDER BY, and TTL by `defaultTtl` and
/// by item. Malformed index specifications are refused and create nothing.
#[test]
fn legacy_indexing_policy_is_accepted_and_behaves_as_the_modern_one() {
    let c = TestClient::with_container(None);
    assert_eq!(c.delete(COLL, &[]).status, 204);
    let legacy = json!({"includedPaths": [{"path": "/", "indexes": [
        {"kind": "Hash", "dataType": "String", "precision": 3},
        {"kind": "Range", "dataType": "Number", "precision": -1}]}]});
    let created = c.post(
        "/dbs/db/colls",
        &json!({"id": "c", "partitionKey": {"paths": ["/pk"]}, "defaultTtl": 10, "indexingPolicy": legacy}),
        &[],
    );
    assert_eq!(created.status, 201, "{}", created.body);
    let expected = json!({"indexingMode": "consistent", "automatic": true,
        "includedPaths": [{"path": "/*"}], "excludedPaths": [{"path": "/\"_etag\"/?"}]});
    assert_eq!(created.body["indexingPolicy"], expected);
    assert_eq!(c.get(COLL, &[]).body["indexingPolicy"], expected);

    for (id, n, ttl) in [("a", 2, None), ("b", 1, Some(30)), ("d", 3, Some(-1))] {
        let mut item = json!({"id": id, "pk": "p", "n": n});
        if let Some(ttl) = ttl {
            item["ttl"] = json!(ttl);
        }
        assert_eq!(c.create_item(&item).status, 201);
    }
    let ordered = c.query("SELECT VALUE c.id FROM c ORDER BY c.n DESC", json!([]));
    assert_eq!(ordered, [json!("d"), json!("a"), json!("b")]);
    // `a` follows defaultTtl (10 s), `b` its own ttl (30 s), `d` never expires.
    c.advance(10);
    assert_eq!(c.ids(), ["b", "d"]);
    c.advance(20);
    assert_eq!(c.ids(), ["d"]);

    // A replace in the legacy shape, as a client that read it back sends.
    let replaced = c.put(
        COLL,
        &json!({"id": "c", "partitionKey": {"paths": ["/pk"]}, "defaultTtl": 10,
                "indexingPolicy": {"includedPaths": [{"path": "/", "indexes": [{"kind": "Range", "dataType": "String"}]}],
                                   "excludedPaths": [{"path": "/big/*"}]}}),
        &[],
    );
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    assert_eq!(
        replaced.body["indexingPolicy"]["excludedPaths"],
        json!([{"path": "/big/*"}, {"path": "/\"_etag\"/?"}])
    );

    // Refused: a typo in an index specification, and (R10) TTL without indexing.
    let typo = c.post(
        "/dbs/db/colls",
        &json!({"id": "t", "partitionKey": {"paths": ["/pk"]},
                "indexingPolicy": {"includedPaths": [{"path": "/", "indexes": [{"kind": "Rnage", "dataType": "Number"}]}]}}),
        &[],
    );
    typo.assert_error(400, "BadRequest");
    assert!(typo.message().contains("'Rnage'"), "{}", typo.message());
    let none = c.post(
        "/dbs/db/colls",
        &json!({"id": "n", "partitionKey": {"paths": ["/pk"]}, "defaultTtl": 5,
                "indexingPolicy": {"indexingMode": "none", "includedPaths": [{"path": "/"}]}}),
        &[],
    );
    none.assert_error(400, "BadRequest");
    for id in ["t", "n"] {
        c.get(&format!("/dbs/db/colls/{id}"), &[])
            .assert_error(404, "NotFound");
    }
}

#[rstest]
#[case::not_json(b"{not json".to_vec())]
#[case::array(b"[1, 2]".to_vec())]
#[case::string(b"\"id\"".to_vec())]
#[case::empty(Vec::new())]
fn malformed_bodies(#[case] body: Vec<u8>) {
    let c = TestClient::with_container(None);
    let key = cosmos_emulator::protocol::auth::MasterKey::from_base64(c.emulator.key()).unwrap();
    for path in ["/dbs", "/dbs/db/colls", "/dbs/db/colls/c/docs"] {
        let reply = c.send_signed_with(
            &key,
            Method::POST,
            path,
            &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
            Some(body.clone()),
        );
        reply.assert_error(400, "BadRequest");
    }
    assert!(c.ids().is_empty());
}

#[rstest]
#[case::slash("a/b")]
#[case::backslash("a\\b")]
#[case::hash("a#b")]
fn names_may_not_hold_separators_but_item_ids_may(#[case] id: &str) {
    let c = TestClient::with_container(None);
    c.post("/dbs", &json!({"id": id}), &[])
        .assert_error(400, "BadRequest");
    c.create_container(id, None).assert_error(400, "BadRequest");
    // The service creates such an item (the Go SDK's
    // TestItemIdEncodingRoutingGW); its URL cannot address it.
    assert_eq!(c.create_item(&json!({"id": id, "pk": "p"})).status, 201);
    assert_eq!(c.ids(), [id]);
}

#[test]
fn an_empty_id_is_refused() {
    let c = TestClient::with_container(None);
    c.create_item(&json!({"id": "", "pk": "p"}))
        .assert_error(400, "BadRequest");
    c.post("/dbs", &json!({"id": ""}), &[])
        .assert_error(400, "BadRequest");
    assert!(c.ids().is_empty());
}

#[test]
fn id_types_and_lengths() {
    let c = TestClient::with_container(None);
    c.create_item(&json!({"id": 5, "pk": "p"}))
        .assert_error(400, "BadRequest");
    c.create_item(&json!({"pk": "p"}))
        .assert_error(400, "BadRequest");
    // Item ids: at most 1,023 bytes of UTF-8 (the service's per-item limit),
    // refused in the service's words (the SDKs' test_create_illegal_characters).
    for too_long in ["x".repeat(1024), "é".repeat(512), String::new()] {
        let reply = c.create_item(&json!({"id": too_long, "pk": "p"}));
        reply.assert_error(400, "BadRequest");
        assert!(
            reply.message().contains(
                "Ensure to provide a unique non-empty string less than '1024' characters."
            ),
            "{}",
            reply.message()
        );
    }
    assert_eq!(
        c.create_item(&json!({"id": "x".repeat(1023), "pk": "p"}))
            .status,
        201
    );
    // Database and container names: at most 255 characters.
    for too_long in ["d".repeat(256), "d".repeat(2000)] {
        let reply = c.post("/dbs", &json!({"id": too_long}), &[]);
        reply.assert_error(400, "BadRequest");
        assert!(
            reply.message().contains(
                "Ensure to provide a unique non-empty string less than '255' characters."
            ),
            "{}",
            reply.message()
        );
    }
    c.create_container(&"c".repeat(256), None)
        .assert_error(400, "BadRequest");
    assert_eq!(
        c.post("/dbs", &json!({"id": "d".repeat(255)}), &[]).status,
        201
    );
    assert_eq!(
        c.create_item(&json!({"id": "spaces and ünïcode", "pk": "p"}))
            .status,
        201
    );
    assert!(c.is_visible("spaces and ünïcode", "p"));
}

#[test]
fn items_over_2_mb_are_413() {
    let c = TestClient::with_container(None);
    let big = "x".repeat(2 * 1024 * 1024);
    c.create_item(&json!({"id": "big", "pk": "p", "data": big}))
        .assert_error(413, "RequestEntityTooLarge");
    // Far over the limit (but under the 16 MB read limit): still a clean 413.
    let huge = "x".repeat(12 * 1024 * 1024);
    c.create_item(&json!({"id": "huge", "pk": "p", "data": huge}))
        .assert_error(413, "RequestEntityTooLarge");
    assert!(c.ids().is_empty());
    let fits = "x".repeat(2 * 1024 * 1024 - 1024);
    assert_eq!(
        c.create_item(&json!({"id": "fits", "pk": "p", "data": fits}))
            .status,
        201
    );
}

#[test]
fn partition_key_mismatch_and_missing() {
    let c = TestClient::with_container(None);
    c.post(
        &format!("{COLL}/docs"),
        &json!({"id": "a", "pk": "p"}),
        &[("x-ms-documentdb-partitionkey", "[\"q\"]")],
    )
    .assert_error(400, "BadRequest");
    c.post(
        &format!("{COLL}/docs"),
        &json!({"id": "a", "pk": "p"}),
        &[("x-ms-documentdb-partitionkey", "not json")],
    )
    .assert_error(400, "BadRequest");
    c.create_item(&json!({"id": "a", "pk": "p"}));
    c.get(&format!("{COLL}/docs/a"), &[])
        .assert_error(400, "BadRequest");
    // The same id in another partition is another item.
    assert_eq!(c.create_item(&json!({"id": "a", "pk": "q"})).status, 201);
}

#[test]
fn unknown_resources_and_methods() {
    let c = TestClient::with_container(None);
    c.get("/dbs/nope", &[]).assert_error(404, "NotFound");
    c.get("/dbs/db/colls/nope", &[])
        .assert_error(404, "NotFound");
    c.get(
        "/dbs/db/colls/nope/docs/a",
        &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
    )
    .assert_error(404, "NotFound");
    c.get(
        "/dbs/db/colls/c/docs/nope",
        &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
    )
    .assert_error(404, "NotFound");
    c.get("/nothing/here", &[]).assert_error(404, "NotFound");
    c.delete("/dbs", &[]).assert_error(405, "MethodNotAllowed");
    c.send(Method::PATCH, COLL, &[], Some(&json!({})))
        .assert_error(405, "MethodNotAllowed");
}

#[test]
fn bad_queries_and_patches() {
    let c = TestClient::with_container(None);
    c.create_item(&json!({"id": "a", "pk": "p", "n": 1}));
    let query = |body: Value| {
        c.post(
            &format!("{COLL}/docs"),
            &body,
            &[
                ("x-ms-documentdb-isquery", "True"),
                ("content-type", "application/query+json"),
            ],
        )
    };
    query(json!({"query": "SELEC * FROM c"})).assert_error(400, "BadRequest");
    query(json!({"query": "SELECT * FROM c WHERE c.n = @missing"})).assert_error(400, "BadRequest");
    query(json!({"nope": 1})).assert_error(400, "BadRequest");
    c.patch_item(
        "a",
        "p",
        json!([{"op": "replace", "path": "/missing", "value": 1}]),
    )
    .assert_error(400, "BadRequest");
    c.patch_item(
        "a",
        "p",
        json!([{"op": "set", "path": "/id", "value": "b"}]),
    )
    .assert_error(400, "BadRequest");
    c.patch_item(
        "a",
        "p",
        json!([{"op": "set", "path": "/pk", "value": "q"}]),
    )
    .assert_error(400, "BadRequest");
    c.patch_item("a", "p", json!([]))
        .assert_error(400, "BadRequest");
    // A failed patch changes nothing, even when an earlier operation was valid.
    c.patch_item(
        "a",
        "p",
        json!([{"op": "set", "path": "/n", "value": 2}, {"op": "remove", "path": "/missing"}]),
    )
    .assert_error(400, "BadRequest");
    assert_eq!(c.read_item("a", "p").body["n"], json!(1));
}

/// The service creates, reads, replaces and deletes an item whose id holds
/// `?` (the JavaScript SDK's `RGW_idWithDisallowedCharQuestionMark`), which
/// the SDKs escape in the URL; a database or container name may not hold it.
#[test]
fn an_item_id_may_hold_a_question_mark() {
    let c = TestClient::with_container(None);
    let item = json!({"id": "Disallowed?Chars", "pk": "p"});
    assert_eq!(c.create_item(&item).status, 201);
    let path = format!("{COLL}/docs/Disallowed%3FChars");
    let pk = [("x-ms-documentdb-partitionkey", "[\"p\"]")];
    let read = c.get(&path, &pk);
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(read.body["id"], "Disallowed?Chars");
    let replaced = c.put(
        &path,
        &json!({"id": "Disallowed?Chars", "pk": "p", "v": 2}),
        &pk,
    );
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    assert_eq!(c.delete(&path, &pk).status, 204);
    assert!(c.ids().is_empty());
    c.post("/dbs", &json!({"id": "a?b"}), &[])
        .assert_error(400, "BadRequest");
}

/// An id holding `?`, sent unescaped as `@azure/cosmos` 4.7.0 sends it
/// (`encodeURI`): the query string is the rest of the id, as the service's
/// gateway reads it (its `RGW_idWithDisallowedCharQuestionMark`: 201, 200,
/// 200, 204). Escaped (`%3F`, as the other SDKs send it), the same item.
#[test]
fn an_id_with_an_unescaped_question_mark_is_addressed_whole() {
    let c = TestClient::with_container(None);
    assert_eq!(c.create_item(&json!({"id": "a?b", "pk": "p"})).status, 201);
    let pk = [("x-ms-documentdb-partitionkey", "[\"p\"]")];
    for path in ["a?b", "a%3Fb"] {
        let read = c.get(&format!("{COLL}/docs/{path}"), &pk);
        assert_eq!(read.status, 200, "{path}: {}", read.body);
        assert_eq!(read.body["id"], "a?b");
    }
    let replaced = c.put(
        &format!("{COLL}/docs/a?b"),
        &json!({"id": "a?b", "pk": "p", "v": 2}),
        &pk,
    );
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    assert_eq!(c.delete(&format!("{COLL}/docs/a?b"), &pk).status, 204);
    assert!(c.ids().is_empty());
}
