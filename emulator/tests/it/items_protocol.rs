//! The items path as the SDKs rely on it beyond CRUD: minimal responses,
//! the headers they key sessions by, session tokens honoured, stale
//! container references, quota and query metrics on request, unknown
//! routes (issue 12).

use crate::common::{TestClient, COLL, DB};
use cosmos_emulator::protocol::auth::MasterKey;
use reqwest::Method;
use serde_json::{json, Value};

const MINIMAL: (&str, &str) = ("prefer", "return=minimal");

fn pk(value: &str) -> String {
    json!([value]).to_string()
}

/// Create, upsert, replace and patch with `Prefer: return=minimal` answer
/// the usual status with an empty body and the usual headers; the write
/// happened.
#[test]
fn return_minimal_gives_status_and_headers_without_a_body() {
    let c = TestClient::with_container(None);
    let docs = format!("{COLL}/docs");
    let key = pk("p");
    let with_pk = [("x-ms-documentdb-partitionkey", key.as_str()), MINIMAL];

    let created = c.post(&docs, &json!({"id": "a", "pk": "p", "n": 1}), &with_pk);
    let upserted = c.post(
        &docs,
        &json!({"id": "a", "pk": "p", "n": 2}),
        &[
            with_pk[0],
            with_pk[1],
            ("x-ms-documentdb-is-upsert", "True"),
        ],
    );
    let replaced = c.put(
        &format!("{docs}/a"),
        &json!({"id": "a", "pk": "p", "n": 3}),
        &with_pk,
    );
    let patched = c.send(
        Method::PATCH,
        &format!("{docs}/a"),
        &with_pk,
        Some(&json!({"operations": [{"op": "incr", "path": "/n", "value": 10}]})),
    );
    for (reply, status) in [
        (&created, 201),
        (&upserted, 200),
        (&replaced, 200),
        (&patched, 200),
    ] {
        assert_eq!(reply.status, status, "{}", reply.body);
        assert_eq!(reply.body, Value::Null, "no body");
        assert_eq!(reply.header("content-length"), Some("0"));
        assert!(reply.header("etag").is_some_and(|e| e.starts_with('"')));
        assert!(reply.header("x-ms-session-token").is_some());
        assert!(reply.header("x-ms-request-charge").is_some());
    }
    let read = c.read_item("a", "p");
    assert_eq!(read.body["n"], json!(13), "every write was applied");
    assert_eq!(read.header("etag"), patched.header("etag"));
    // Without the preference, the body comes back as before.
    let full = c.upsert_item(&json!({"id": "a", "pk": "p"}));
    assert_eq!(full.body["id"], json!("a"));
}

