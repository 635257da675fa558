//! Fault rules beside everything else that may answer a request
//! (`docs/src/faults.md#the-order`): a rule `after` the operation answers
//! only what ran and succeeded (never a 429 of the budget, a 409, 404, 412,
//! 400 or 401, never a failed batch or bulk) and such a request is no hit;
//! a rule meets only what the budget admitted and is spent as it is
//! charged; a region that is down answers before any rule; and what an
//! injected failure is charged (`docs/src/request-units.md`).

use crate::common::{Reply, TestClient, COLL, DB, START};
use cosmos_emulator::protocol::auth::MasterKey;
use cosmos_emulator::{ClockMode, Config};
use reqwest::blocking::Client;
use reqwest::Method;
use serde_json::{json, Value};

const FAULTS: &str = "/_emulator/faults";

fn charge(reply: &Reply) -> f64 {
    reply
        .header("x-ms-request-charge")
        .expect("every answer has a charge")
        .parse()
        .unwrap()
}

fn hit_count(client: &TestClient, id: &str) -> u64 {
    let rule = client.get(&format!("{FAULTS}/{id}"), &[]);
    assert_eq!(rule.status, 200, "{}", rule.body);
    rule.body["hitCount"].as_u64().unwrap()
}

fn add_rule(client: &TestClient, rule: Value) {
    let added = client.post(FAULTS, &rule, &[]);
    assert_eq!(added.status, 201, "{}", added.body);
}

/// Whether `reply` is a fault rule's answer after its operation ran.
fn after_fault(reply: &Reply) -> bool {
    reply.message().contains("Injected fault") && reply.message().contains("the operation ran")
}

