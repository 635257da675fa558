//! The query functions `GetCurrentDateTime`, `GetCurrentTimestamp` and
//! `GetCurrentTicks` read the emulator's clock: a manual clock moves them
//! (and a query comparing items with them) through the control API, and
//! every call within one query returns the same instant.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::common::{Purge, TestClient, COLL, START};
use cosmos_emulator::ClockMode;
use reqwest::Method;
use serde_json::{json, Value};

const NOW: &str = "SELECT VALUE {dt: GetCurrentDateTime(), ms: GetCurrentTimestamp(), \
                   ticks: GetCurrentTicks(), dtStatic: GetCurrentDateTimeStatic(), \
                   msStatic: GetCurrentTimestampStatic(), ticksStatic: GetCurrentTicksStatic()}";

/// What `NOW` gives at `seconds` since the Unix epoch.
fn now_at(seconds: i64, date_time: &str) -> Value {
    json!({
        "dt": date_time, "ms": seconds * 1000, "ticks": seconds * 10_000_000,
        "dtStatic": date_time, "msStatic": seconds * 1000, "ticksStatic": seconds * 10_000_000
    })
}

#[test]
fn current_date_and_time_follow_the_manual_clock() {
    let c = TestClient::with_container(None);
    // START is 1,700,000,000: 2023-11-14T22:13:20Z.
    assert_eq!(
        c.query(NOW, json!([])),
        vec![now_at(START, "2023-11-14T22:13:20.0000000Z")]
    );
    c.advance(90);
    assert_eq!(
        c.query(NOW, json!([])),
        vec![now_at(START + 90, "2023-11-14T22:14:50.0000000Z")]
    );
    c.at(86_400);
    assert_eq!(
        c.query(NOW, json!([])),
        vec![now_at(START + 86_400, "2023-11-15T22:13:20.0000000Z")]
    );
    // The date and time functions take the instants as any other value.
    let q = "SELECT VALUE DateTimeDiff('hh', '2023-11-14T22:13:20Z', GetCurrentDateTime())";
    assert_eq!(c.query(q, json!([])), vec![json!(24)]);
}

#[test]
fn a_ttl_style_filter_selects_other_items_as_the_clock_moves() {
    // No default TTL: the items' own `ttl` is data here, never an expiry.
    let c = TestClient::with_container(None);
    for (id, ttl) in [("short", 10), ("long", 100)] {
        let reply = c.create_item(&json!({"id": id, "pk": "p", "ttl": ttl}));
        assert_eq!(reply.status, 201, "{}", reply.body);
    }
    let q = "SELECT VALUE c.id FROM c WHERE c._ts + c.ttl > GetCurrentTimestamp() / 1000";
    let live = |c: &TestClient| {
        let mut ids = c.query(q, json!([]));
        ids.sort_by_key(|v| v.to_string());
        ids
    };
    assert_eq!(live(&c), vec![json!("long"), json!("short")]);
    c.advance(9);
    assert_eq!(live(&c), vec![json!("long"), json!("short")]);
    c.advance(1);
    assert_eq!(live(&c), vec![json!("long")]);
    c.at(100);
    assert!(live(&c).is_empty());
    // A parameter in place of the function: the same answer.
    let with_parameter = c.query(
        "SELECT VALUE c.id FROM c WHERE c._ts + c.ttl > @now",
        json!([{"name": "@now", "value": START + 100}]),
    );
    assert!(with_parameter.is_empty());

    // A patch condition reads the same clock. (It sees the item without
    // its system properties, so the deadline is data.)
    let patch = |c: &TestClient| {
        c.send(
            Method::PATCH,
            &format!("{COLL}/docs/long"),
            &[
                ("x-ms-documentdb-partitionkey", "[\"p\"]"),
                ("content-type", "application/json-patch+json"),
            ],
            Some(&json!({
                "operations": [{"op": "set", "path": "/touched", "value": true}],
                "condition": "FROM c WHERE c.deadline > GetCurrentTimestamp() / 1000"
            })),
        )
        .status
    };
    let deadline = |c: &TestClient, at: i64| {
        let reply = c.upsert_item(&json!({"id": "long", "pk": "p", "ttl": 100, "deadline": at}));
        assert_eq!(reply.status, 200, "{}", reply.body);
    };
    deadline(&c, START + 101);
    assert_eq!(patch(&c), 200, "one second to go");
    c.advance(1);
    assert_eq!(patch(&c), 412, "the deadline has come");
}

#[test]
fn every_call_in_one_query_returns_the_same_instant() {
    // The wall clock, which moves while the query runs.
    let c = TestClient::start_with(ClockMode::System, Purge::Off);
    assert_eq!(
        c.post("/dbs", &json!({"id": crate::common::DB}), &[])
            .status,
        201
    );
    assert_eq!(c.create_container("c", None).status, 201);
    for i in 0..300 {
        let reply = c.create_item(&json!({"id": format!("i{i}"), "pk": format!("p{}", i % 5)}));
        assert_eq!(reply.status, 201, "{}", reply.body);
    }
    let wall = || {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64
    };
    let before = wall();
    // DISTINCT runs the whole query in one request: one instant for 300 rows.
    let instants = c.query(
        "SELECT DISTINCT VALUE [GetCurrentTicks(), DateTimeToTicks(GetCurrentDateTime()), \
         GetCurrentTicksStatic(), DateTimeToTimestamp(GetCurrentDateTime()) = GetCurrentTimestamp()] \
         FROM c",
        json!([]),
    );
    let after = wall();
    assert_eq!(instants.len(), 1, "{instants:?}");
    let ticks = instants[0][0].as_i64().unwrap();
    assert_eq!(instants[0], json!([ticks, ticks, ticks, true]));
    assert!(
        (before * 10_000..=after * 10_000).contains(&ticks),
        "{before} <= {ticks} / 10000 <= {after}"
    );
}
