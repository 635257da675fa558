//! Unique keys over HTTP (issue 22, cause 10): `uniqueKeyPolicy` validated
//! at creation and immutable after it, a duplicate within a logical
//! partition refused 409 on every write path, and an expired item holding
//! nothing (R5). The rules and their sources: `data/store/unique_keys.rs`.

use crate::common::{Reply, TestClient, COLL, DB};
use serde_json::{json, Value};

/// A client with the container `c` on `/pk`, `defaultTtl` -1, unique on
/// `/email` and on (`/name/first`, `/name/last`) as the Python SDK's sample
/// nests them.
fn client() -> TestClient {
    let c = TestClient::start();
    assert_eq!(c.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    let reply = c.post("/dbs/db/colls", &settings(), &[]);
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(reply.body["uniqueKeyPolicy"], settings()["uniqueKeyPolicy"]);
    c
}

fn settings() -> Value {
    json!({
        "id": "c",
        "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
        "defaultTtl": -1,
        "uniqueKeyPolicy": {"uniqueKeys": [
            {"paths": ["/email"]},
            {"paths": ["/name/first", "/name/last"]}
        ]}
    })
}

fn item(id: &str, pk: &str, email: &str) -> Value {
    json!({"id": id, "pk": pk, "email": email, "name": {"first": id, "last": id}})
}

fn assert_duplicate(reply: &Reply) {
    reply.assert_error(409, "Conflict");
    assert!(
        reply.message().contains("unique index already exists"),
        "{}",
        reply.body
    );
}

#[test]
fn a_duplicate_in_the_partition_is_refused_on_every_single_write() {
    let c = client();
    assert_eq!(c.create_item(&item("a", "p", "a@x")).status, 201);
    assert_eq!(c.create_item(&item("b", "p", "b@x")).status, 201);
    assert_duplicate(&c.create_item(&item("n", "p", "a@x")));
    assert_duplicate(&c.upsert_item(&item("n", "p", "a@x")));
    assert_duplicate(&c.upsert_item(&item("b", "p", "a@x")));
    assert_duplicate(&c.replace_item(&item("b", "p", "a@x")));
    let patch = json!([{"op": "set", "path": "/email", "value": "a@x"}]);
    assert_duplicate(&c.patch_item("b", "p", patch));
    // The composite key: both of its paths must match.
    let twin = json!({"id": "t", "pk": "p", "email": "t@x", "name": {"first": "a", "last": "a"}});
    assert_duplicate(&c.create_item(&twin));
    // Nothing of the refused writes was kept.
    assert_eq!(c.ids(), ["a", "b"]);
    assert_eq!(c.read_item("b", "p").body["email"], "b@x");
    // Another partition is another scope; case and type matter.
    assert_eq!(c.create_item(&item("a", "q", "a@x")).status, 201);
    assert_eq!(c.create_item(&item("u", "p", "A@x")).status, 201);
    // An item may be written with its own values, or new ones.
    assert_eq!(c.replace_item(&item("a", "p", "a@x")).status, 200);
    assert_eq!(c.upsert_item(&item("a", "p", "a2@x")).status, 200);
    assert_eq!(c.create_item(&item("v", "p", "a@x")).status, 201);
    // A delete frees the values.
    assert_eq!(c.delete_item("v", "p").status, 204);
    assert_eq!(c.create_item(&item("w", "p", "a@x")).status, 201);
}

#[test]
fn a_missing_value_is_null_and_held_once() {
    let c = client();
    let bare = |id: &str| json!({"id": id, "pk": "p", "name": {"first": id}});
    assert_eq!(c.create_item(&bare("a")).status, 201);
    assert_duplicate(&c.create_item(&bare("b")));
    let null = json!({"id": "b", "pk": "p", "email": null, "name": {"first": "b"}});
    assert_duplicate(&c.create_item(&null));
}

/// The conformance case `expired-item-frees-its-unique-key`, and a replace
/// into the values of an expired item not yet purged.
#[test]
fn an_expired_item_holds_no_unique_value() {
    let c = client();
    let mut short = item("a", "p", "v");
    short["ttl"] = json!(10);
    assert_eq!(c.create_item(&short).status, 201);
    assert_eq!(c.create_item(&item("b", "p", "w")).status, 201);
    assert_duplicate(&c.create_item(&item("n", "p", "v")));
    c.advance(9);
    assert_duplicate(&c.replace_item(&item("b", "p", "v")));
    c.advance(1);
    assert_eq!(c.replace_item(&item("b", "p", "v")).status, 200);
    assert_eq!(c.create_item(&item("n", "p", "w")).status, 201);
    assert_duplicate(&c.create_item(&item("m", "p", "v")));
}

fn batch(c: &TestClient, pk: &str, operations: Value) -> Reply {
    c.batch(pk, &operations)
}

fn op(kind: &str, body: Value) -> Value {
    json!({"operationType": kind, "id": body["id"], "resourceBody": body})
}

#[test]
fn a_batch_with_a_duplicate_fails_whole_and_bulk_fails_that_operation_alone() {
    let c = client();
    assert_eq!(c.create_item(&item("a", "p", "a@x")).status, 201);
    let reply = batch(
        &c,
        "p",
        json!([
            op("Create", item("x", "p", "x@x")),
            op("Upsert", item("y", "p", "a@x"))
        ]),
    );
    assert_eq!(reply.statuses(), [424, 409]);
    let reply = batch(
        &c,
        "p",
        json!([
            op("Create", item("x", "p", "x@x")),
            op("Create", item("y", "p", "x@x"))
        ]),
    );
    assert_eq!(reply.statuses(), [424, 409]);
    assert_eq!(c.ids(), ["a"], "nothing of either batch was applied");
    let reply = batch(
        &c,
        "p",
        json!([{"operationType": "Delete", "id": "a"}, op("Create", item("x", "p", "a@x"))]),
    );
    assert_eq!(reply.statuses(), [204, 201]);

    let bulk = c.post(
        &format!("{COLL}/docs"),
        &json!([
            op("Create", item("m", "p", "m@x")),
            op("Create", item("n", "p", "m@x")),
            op("Upsert", item("o", "q", "m@x"))
        ]),
        &[
            ("x-ms-cosmos-is-batch-request", "true"),
            ("x-ms-cosmos-batch-atomic", "false"),
            ("x-ms-cosmos-batch-continue-on-error", "true"),
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
        ],
    );
    assert_eq!(bulk.statuses(), [201, 409, 201]);
}

#[test]
fn malformed_policies_are_refused_and_nothing_is_created() {
    let c = TestClient::start();
    assert_eq!(c.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    let eleven: Vec<Value> = (0..11)
        .map(|i| json!({"paths": [format!("/k{i}")]}))
        .collect();
    for policy in [
        json!([]),
        json!({"uniqueKeys": "/a"}),
        json!({"uniqueKeys": [{"paths": ["a"]}]}),
        json!({"uniqueKeys": [{"paths": [""]}]}),
        json!({"uniqueKeys": [{"paths": [7]}]}),
        json!({"uniqueKeys": [{"paths": ["/a", "/a"]}]}),
        json!({ "uniqueKeys": eleven }),
    ] {
        let body =
            json!({"id": "c", "partitionKey": {"paths": ["/pk"]}, "uniqueKeyPolicy": policy});
        let reply = c.post("/dbs/db/colls", &body, &[]);
        reply.assert_error(400, "BadRequest");
        assert!(
            reply.message().contains("uniqueKeyPolicy"),
            "{}",
            reply.body
        );
    }
    assert_eq!(
        c.get("/dbs/db/colls", &[]).body["DocumentCollections"],
        json!([])
    );
    // The shapes the SDKs send: none, empty, the Python sample's.
    for (id, policy) in [
        ("empty", json!({"uniqueKeys": []})),
        (
            "sample",
            json!({"uniqueKeys": [{"paths": ["/field1/field2", "/field3"]}]}),
        ),
    ] {
        let body = json!({"id": id, "partitionKey": {"paths": ["/pk"]}, "uniqueKeyPolicy": policy});
        assert_eq!(c.post("/dbs/db/colls", &body, &[]).status, 201);
    }
}

#[test]
fn a_container_replace_cannot_change_the_policy() {
    let c = client();
    let mut changed = settings();
    changed["uniqueKeyPolicy"] = json!({"uniqueKeys": [{"paths": ["/email"]}]});
    let mut dropped = settings();
    dropped.as_object_mut().unwrap().remove("uniqueKeyPolicy");
    for body in [changed, dropped] {
        let reply = c.put(COLL, &body, &[]);
        reply.assert_error(403, "Forbidden");
        assert!(
            reply
                .message()
                .contains("The unique index cannot be modified"),
            "{}",
            reply.body
        );
    }
    // The same policy, with another setting changed: accepted.
    let mut same = settings();
    same["defaultTtl"] = json!(100);
    let reply = c.put(COLL, &same, &[]);
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(c.create_item(&item("a", "p", "a@x")).status, 201);
    assert_duplicate(&c.create_item(&item("b", "p", "a@x")));
}

#[test]
fn a_named_snapshot_restore_brings_back_the_index_of_its_items() {
    let c = client();
    assert_eq!(c.create_item(&item("a", "p", "a@x")).status, 201);
    let snap = c.put("/_emulator/snapshots/x", &json!({}), &[]);
    assert!(snap.status < 300, "{}", snap.body);
    assert_eq!(c.delete_item("a", "p").status, 204);
    assert_eq!(c.create_item(&item("b", "p", "b@x")).status, 201);
    let restored = c.post("/_emulator/snapshots/x/restore", &json!({}), &[]);
    assert_eq!(restored.status, 200, "{}", restored.body);
    assert_duplicate(&c.create_item(&item("n", "p", "a@x")));
    assert_eq!(c.create_item(&item("n", "p", "b@x")).status, 201);
}
