//! Transactional batch and bulk over HTTP (issue 12): all or nothing, the
//! service's limits and refusals, preconditions and patch conditions, TTL
//! inside a batch, one LSN per batch in the change feed, bulk one by one.

use crate::common::{Purge, Reply, TestClient, COLL};
use serde_json::{json, Value};

const R9_MESSAGE_START: &str = "The input ttl '0' is invalid.";

fn batch(c: &TestClient, pk: &str, operations: Value) -> Reply {
    c.batch(pk, &operations)
}

/// A bulk request, as the JavaScript SDK sends it (per-operation keys).
fn bulk(c: &TestClient, operations: Value, continue_on_error: bool) -> Reply {
    c.post(
        &format!("{COLL}/docs"),
        &operations,
        &[
            ("x-ms-cosmos-is-batch-request", "true"),
            ("x-ms-cosmos-batch-atomic", "false"),
            (
                "x-ms-cosmos-batch-continue-on-error",
                if continue_on_error { "true" } else { "false" },
            ),
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
        ],
    )
}

fn create(id: &str, pk: &str) -> Value {
    json!({"operationType": "Create", "resourceBody": {"id": id, "pk": pk}})
}

#[test]
fn every_operation_type_succeeds_in_order_with_its_result() {
    let c = TestClient::with_container(None);
    for id in ["r", "rep", "del", "pat"] {
        assert_eq!(
            c.create_item(&json!({"id": id, "pk": "p", "n": 1})).status,
            201
        );
    }
    let reply = batch(
        &c,
        "p",
        json!([
            create("new", "p"),
            {"operationType": "Upsert", "resourceBody": {"id": "r", "pk": "p", "n": 2}},
            {"operationType": "Read", "id": "rep"},
            {"operationType": "Replace", "id": "rep", "resourceBody": {"id": "rep", "pk": "p", "n": 3}},
            {"operationType": "Delete", "id": "del"},
            {"operationType": "Patch", "id": "pat", "resourceBody": {
                "operations": [{"op": "incr", "path": "/n", "value": 10}],
                "condition": "FROM c WHERE c.n = 1"}},
            {"operationType": "Read", "id": "new"},
        ]),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.statuses(), [201, 200, 200, 200, 204, 200, 200]);
    let results = reply.body.as_array().unwrap();
    for result in results {
        assert!(result["requestCharge"].as_f64().unwrap() > 0.0, "{result}");
    }
    // Each result's eTag is the etag of the version it returns.
    for index in [0, 1, 2, 3, 5, 6] {
        let result = &results[index];
        assert_eq!(result["eTag"], result["resourceBody"]["_etag"], "{result}");
        assert!(result["resourceBody"]["_rid"].is_string());
    }
    assert_eq!(
        results[2]["resourceBody"]["n"], 1,
        "read before the replace"
    );
    assert_eq!(results[5]["resourceBody"]["n"], 11);
    assert!(results[4].get("resourceBody").is_none());
    assert_eq!(
        results[6]["eTag"], results[0]["eTag"],
        "reads what the batch created"
    );
    let total: f64 = reply
        .header("x-ms-request-charge")
        .unwrap()
        .parse()
        .unwrap();
    assert!(total > 5.0);
    // Applied: what the results said.
    assert_eq!(c.read_item("rep", "p").body["n"], 3);
    assert_eq!(c.read_item("r", "p").body["n"], 2);
    assert_eq!(c.read_item("pat", "p").body["n"], 11);
    assert_eq!(c.read_item("new", "p").body["_etag"], results[0]["eTag"]);
    assert!(!c.is_visible("del", "p"));
}

