//! The wire as `docs/src/reference/protocol.md` describes it: account document, resources,
//! envelopes, headers, paging, pkranges, preconditions, authentication.

use crate::common::{TestClient, COLL, DB};
use cosmos_emulator::protocol::auth::MasterKey;
use reqwest::Method;
use serde_json::{json, Value};

#[test]
fn account_document_advertises_the_address_reached() {
    let c = TestClient::start();
    let reply = c.get("/", &[]);
    assert_eq!(reply.status, 200);
    let endpoint = format!("{}/", c.emulator.endpoint());
    for key in ["writableLocations", "readableLocations"] {
        assert_eq!(
            reply.body[key][0]["databaseAccountEndpoint"],
            json!(endpoint),
            "{key}"
        );
    }
    assert!(
        reply.body["queryEngineConfiguration"].is_string(),
        "a JSON string, not an object"
    );
    assert_eq!(
        reply.body["userConsistencyPolicy"]["defaultConsistencyLevel"],
        json!("Session")
    );
    for header in [
        "x-ms-activity-id",
        "x-ms-request-charge",
        "x-ms-schemaversion",
    ] {
        assert!(reply.header(header).is_some(), "{header}");
    }
    // A session token names a partition's LSN: the account has none.
    assert_eq!(reply.header("x-ms-session-token"), None);
}

#[test]
fn activity_id_is_echoed() {
    let c = TestClient::start();
    let reply = c.get(
        "/",
        &[("x-ms-activity-id", "4bd5b0c1-8c5c-4b0e-9d5e-0e9f1a2b3c4d")],
    );
    assert_eq!(
        reply.header("x-ms-activity-id"),
        Some("4bd5b0c1-8c5c-4b0e-9d5e-0e9f1a2b3c4d")
    );
}

#[test]
fn databases_and_containers_lifecycle() {
    let c = TestClient::start();
    let created = c.post("/dbs", &json!({"id": DB}), &[]);
    assert_eq!(created.status, 201);
    for key in ["_rid", "_self", "_etag", "_ts", "_colls", "_users"] {
        assert!(created.body.get(key).is_some(), "{key}");
    }
    c.post("/dbs", &json!({"id": DB}), &[])
        .assert_error(409, "Conflict");
    let list = c.get("/dbs", &[]);
    assert_eq!(list.body["_count"], json!(1));
    assert_eq!(list.body["Databases"][0]["id"], json!(DB));
    assert_eq!(list.header("x-ms-item-count"), Some("1"));

    let coll = c.create_container("c", Some(json!(60)));
    assert_eq!(coll.status, 201);
    assert_eq!(coll.body["defaultTtl"], json!(60));
    assert_eq!(coll.body["partitionKey"]["paths"], json!(["/pk"]));
    assert_eq!(
        coll.body["indexingPolicy"]["indexingMode"],
        json!("consistent")
    );
    assert_eq!(coll.header("etag"), coll.body["_etag"].as_str());
    c.create_container("c", None).assert_error(409, "Conflict");
    assert_eq!(
        c.get("/dbs/db/colls", &[]).body["DocumentCollections"][0]["id"],
        json!("c")
    );
    let read = c.get(COLL, &[]);
    assert_eq!(read.body["_rid"], coll.body["_rid"]);
    assert!(read
        .header("x-ms-resource-usage")
        .unwrap()
        .contains("documentsCount=0"));

    // Queries over databases and containers, as create_if_not_exists helpers send.
    let found = c.post("/dbs", &json!({"query": "SELECT * FROM root r WHERE r.id=@id", "parameters": [{"name": "@id", "value": DB}]}), &[("x-ms-documentdb-isquery", "True"), ("content-type", "application/query+json")]);
    assert_eq!(found.body["_count"], json!(1));

    // The partition key cannot change on replace.
    c.put(
        COLL,
        &json!({"id": "c", "partitionKey": {"paths": ["/other"]}}),
        &[],
    )
    .assert_error(400, "BadRequest");
    // RID-based addressing reaches the same resources.
    let db_rid = created.body["_rid"].as_str().unwrap();
    let coll_rid = coll.body["_rid"].as_str().unwrap();
    assert_eq!(c.get(&format!("/dbs/{db_rid}"), &[]).body["id"], json!(DB));
    assert_eq!(
        c.get(&format!("/dbs/{db_rid}/colls/{coll_rid}"), &[]).body["id"],
        json!("c")
    );

    assert_eq!(c.delete(COLL, &[]).status, 204);
    c.get(COLL, &[]).assert_error(404, "NotFound");
    assert_eq!(c.delete("/dbs/db", &[]).status, 204);
    c.get("/dbs/db", &[]).assert_error(404, "NotFound");
}

