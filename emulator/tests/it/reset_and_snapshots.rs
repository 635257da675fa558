//! Test isolation through the control API: `POST /_emulator/reset` and
//! named snapshots (`PUT /_emulator/snapshots/{name}`, `POST
//! .../restore`, `GET /_emulator/snapshots`, `DELETE`), signed like every
//! request, refusing what they cannot do with a Cosmos error.

use crate::common::{Purge, TestClient, COLL, START};
use cosmos_emulator::ClockMode;
use reqwest::Method;
use serde_json::{json, Value};

fn pk(id: &str) -> String {
    json!([id]).to_string()
}

fn read(c: &TestClient, id: &str, partition: &str) -> crate::common::Reply {
    c.get(
        &format!("{COLL}/docs/{id}"),
        &[("x-ms-documentdb-partitionkey", &pk(partition))],
    )
}

fn snapshot(c: &TestClient, name: &str) -> crate::common::Reply {
    c.put(&format!("/_emulator/snapshots/{name}"), &json!({}), &[])
}

fn restore(c: &TestClient, name: &str) -> crate::common::Reply {
    c.post(
        &format!("/_emulator/snapshots/{name}/restore"),
        &json!({}),
        &[],
    )
}

/// Every id the change feed's latest-version mode returns from the beginning.
fn feed_ids(c: &TestClient) -> Vec<String> {
    let reply = c.get(&format!("{COLL}/docs"), &[("a-im", "Incremental Feed")]);
    if reply.status == 304 {
        return Vec::new();
    }
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.document_ids()
}

#[test]
fn a_reset_drops_every_database_and_keeps_the_clock() {
    let c = TestClient::with_container(Some(json!(10)));
    c.post("/dbs", &json!({"id": "second"}), &[]);
    c.create_item(&json!({"id": "a", "pk": "a"}));
    c.advance(3);
    let reply = c.post("/_emulator/reset", &json!({}), &[]);
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body, json!({"databases": 2, "now": START + 3}));
    assert_eq!(c.get("/dbs", &[]).body["Databases"], json!([]));
    assert_eq!(c.get("/offers", &[]).body["Offers"], json!([]));
    c.get(COLL, &[]).assert_error(404, "NotFound");
    assert_eq!(c.now(), START + 3, "the clock stays where it is");
    // The names are free again; the resources are new ones.
    assert_eq!(c.post("/dbs", &json!({"id": "db"}), &[]).status, 201);
    assert_eq!(c.create_container("c", None).status, 201);
    assert_eq!(read(&c, "a", "a").status, 404);
    assert!(feed_ids(&c).is_empty(), "the change feed went with it");
}

#[test]
fn a_reset_can_set_the_test_clock_even_backwards() {
    let c = TestClient::with_container(None);
    c.advance(100);
    let empty = c.send(Method::POST, "/_emulator/reset", &[], None);
    assert_eq!(empty.status, 200, "an empty body is no parameters");
    let reply = c.post("/_emulator/reset", &json!({"clock": START - 50}), &[]);
    assert_eq!(reply.body, json!({"databases": 0, "now": START - 50}));
    assert_eq!(c.now(), START - 50);
}

#[test]
fn a_reset_refuses_what_it_cannot_do() {
    let c = TestClient::with_container(None);
    for body in [json!({"clock": "soon"}), json!({"keep": true}), json!([1])] {
        c.post("/_emulator/reset", &body, &[])
            .assert_error(400, "BadRequest");
    }
    assert_eq!(c.get("/dbs", &[]).body["_count"], 1, "nothing was dropped");
    let system = TestClient::start_with(ClockMode::System, Purge::Background);
    system
        .post("/_emulator/reset", &json!({"clock": START}), &[])
        .assert_error(400, "BadRequest");
    let wrong_key = cosmos_emulator::protocol::auth::MasterKey::from_base64(
        "dGhpcyBpcyBub3QgdGhlIGtleSB0aGlzIGlzIG5vdCB0aGUga2V5IGF0IGFsbA==",
    )
    .unwrap();
    let unsigned = c.send_signed_with(
        &wrong_key,
        Method::POST,
        "/_emulator/reset",
        &[],
        Some(b"{}".to_vec()),
    );
    assert_eq!(unsigned.status, 401, "{}", unsigned.body);
    assert_eq!(c.get("/dbs", &[]).body["_count"], 1);
}