/// An emulator throttling on its test clock, with the container `c` of
/// 400 RU/s.
fn throttled() -> TestClient {
    let client = TestClient::start_config(Config {
        rate_limit: true,
        clock: ClockMode::Manual { start: Some(START) },
        ..Config::for_tests()
    });
    assert_eq!(client.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    assert_eq!(client.create_container("c", None).status, 201);
    client
}

/// Upserts into `pk` until the budget refuses one: what was spent.
fn spend_the_second(client: &TestClient, pk: &str, tag: &str) -> f64 {
    let mut spent = 0.0;
    for i in 0..1_000 {
        let reply = client
            .upsert_item(&json!({"id": format!("{tag}{i}"), "pk": pk, "blob": "x".repeat(800)}));
        if reply.status == 429 {
            assert!(
                !reply.message().contains("Injected fault"),
                "the budget's own 429"
            );
            return spent;
        }
        assert_eq!(reply.status, 201, "{}", reply.body);
        spent += charge(&reply);
    }
    panic!("never throttled");
}

#[test]
fn an_after_rule_never_answers_a_write_the_budget_refused() {
    let client = throttled();
    add_rule(
        &client,
        json!({"id": "late", "match": {"operation": ["create", "replace", "delete"]},
               "respond": {"status": 408}, "when": "after"}),
    );
    // The issue's case: a spent second, then a create, a replace, a delete.
    assert_eq!(
        client
            .upsert_item(&json!({"id": "old", "pk": "p", "v": 1}))
            .status,
        201
    );
    spend_the_second(&client, "p", "u");
    let create = client.create_item(&json!({"id": "new", "pk": "p"}));
    let replace = client.replace_item(&json!({"id": "old", "pk": "p", "v": 2}));
    let delete = client.delete_item("old", "p");
    for refused in [&create, &replace, &delete] {
        refused.assert_error(429, "TooManyRequests");
        assert_eq!(refused.header("x-ms-substatus"), Some("3200"));
        assert_eq!(refused.header("x-ms-request-charge"), Some("0"));
        assert!(
            !refused.message().contains("Injected fault"),
            "{}",
            refused.message()
        );
    }
    assert_eq!(hit_count(&client, "late"), 0, "no refused request is a hit");
    client.emulator.advance(1).unwrap();
    assert_eq!(client.read_item("new", "p").status, 404, "not written");
    assert_eq!(
        client.read_item("old", "p").body["v"],
        1,
        "not replaced, not deleted"
    );
    // In the next second they run, and the rule answers after each.
    let replace = client.replace_item(&json!({"id": "old", "pk": "p", "v": 2}));
    replace.assert_error(408, "RequestTimeout");
    assert!(after_fault(&replace), "{}", replace.message());
    assert!(
        charge(&replace) > 5.0,
        "the replace's own charge: {}",
        charge(&replace)
    );
    assert_eq!(client.read_item("old", "p").body["v"], 2, "replaced");
    let delete = client.delete_item("old", "p");
    assert!(after_fault(&delete), "{}", delete.body);
    assert_eq!(client.read_item("old", "p").status, 404, "deleted");
    assert_eq!(hit_count(&client, "late"), 2);
}

#[test]
fn an_after_rule_never_answers_an_operation_that_failed() {
    let client = TestClient::with_container(None);
    assert_eq!(
        client
            .create_item(&json!({"id": "a", "pk": "p", "v": 1}))
            .status,
        201
    );
    add_rule(
        &client,
        json!({"id": "late", "match": {"operation": ["create", "replace", "delete", "patch", "read"]},
               "respond": {"status": 503}, "when": "after", "hits": 1}),
    );
    client
        .create_item(&json!({"id": "a", "pk": "p"}))
        .assert_error(409, "Conflict");
    client
        .replace_item(&json!({"id": "missing", "pk": "p"}))
        .assert_error(404, "NotFound");
    client
        .delete_item("missing", "p")
        .assert_error(404, "NotFound");
    client
        .read_item("missing", "p")
        .assert_error(404, "NotFound");
    let stale = client.send(
        Method::PUT,
        &format!("{COLL}/docs/a"),
        &[
            ("x-ms-documentdb-partitionkey", "[\"p\"]"),
            ("if-match", "\"stale\""),
        ],
        Some(&json!({"id": "a", "pk": "p", "v": 9})),
    );
    stale.assert_error(412, "PreconditionFailed");
    client
        .patch_item("a", "p", json!([{"op": "bogus", "path": "/v"}]))
        .assert_error(400, "BadRequest");
    // An unsigned request: 401, before any rule.
    let unsigned = Client::new()
        .post(format!("{}{COLL}/docs", client.endpoint()))
        .header("x-ms-documentdb-partitionkey", "[\"p\"]")
        .body(json!({"id": "u", "pk": "p"}).to_string())
        .send()
        .unwrap();
    assert_eq!(unsigned.status().as_u16(), 401);
    let wrong_key = MasterKey::from_base64(&base64_of(&[7u8; 64])).unwrap();
    let forged = client.send_signed_with(
        &wrong_key,
        Method::POST,
        &format!("{COLL}/docs"),
        &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
        Some(json!({"id": "f", "pk": "p"}).to_string().into_bytes()),
    );
    assert_eq!(forged.status, 401, "{}", forged.body);
    assert_eq!(hit_count(&client, "late"), 0, "none of them ran: no hit");
    let version = |client: &TestClient| {
        // A query, which the rule does not match.
        client.query("SELECT VALUE c.v FROM c WHERE c.id = 'a'", json!([]))
    };
    assert_eq!(version(&client), [json!(1)], "nothing changed");
    // Its one hit goes to the first operation that runs.
    let replaced = client.replace_item(&json!({"id": "a", "pk": "p", "v": 2}));
    replaced.assert_error(503, "ServiceUnavailable");
    assert!(after_fault(&replaced), "{}", replaced.message());
    assert_eq!(hit_count(&client, "late"), 1);
    assert_eq!(version(&client), [json!(2)], "the replace was kept");
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn a_rule_meets_only_what_the_budget_admitted_and_is_spent_as_charged() {
    let client = throttled();
    // A fault before the operation that imitates the budget's own 429 costs
    // nothing, and spends nothing of the second.
    add_rule(
        &client,
        json!({"id": "busy", "match": {"operation": "create"},
               "respond": {"status": 429, "subStatus": 3200}, "hits": 20}),
    );
    for _ in 0..20 {
        let reply = client.create_item(&json!({"id": "x", "pk": "p"}));
        reply.assert_error(429, "TooManyRequests");
        assert!(reply.message().contains("\"busy\""), "{}", reply.message());
        assert_eq!(charge(&reply), 0.0);
    }
    assert_eq!(hit_count(&client, "busy"), 20);
    let spent = spend_the_second(&client, "p", "a");
    assert!(spent >= 400.0, "the whole second was left: {spent}");
    // A spent second refuses before the rules: a 404 rule is not hit.
    add_rule(
        &client,
        json!({"id": "gone", "match": {"operation": "read"}, "respond": {"status": 404}}),
    );
    let throttled = client.read_item("a0", "p");
    throttled.assert_error(429, "TooManyRequests");
    assert!(!throttled.message().contains("Injected fault"));
    assert_eq!(hit_count(&client, "gone"), 0);
    // In the next second the 404 is charged a failed read, spent from the
    // budget: 400 reads of 1 RU spend the second, the 401st is throttled.
    client.emulator.advance(1).unwrap();
    for i in 0..400 {
        let reply = client.read_item("a0", "p");
        assert_eq!(reply.status, 404, "read {i}: {}", reply.body);
        assert_eq!(charge(&reply), 1.0);
    }
    let refused = client.read_item("a0", "p");
    refused.assert_error(429, "TooManyRequests");
    assert_eq!(hit_count(&client, "gone"), 400);
}

#[test]
fn an_injected_failure_is_charged_as_the_service_charges_it() {
    let client = TestClient::with_container(None);
    assert_eq!(
        client.create_item(&json!({"id": "a", "pk": "p"})).status,
        201
    );
    for (status, expected) in [
        (429, 0.0),
        (503, 0.0),
        (500, 0.0),
        (408, 0.0),
        (410, 0.0),
        (401, 0.0),
        (403, 0.0),
        (404, 1.0),
        (409, 1.0),
        (412, 1.0),
        (400, 1.0),
        (449, 1.0),
    ] {
        add_rule(
            &client,
            json!({"id": "r", "match": {"operation": "read"}, "respond": {"status": status}}),
        );
        let reply = client.read_item("a", "p");
        assert_eq!(reply.status, status);
        assert_eq!(charge(&reply), expected, "an injected {status}");
        assert_eq!(client.delete(&format!("{FAULTS}/r"), &[]).status, 204);
    }
    // After the operation: the operation's own charge.
    let real =
        charge(&client.upsert_item(&json!({"id": "a", "pk": "p", "blob": "x".repeat(5000)})));
    add_rule(
        &client,
        json!({"match": {"operation": "upsert"}, "respond": {"status": 503}, "when": "after"}),
    );
    let faulted = client.upsert_item(&json!({"id": "a", "pk": "p", "blob": "y".repeat(5000)}));
    assert!(after_fault(&faulted), "{}", faulted.body);
    assert_eq!(charge(&faulted), real, "what the upsert cost");
}

/// A transactional batch in `pk`, or a bulk (`atomic: false`, each
/// operation naming its key).
fn batch(client: &TestClient, pk: &str, operations: &Value, atomic: bool) -> Reply {
    if atomic {
        return client.batch(pk, operations);
    }
    client.post(
        &format!("{COLL}/docs"),
        operations,
        &[
            ("x-ms-cosmos-is-batch-request", "true"),
            ("x-ms-cosmos-batch-atomic", "false"),
            ("x-ms-cosmos-batch-continue-on-error", "true"),
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
        ],
    )
}

fn creates(ids: &[&str]) -> Value {
    Value::Array(
        ids.iter()
            .map(|id| {
                json!({"operationType": "Create", "partitionKey": "[\"p\"]",
                       "resourceBody": {"id": id, "pk": "p"}})
            })
            .collect(),
    )
}

#[test]
fn an_after_rule_answers_a_batch_or_a_bulk_only_when_every_operation_succeeded() {
    for atomic in [true, false] {
        let client = TestClient::with_container(None);
        assert_eq!(
            client
                .create_item(&json!({"id": "taken", "pk": "p"}))
                .status,
            201
        );
        add_rule(
            &client,
            json!({"id": "late", "match": {"operation": "batch"}, "respond": {"status": 500}, "when": "after"}),
        );
        // An operation fails: the batch or bulk answers for itself.
        let failed = batch(&client, "p", &creates(&["a", "taken"]), atomic);
        assert_eq!(failed.status, 207, "{}", failed.body);
        assert_eq!(hit_count(&client, "late"), 0, "atomic: {atomic}");
        let a = client.read_item("a", "p").status;
        if atomic {
            assert_eq!(a, 404, "a failed transactional batch commits nothing");
        } else {
            assert_eq!(a, 200, "a bulk keeps what succeeded, and says so");
            assert_eq!(failed.statuses(), [201, 409]);
        }
        // Every operation succeeds: committed, then the rule answers.
        let faulted = batch(&client, "p", &creates(&["b", "c"]), atomic);
        faulted.assert_error(500, "InternalServerError");
        assert!(after_fault(&faulted), "{}", faulted.body);
        assert_eq!(hit_count(&client, "late"), 1, "atomic: {atomic}");
        for id in ["b", "c"] {
            assert_eq!(
                client.read_item(id, "p").status,
                200,
                "{id} (atomic: {atomic})"
            );
        }
    }
}

#[test]
fn a_region_that_is_down_answers_before_any_rule() {
    let client = TestClient::start_config(Config {
        regions: vec!["West US".into(), "East US".into()],
        clock: ClockMode::Manual { start: Some(START) },
        ..Config::for_tests()
    });
    let key = MasterKey::from_base64(client.emulator.key()).unwrap();
    let endpoints = client.emulator.region_endpoints();
    let east = crate::common::Api::new(endpoints[1].1.clone(), key, Client::new());
    assert_eq!(client.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    assert_eq!(client.create_container("c", None).status, 201);
    assert_eq!(
        client.create_item(&json!({"id": "a", "pk": "p"})).status,
        201
    );
    add_rule(
        &client,
        json!({"id": "east", "match": {"region": "East US", "operation": "read"}, "respond": {"status": 410, "subStatus": 1002}}),
    );
    add_rule(
        &client,
        json!({"id": "west", "match": {"region": "West US", "operation": "create"}, "respond": {"status": 408}, "when": "after"}),
    );
    let down = client.post(
        "/_emulator/regions/East%20US/down",
        &json!({"mode": "503"}),
        &[],
    );
    assert_eq!(down.status, 200, "{}", down.body);
    let read = east.get(
        &format!("{COLL}/docs/a"),
        &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
    );
    read.assert_error(503, "ServiceUnavailable");
    assert!(
        !read.message().contains("Injected fault"),
        "{}",
        read.message()
    );
    assert_eq!(hit_count(&client, "east"), 0, "the outage answered first");
    // A write sent to the read region: its 403/3, no rule.
    let refused = east.post(
        &format!("{COLL}/docs"),
        &json!({"id": "b", "pk": "p"}),
        &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
    );
    assert_eq!(refused.status, 503, "still down: {}", refused.body);
    assert_eq!(
        client
            .post("/_emulator/regions/East%20US/up", &json!({}), &[])
            .status,
        200
    );
    let refused = east.post(
        &format!("{COLL}/docs"),
        &json!({"id": "b", "pk": "p"}),
        &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
    );
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(refused.header("x-ms-substatus"), Some("3"));
    assert_eq!(hit_count(&client, "west"), 0);
    // Up again: the rule answers the region's reads.
    let read = east.get(
        &format!("{COLL}/docs/a"),
        &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
    );
    assert_eq!(read.status, 410);
    assert_eq!(hit_count(&client, "east"), 1);
    let created = client.create_item(&json!({"id": "b", "pk": "p"}));
    assert!(after_fault(&created), "{}", created.body);
    assert_eq!(client.read_item("b", "p").status, 200);
}