/// Item responses name their container as the SDKs key session tokens by,
/// and carry the container's change log LSN (the item's own is the one of
/// its last write); the session token grows with every write.
#[test]
fn item_responses_carry_the_container_paths_and_lsns() {
    let c = TestClient::with_container(None);
    let coll = c.get(COLL, &[]);
    let rid = coll.body["_rid"].as_str().unwrap().to_string();

    let first = c.create_item(&json!({"id": "a", "pk": "p"}));
    let second = c.create_item(&json!({"id": "b", "pk": "p"}));
    for reply in [&first, &second] {
        assert_eq!(reply.header("x-ms-content-path"), Some(rid.as_str()));
        assert_eq!(
            reply.header("x-ms-alt-content-path"),
            Some("dbs/db/colls/c")
        );
        assert_eq!(
            reply.header("x-ms-documentdb-partitionkeyrangeid"),
            Some("0")
        );
        assert_eq!(
            reply.header("content-location"),
            Some("/dbs/db/colls/c/docs")
        );
    }
    let lsn = |reply: &crate::common::Reply, name: &str| -> u64 {
        reply.header(name).unwrap().parse().unwrap()
    };
    assert_eq!(lsn(&second, "lsn"), lsn(&first, "lsn") + 1);
    assert_eq!(lsn(&second, "x-ms-item-lsn"), lsn(&second, "lsn"));
    // The session token counts every write of the store, in the service's form.
    let token = |reply: &crate::common::Reply| -> u64 {
        let text = reply.header("x-ms-session-token").unwrap();
        text.strip_prefix("0:-1#").expect(text).parse().unwrap()
    };
    assert!(token(&second) > token(&first));
    assert_eq!(
        lsn(&second, "x-ms-global-committed-lsn"),
        lsn(&second, "lsn")
    );

    // A read reports the container's LSN and the item's own.
    let read = c.read_item("a", "p");
    assert_eq!(lsn(&read, "lsn"), lsn(&second, "lsn"));
    assert_eq!(lsn(&read, "x-ms-item-lsn"), lsn(&first, "lsn"));
    assert_eq!(token(&read), token(&second));
    assert_eq!(
        read.header("content-location"),
        Some("/dbs/db/colls/c/docs/a")
    );

    // A delete is a change too.
    let deleted = c.delete_item("b", "p");
    assert_eq!(deleted.status, 204);
    assert_eq!(lsn(&deleted, "lsn"), lsn(&second, "lsn") + 1);
    assert_eq!(
        deleted.header("x-ms-alt-content-path"),
        Some("dbs/db/colls/c")
    );

    // Queries and feeds too.
    let feed = c.get(&format!("{COLL}/docs"), &[]);
    assert_eq!(lsn(&feed, "lsn"), lsn(&deleted, "lsn"));
    assert_eq!(feed.header("x-ms-content-path"), Some(rid.as_str()));
}

/// A read with a session token the container has reached is served; one
/// naming a later state is the service's 404/1002, naming the container so
/// that the SDK can clear its session; a malformed token is a 400.
#[test]
fn session_tokens_are_honoured() {
    let c = TestClient::with_container(None);
    let written = c.create_item(&json!({"id": "a", "pk": "p"}));
    let token = written.header("x-ms-session-token").unwrap().to_string();
    let key = pk("p");
    let read = |token: &str| {
        c.get(
            &format!("{COLL}/docs/a"),
            &[
                ("x-ms-documentdb-partitionkey", key.as_str()),
                ("x-ms-session-token", token),
            ],
        )
    };
    assert_eq!(read(&token).status, 200);
    assert_eq!(read("0:-1#1,1:-1#0").status, 200);

    let ahead = read("0:-1#999");
    ahead.assert_error(404, "NotFound");
    assert_eq!(ahead.header("x-ms-substatus"), Some("1002"));
    assert_eq!(
        ahead.message(),
        "The read session is not available for the input session token."
    );
    assert_eq!(
        ahead.header("x-ms-alt-content-path"),
        Some("dbs/db/colls/c")
    );
    // Queries and feeds honour it too.
    let feed = c.get(
        &format!("{COLL}/docs"),
        &[("x-ms-session-token", "0:-1#999")],
    );
    assert_eq!(feed.status, 404);
    assert_eq!(feed.header("x-ms-substatus"), Some("1002"));

    read("garbage").assert_error(400, "BadRequest");
    // A write is never held back by a token: it acts on the latest state.
    let write = c.post(
        &format!("{COLL}/docs"),
        &json!({"id": "b", "pk": "p"}),
        &[
            ("x-ms-documentdb-partitionkey", key.as_str()),
            ("x-ms-session-token", "0:-1#999"),
        ],
    );
    assert_eq!(write.status, 201);
}