#[test]
fn a_failure_rolls_back_the_whole_batch_with_424_for_the_others() {
    let c = TestClient::with_container(None);
    assert_eq!(
        c.create_item(&json!({"id": "x", "pk": "p", "n": 1})).status,
        201
    );
    // Each operation sees the ones before it: a delete frees the id.
    let reply = batch(
        &c,
        "p",
        json!([
            {"operationType": "Replace", "id": "x", "resourceBody": {"id": "x", "pk": "p", "n": 2}},
            {"operationType": "Delete", "id": "x"},
            {"operationType": "Create", "resourceBody": {"id": "x", "pk": "p", "n": 3}},
        ]),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.statuses(), [200, 204, 201]);
    let before = c.read_item("x", "p").body;
    assert_eq!(before["n"], 3);
    let reply = batch(
        &c,
        "p",
        json!([
            create("a", "p"),
            {"operationType": "Replace", "id": "x", "resourceBody": {"id": "x", "pk": "p", "n": 2}},
            create("x", "p"),
            create("b", "p"),
        ]),
    );
    // The service answers 207 Multi-Status; the SDKs find the failed one.
    assert_eq!(reply.status, 207, "{}", reply.body);
    assert_eq!(reply.statuses(), [424, 424, 409, 424]);
    let failed = &reply.body[2];
    assert!(failed["message"]
        .as_str()
        .unwrap()
        .contains("already exists"));
    assert!(failed.get("resourceBody").is_none());
    assert_eq!(c.ids(), ["x"], "nothing of either batch was applied");
    assert_eq!(c.read_item("x", "p").body, before);
    // A missing item: 404 for it.
    let reply = batch(
        &c,
        "p",
        json!([create("a", "p"), {"operationType": "Read", "id": "nope"}]),
    );
    assert_eq!(reply.statuses(), [424, 404]);
    assert_eq!(c.ids(), ["x"]);
}

#[test]
fn no_reader_ever_sees_part_of_a_batch() {
    let c = TestClient::with_container(None);
    const SIZE: usize = 20;
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let mut reads = 0;
            while !done.load(std::sync::atomic::Ordering::Acquire) || reads < 5 {
                let ids = c.ids();
                assert_eq!(ids.len() % SIZE, 0, "a partial batch was visible: {ids:?}");
                assert!(
                    ids.iter().all(|id| id.starts_with("good")),
                    "a rolled-back batch was visible: {ids:?}"
                );
                reads += 1;
            }
            reads
        });
        for round in 0..15 {
            // 19 creates and a conflict with the first: rolled back.
            let mut failing: Vec<Value> = (0..SIZE - 1)
                .map(|k| create(&format!("bad-{round}-{k}"), "p"))
                .collect();
            failing.push(create(&format!("bad-{round}-0"), "p"));
            let reply = batch(&c, "p", Value::Array(failing));
            assert_eq!(reply.status, 207);
            let good: Vec<Value> = (0..SIZE)
                .map(|k| create(&format!("good-{round}-{k}"), "p"))
                .collect();
            assert_eq!(batch(&c, "p", Value::Array(good)).status, 200);
        }
        done.store(true, std::sync::atomic::Ordering::Release);
        assert!(reader.join().unwrap() >= 5);
    });
    assert_eq!(c.count(), 15 * SIZE as i64);
}