#[test]
fn items_crud_with_system_properties() {
    let c = TestClient::with_container(None);
    let created =
        c.create_item(&json!({"id": "a", "pk": "p", "n": 1, "_ts": 5, "_etag": "forged"}));
    assert_eq!(created.status, 201);
    let body = &created.body;
    assert_eq!(
        body["_ts"],
        json!(crate::common::START),
        "the server sets _ts"
    );
    assert!(
        body["_etag"].as_str().unwrap().starts_with('"'),
        "etags are quoted"
    );
    assert_eq!(created.header("etag"), body["_etag"].as_str());
    assert_eq!(body["_attachments"], json!("attachments/"));
    assert!(body["_self"]
        .as_str()
        .unwrap()
        .ends_with(&format!("docs/{}/", body["_rid"].as_str().unwrap())));
    c.create_item(&json!({"id": "a", "pk": "p"}))
        .assert_error(409, "Conflict");

    let read = c.read_item("a", "p");
    assert_eq!(read.body, created.body);
    c.advance(3);
    let replaced = c.replace_item(&json!({"id": "a", "pk": "p", "n": 2}));
    assert_eq!(replaced.body["n"], json!(2));
    assert_eq!(
        replaced.body["_rid"], created.body["_rid"],
        "an item keeps its RID"
    );
    assert_ne!(replaced.body["_etag"], created.body["_etag"]);
    assert_eq!(replaced.body["_ts"], json!(crate::common::START + 3));

    let upserted = c.upsert_item(&json!({"id": "b", "pk": "p"}));
    assert_eq!(upserted.status, 201);
    assert_eq!(
        c.upsert_item(&json!({"id": "b", "pk": "p", "x": 1})).status,
        200
    );

    let patched = c.patch_item("a", "p", json!([{"op": "incr", "path": "/n", "value": 5}, {"op": "add", "path": "/tags", "value": ["t"]}]));
    assert_eq!(patched.status, 200, "{}", patched.body);
    assert_eq!(
        (patched.body["n"].clone(), patched.body["tags"].clone()),
        (json!(7), json!(["t"]))
    );

    assert_eq!(c.delete_item("a", "p").status, 204);
    c.read_item("a", "p").assert_error(404, "NotFound");
    c.replace_item(&json!({"id": "zzz", "pk": "p"}))
        .assert_error(404, "NotFound");
}

#[test]
fn if_match_preconditions() {
    let c = TestClient::with_container(None);
    let created = c.create_item(&json!({"id": "a", "pk": "p"}));
    let etag = created.header("etag").unwrap().to_string();
    let pk = [("x-ms-documentdb-partitionkey", "[\"p\"]")];
    fn with(tag: &str) -> [(&str, &str); 2] {
        [
            ("x-ms-documentdb-partitionkey", "[\"p\"]"),
            ("if-match", tag),
        ]
    }
    let path = format!("{COLL}/docs/a");
    c.put(
        &path,
        &json!({"id": "a", "pk": "p", "v": 1}),
        &with("\"stale\""),
    )
    .assert_error(412, "PreconditionFailed");
    c.delete(&path, &with("\"stale\""))
        .assert_error(412, "PreconditionFailed");
    c.send(
        Method::PATCH,
        &path,
        &with("\"stale\""),
        Some(&json!({"operations": [{"op": "set", "path": "/v", "value": 1}]})),
    )
    .assert_error(412, "PreconditionFailed");
    let upsert = [
        pk[0],
        ("if-match", "\"stale\""),
        ("x-ms-documentdb-is-upsert", "True"),
    ];
    c.post(
        &format!("{COLL}/docs"),
        &json!({"id": "a", "pk": "p"}),
        &upsert,
    )
    .assert_error(412, "PreconditionFailed");
    assert!(
        c.read_item("a", "p").body.get("v").is_none(),
        "nothing changed"
    );
    assert_eq!(
        c.put(&path, &json!({"id": "a", "pk": "p", "v": 1}), &with(&etag))
            .status,
        200
    );
    // Conditional patch.
    let cond = |condition: &str| {
        c.send(Method::PATCH, &path, &pk, Some(&json!({"condition": condition, "operations": [{"op": "set", "path": "/w", "value": 1}]})))
    };
    cond("from c where c.v = 2").assert_error(412, "PreconditionFailed");
    assert_eq!(cond("from c where c.v = 1").status, 200);
}

