//! Partition keys over HTTP (issue 12): undefined values, quoted paths,
//! hierarchical keys with missing levels, prefix scopes by header and by
//! EPK range, and delete by partition key.
//!
//! EPK values are the official Python SDK's (azure-cosmos 4.17.1 in
//! target/sdk-venv), computed as
//!   PartitionKey(path=["/state", "/city", "/zipcode"], kind="MultiHash")
//!     ._get_epk_range_for_prefix_partition_key(["CA"])   (and ["CA", "Oxnard"])
//! which is what the SDK sends as x-ms-start-epk / x-ms-end-epk for a
//! prefix query.

use crate::common::{Purge, Reply, TestClient, DB};
use reqwest::Method;
use serde_json::{json, Value};

const CA: (&str, &str) = (
    "2F442D3F30B24D244283F3B36B4CB88B",
    "2F442D3F30B24D244283F3B36B4CB88BFF",
);
const CA_OXNARD: (&str, &str) = (
    "2F442D3F30B24D244283F3B36B4CB88B3BCEFBDDC93E6B92BBF05E9CF2116729",
    "2F442D3F30B24D244283F3B36B4CB88B3BCEFBDDC93E6B92BBF05E9CF2116729FF",
);

fn container(c: &TestClient, id: &str, partition_key: Value) {
    let reply = c.post(
        &format!("/dbs/{DB}/colls"),
        &json!({"id": id, "partitionKey": partition_key}),
        &[],
    );
    assert_eq!(reply.status, 201, "{}", reply.body);
}

fn docs(coll: &str) -> String {
    format!("/dbs/{DB}/colls/{coll}/docs")
}

fn create(c: &TestClient, coll: &str, item: &Value, pk: &str) -> Reply {
    c.post(&docs(coll), item, &[("x-ms-documentdb-partitionkey", pk)])
}

fn read(c: &TestClient, coll: &str, id: &str, pk: &str) -> Reply {
    c.get(
        &format!("{}/{id}", docs(coll)),
        &[("x-ms-documentdb-partitionkey", pk)],
    )
}