#[test]
fn the_service_limits_and_refusals_change_nothing() {
    let c = TestClient::with_container(None);
    let many = |n: usize| Value::Array((0..n).map(|k| create(&format!("i{k}"), "p")).collect());
    let reply = batch(&c, "p", many(101));
    reply.assert_error(400, "BadRequest");
    assert!(reply
        .message()
        .contains("Batch request has more operations than what is supported."));
    let reply = batch(&c, "p", json!([]));
    reply.assert_error(400, "BadRequest");
    assert!(reply.message().contains("Batch request has no operations."));
    let reply = batch(&c, "p", json!({"operationType": "Create"}));
    reply.assert_error(400, "BadRequest");
    let reply = batch(&c, "p", json!([{"operationType": "Merge", "id": "a"}]));
    reply.assert_error(400, "BadRequest");
    assert!(
        reply.message().contains("Operation 0"),
        "{}",
        reply.message()
    );
    // Over 2 MB as sent: 413, as for a single write.
    let big = "x".repeat(1024 * 1024);
    let reply = batch(
        &c,
        "p",
        json!([
            {"operationType": "Create", "resourceBody": {"id": "a", "pk": "p", "s": big}},
            {"operationType": "Create", "resourceBody": {"id": "b", "pk": "p", "s": big}},
        ]),
    );
    reply.assert_error(413, "RequestEntityTooLarge");
    // In the service's words, in its gateway's form, which the JavaScript
    // SDK's executeBulkOperations test looks for whole.
    assert!(
        reply
            .message()
            .starts_with("Message: {\"Errors\":[\"Request size is too large\"]}\r\n"),
        "{}",
        reply.message()
    );
    // Another partition named by an operation's key: the whole request is
    // refused.
    let other_key =
        json!([create("a", "p"), {"operationType": "Read", "id": "a", "partitionKey": "[\"q\"]"}]);
    let reply = batch(&c, "p", other_key);
    reply.assert_error(400, "BadRequest");
    assert!(reply
        .message()
        .contains("One or more operations within the batch request have a different partition key value than the request."));
    // An item of another partition (or of none) fails its own operation,
    // 400, the others 424 (the Python SDK's test_batch_create).
    for stray in [
        create("b", "q"),
        json!({"operationType": "Create", "resourceBody": {"id": "b"}}),
    ] {
        let reply = batch(&c, "p", json!([create("a", "p"), stray]));
        assert_eq!(reply.status, 207, "{}", reply.body);
        assert_eq!(reply.statuses(), [424, 400]);
        assert_eq!(c.count(), 0);
    }
    // The limit itself passes.
    let reply = batch(&c, "p", many(100));
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(c.count(), 100);
}

#[test]
fn if_match_if_none_match_and_the_patch_condition_hold_per_operation() {
    let c = TestClient::with_container(None);
    let etag = c.create_item(&json!({"id": "x", "pk": "p", "n": 1})).body["_etag"].clone();
    let stale = "\"00000000-0000-0000-0000-000000000000\"";
    let reply = batch(
        &c,
        "p",
        json!([
            create("a", "p"),
            {"operationType": "Replace", "id": "x", "ifMatch": stale,
             "resourceBody": {"id": "x", "pk": "p", "n": 2}},
        ]),
    );
    assert_eq!(reply.statuses(), [424, 412]);
    let reply = batch(
        &c,
        "p",
        json!([
            {"operationType": "Read", "id": "x", "ifNoneMatch": etag},
            {"operationType": "Replace", "id": "x", "ifMatch": etag,
             "resourceBody": {"id": "x", "pk": "p", "n": 2}},
            {"operationType": "Patch", "id": "x", "resourceBody": {
                "operations": [{"op": "set", "path": "/n", "value": 9}],
                "condition": "FROM c WHERE c.n = 1"}},
        ]),
    );
    assert_eq!(
        reply.statuses(),
        [424, 424, 412],
        "the condition sees the replace"
    );
    assert_eq!(c.read_item("x", "p").body["n"], 1);
    let reply = batch(
        &c,
        "p",
        json!([
            {"operationType": "Read", "id": "x", "ifNoneMatch": etag},
            {"operationType": "Replace", "id": "x", "ifMatch": etag,
             "resourceBody": {"id": "x", "pk": "p", "n": 2}},
            {"operationType": "Patch", "id": "x", "resourceBody": {
                "operations": [{"op": "set", "path": "/n", "value": 9}],
                "condition": "FROM c WHERE c.n = 2"}},
        ]),
    );
    assert_eq!(reply.statuses(), [304, 200, 200]);
    assert_eq!(c.read_item("x", "p").body["n"], 9);
}