#[test]
fn queries_and_paging() {
    let c = TestClient::with_container(None);
    for i in 0..25 {
        c.create_item(&json!({"id": format!("i{i:02}"), "pk": format!("p{}", i % 3), "n": i}));
    }
    assert_eq!(c.count(), 25);
    let found = c.query(
        "SELECT * FROM c WHERE c.n = @n",
        json!([{"name": "@n", "value": 7}]),
    );
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["id"], json!("i07"));
    assert!(found[0].get("_ts").is_some());
    let ordered = c.query(
        "SELECT VALUE c.n FROM c WHERE c.n >= 20 ORDER BY c.n DESC",
        json!([]),
    );
    assert_eq!(
        ordered,
        vec![json!(24), json!(23), json!(22), json!(21), json!(20)]
    );
    assert_eq!(
        c.query("SELECT TOP 2 VALUE c.id FROM c ORDER BY c.id", json!([])),
        vec![json!("i00"), json!("i01")]
    );

    // Pages of 10 with continuations, scoped to one partition by the header.
    let mut seen = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut headers = vec![
            ("x-ms-max-item-count", "4"),
            ("x-ms-documentdb-partitionkey", "[\"p1\"]"),
        ];
        if let Some(t) = &token {
            headers.push(("x-ms-continuation", t));
        }
        let reply = c.get(&format!("{COLL}/docs"), &headers);
        assert_eq!(reply.status, 200, "{}", reply.body);
        pages += 1;
        let docs = reply.body["Documents"].as_array().unwrap();
        assert_eq!(
            reply.header("x-ms-item-count").unwrap(),
            docs.len().to_string()
        );
        seen.extend(docs.iter().map(|d| d["n"].as_i64().unwrap()));
        match reply.header("x-ms-continuation") {
            Some(t) => token = Some(t.to_string()),
            None => break,
        }
    }
    seen.sort();
    assert_eq!(seen, vec![1, 4, 7, 10, 13, 16, 19, 22]);
    // A full page continues whether or not anything is left, as the
    // service's feed does (the JavaScript SDK's readAll of 4 items in
    // pages of 2 takes 3 pages): 4, 4, then an empty last page.
    assert_eq!(pages, 3);
    // An ORDER BY query (addressed to the one range, as an SDK does after
    // the plan) pages by offset, in order.
    let mut first = c.post(
        &format!("{COLL}/docs"),
        &json!({"query": "SELECT VALUE c.n FROM c ORDER BY c.n"}),
        &[
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-max-item-count", "10"),
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
        ],
    );
    assert_eq!(first.body["Documents"].as_array().unwrap().len(), 10);
    let token = first.header("x-ms-continuation").unwrap().to_string();
    first = c.post(
        &format!("{COLL}/docs"),
        &json!({"query": "SELECT VALUE c.n FROM c ORDER BY c.n"}),
        &[
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-max-item-count", "10"),
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
            ("x-ms-continuation", &token),
        ],
    );
    assert_eq!(first.body["Documents"][0], json!(10));
    c.get(&format!("{COLL}/docs"), &[("x-ms-continuation", "garbage")])
        .assert_error(400, "BadRequest");
}