#[test]
fn a_restore_brings_back_items_their_ttl_the_feed_and_the_clock() {
    let c = TestClient::with_container(Some(json!(10)));
    let a = c.create_item(&json!({"id": "a", "pk": "a"})).body;
    c.create_item(&json!({"id": "b", "pk": "b", "ttl": -1}));
    let taken = snapshot(&c, "base");
    assert_eq!(taken.status, 201, "{}", taken.body);
    assert_eq!(
        taken.body,
        json!({"name": "base", "databases": 1, "containers": 1, "items": 2, "now": START})
    );
    // Time passes: a expires and is purged; another item, another container.
    c.advance(10);
    c.post("/_emulator/purge", &json!({}), &[]);
    assert_eq!(read(&c, "a", "a").status, 404);
    c.create_item(&json!({"id": "later", "pk": "l"}));
    c.create_container("other", None);
    let restored = restore(&c, "base");
    assert_eq!(restored.status, 200, "{}", restored.body);
    assert_eq!(restored.body["now"], START);
    assert_eq!(c.now(), START, "the test clock goes back with the account");
    let back = read(&c, "a", "a");
    assert_eq!(back.status, 200);
    for field in ["_ts", "_etag", "_rid", "_self", "id"] {
        assert_eq!(back.body[field], a[field], "{field} as it was");
    }
    assert_eq!(read(&c, "later", "l").status, 404);
    c.get("/dbs/db/colls/other", &[])
        .assert_error(404, "NotFound");
    assert_eq!(feed_ids(&c), ["a", "b"]);
    // TTL counts from the restored _ts, as before.
    c.advance(9);
    assert_eq!(read(&c, "a", "a").status, 200);
    c.advance(1);
    assert_eq!(read(&c, "a", "a").status, 404);
    assert_eq!(read(&c, "b", "b").status, 200);
}

#[test]
fn a_query_answered_before_a_restore_is_run_again_after_it() {
    let c = TestClient::with_container(None);
    for i in 0..6 {
        c.create_item(&json!({"id": format!("i{i}"), "pk": "p", "n": i}));
    }
    snapshot(&c, "six");
    for i in 0..6 {
        c.delete_item(&format!("i{i}"), "p");
    }
    let before = c.query("SELECT VALUE c.n FROM c ORDER BY c.n DESC", json!([]));
    assert!(before.is_empty());
    restore(&c, "six");
    let after = c.query("SELECT VALUE c.n FROM c ORDER BY c.n DESC", json!([]));
    assert_eq!(after, [5, 4, 3, 2, 1, 0].map(Value::from));
}

#[test]
fn snapshots_are_listed_replaced_deleted_and_refused_by_name() {
    let c = TestClient::with_container(None);
    assert_eq!(snapshot(&c, "one").status, 201);
    c.create_item(&json!({"id": "x", "pk": "x"}));
    let again = snapshot(&c, "one");
    assert_eq!(again.status, 200, "a name taken again is replaced");
    assert_eq!(again.body["items"], 1);
    assert_eq!(snapshot(&c, "two-2.b_c").status, 201);
    let list = c.get("/_emulator/snapshots", &[]);
    let names: Vec<&str> = list.body["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["one", "two-2.b_c"]);
    restore(&c, "missing").assert_error(404, "NotFound");
    for bad in ["a%20b", "%C3%BC", &"n".repeat(129)] {
        snapshot(&c, bad).assert_error(400, "BadRequest");
    }
    c.put("/_emulator/snapshots/one", &json!({"x": 1}), &[])
        .assert_error(400, "BadRequest");
    assert_eq!(c.delete("/_emulator/snapshots/one", &[]).status, 204);
    c.delete("/_emulator/snapshots/one", &[])
        .assert_error(404, "NotFound");
    // A reset keeps the snapshots; a restore of one brings its account back.
    c.post("/_emulator/reset", &json!({}), &[]);
    assert_eq!(restore(&c, "two-2.b_c").status, 200);
    assert_eq!(read(&c, "x", "x").status, 200);
}

#[test]
fn a_restore_with_the_system_clock_leaves_time_alone() {
    let c = TestClient::start_with(ClockMode::System, Purge::Background);
    c.post("/dbs", &json!({"id": "db"}), &[]);
    c.create_container("c", None);
    c.create_item(&json!({"id": "a", "pk": "a"}));
    let taken = snapshot(&c, "s");
    assert_eq!(taken.status, 201);
    c.delete_item("a", "a");
    let restored = restore(&c, "s");
    assert_eq!(restored.status, 200, "{}", restored.body);
    assert_eq!(read(&c, "a", "a").status, 200);
}