#[test]
fn an_invalid_ttl_fails_its_operation_with_the_single_write_message_and_rolls_back() {
    let c = TestClient::with_container(Some(json!(100)));
    let single = c.create_item(&json!({"id": "s", "pk": "p", "ttl": 0}));
    single.assert_error(400, "BadRequest");
    assert!(single.message().starts_with(R9_MESSAGE_START));
    let reply = batch(
        &c,
        "p",
        json!([
            create("a", "p"),
            {"operationType": "Create", "resourceBody": {"id": "b", "pk": "p", "ttl": 0}},
        ]),
    );
    assert_eq!(reply.statuses(), [424, 400]);
    assert_eq!(reply.body[1]["message"], single.message());
    // A patch that sets an invalid ttl, too.
    assert_eq!(c.create_item(&json!({"id": "x", "pk": "p"})).status, 201);
    let reply = batch(
        &c,
        "p",
        json!([
            create("a", "p"),
            {"operationType": "Patch", "id": "x", "resourceBody": {
                "operations": [{"op": "set", "path": "/ttl", "value": -2}]}},
        ]),
    );
    assert_eq!(reply.statuses(), [424, 400]);
    assert!(reply.body[1]["message"].as_str().unwrap().contains("ttl"));
    assert_eq!(c.ids(), ["x"]);
}

#[test]
fn an_expired_item_is_absent_inside_a_batch_and_its_id_is_free() {
    // No background purge: the batch alone must treat the item as gone.
    let c = TestClient::with_container_and(Some(json!(10)), Purge::Off);
    for id in ["e", "r", "d", "p2"] {
        assert_eq!(
            c.create_item(&json!({"id": id, "pk": "p", "v": "old"}))
                .status,
            201
        );
    }
    let start = c.get(
        &format!("{COLL}/docs"),
        &[
            ("a-im", "Full-Fidelity Feed"),
            ("x-ms-cosmos-changefeed-wire-format-version", "2021-09-15"),
            ("if-none-match", "*"),
        ],
    );
    let token = start.header("etag").unwrap().to_string();
    c.advance(10);
    for op in [
        json!({"operationType": "Read", "id": "e"}),
        json!({"operationType": "Replace", "id": "r", "resourceBody": {"id": "r", "pk": "p"}}),
        json!({"operationType": "Delete", "id": "d"}),
        json!({"operationType": "Patch", "id": "p2", "resourceBody": {
            "operations": [{"op": "set", "path": "/v", "value": 1}]}}),
    ] {
        let reply = batch(&c, "p", json!([op]));
        assert_eq!(reply.statuses(), [404], "{op}");
    }
    let reply = batch(
        &c,
        "p",
        json!([{"operationType": "Create", "resourceBody": {"id": "e", "pk": "p", "v": "new"}}]),
    );
    assert_eq!(reply.statuses(), [201]);
    assert_eq!(c.read_item("e", "p").body["v"], "new");
    // The expired item's TTL delete is logged before the batch's create.
    let feed = c.get(
        &format!("{COLL}/docs"),
        &[
            ("a-im", "Full-Fidelity Feed"),
            ("x-ms-cosmos-changefeed-wire-format-version", "2021-09-15"),
            ("if-none-match", &token),
        ],
    );
    let changes: Vec<(String, bool)> = feed.body["Documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["metadata"]["operationType"].as_str().unwrap().to_string(),
                d["metadata"]["timeToLiveExpired"]
                    .as_bool()
                    .unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        changes,
        [("delete".to_string(), true), ("create".to_string(), false)]
    );
}

fn latest_page(c: &TestClient, start: Option<&str>, max: &str) -> Reply {
    let mut headers = vec![("a-im", "Incremental Feed"), ("x-ms-max-item-count", max)];
    if let Some(token) = start {
        headers.push(("if-none-match", token));
    }
    c.get(&format!("{COLL}/docs"), &headers)
}