/// What the gateway serves of a query sent to every partition at once, as
/// recorded against the hosted service: what needs merging across ranges
/// is refused with substatus 1004 and the plan (the SDKs then run it range
/// by range), an aggregate without VALUE is refused outright, and the same
/// query for one range or one partition key is answered.
#[test]
fn cross_partition_queries_are_served_as_the_gateway_serves_them() {
    let c = TestClient::with_container(None);
    for i in 0..4 {
        let reply =
            c.create_item(&json!({"id": format!("i{i}"), "pk": format!("p{}", i % 2), "n": i}));
        assert_eq!(reply.status, 201);
    }
    let query = |text: &str, extra: &[(&str, &str)]| {
        let mut headers = vec![
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-query-enablecrosspartition", "True"),
        ];
        headers.extend_from_slice(extra);
        c.post(&format!("{COLL}/docs"), &json!({ "query": text }), &headers)
    };
    for text in [
        "SELECT VALUE COUNT(1) FROM c",
        "SELECT TOP 1 * FROM c",
        "SELECT * FROM c ORDER BY c.n",
        "SELECT * FROM c OFFSET 1 LIMIT 1",
        "SELECT DISTINCT VALUE c.pk FROM c",
        "SELECT VALUE c.pk FROM c GROUP BY c.pk",
    ] {
        let refused = query(text, &[]);
        refused.assert_error(400, "BadRequest");
        assert_eq!(refused.header("x-ms-substatus"), Some("1004"), "{text}");
        let plan: Value =
            serde_json::from_str(refused.body["additionalErrorInfo"].as_str().unwrap()).unwrap();
        assert!(plan["queryInfo"].is_object(), "{text}: {plan}");
    }
    let refused = query("SELECT COUNT(1) AS n FROM c", &[]);
    refused.assert_error(400, "BadRequest");
    assert!(refused.body["message"]
        .as_str()
        .unwrap()
        .contains("only supports 'VALUE <AggregateFunc>'"));
    assert_eq!(refused.header("x-ms-substatus"), None);
    // Each range's rows are the answer: served.
    let served = query("SELECT VALUE c.n FROM c WHERE c.n IN (1, 3)", &[]);
    assert_eq!(served.status, 200, "{}", served.body);
    // For one range, or one partition key: served.
    let one_range = query(
        "SELECT VALUE COUNT(1) FROM c",
        &[("x-ms-documentdb-partitionkeyrangeid", "0")],
    );
    assert_eq!(one_range.body["Documents"], json!([4]));
    let one_key = query(
        "SELECT COUNT(1) AS n FROM c",
        &[("x-ms-documentdb-partitionkey", "[\"p1\"]")],
    );
    assert_eq!(one_key.body["Documents"], json!([{"n": 2}]));
    // A filter that pins the key: routed to that partition and answered
    // whole, ORDER BY included, though declared across partitions.
    let pinned = query(
        "SELECT VALUE c.n FROM c WHERE c.pk = 'p1' ORDER BY c.n DESC",
        &[],
    );
    assert_eq!(pinned.status, 200, "{}", pinned.body);
    assert_eq!(pinned.body["Documents"], json!([3, 1]));
    // But an aggregate without VALUE is refused even then.
    query("SELECT COUNT(1) AS n FROM c WHERE c.pk = 'p1'", &[]).assert_error(400, "BadRequest");
    // The plan request: refused for a feature the client does not declare.
    let plan = |features: Option<&str>| {
        let mut headers = vec![
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-cosmos-is-query-plan-request", "True"),
        ];
        if let Some(f) = features {
            headers.push(("x-ms-cosmos-supported-query-features", f));
        }
        c.post(
            &format!("{COLL}/docs"),
            &json!({"query": "SELECT c.pk, COUNT(1) AS n FROM c GROUP BY c.pk"}),
            &headers,
        )
    };
    let refused = plan(Some("Aggregate,Distinct,OrderBy,Top,OffsetAndLimit"));
    refused.assert_error(400, "BadRequest");
    let message = refused.body["message"].as_str().unwrap();
    assert!(
        message.contains("Query contained GroupBy, which the calling client does not support."),
        "{message}"
    );
    assert!(
        message.contains("Query contained NonValueAggregate,"),
        "{message}"
    );
    let given = plan(Some("Aggregate,NonValueAggregate,GroupBy"));
    assert_eq!(given.status, 200, "{}", given.body);
    assert_eq!(
        given.body["queryInfo"]["groupByExpressions"],
        json!(["c.pk"])
    );
}