/// A request that names the container by a RID it no longer has (the
/// container was dropped and re-created under its name) is refused with
/// 400/1024 and changes nothing; with the current RID it is served.
#[test]
fn a_stale_container_rid_is_400_1024() {
    let c = TestClient::with_container(None);
    let old_rid = c.get(COLL, &[]).body["_rid"].as_str().unwrap().to_string();
    assert_eq!(c.delete(COLL, &[]).status, 204);
    c.create_container("c", None);
    let new_rid = c.get(COLL, &[]).body["_rid"].as_str().unwrap().to_string();
    assert_ne!(old_rid, new_rid);

    let key = pk("p");
    let create = |rid: &str| {
        c.post(
            &format!("{COLL}/docs"),
            &json!({"id": "a", "pk": "p"}),
            &[
                ("x-ms-documentdb-partitionkey", key.as_str()),
                ("x-ms-cosmos-intended-collection-rid", rid),
            ],
        )
    };
    let stale = create(&old_rid);
    stale.assert_error(400, "BadRequest");
    assert_eq!(stale.header("x-ms-substatus"), Some("1024"));
    assert_eq!(
        stale.message(),
        "Collection rid provided by the user does not match the existing collection."
    );
    assert_eq!(c.count(), 0, "nothing was written");
    // Reads and queries check it too.
    let read = c.get(
        &format!("{COLL}/docs/a"),
        &[
            ("x-ms-documentdb-partitionkey", key.as_str()),
            ("x-ms-cosmos-intended-collection-rid", &old_rid),
        ],
    );
    assert_eq!(read.header("x-ms-substatus"), Some("1024"));
    assert_eq!(create(&new_rid).status, 201);
}

/// The partition key in the header differing from the document's is the
/// service's 400 with substatus 1001.
#[test]
fn a_partition_key_mismatch_is_400_1001() {
    let c = TestClient::with_container(None);
    let key = pk("other");
    let reply = c.post(
        &format!("{COLL}/docs"),
        &json!({"id": "a", "pk": "p"}),
        &[("x-ms-documentdb-partitionkey", key.as_str())],
    );
    reply.assert_error(400, "BadRequest");
    assert_eq!(reply.header("x-ms-substatus"), Some("1001"));
}

/// Quota and usage when asked for: the live items' count and size.
#[test]
fn quota_and_usage_on_request() {
    let c = TestClient::with_container(None);
    let filler = "x".repeat(3000);
    for i in 0..3 {
        c.create_item(&json!({"id": format!("i{i}"), "pk": "p", "filler": filler}));
    }
    let read = c.get(COLL, &[("x-ms-documentdb-populatequotainfo", "true")]);
    let usage: Vec<(String, i64)> = read
        .header("x-ms-resource-usage")
        .unwrap()
        .split(';')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (name, value) = p.split_once('=').unwrap();
            (name.to_string(), value.parse().unwrap())
        })
        .collect();
    let get = |name: &str| usage.iter().find(|(n, _)| n == name).unwrap().1;
    assert_eq!(get("documentsCount"), 3);
    assert!((9..=10).contains(&get("documentsSize")), "{usage:?}");
    let quota = read.header("x-ms-resource-quota").unwrap();
    assert!(quota.contains("documentsSize=10485760;"), "{quota}");
}

