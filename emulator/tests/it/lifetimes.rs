//! `POST /_emulator/lifetimes`, what the data explorer shows of each item:
//! the rule of the documentation that decides its lifetime, the TTL in
//! force and its expiry instant, for every cell of the tables E1-E3 (the
//! rules themselves are unit-tested in `src/data/ttl.rs`), expired items not yet
//! purged marked apart, paging, and the refusals.

use crate::common::{Purge, TestClient, START};
use reqwest::Method;
use serde_json::{json, Value};

fn lifetimes(client: &TestClient, body: Value) -> crate::common::Reply {
    client.post("/_emulator/lifetimes", &body, &[])
}

fn by_id(page: &Value) -> std::collections::BTreeMap<String, Value> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| (item["id"].as_str().unwrap().to_string(), item.clone()))
        .collect()
}

#[test]
fn every_cell_of_the_tables_is_explained() {
    // E1 (TTL off), E2 (defaultTtl -1), E3 (defaultTtl 1000): items with
    // no ttl, ttl -1 and ttl 2000, written at START.
    for (container, default) in [
        ("e1", None),
        ("e2", Some(json!(-1))),
        ("e3", Some(json!(1000))),
    ] {
        let client = TestClient::with_container_and(None, Purge::Off);
        assert_eq!(
            client.create_container(container, default.clone()).status,
            201
        );
        let path = format!("/dbs/db/colls/{container}/docs");
        for (id, ttl) in [("none", None), ("never", Some(-1)), ("own", Some(2000))] {
            let mut item = json!({"id": id, "pk": "p"});
            if let Some(ttl) = ttl {
                item["ttl"] = json!(ttl);
            }
            let reply = client.post(
                &path,
                &item,
                &[("x-ms-documentdb-partitionkey", r#"["p"]"#)],
            );
            assert_eq!(reply.status, 201, "{}", reply.body);
        }
        let reply = lifetimes(&client, json!({"database": "db", "container": container}));
        assert_eq!(reply.status, 200, "{}", reply.body);
        let page = reply.body;
        assert_eq!(page["now"], json!(START));
        assert_eq!(page["defaultTtl"], default.clone().unwrap_or(Value::Null));
        let items = by_id(&page);
        let expect = |id: &str, rule: &str, effective: Value, at: Value| {
            let item = &items[id];
            assert_eq!(item["rule"], json!(rule), "{container}/{id}: {item}");
            assert_eq!(item["effectiveTtl"], effective, "{container}/{id}: {item}");
            assert_eq!(item["expiresAt"], at, "{container}/{id}: {item}");
            assert_eq!(item["partitionKey"], json!(["p"]));
            assert_eq!(item["_ts"], json!(START));
        };
        match container {
            "e1" => {
                expect("none", "off", Value::Null, Value::Null);
                expect("never", "off", Value::Null, Value::Null);
                expect("own", "off", Value::Null, Value::Null);
            }
            "e2" => {
                expect("none", "container-default", json!(-1), Value::Null);
                expect("never", "item-override", json!(-1), Value::Null);
                expect("own", "item-override", json!(2000), json!(START + 2000));
            }
            _ => {
                expect(
                    "none",
                    "container-default",
                    json!(1000),
                    json!(START + 1000),
                );
                expect("never", "item-override", json!(-1), Value::Null);
                expect("own", "item-override", json!(2000), json!(START + 2000));
            }
        }
        // The item's own ttl is shown as written, even where it is ignored.
        assert_eq!(items["own"]["ttl"], json!(2000));
        assert_eq!(items["none"]["ttl"], Value::Null);
    }
}

#[test]
fn expired_items_not_yet_purged_are_marked_apart_and_pages_follow() {
    let client = TestClient::with_container_and(Some(json!(10)), Purge::Off);
    for i in 0..5 {
        client.create_item(
            &json!({"id": format!("i{i}"), "pk": "p", "ttl": if i < 2 { 5 } else { -1 }}),
        );
    }
    client.advance(6);
    let mut seen = Vec::new();
    let mut continuation = Value::Null;
    loop {
        let reply = lifetimes(
            &client,
            json!({"database": "db", "container": "c", "maxItems": 2, "continuation": continuation}),
        );
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(
            (reply.body["stored"].clone(), reply.body["live"].clone()),
            (json!(5), json!(3))
        );
        for item in reply.body["items"].as_array().unwrap() {
            seen.push((
                item["id"].as_str().unwrap().to_string(),
                item["expired"].as_bool().unwrap(),
            ));
        }
        continuation = reply.body["continuation"].clone();
        if continuation.is_null() {
            break;
        }
    }
    let expected: Vec<(String, bool)> = (0..5).map(|i| (format!("i{i}"), i < 2)).collect();
    assert_eq!(seen, expected);
    // Once purged, they are gone from the page too.
    assert_eq!(client.post("/_emulator/purge", &json!({}), &[]).status, 200);
    let reply = lifetimes(&client, json!({"database": "db", "container": "c"}));
    assert_eq!(reply.body["items"].as_array().unwrap().len(), 3);
}

#[test]
fn refusals() {
    let client = TestClient::with_container(None);
    let reply = lifetimes(&client, json!({"database": "db", "container": "missing"}));
    assert_eq!(reply.status, 404);
    let reply = lifetimes(
        &client,
        json!({"database": "db", "container": "c", "maxItems": 0}),
    );
    assert_eq!(reply.status, 400);
    let reply = lifetimes(
        &client,
        json!({"database": "db", "container": "c", "continuation": "x"}),
    );
    assert_eq!(reply.status, 400);
    let reply = lifetimes(&client, json!({"database": "db"}));
    assert_eq!(reply.status, 400);
    // A control route: the master key's signature is required.
    let reply = client.send_with_authorization(
        "type%3Dmaster%26ver%3D1.0%26sig%3Dbad",
        Method::POST,
        "/_emulator/lifetimes",
        &[],
        Some(&json!({"database": "db", "container": "c"})),
    );
    assert_eq!(reply.status, 401, "{}", reply.body);
}

/// `order: "expiry"` pages through the whole container soonest first, the
/// items that never expire last (each group in key order), and
/// `nextExpiry` names the instant the next live item expires.
#[test]
fn ordered_by_expiry_with_the_next_expiry() {
    let client = TestClient::with_container_and(None, Purge::Off);
    assert_eq!(client.create_container("x", Some(json!(100))).status, 201);
    // a: 100 (default), b: 30, c: never, d: 5 (expired after the advance), e: 30.
    for (id, ttl) in [
        ("a", None),
        ("b", Some(30)),
        ("c", Some(-1)),
        ("d", Some(5)),
        ("e", Some(30)),
    ] {
        let mut item = json!({"id": id, "pk": "p"});
        if let Some(ttl) = ttl {
            item["ttl"] = json!(ttl);
        }
        let reply = client.post(
            "/dbs/db/colls/x/docs",
            &item,
            &[("x-ms-documentdb-partitionkey", r#"["p"]"#)],
        );
        assert_eq!(reply.status, 201, "{}", reply.body);
    }
    client.advance(10);
    let mut seen = Vec::new();
    let mut continuation = Value::Null;
    loop {
        let reply = lifetimes(
            &client,
            json!({"database": "db", "container": "x", "order": "expiry", "maxItems": 2,
                   "continuation": continuation}),
        );
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.body["nextExpiry"], json!(START + 30));
        seen.extend(
            reply.body["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|item| item["id"].as_str().unwrap().to_string()),
        );
        continuation = reply.body["continuation"].clone();
        if continuation.is_null() {
            break;
        }
    }
    assert_eq!(seen, ["d", "b", "e", "a", "c"]);
    // A key continuation is no expiry continuation.
    let first = lifetimes(
        &client,
        json!({"database": "db", "container": "x", "maxItems": 1}),
    );
    let reply = lifetimes(
        &client,
        json!({"database": "db", "container": "x", "order": "expiry",
               "continuation": first.body["continuation"]}),
    );
    assert_eq!(reply.status, 400, "{}", reply.body);
    // Past the last expiry there is none to jump to.
    client.advance(100);
    let reply = lifetimes(&client, json!({"database": "db", "container": "x"}));
    assert_eq!(reply.body["nextExpiry"], Value::Null);
    assert_eq!(reply.body["live"], json!(1));
}

/// The explorer reads the emulator's time and clock mode from the stats.
#[test]
fn stats_name_the_clock() {
    let client = TestClient::with_container(None);
    let reply = client.get("/_emulator/stats", &[]);
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body["now"], json!(START));
    assert_eq!(reply.body["clock"], json!("manual"));
}