/// ORDER BY over several keys is served only from a matching composite
/// index (its paths in order, in the same directions or all reversed), as
/// the service serves it; code that sorts locally must sort in Azure.
#[test]
fn order_by_several_keys_needs_a_composite_index() {
    let c = TestClient::with_container(None);
    let body = json!({
        "id": "sorted",
        "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
        "indexingPolicy": {"compositeIndexes": [[{"path": "/a", "order": "ascending"}, {"path": "/b", "order": "ascending"}]]}
    });
    assert_eq!(c.post(&format!("/dbs/{DB}/colls"), &body, &[]).status, 201);
    let query = |coll: &str, text: &str| {
        c.post(
            &format!("/dbs/{DB}/colls/{coll}/docs"),
            &json!({ "query": text }),
            &[
                ("x-ms-documentdb-isquery", "True"),
                ("content-type", "application/query+json"),
                ("x-ms-documentdb-partitionkey", "[\"p\"]"),
            ],
        )
    };
    for (a, b, id) in [(2, 0, "a2b0"), (1, 1, "a1b1"), (1, 0, "a1b0")] {
        let item = json!({"id": id, "pk": "p", "a": a, "b": b});
        let reply = c.post(
            &format!("/dbs/{DB}/colls/sorted/docs"),
            &item,
            &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
        );
        assert_eq!(reply.status, 201, "{}", reply.body);
    }
    let served = query("sorted", "SELECT VALUE c.id FROM c ORDER BY c.a, c.b");
    assert_eq!(served.body["Documents"], json!(["a1b0", "a1b1", "a2b0"]));
    let reversed = query(
        "sorted",
        "SELECT VALUE c.id FROM c ORDER BY c.a DESC, c.b DESC",
    );
    assert_eq!(reversed.body["Documents"], json!(["a2b0", "a1b1", "a1b0"]));
    for (coll, text) in [
        ("sorted", "SELECT VALUE c.id FROM c ORDER BY c.a, c.b DESC"),
        ("sorted", "SELECT VALUE c.id FROM c ORDER BY c.b, c.a"),
        ("c", "SELECT VALUE c.id FROM c ORDER BY c.a, c.b"),
    ] {
        let refused = query(coll, text);
        refused.assert_error(400, "BadRequest");
        assert!(
            refused
                .message()
                .contains("does not have a corresponding composite index"),
            "{text}: {}",
            refused.body
        );
    }
    // One key needs no composite index.
    assert_eq!(
        query("c", "SELECT VALUE c.id FROM c ORDER BY c.b").status,
        200
    );
}

/// NaN and the infinities compute and compare while a query runs; a result
/// that holds one is refused with 400/4001, as the service's engine does.
#[test]
fn a_result_json_cannot_hold_is_refused() {
    let c = TestClient::with_container(None);
    assert_eq!(
        c.create_item(&json!({"id": "a", "pk": "p", "n": 0})).status,
        201
    );
    let query = |text: &str| {
        c.post(
            &format!("{COLL}/docs"),
            &json!({ "query": text }),
            &[
                ("x-ms-documentdb-isquery", "True"),
                ("content-type", "application/query+json"),
                ("x-ms-documentdb-partitionkey", "[\"p\"]"),
            ],
        )
    };
    let served = query("SELECT VALUE c.id FROM c WHERE 7 / c.n > 1000000");
    assert_eq!(served.body["Documents"], json!(["a"]));
    let refused = query("SELECT VALUE {quotient: 7 / c.n} FROM c");
    refused.assert_error(400, "BadRequest");
    assert_eq!(refused.header("x-ms-substatus"), Some("4001"));
    assert!(refused.message().contains("cannot be represented in JSON"));
}