/// Query and index metrics when asked for, in the service's formats.
#[test]
fn query_and_index_metrics_on_request() {
    let c = TestClient::with_container(None);
    for i in 0..4 {
        c.create_item(&json!({"id": format!("i{i}"), "pk": "p", "n": i}));
    }
    let query = json!({"query": "SELECT * FROM c WHERE c.n >= 2", "parameters": []});
    let key = pk("p");
    let ask = |extra: (&str, &str)| {
        c.post(
            &format!("{COLL}/docs"),
            &query,
            &[
                ("x-ms-documentdb-isquery", "True"),
                ("content-type", "application/query+json"),
                ("x-ms-documentdb-partitionkey", key.as_str()),
                extra,
            ],
        )
    };
    let plain = ask(("x-ms-max-item-count", "10"));
    assert!(plain.header("x-ms-documentdb-query-metrics").is_none());
    assert!(plain.header("x-ms-cosmos-index-utilization").is_none());

    let metrics = ask(("x-ms-documentdb-populatequerymetrics", "True"));
    let text = metrics.header("x-ms-documentdb-query-metrics").unwrap();
    assert!(text.contains("outputDocumentCount=2;"), "{text}");
    assert!(text.contains("totalExecutionTimeInMs="), "{text}");
    // The index of /n found the two documents: none was read in vain.
    assert!(text.contains("retrievedDocumentCount=2;"), "{text}");
    assert!(text.contains("indexUtilizationRatio=1.00"), "{text}");
    // A filter no index serves reads all four documents to return two.
    let scan = c.post(
        &format!("{COLL}/docs"),
        &json!({"query": "SELECT * FROM c WHERE c.n % 2 = 0", "parameters": []}),
        &[
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-partitionkey", key.as_str()),
            ("x-ms-documentdb-populatequerymetrics", "True"),
        ],
    );
    let text = scan.header("x-ms-documentdb-query-metrics").unwrap();
    assert!(text.contains("retrievedDocumentCount=4;"), "{text}");
    assert!(text.contains("indexUtilizationRatio=0.50"), "{text}");
    // A count reads no document: answered from the keys, as the service
    // answers it from its index (the SDKs' test_partition_scoped_count_is_index_only).
    let count = c.post(
        &format!("{COLL}/docs"),
        &json!({"query": "SELECT VALUE COUNT(1) FROM c", "parameters": []}),
        &[
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-partitionkey", key.as_str()),
            ("x-ms-documentdb-populatequerymetrics", "True"),
        ],
    );
    assert_eq!(count.body["Documents"], json!([4]));
    let text = count.header("x-ms-documentdb-query-metrics").unwrap();
    assert!(
        text.contains("retrievedDocumentCount=0;retrievedDocumentSize=0;"),
        "{text}"
    );
    assert!(text.contains("indexUtilizationRatio=1.00"), "{text}");

    use base64::Engine;
    let v1 = ask(("x-ms-cosmos-populateindexmetrics", "True"));
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(v1.header("x-ms-cosmos-index-utilization").unwrap())
        .unwrap();
    let parsed: Value = serde_json::from_slice(&decoded).unwrap();
    // In one logical partition, the partition key's index (the SDKs'
    // test_populate_index_metrics look for it), then the index of /n.
    assert_eq!(
        parsed["UtilizedSingleIndexes"],
        json!([{"FilterExpression": "", "IndexSpec": "/pk/?", "FilterPreciseSet": true,
                "IndexPreciseSet": true, "IndexImpactScore": "High"},
               {"FilterExpression": "", "IndexSpec": "/n/?", "FilterPreciseSet": true,
                "IndexPreciseSet": true, "IndexImpactScore": "High"}]),
        "{parsed}"
    );
    assert_eq!(parsed["PotentialSingleIndexes"], json!([]));

    let v2 = ask(("x-ms-cosmos-populateindexmetrics-V2", "true"));
    let encoded = v2.header("x-ms-cosmos-index-utilization").unwrap();
    let decoded = percent_encoding::percent_decode_str(encoded)
        .decode_utf8()
        .unwrap();
    let parsed: Value = serde_json::from_str(&decoded).unwrap();
    assert_eq!(
        parsed["UtilizedIndexes"]["SingleIndexes"][0]["IndexSpec"], "/pk/?",
        "{parsed}"
    );
    assert_eq!(
        parsed["UtilizedIndexes"]["SingleIndexes"][1]["IndexSpec"], "/n/?",
        "{parsed}"
    );

    // Across partitions, only the index of /n.
    let across = c.post(
        &format!("{COLL}/docs"),
        &query,
        &[
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-query-enablecrosspartition", "True"),
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
            ("x-ms-cosmos-populateindexmetrics", "True"),
        ],
    );
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(across.header("x-ms-cosmos-index-utilization").unwrap())
        .unwrap();
    let parsed: Value = serde_json::from_slice(&decoded).unwrap();
    let specs: Vec<&Value> = parsed["UtilizedSingleIndexes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|index| &index["IndexSpec"])
        .collect();
    assert_eq!(specs, [&json!("/n/?")], "{parsed}");
}

/// An unknown route is a 404 with the Cosmos body whatever its signature,
/// never a 401; a known route still needs a valid one.
#[test]
fn unknown_routes_are_404_never_401() {
    let c = TestClient::with_container(None);
    let wrong = MasterKey::from_base64("c2VjcmV0LWtleQ==").unwrap();
    for path in [
        "/dbs/db/colls/c/operations/unknown",
        "/dbs/db/snapshots",
        "/nothing/here",
        "/dbs/db/colls/c/docs/a/attachments/x/more",
    ] {
        let signed = c.send(Method::POST, path, &[], Some(&json!({})));
        signed.assert_error(404, "NotFound");
        let badly_signed = c.send_signed_with(&wrong, Method::GET, path, &[], None);
        badly_signed.assert_error(404, "NotFound");
        let raw = reqwest::blocking::get(format!("{}{path}", c.emulator.endpoint())).unwrap();
        assert_eq!(raw.status().as_u16(), 404, "{path}");
        let body: Value = raw.json().unwrap();
        assert_eq!(body["code"], json!("NotFound"));
    }
    // A known route with a wrong signature is still refused.
    c.send_signed_with(&wrong, Method::GET, &format!("{COLL}/docs"), &[], None)
        .assert_error(401, "Unauthorized");
    c.send_signed_with(&wrong, Method::DELETE, "/dbs/db", &[], None)
        .assert_error(401, "Unauthorized");
    assert_eq!(c.get(&format!("/dbs/{DB}"), &[]).status, 200);
}

/// A replace whose body names another id than the URL renames the item, as
/// the service does ("the id will be updated too; after the operation there
/// will be no document with the old id"; the Python SDK's
/// `test_container_replace_item_throughput_bucket` and a batch replace in
/// `test_session_token_*`): the old id is gone, the new id must be free, the
/// precondition is the old item's. (The emulator gives the item a new RID.)
#[test]
fn a_replace_with_another_id_renames_the_item() {
    let c = TestClient::with_container(None);
    let key = pk("p");
    let with_pk = [("x-ms-documentdb-partitionkey", key.as_str())];
    let created = c.create_item(&json!({"id": "old", "pk": "p", "v": 1}));
    assert_eq!(
        c.create_item(&json!({"id": "taken", "pk": "p"})).status,
        201
    );

    // Refusals change nothing: the new id taken, the old one absent, a stale etag.
    c.put(
        &format!("{COLL}/docs/old"),
        &json!({"id": "taken", "pk": "p"}),
        &with_pk,
    )
    .assert_error(409, "Conflict");
    c.put(
        &format!("{COLL}/docs/absent"),
        &json!({"id": "new", "pk": "p"}),
        &with_pk,
    )
    .assert_error(404, "NotFound");
    c.put(
        &format!("{COLL}/docs/old"),
        &json!({"id": "new", "pk": "p"}),
        &[
            with_pk[0],
            ("if-match", "\"00000000-0000-0000-0000-000000000000\""),
        ],
    )
    .assert_error(412, "PreconditionFailed");
    assert_eq!(c.ids(), ["old", "taken"]);

    let renamed = c.put(
        &format!("{COLL}/docs/old"),
        &json!({"id": "new", "pk": "p", "v": 2}),
        &[
            with_pk[0],
            ("if-match", created.body["_etag"].as_str().unwrap()),
        ],
    );
    assert_eq!(renamed.status, 200, "{}", renamed.body);
    assert_eq!(renamed.body["id"], "new");
    assert_eq!(c.read_item("old", "p").status, 404);
    assert_eq!(c.read_item("new", "p").body["v"], 2);
    assert_eq!(c.ids(), ["new", "taken"]);

    // In a transactional batch, the same; later operations see the new id.
    let reply = c.batch(
        "p",
        &json!([
            {"operationType": "Replace", "id": "new", "resourceBody": {"id": "newer", "pk": "p"}},
            {"operationType": "Read", "id": "newer"},
        ]),
    );
    assert_eq!(reply.statuses(), [200, 200], "{}", reply.body);
    assert_eq!(reply.body[1]["resourceBody"]["id"], "newer");
    assert_eq!(c.ids(), ["newer", "taken"]);
    let reply = c.batch(
        "p",
        &json!([{"operationType": "Replace", "id": "newer", "resourceBody": {"id": "taken", "pk": "p"}}]),
    );
    assert_eq!(reply.statuses(), [409]);
    assert_eq!(c.ids(), ["newer", "taken"]);

    // The change feed's latest versions: the renamed item once, by its new id.
    let feed = c.get(&format!("{COLL}/docs"), &[("a-im", "Incremental Feed")]);
    let mut ids = feed.document_ids();
    ids.sort();
    assert_eq!(ids, ["newer", "taken"]);
}

/// A query of a partitioned container with neither a partition key nor a
/// range must declare that it spans partitions, even on one physical
/// partition (the Python SDK's `test_with_null_pk`); with the header, or
/// scoped, it runs.
#[test]
fn a_query_across_partitions_must_say_so() {
    let c = TestClient::with_container(None);
    c.create_item(&json!({"id": "a", "pk": "p"}));
    let ask = |extra: &[(&str, &str)]| {
        let mut headers = vec![
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
        ];
        headers.extend_from_slice(extra);
        c.post(
            &format!("{COLL}/docs"),
            &json!({"query": "SELECT * FROM c", "parameters": []}),
            &headers,
        )
    };
    let refused = ask(&[]);
    refused.assert_error(400, "BadRequest");
    assert!(refused
        .message()
        .starts_with("Cross partition query is required but disabled."));
    let key = pk("p");
    for scoped in [
        ("x-ms-documentdb-query-enablecrosspartition", "True"),
        ("x-ms-documentdb-partitionkey", key.as_str()),
        ("x-ms-documentdb-partitionkeyrangeid", "0"),
    ] {
        let reply = ask(&[scoped]);
        assert_eq!(reply.status, 200, "{scoped:?}: {}", reply.body);
        assert_eq!(reply.document_ids(), ["a"]);
    }
    // A filter that pins the partition key routes the query to its
    // partition, as the gateway does: no header needed.
    let pinned = c.post(
        &format!("{COLL}/docs"),
        &json!({"query": "SELECT * FROM root r WHERE r.pk = @pk ORDER BY r.id", "parameters": [{"name": "@pk", "value": "p"}]}),
        &[
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
        ],
    );
    assert_eq!(pinned.status, 200, "{}", pinned.body);
    assert_eq!(pinned.document_ids(), ["a"]);
}

/// Every response about a resource below a database names its owner in
/// `x-ms-alt-content-path`, as the service's do: the Java SDK builds a
/// created container's link from it (without it, its session container
/// fails with a NullPointerException). Databases and the account have no
/// owner to name.
#[test]
fn resource_responses_name_their_owner() {
    let c = TestClient::start();
    let owner =
        |reply: &crate::common::Reply| reply.header("x-ms-alt-content-path").map(str::to_string);
    let database = c.post("/dbs", &json!({"id": "my db"}), &[]);
    assert_eq!(database.status, 201);
    assert_eq!(owner(&database), None);
    let container = c.post(
        "/dbs/my%20db/colls",
        &json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}}),
        &[],
    );
    assert_eq!(container.status, 201);
    assert_eq!(owner(&container).as_deref(), Some("dbs/my db"));
    assert_eq!(
        owner(&c.get("/dbs/my%20db/colls", &[])).as_deref(),
        Some("dbs/my db")
    );
    assert_eq!(
        owner(&c.get("/dbs/my%20db/colls/c", &[])).as_deref(),
        Some("dbs/my db")
    );
    let sproc = c.post(
        "/dbs/my%20db/colls/c/sprocs",
        &json!({"id": "s", "body": "function () {}"}),
        &[],
    );
    assert_eq!(sproc.status, 201);
    assert_eq!(owner(&sproc).as_deref(), Some("dbs/my db/colls/c"));
    let user = c.post("/dbs/my%20db/users", &json!({"id": "u"}), &[]);
    assert_eq!(user.status, 201);
    assert_eq!(owner(&user).as_deref(), Some("dbs/my db"));
    assert_eq!(owner(&c.get("/dbs/my%20db", &[])), None);
    assert_eq!(owner(&c.get("/", &[])), None);
    // Refusals name none: the Python SDK drops its routing-map cache when
    // a 404 names an owner.
    let missing = c.get("/dbs/my%20db/colls/nope", &[]);
    missing.assert_error(404, "NotFound");
    assert_eq!(owner(&missing), None);
}