fn sorted_ids(documents: &Value) -> Vec<String> {
    let mut ids: Vec<String> = documents
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

/// A query of one range with extra headers, following continuations one
/// item per page (so that paging within a scope is exercised).
fn query_ids(c: &TestClient, coll: &str, extra: &[(&str, &str)]) -> Vec<String> {
    let mut all = Vec::new();
    let mut continuation: Option<String> = None;
    loop {
        let mut headers = vec![
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
            ("x-ms-max-item-count", "1"),
        ];
        headers.extend_from_slice(extra);
        if let Some(token) = &continuation {
            headers.push(("x-ms-continuation", token));
        }
        let reply = c.post(&docs(coll), &json!({"query": "SELECT * FROM c"}), &headers);
        assert_eq!(reply.status, 200, "{}", reply.body);
        all.extend(sorted_ids(&reply.body["Documents"]));
        match reply.header("x-ms-continuation") {
            Some(token) => continuation = Some(token.to_string()),
            None => break,
        }
    }
    all.sort();
    all
}

#[test]
fn objects_arrays_and_absent_values_are_undefined() {
    let c = TestClient::with_container(None);
    for (id, item) in [
        ("object", json!({"id": "object", "pk": {"nested": 1}})),
        ("array", json!({"id": "array", "pk": [1, 2]})),
        ("absent", json!({"id": "absent"})),
    ] {
        assert_eq!(create(&c, "c", &item, "[{}]").status, 201, "{id}");
        assert_eq!(read(&c, "c", id, "[{}]").status, 200, "{id}");
        // null is a value of its own, not undefined.
        read(&c, "c", id, "[null]").assert_error(404, "NotFound");
    }
    let refused = create(&c, "c", &json!({"id": "x", "pk": {"a": 1}}), r#"[{"a":1}]"#);
    refused.assert_error(400, "BadRequest");
    assert!(refused.message().contains("never a partition key value"));
    assert_eq!(
        query_ids(&c, "c", &[("x-ms-documentdb-partitionkey", "[{}]")]),
        ["absent", "array", "object"]
    );
}

/// The Python SDK's own test paths (special characters, quoted segments).
#[test]
fn quoted_paths_address_their_properties() {
    let c = TestClient::with_container(None);
    container(
        &c,
        "q",
        json!({"paths": ["/\"first level' 1*()\"/\"le/vel2\"", "/'second level\" 1*()'/'le/vel2'"],
               "kind": "MultiHash", "version": 2}),
    );
    let item = json!({"id": "document1",
                      "first level' 1*()": {"le/vel2": "val1"},
                      "second level\" 1*()": {"le/vel2": "val2"}});
    assert_eq!(create(&c, "q", &item, r#"["val1","val2"]"#).status, 201);
    assert_eq!(read(&c, "q", "document1", r#"["val1","val2"]"#).status, 200);
    let wrong = create(
        &c,
        "q",
        &json!({"id": "d2", "first level' 1*()": {"le/vel2": "x"}}),
        r#"["x","val2"]"#,
    );
    wrong.assert_error(400, "BadRequest");
    let unclosed = c.post(
        &format!("/dbs/{DB}/colls"),
        &json!({"id": "bad", "partitionKey": {"paths": ["/'open"], "kind": "Hash"}}),
        &[],
    );
    unclosed.assert_error(400, "BadRequest");
}

/// An item lacking levels of a hierarchical key has undefined levels,
/// addressed with {} (the JavaScript SDK's header). The Python SDK sends
/// null for them, which the service refuses for such an item with its
/// definition message (the Python SDK's own test,
/// test_partitioned_collection_document_crud_and_query_subpartition, expects
/// that 400): so does the emulator, and nothing is stored.
#[test]
fn hierarchical_items_lacking_levels() {
    let c = TestClient::with_container(None);
    container(
        &c,
        "h",
        json!({"paths": ["/city", "/zipcode"], "kind": "MultiHash", "version": 2}),
    );
    let vancouver = json!({"id": "d3", "city": "Vancouver"});
    let refused = create(&c, "h", &vancouver, r#"["Vancouver",null]"#);
    refused.assert_error(400, "BadRequest");
    assert!(refused.message().starts_with(
        "Partition key provided either doesn't correspond to definition in the collection"
    ));
    assert_eq!(query_ids(&c, "h", &[]), Vec::<String>::new());

    assert_eq!(
        create(&c, "h", &vancouver, r#"["Vancouver",{}]"#).status,
        201
    );
    assert_eq!(read(&c, "h", "d3", r#"["Vancouver",{}]"#).status, 200);
    let replaced = c.put(
        &format!("{}/d3", docs("h")),
        &json!({"id": "d3", "city": "Vancouver", "v": 2}),
        &[("x-ms-documentdb-partitionkey", r#"["Vancouver",{}]"#)],
    );
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    let nothing = json!({"id": "none"});
    assert_eq!(create(&c, "h", &nothing, "[{},{}]").status, 201);
    let nulls = json!({"id": "nulls", "city": null, "zipcode": null});
    assert_eq!(create(&c, "h", &nulls, "[null,null]").status, 201);
    // A point read needs every level: 400 with the mismatch substatus, by
    // name or by RID (the Python SDK's subpartition tests read by `_self`).
    let prefix = read(&c, "h", "d3", r#"["Vancouver"]"#);
    prefix.assert_error(400, "BadRequest");
    assert_eq!(prefix.header("x-ms-substatus"), Some("1001"));
    let rid_path = format!("/{}", replaced.body["_self"].as_str().unwrap());
    let by_rid = |pk: &str| c.get(&rid_path, &[("x-ms-documentdb-partitionkey", pk)]);
    let prefix = by_rid(r#"["Vancouver"]"#);
    prefix.assert_error(400, "BadRequest");
    assert_eq!(prefix.header("x-ms-substatus"), Some("1001"));
    by_rid(r#"["Seattle",{}]"#).assert_error(404, "NotFound");
    assert_eq!(by_rid(r#"["Vancouver",{}]"#).body["id"], "d3");
    // At most three levels, refused in the service's words.
    let four = c.post(
        &format!("/dbs/{DB}/colls"),
        &json!({"id": "four", "partitionKey": {"paths": ["/a", "/b", "/c", "/d"], "kind": "MultiHash", "version": 2}}),
        &[],
    );
    four.assert_error(400, "BadRequest");
    assert!(
        four.message().contains("Too many partition key paths"),
        "{}",
        four.message()
    );
    // A path without its leading slash, in the service's words.
    let bare = c.post(
        &format!("/dbs/{DB}/colls"),
        &json!({"id": "bare", "partitionKey": {"paths": ["pk"], "kind": "Hash"}}),
        &[],
    );
    bare.assert_error(400, "BadRequest");
    assert!(
        bare.message().starts_with(
            "The partition key component definition path 'pk' could not be accepted, failed near position '0'. Partition key paths must contain only valid characters"
        ),
        "{}",
        bare.message()
    );
    let deleted = c.delete(
        &format!("{}/d3", docs("h")),
        &[("x-ms-documentdb-partitionkey", r#"["Vancouver",{}]"#)],
    );
    assert_eq!(deleted.status, 204);
    assert_eq!(query_ids(&c, "h", &[]), ["none", "nulls"]);
}

fn zip_codes(c: &TestClient) {
    container(
        c,
        "z",
        json!({"paths": ["/state", "/city", "/zipcode"], "kind": "MultiHash", "version": 2}),
    );
    for (i, (state, city, zip)) in [
        ("CA", "Newbury Park", "91319"),
        ("CA", "Oxnard", "93033"),
        ("CA", "Oxnard", "93030"),
        ("CA", "Oxnard", "93036"),
        ("CA", "Thousand Oaks", "91358"),
        ("CA", "Ventura", "93002"),
        ("CA", "Ojai", "93023"),
        ("CA", "Port Hueneme", "93041"),
        ("WA", "Seattle", "98101"),
        ("WA", "Bellevue", "98004"),
    ]
    .into_iter()
    .enumerate()
    {
        let item = json!({"id": format!("d{i}"), "state": state, "city": city, "zipcode": zip});
        let header = json!([state, city, zip]).to_string();
        assert_eq!(create(c, "z", &item, &header).status, 201);
    }
    // A key whose first level is a longer string, never under "CA".
    let cal = json!({"id": "cal", "state": "CAL", "city": "Oxnard", "zipcode": "1"});
    assert_eq!(create(c, "z", &cal, r#"["CAL","Oxnard","1"]"#).status, 201);
}

const CA_IDS: [&str; 8] = ["d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7"];

#[test]
fn prefix_queries_by_epk_range_return_exactly_the_prefix() {
    let c = TestClient::with_container(None);
    zip_codes(&c);
    let by_range = |(start, end): (&str, &str)| {
        query_ids(&c, "z", &[("x-ms-start-epk", start), ("x-ms-end-epk", end)])
    };
    assert_eq!(by_range(CA), CA_IDS);
    assert_eq!(by_range(CA_OXNARD), ["d1", "d2", "d3"]);
    assert_eq!(by_range(("", "FF")).len(), 11);
    // The read feed honours the range too.
    let feed = c.get(
        &docs("z"),
        &[
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
            ("x-ms-start-epk", CA_OXNARD.0),
            ("x-ms-end-epk", CA_OXNARD.1),
        ],
    );
    assert_eq!(sorted_ids(&feed.body["Documents"]), ["d1", "d2", "d3"]);
    let bad = c.post(
        &docs("z"),
        &json!({"query": "SELECT * FROM c"}),
        &[
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-start-epk", "not hex"),
            ("x-ms-end-epk", "FF"),
        ],
    );
    bad.assert_error(400, "BadRequest");
}

#[test]
fn prefix_queries_by_header_return_exactly_the_prefix() {
    let c = TestClient::with_container(None);
    zip_codes(&c);
    let by_key = |pk: &str| query_ids(&c, "z", &[("x-ms-documentdb-partitionkey", pk)]);
    assert_eq!(by_key(r#"["CA"]"#), CA_IDS);
    assert_eq!(by_key(r#"["CA","Oxnard"]"#), ["d1", "d2", "d3"]);
    assert_eq!(by_key(r#"["CA","Oxnard","93033"]"#), ["d1"]);
    assert_eq!(by_key(r#"["NV"]"#), Vec::<String>::new());
    // The change feed scopes by a prefix as well.
    let feed = c.get(
        &docs("z"),
        &[
            ("a-im", "Incremental Feed"),
            ("x-ms-documentdb-partitionkey", r#"["WA"]"#),
        ],
    );
    assert_eq!(sorted_ids(&feed.body["Documents"]), ["d8", "d9"]);
}

fn delete_partition(c: &TestClient, coll: &str, pk: Option<&str>) -> Reply {
    let headers: Vec<(&str, &str)> = pk
        .map(|pk| vec![("x-ms-documentdb-partitionkey", pk)])
        .unwrap_or_default();
    c.send(
        Method::POST,
        &format!("/dbs/{DB}/colls/{coll}/operations/partitionkeydelete"),
        &headers,
        None,
    )
}

fn all_versions_after(c: &TestClient, coll: &str, token: &str) -> Vec<Value> {
    let reply = c.get(
        &docs(coll),
        &[
            ("a-im", "Full-Fidelity Feed"),
            ("x-ms-cosmos-changefeed-wire-format-version", "2021-09-15"),
            ("if-none-match", token),
        ],
    );
    assert!(reply.status == 200 || reply.status == 304, "{}", reply.body);
    reply.body["Documents"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn checkpoint(c: &TestClient, coll: &str) -> String {
    let reply = c.get(
        &docs(coll),
        &[
            ("a-im", "Full-Fidelity Feed"),
            ("x-ms-cosmos-changefeed-wire-format-version", "2021-09-15"),
            ("if-none-match", "*"),
        ],
    );
    reply.header("etag").unwrap().to_string()
}

/// Every item of the partition vanishes at once from every path, each
/// logged as an explicit delete; other partitions are untouched.
#[test]
fn delete_by_partition_key() {
    let c = TestClient::with_container(None);
    for (id, pk) in [("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b")] {
        assert_eq!(c.create_item(&json!({"id": id, "pk": pk})).status, 201);
    }
    let token = checkpoint(&c, "c");
    let reply = delete_partition(&c, "c", Some(r#"["a"]"#));
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body, Value::Null, "no body");
    assert!(reply.header("x-ms-request-charge").is_some());
    for id in ["a1", "a2", "a3"] {
        assert!(!c.is_visible(id, "a"));
    }
    assert!(c.is_visible("b1", "b"));
    assert_eq!(c.ids(), ["b1"]);
    let feed = c.get(&docs("c"), &[]);
    assert_eq!(sorted_ids(&feed.body["Documents"]), ["b1"]);
    let latest = c.get(&docs("c"), &[("a-im", "Incremental Feed")]);
    assert_eq!(sorted_ids(&latest.body["Documents"]), ["b1"]);
    let changes = all_versions_after(&c, "c", &token);
    let deletes: Vec<(&str, &Value, &Value)> = changes
        .iter()
        .map(|ch| {
            let m = &ch["metadata"];
            assert_eq!(m["operationType"], "delete");
            (
                m["id"].as_str().unwrap(),
                &m["timeToLiveExpired"],
                &m["partitionKey"],
            )
        })
        .collect();
    assert_eq!(
        deletes,
        [
            ("a1", &json!(false), &json!({"pk": "a"})),
            ("a2", &json!(false), &json!({"pk": "a"})),
            ("a3", &json!(false), &json!({"pk": "a"}))
        ]
    );
    // Again: nothing left to delete, still 200, nothing logged.
    assert_eq!(delete_partition(&c, "c", Some(r#"["a"]"#)).status, 200);
    assert_eq!(all_versions_after(&c, "c", &token).len(), 3);
    // The ids are free again.
    assert_eq!(c.create_item(&json!({"id": "a1", "pk": "a"})).status, 201);
}

/// A prefix of a hierarchical key deletes every item under it.
#[test]
fn delete_by_a_hierarchical_prefix() {
    let c = TestClient::with_container(None);
    zip_codes(&c);
    assert_eq!(
        delete_partition(&c, "z", Some(r#"["CA","Oxnard"]"#)).status,
        200
    );
    let everything = query_ids(&c, "z", &[]);
    assert_eq!(
        everything,
        ["cal", "d0", "d4", "d5", "d6", "d7", "d8", "d9"]
    );
    assert_eq!(delete_partition(&c, "z", Some(r#"["CA"]"#)).status, 200);
    assert_eq!(query_ids(&c, "z", &[]), ["cal", "d8", "d9"]);
}

/// An expired item of the partition that the purge has not removed yet
/// gets its one TTL delete (timeToLiveExpired: true), never an explicit
/// delete as well; the purge then finds nothing more to log.
#[test]
fn delete_by_partition_key_keeps_one_ttl_delete_per_expired_item() {
    let c = TestClient::with_container_and(Some(json!(10)), Purge::Off);
    assert_eq!(c.create_item(&json!({"id": "old", "pk": "a"})).status, 201);
    c.advance(5);
    assert_eq!(c.create_item(&json!({"id": "new", "pk": "a"})).status, 201);
    c.advance(6); // "old" expired at 10, "new" lives until 15
    let token = checkpoint(&c, "c");
    assert_eq!(delete_partition(&c, "c", Some(r#"["a"]"#)).status, 200);
    let purged = c.post("/_emulator/purge", &json!({}), &[]);
    assert_eq!(purged.body["purged"], 0, "{}", purged.body);
    c.advance(100);
    c.post("/_emulator/purge", &json!({}), &[]);
    let mut deletes: Vec<(String, Value)> = all_versions_after(&c, "c", &token)
        .iter()
        .map(|ch| {
            (
                ch["metadata"]["id"].as_str().unwrap().to_string(),
                ch["metadata"]["timeToLiveExpired"].clone(),
            )
        })
        .collect();
    deletes.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        deletes,
        [
            ("new".to_string(), json!(false)),
            ("old".to_string(), json!(true))
        ]
    );
}

#[test]
fn delete_by_partition_key_refusals_change_nothing() {
    let c = TestClient::with_container(None);
    assert_eq!(c.create_item(&json!({"id": "a1", "pk": "a"})).status, 201);
    delete_partition(&c, "c", None).assert_error(400, "BadRequest");
    delete_partition(&c, "c", Some("a")).assert_error(400, "BadRequest");
    // A single-path key has no prefix, and no longer key.
    delete_partition(&c, "c", Some("[]")).assert_error(400, "BadRequest");
    delete_partition(&c, "c", Some(r#"["a","b"]"#)).assert_error(400, "BadRequest");
    delete_partition(&c, "missing", Some(r#"["a"]"#)).assert_error(404, "NotFound");
    assert_eq!(c.ids(), ["a1"]);
}

/// A container made without a partition key (an API version before
/// 2018-12-31): the service shows it with the system key
/// `/_partitionKey`, which the SDKs read as "send the empty key" (the
/// JavaScript SDK's bulk on a non-partitioned container needs it). Sent
/// back on a replace, that definition is the same container's.
#[test]
fn a_container_without_a_partition_key_shows_the_system_key() {
    let c = TestClient::start();
    assert_eq!(c.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    let created = c.post(&format!("/dbs/{DB}/colls"), &json!({"id": "np"}), &[]);
    assert_eq!(created.status, 201, "{}", created.body);
    let system_key = json!({"paths": ["/_partitionKey"], "kind": "Hash", "systemKey": true});
    assert_eq!(created.body["partitionKey"], system_key);
    let path = format!("/dbs/{DB}/colls/np");
    let mut read = c.get(&path, &[]).body;
    assert_eq!(read["partitionKey"], system_key);
    read["defaultTtl"] = json!(60);
    let replaced = c.put(&path, &read, &[]);
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    assert_eq!(replaced.body["partitionKey"], system_key);
    // Its items take the empty key.
    let empty = [("x-ms-documentdb-partitionkey", "[]")];
    let item = c.post(&format!("{path}/docs"), &json!({"id": "a"}), &empty);
    assert_eq!(item.status, 201, "{}", item.body);
    assert_eq!(c.get(&format!("{path}/docs/a"), &empty).status, 200);
}

/// A container made without a partition key, addressed as Microsoft's
/// "Migrate non-partitioned containers to partitioned containers" says: an
/// item with `_partitionKey` is in that logical partition, one without it
/// in PartitionKey.NONE (`[]`, or `[{}]` as the SDKs send it), for point
/// operations, queries, the change feed, batches and delete by key.
#[test]
fn a_container_without_a_partition_key_partitions_by_its_system_key() {
    let c = TestClient::start();
    assert_eq!(c.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    let made = c.post(&format!("/dbs/{DB}/colls"), &json!({"id": "np"}), &[]);
    assert_eq!(made.status, 201, "{}", made.body);
    let doe = r#"["Doe"]"#;
    let legacy = json!({"id": "legacy", "name": "no key"});
    assert_eq!(c.post(&docs("np"), &legacy, &[]).status, 201);
    let none = create(&c, "np", &json!({"id": "none-1"}), "[{}]");
    assert_eq!(none.status, 201, "{}", none.body);
    for id in ["id-1", "id-2"] {
        let item = json!({"id": id, "_partitionKey": "Doe"});
        let made = create(&c, "np", &item, doe);
        assert_eq!(made.status, 201, "{}", made.body);
        assert_eq!(made.body["_partitionKey"], "Doe");
    }
    // The same id in another logical partition is another item.
    let twin = create(
        &c,
        "np",
        &json!({"id": "id-1", "_partitionKey": "Roe"}),
        r#"["Roe"]"#,
    );
    assert_eq!(twin.status, 201, "{}", twin.body);
    // Without a header, the key comes from the item.
    let inferred = c.post(
        &docs("np"),
        &json!({"id": "id-3", "_partitionKey": "Doe"}),
        &[],
    );
    assert_eq!(inferred.status, 201, "{}", inferred.body);

    assert_eq!(read(&c, "np", "id-1", doe).body["_partitionKey"], "Doe");
    read(&c, "np", "id-1", "[{}]").assert_error(404, "NotFound");
    for pk in ["[]", "[{}]"] {
        assert_eq!(read(&c, "np", "legacy", pk).status, 200, "{pk}");
        read(&c, "np", "id-2", pk).assert_error(404, "NotFound");
    }
    let mismatch = create(
        &c,
        "np",
        &json!({"id": "x", "_partitionKey": "Doe"}),
        "[{}]",
    );
    mismatch.assert_error(400, "BadRequest");
    assert_eq!(mismatch.body["code"], "BadRequest");
    create(&c, "np", &json!({"id": "x"}), r#"["a","b"]"#).assert_error(400, "BadRequest");

    // Queries: one logical partition, PartitionKey.NONE, or all of them.
    let pk = |v| [("x-ms-documentdb-partitionkey", v)];
    assert_eq!(query_ids(&c, "np", &pk(doe)), ["id-1", "id-2", "id-3"]);
    assert_eq!(query_ids(&c, "np", &pk("[{}]")), ["legacy", "none-1"]);
    assert_eq!(query_ids(&c, "np", &pk("[]")), ["legacy", "none-1"]);
    assert_eq!(
        query_ids(&c, "np", &[]),
        ["id-1", "id-1", "id-2", "id-3", "legacy", "none-1"]
    );

    // The change feed of one logical partition.
    let feed = c.get(
        &docs("np"),
        &[
            ("a-im", "Incremental Feed"),
            ("x-ms-documentdb-partitionkey", doe),
        ],
    );
    assert_eq!(
        sorted_ids(&feed.body["Documents"]),
        ["id-1", "id-2", "id-3"]
    );
    let feed = c.get(
        &docs("np"),
        &[
            ("a-im", "Incremental Feed"),
            ("x-ms-documentdb-partitionkey", "[{}]"),
        ],
    );
    assert_eq!(sorted_ids(&feed.body["Documents"]), ["legacy", "none-1"]);

    // A transactional batch in the logical partition "Doe".
    let batch = c.post(
        &docs("np"),
        &json!([
            {"operationType": "Create", "resourceBody": {"id": "id-4", "_partitionKey": "Doe"}},
            {"operationType": "Read", "id": "id-1"},
        ]),
        &[
            ("x-ms-cosmos-is-batch-request", "True"),
            ("x-ms-cosmos-batch-atomic", "True"),
            ("x-ms-documentdb-partitionkey", doe),
        ],
    );
    assert_eq!(batch.status, 200, "{}", batch.body);
    assert_eq!(batch.statuses(), [201, 200]);
    assert_eq!(batch.body[1]["resourceBody"]["_partitionKey"], "Doe");

    // Delete by partition key: "Doe" only.
    assert_eq!(delete_partition(&c, "np", Some(doe)).status, 200);
    assert_eq!(query_ids(&c, "np", &pk(doe)), Vec::<String>::new());
    assert_eq!(query_ids(&c, "np", &[]), ["id-1", "legacy", "none-1"]);
}