#[test]
fn pkranges_incremental_feed_ends_with_304() {
    let c = TestClient::with_container(None);
    let path = format!("{COLL}/pkranges");
    let first = c.get(
        &path,
        &[("a-im", "Incremental feed"), ("x-ms-max-item-count", "-1")],
    );
    assert_eq!(first.status, 200);
    let ranges = first.body["PartitionKeyRanges"].as_array().unwrap();
    assert_eq!(ranges.len(), 1);
    assert_eq!(
        (
            ranges[0]["minInclusive"].clone(),
            ranges[0]["maxExclusive"].clone()
        ),
        (json!(""), json!("FF"))
    );
    let etag = first
        .header("etag")
        .expect("an etag to poll with")
        .to_string();
    let next = c.get(
        &path,
        &[("a-im", "Incremental feed"), ("if-none-match", &etag)],
    );
    assert_eq!(next.status, 304);
    assert_eq!(next.body, Value::Null);
}

#[test]
fn authentication() {
    let c = TestClient::start();
    // A signature with another key: 401 with the payload the server signed.
    let wrong = MasterKey::from_base64("c2VjcmV0LWtleQ==").unwrap();
    let reply = c.send_signed_with(&wrong, Method::GET, "/dbs", &[], None);
    reply.assert_error(401, "Unauthorized");
    assert!(
        reply.message().contains("'get\\ndbs\\n\\n"),
        "{}",
        reply.message()
    );
    // No signature at all.
    let raw = reqwest::blocking::get(format!("{}/dbs", c.emulator.endpoint())).unwrap();
    assert_eq!(raw.status().as_u16(), 401);
    let body: Value = raw.json().unwrap();
    assert_eq!(body["code"], json!("Unauthorized"));
    // Signed for another resource.
    let key = MasterKey::from_base64(c.emulator.key()).unwrap();
    let date = httpdate::fmt_http_date(std::time::SystemTime::now());
    let auth = cosmos_emulator::protocol::auth::authorization_header(
        &key,
        &cosmos_emulator::protocol::auth::payload("GET", "dbs", "dbs/other", &date, ""),
    );
    let status = reqwest::blocking::Client::new()
        .get(format!("{}/dbs/db", c.emulator.endpoint()))
        .header("x-ms-date", &date)
        .header("authorization", auth)
        .send()
        .unwrap()
        .status();
    assert_eq!(status.as_u16(), 401);
}