/// Session tokens name the partition's LSN, as on the service: three writes
/// to one container with five to another between them answer `lsn: 3` and
/// `x-ms-session-token: 0:-1#3`, the LSN of `_lsn` and of the change feed
/// (the Java change feed estimator subtracts one from the other). A
/// response that names no container's LSN (the container itself, the
/// account) carries no token.
#[test]
fn session_tokens_name_the_partitions_lsn() {
    let c = TestClient::with_container(None);
    c.create_container("other", None);
    let key = pk("p");
    let mut last = None;
    for i in 0..3 {
        for j in 0..5 {
            let other = c.post(
                "/dbs/db/colls/other/docs",
                &json!({"id": format!("o{i}-{j}"), "pk": "p"}),
                &[("x-ms-documentdb-partitionkey", key.as_str())],
            );
            assert_eq!(other.status, 201);
        }
        last = Some(c.create_item(&json!({"id": format!("a{i}"), "pk": "p"})));
    }
    let last = last.unwrap();
    assert_eq!(last.header("lsn"), Some("3"));
    assert_eq!(last.header("x-ms-session-token"), Some("0:-1#3"));
    let other = c.get(
        "/dbs/db/colls/other/docs/o2-4",
        &[("x-ms-documentdb-partitionkey", key.as_str())],
    );
    assert_eq!(other.header("x-ms-session-token"), Some("0:-1#15"));
    // Reads, queries and feeds name the container's LSN too.
    let read = c.read_item("a0", "p");
    assert_eq!(read.header("x-ms-session-token"), Some("0:-1#3"));
    let feed = c.get(&format!("{COLL}/docs"), &[("a-im", "Incremental Feed")]);
    assert_eq!(feed.header("x-ms-session-token"), Some("0:-1#3"));
    assert_eq!(feed.header("etag"), Some("\"3\""));
    assert_eq!(feed.body["Documents"][2]["_lsn"], 3);
    // A token of the container's own LSN is served; one past it that the
    // account has reached was another container's (the SDKs mix them), and
    // asks for no more than this container has; one past anything the
    // account wrote is not served.
    let with_token = |token: &str| {
        c.get(
            &format!("{COLL}/docs/a0"),
            &[
                ("x-ms-documentdb-partitionkey", key.as_str()),
                ("x-ms-session-token", token),
            ],
        )
        .status
    };
    assert_eq!(with_token("0:-1#3"), 200);
    assert_eq!(with_token("0:-1#4"), 200);
    assert_eq!(with_token("0:-1#999"), 404);
    // The container resource names no partition's LSN.
    assert_eq!(c.get(COLL, &[]).header("x-ms-session-token"), None);
}
