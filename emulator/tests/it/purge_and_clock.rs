//! The background purge frees storage (not only hides items), deletes nothing
//! early, and follows either clock; the test clock's control API.

use std::time::{Duration, Instant};

use crate::common::{Purge, TestClient, DB};
use cosmos_emulator::ClockMode;
use serde_json::json;

/// Waits (bounded) until the emulator holds `expected` items physically.
fn wait_for_stored(c: &TestClient, expected: usize, within: Duration) -> usize {
    let deadline = Instant::now() + within;
    loop {
        let stored = c.emulator.store().stored_item_count(DB, "c").unwrap();
        if stored == expected || Instant::now() > deadline {
            return stored;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn purge_removes_due_items_from_storage() {
    let c = TestClient::with_container(Some(json!(10)));
    for i in 0..100 {
        c.create_item(&json!({"id": format!("expiring{i}"), "pk": format!("p{}", i % 7)}));
    }
    for i in 0..50 {
        c.create_item(&json!({"id": format!("pinned{i}"), "pk": "p", "ttl": -1}));
    }
    c.create_item(&json!({"id": "own20", "pk": "p", "ttl": 20}));
    c.advance(9);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(
        c.emulator.store().stored_item_count(DB, "c").unwrap(),
        151,
        "nothing is purged early"
    );
    c.advance(1);
    assert_eq!(
        wait_for_stored(&c, 51, Duration::from_secs(10)),
        51,
        "the 100 due items are deleted"
    );
    assert_eq!(c.count(), 51);
    c.advance(10);
    assert_eq!(wait_for_stored(&c, 50, Duration::from_secs(10)), 50);
    let usage = c.get(crate::common::COLL, &[]);
    assert!(usage
        .header("x-ms-resource-usage")
        .unwrap()
        .contains("documentsCount=50;"));
}

/// Without the purge, expired items stay in storage but count for nothing (R5).
#[test]
fn expired_items_do_not_count_before_the_purge() {
    let c = TestClient::with_container_and(Some(json!(10)), Purge::Off);
    for i in 0..5 {
        c.create_item(&json!({"id": format!("a{i}"), "pk": "p"}));
    }
    c.advance(10);
    assert_eq!(c.emulator.store().stored_item_count(DB, "c").unwrap(), 5);
    assert_eq!(c.count(), 0);
    let usage = c.get(crate::common::COLL, &[]);
    assert!(usage
        .header("x-ms-resource-usage")
        .unwrap()
        .contains("documentsCount=0;"));
}

/// A write with an earlier expiry wakes a purge that sleeps towards a later one.
#[test]
fn earlier_expiry_reschedules_the_purge() {
    let c = TestClient::with_container(Some(json!(1000)));
    c.create_item(&json!({"id": "late", "pk": "p"}));
    c.create_item(&json!({"id": "soon", "pk": "p", "ttl": 5}));
    c.advance(5);
    assert_eq!(wait_for_stored(&c, 1, Duration::from_secs(10)), 1);
}

/// With the system clock the purge wakes by itself when an item falls due.
#[test]
fn purge_follows_the_wall_clock() {
    let c = TestClient::start_with(ClockMode::System, Purge::Background);
    c.post("/dbs", &json!({"id": DB}), &[]);
    c.create_container("c", Some(json!(1)));
    c.create_item(&json!({"id": "a", "pk": "p"}));
    assert_eq!(wait_for_stored(&c, 0, Duration::from_secs(10)), 0);
    assert!(!c.is_visible("a", "p"));
}

#[test]
fn clock_control_api() {
    let c = TestClient::start();
    assert_eq!(c.now(), crate::common::START);
    assert_eq!(c.advance(10), crate::common::START + 10);
    let set = c.post(
        "/_emulator/clock",
        &json!({"set": crate::common::START + 100}),
        &[],
    );
    assert_eq!(set.body, json!({"now": crate::common::START + 100}));
    c.post(
        "/_emulator/clock",
        &json!({"set": crate::common::START}),
        &[],
    )
    .assert_error(400, "BadRequest");
    c.post("/_emulator/clock", &json!({"advance": -1}), &[])
        .assert_error(400, "BadRequest");
    c.post("/_emulator/clock", &json!({"advance": 1, "set": 5}), &[])
        .assert_error(400, "BadRequest");
    c.post("/_emulator/clock", &json!({"advance": "1"}), &[])
        .assert_error(400, "BadRequest");
    c.post("/_emulator/clock", &json!({}), &[])
        .assert_error(400, "BadRequest");
    assert_eq!(
        c.now(),
        crate::common::START + 100,
        "refused changes move nothing"
    );
    // `_ts` comes from the same clock.
    c.post("/dbs", &json!({"id": DB}), &[]);
    c.create_container("c", None);
    assert_eq!(
        c.create_item(&json!({"id": "a", "pk": "p"})).body["_ts"],
        json!(crate::common::START + 100)
    );
}

/// `{"advance": 1.5}` moves the clock by a second and a half: `now` and
/// `_ts` stay whole seconds (the second under way), and an item with a
/// one-second TTL expires once its second is over, not before.
#[test]
fn the_clock_advances_by_fractions_of_a_second() {
    let c = TestClient::with_container(Some(json!(-1)));
    let start = crate::common::START;
    let moved = c.post("/_emulator/clock", &json!({"advance": 1.5}), &[]);
    assert_eq!(moved.body, json!({"now": start + 1}));
    let written = c.create_item(&json!({"id": "a", "pk": "p", "ttl": 1}));
    assert_eq!(written.body["_ts"], json!(start + 1));
    c.post("/_emulator/clock", &json!({"advance": 0.4}), &[]);
    assert_eq!(c.now(), start + 1);
    assert!(
        c.is_visible("a", "p"),
        "1.9 s: the item's second is not over"
    );
    let moved = c.post("/_emulator/clock", &json!({"advance": 0.1}), &[]);
    assert_eq!(moved.body, json!({"now": start + 2}));
    assert!(!c.is_visible("a", "p"), "expired at _ts + ttl");
    // Finer than a millisecond, or not a number: refused, nothing moved.
    for refused in [
        json!({"advance": 0.0001}),
        json!({"advance": -0.5}),
        json!({"set": 1.5}),
    ] {
        c.post("/_emulator/clock", &refused, &[])
            .assert_error(400, "BadRequest");
    }
    assert_eq!(c.now(), start + 2);
}

#[test]
fn clock_api_is_absent_with_the_system_clock() {
    let c = TestClient::start_with(ClockMode::System, Purge::Background);
    c.get("/_emulator/clock", &[]).assert_error(404, "NotFound");
    c.post("/_emulator/clock", &json!({"advance": 1}), &[])
        .assert_error(404, "NotFound");
}

/// `GET /_emulator/stats` shows the items stored: the purge at work.
#[rstest::rstest]
#[case::purge_off(Purge::Off, 3)]
#[case::purge_on(Purge::Background, 0)]
fn stats_show_the_items_stored(#[case] purge: Purge, #[case] stored_after: u64) {
    let c = TestClient::with_container_and(Some(json!(10)), purge);
    for i in 0..3 {
        c.create_item(&json!({"id": format!("a{i}"), "pk": "p"}));
    }
    c.create_item(&json!({"id": "kept", "pk": "p", "ttl": -1}));
    let stats = |c: &TestClient| c.get("/_emulator/stats", &[]).body["containers"][0].clone();
    assert_eq!(
        stats(&c),
        json!({"database": DB, "container": "c", "storedItems": 4})
    );
    c.advance(10);
    if purge == Purge::Background {
        wait_for_stored(&c, 1, Duration::from_secs(10));
    }
    assert_eq!(
        stats(&c),
        json!({"database": DB, "container": "c", "storedItems": stored_after + 1})
    );
    assert_eq!(c.count(), 1, "expired items are gone from view either way");
}