#[test]
fn trailing_slashes_and_encoded_ids() {
    let c = TestClient::with_container(None);
    c.create_item(&json!({"id": "with space", "pk": "p"}));
    let reply = c.get(
        "/dbs/db/colls/c/docs/with%20space/",
        &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(c.get("/dbs/db/", &[]).status, 200);
}

/// .NET addresses items by RID: `/dbs/{dbRid}/colls/{collRid}/docs/{docRid}`.
#[test]
fn rid_based_item_paths() {
    let c = TestClient::with_container(None);
    let created = c.create_item(&json!({"id": "a", "pk": "p", "n": 1}));
    let self_link = created.body["_self"]
        .as_str()
        .unwrap()
        .trim_end_matches('/')
        .to_string();
    let path = format!("/{self_link}");
    assert_eq!(
        c.get(&path, &[]).body["id"],
        json!("a"),
        "read by RID, no partition key header needed"
    );
    let replaced = c.put(&path, &json!({"id": "a", "pk": "p", "n": 2}), &[]);
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    assert_eq!(replaced.body["_rid"], created.body["_rid"]);
    let patched = c.send(
        Method::PATCH,
        &path,
        &[],
        Some(&json!({"operations": [{"op": "incr", "path": "/n", "value": 1}]})),
    );
    assert_eq!(patched.body["n"], json!(3));
    // The feed under the RID-based container path.
    let coll_rid_path = path.rsplit_once("/docs/").unwrap().0;
    assert_eq!(
        c.get(&format!("{coll_rid_path}/docs"), &[]).body["_count"],
        json!(1)
    );
    assert_eq!(c.delete(&path, &[]).status, 204);
    c.get(&path, &[]).assert_error(404, "NotFound");
    c.get(
        &format!("{coll_rid_path}/docs/AAAAAAAAAAAAAAAAAAAAAA=="),
        &[],
    )
    .assert_error(404, "NotFound");
}

/// HTTP/2 clients (the Rust SDK) send no `Host` header: the account document
/// must still advertise the port they reached.
#[test]
fn account_document_over_http2_keeps_the_port() {
    let c = TestClient::start();
    let key = MasterKey::from_base64(c.emulator.key()).unwrap();
    let date = httpdate::fmt_http_date(std::time::SystemTime::now());
    let auth = cosmos_emulator::protocol::auth::authorization_header(
        &key,
        &cosmos_emulator::protocol::auth::payload("GET", "", "", &date, ""),
    );
    let reply = reqwest::blocking::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap()
        .get(format!("{}/", c.emulator.endpoint()))
        .header("x-ms-date", &date)
        .header("authorization", auth)
        .send()
        .unwrap();
    assert_eq!(reply.version(), reqwest::Version::HTTP_2);
    let body: Value = reply.json().unwrap();
    assert_eq!(
        body["writableLocations"][0]["databaseAccountEndpoint"],
        json!(format!("{}/", c.emulator.endpoint()))
    );
}

/// The JavaScript SDK's `item.patch([...])` sends the operations as a bare
/// list, without a Content-Type.
#[test]
fn patch_with_a_bare_list_of_operations() {
    let c = TestClient::with_container(None);
    c.create_item(&json!({"id": "a", "pk": "p", "v": 1}));
    let reply = c.send(
        Method::PATCH,
        &format!("{COLL}/docs/a"),
        &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
        Some(&json!([{"op": "set", "path": "/v", "value": 2}])),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["v"], json!(2));
}

/// A container read with `populateQuotaInfo` reports its index as fully
/// transformed (the SDKs' `test_index_progress_headers`), and with
/// `populatePartitionKeyRangeStatistics` counts each range's live items
/// (`test_partitioned_collection_quota`).
#[test]
fn container_read_reports_index_progress_and_range_statistics() {
    let c = TestClient::start();
    assert_eq!(c.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    let body = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
    let created = c.post(
        "/dbs/db/colls",
        &body,
        &[("x-ms-offer-throughput", "12000")],
    );
    assert_eq!(created.status, 201, "{}", created.body);
    for i in 0..20 {
        let item = json!({"id": format!("i{i}"), "pk": format!("p{}", i % 7)});
        assert_eq!(c.create_item(&item).status, 201);
    }
    let plain = c.get(COLL, &[]);
    assert!(plain.body.get("statistics").is_none());
    assert!(plain
        .header("x-ms-documentdb-collection-index-transformation-progress")
        .is_none());

    let read = c.get(
        COLL,
        &[
            ("x-ms-documentdb-populatequotainfo", "true"),
            ("x-ms-documentdb-populatepartitionstatistics", "true"),
        ],
    );
    assert_eq!(read.status, 200);
    assert_eq!(
        read.header("x-ms-documentdb-collection-index-transformation-progress"),
        Some("100")
    );
    assert!(read
        .header("x-ms-documentdb-collection-lazy-indexing-progress")
        .is_none());
    let statistics = read.body["statistics"].as_array().unwrap();
    assert_eq!(
        statistics.len(),
        2,
        "12,000 RU/s are two physical partitions"
    );
    let ids: Vec<&str> = statistics
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["0", "1"]);
    let documents: u64 = statistics
        .iter()
        .map(|s| s["documentCount"].as_u64().unwrap())
        .sum();
    assert_eq!(documents, 20);
    let keys: u64 = statistics
        .iter()
        .map(|s| s["sampledDistinctPartitionKeyCount"].as_u64().unwrap())
        .sum();
    assert_eq!(keys, 7);
    assert!(statistics
        .iter()
        .all(|s| s["sizeInKB"].as_u64().unwrap() >= 1 || s["documentCount"] == 0));
}