#[test]
fn a_batch_is_one_lsn_and_feed_pages_neither_lose_nor_repeat_it() {
    let c = TestClient::with_container(None);
    assert_eq!(
        c.create_item(&json!({"id": "before", "pk": "p"})).status,
        201
    );
    let operations: Vec<Value> = (0..5).map(|k| create(&format!("b{k}"), "p")).collect();
    assert_eq!(batch(&c, "p", Value::Array(operations)).status, 200);
    assert_eq!(
        c.create_item(&json!({"id": "after", "pk": "p"})).status,
        201
    );
    // Pages of 2: the batch comes whole, once.
    let mut seen = Vec::new();
    let mut lsns = Vec::new();
    let mut token: Option<String> = None;
    for _ in 0..10 {
        let page = latest_page(&c, token.as_deref(), "2");
        if page.status == 304 {
            break;
        }
        assert_eq!(page.status, 200, "{}", page.body);
        for d in page.body["Documents"].as_array().unwrap() {
            seen.push(d["id"].as_str().unwrap().to_string());
            lsns.push(d["_lsn"].as_u64().unwrap());
        }
        token = Some(page.header("etag").unwrap().to_string());
    }
    let mut batch_ids: Vec<&str> = seen[1..6].iter().map(String::as_str).collect();
    batch_ids.sort();
    assert_eq!(seen.len(), 7, "{seen:?}");
    assert_eq!(seen[0], "before");
    assert_eq!(batch_ids, ["b0", "b1", "b2", "b3", "b4"]);
    assert_eq!(seen[6], "after");
    assert!(lsns[1..6].iter().all(|l| *l == lsns[1]), "{lsns:?}");
    assert_eq!(lsns[0] + 1, lsns[1]);
    assert_eq!(lsns[1] + 1, lsns[6], "one LSN for the batch");
    // All versions: the batch's five creates under its one LSN.
    let start = c.get(
        &format!("{COLL}/docs"),
        &[
            ("a-im", "Full-Fidelity Feed"),
            ("x-ms-cosmos-changefeed-wire-format-version", "2021-09-15"),
            ("if-none-match", "*"),
        ],
    );
    let token = start.header("etag").unwrap().to_string();
    let reply = batch(
        &c,
        "p",
        json!([
            {"operationType": "Replace", "id": "b0", "resourceBody": {"id": "b0", "pk": "p", "v": 1}},
            {"operationType": "Delete", "id": "b1"},
            create("b5", "p"),
        ]),
    );
    assert_eq!(reply.status, 200);
    let feed = c.get(
        &format!("{COLL}/docs"),
        &[
            ("a-im", "Full-Fidelity Feed"),
            ("x-ms-cosmos-changefeed-wire-format-version", "2021-09-15"),
            ("if-none-match", &token),
            ("x-ms-max-item-count", "1"),
        ],
    );
    let docs = feed.body["Documents"].as_array().unwrap();
    let kinds: Vec<&str> = docs
        .iter()
        .map(|d| d["metadata"]["operationType"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["replace", "delete", "create"],
        "in order, the page whole"
    );
    assert!(docs
        .iter()
        .all(|d| d["metadata"]["lsn"] == docs[0]["metadata"]["lsn"]));
}

#[test]
fn bulk_applies_operations_one_by_one_across_partitions() {
    let c = TestClient::with_container(None);
    assert_eq!(c.create_item(&json!({"id": "dup", "pk": "q"})).status, 201);
    let operations = json!([
        {"operationType": "Create", "partitionKey": "[\"p\"]", "resourceBody": {"id": "a", "pk": "p"}},
        {"operationType": "Create", "partitionKey": "[\"q\"]", "resourceBody": {"id": "dup", "pk": "q"}},
        {"operationType": "Upsert", "partitionKey": "[\"r\"]", "resourceBody": {"id": "b", "pk": "r"}},
        {"operationType": "Read", "partitionKey": "[\"q\"]", "id": "dup"},
    ]);
    let reply = bulk(&c, operations.clone(), true);
    assert_eq!(reply.status, 207, "{}", reply.body);
    assert_eq!(reply.statuses(), [201, 409, 201, 200]);
    assert_eq!(
        c.ids(),
        ["a", "b", "dup"],
        "the others applied despite the failure"
    );
    // Without continue-on-error the rest after the failure do not run.
    let reply = bulk(
        &c,
        json!([
            {"operationType": "Delete", "partitionKey": "[\"p\"]", "id": "a"},
            {"operationType": "Create", "partitionKey": "[\"q\"]", "resourceBody": {"id": "dup", "pk": "q"}},
            {"operationType": "Delete", "partitionKey": "[\"r\"]", "id": "b"},
        ]),
        false,
    );
    assert_eq!(reply.statuses(), [204, 409, 424]);
    assert_eq!(
        c.ids(),
        ["b", "dup"],
        "the first applied, the last never ran"
    );
    // All succeeding: 200; an item whose key differs from its operation's fails alone.
    let reply = bulk(
        &c,
        json!([
            {"operationType": "Create", "partitionKey": "[\"p\"]", "resourceBody": {"id": "c", "pk": "other"}},
            {"operationType": "Create", "resourceBody": {"id": "d", "pk": "p"}},
        ]),
        true,
    );
    assert_eq!(reply.statuses(), [400, 201]);
    let reply = bulk(
        &c,
        json!([{"operationType": "Delete", "partitionKey": "[\"p\"]", "id": "d"}]),
        true,
    );
    assert_eq!(reply.status, 200);
    assert_eq!(c.ids(), ["b", "dup"]);
}

/// A batch's writes share one LSN, and its answer names it in `lsn` as a
/// point write names its own: one more than before the batch, whatever the
/// number of writes (test_batch_lsn in the Python SDK's own suite).
#[test]
fn a_batch_answer_names_its_one_lsn() {
    let c = TestClient::with_container(None);
    c.create_item(&json!({"id": "a", "pk": "p"}));
    let read = c.read_item("a", "p");
    let before: u64 = read.header("lsn").expect("lsn on a read").parse().unwrap();
    let reply = batch(
        &c,
        "p",
        json!([
            create("b", "p"),
            create("c", "p"),
            {"operationType": "Read", "id": "a"},
            {"operationType": "Delete", "id": "a"}
        ]),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let after: u64 = reply
        .header("lsn")
        .expect("lsn on a batch")
        .parse()
        .unwrap();
    assert_eq!(after, before + 1);
    assert_eq!(
        reply.header("x-ms-global-committed-lsn"),
        Some(&*after.to_string())
    );
    let next = c.create_item(&json!({"id": "d", "pk": "p"}));
    assert_eq!(next.header("lsn"), Some(&*(after + 1).to_string()));
}

/// `Prefer: return=minimal` (JavaScript's `contentResponseOnWriteEnabled:
/// false` on batch and bulk): writes answer without their item (status and
/// etag only), reads still with theirs.
#[test]
fn minimal_batches_answer_writes_without_bodies() {
    let c = TestClient::with_container(None);
    assert_eq!(c.create_item(&json!({"id": "r", "pk": "p"})).status, 201);
    let operations = json!([
        create("a", "p"),
        {"operationType": "Upsert", "resourceBody": {"id": "b", "pk": "p"}},
        {"operationType": "Read", "id": "r"},
    ]);
    for atomic in ["true", "false"] {
        let reply = c.post(
            &format!("{COLL}/docs"),
            &operations,
            &[
                ("x-ms-cosmos-is-batch-request", "True"),
                ("x-ms-cosmos-batch-atomic", atomic),
                ("x-ms-documentdb-partitionkey", "[\"p\"]"),
                ("content-type", "application/json"),
                ("prefer", "return=minimal"),
            ],
        );
        assert_eq!(reply.status, 200, "{}", reply.body);
        let results = reply.body.as_array().unwrap();
        assert!(results[0].get("resourceBody").is_none(), "{}", reply.body);
        assert!(results[1].get("resourceBody").is_none(), "{}", reply.body);
        assert!(results[0]["eTag"].is_string());
        assert_eq!(results[2]["resourceBody"]["id"], "r");
        assert_eq!(c.delete_item("a", "p").status, 204);
        assert_eq!(c.delete_item("b", "p").status, 204);
    }
}
