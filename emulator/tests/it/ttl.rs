//! Time to live over real HTTP with the manual clock: the example tables
//! (E1-E3), the matrix (M1-M3) and the lifecycle stories (L1-L11) of
//! `docs/src/reference/ttl-rules.md`. Times are seconds after the item's write at START.
//!
//! Every test runs twice: with the background purge, and without it, so
//! that the read paths are seen hiding expired items by themselves (R5)
//! and the purge is seen deleting nothing early.

use crate::common::{Purge, TestClient, COLL};
use rstest::rstest;
use serde_json::{json, Value};

/// A second far in the future: "never expires" is checked there.
const FAR: i64 = 100 * 365 * 24 * 3600;

fn item(id: &str, ttl: Option<Value>) -> Value {
    let mut item = json!({"id": id, "pk": "p", "payload": "x"});
    if let Some(ttl) = ttl {
        item["ttl"] = ttl;
    }
    item
}

/// E1.1-E3.3 and M1.1-M3.3: the item is written at 0; `expires` is when it
/// vanishes, `None` for never. "null" on a container is sent as JSON null,
/// "missing" as an absent property; an item's "null" is always absent (R3).
#[rstest]
#[case::e1_1_m1_1_missing_missing(None, None, None)]
#[case::e1_1_explicit_null_default(Some(Value::Null), None, None)]
#[case::e1_2_m2_1(None, Some(json!(-1)), None)]
#[case::e1_3_m3_1(None, Some(json!(2000)), None)]
#[case::e1_3_explicit_null_default(Some(Value::Null), Some(json!(2000)), None)]
#[case::e2_1_m1_2(Some(json!(-1)), None, None)]
#[case::e2_2_m2_2(Some(json!(-1)), Some(json!(-1)), None)]
#[case::e2_3_m3_2(Some(json!(-1)), Some(json!(2000)), Some(2000))]
#[case::e3_1_m1_3(Some(json!(1000)), None, Some(1000))]
#[case::e3_2_m2_3(Some(json!(1000)), Some(json!(-1)), None)]
#[case::e3_3_m3_3(Some(json!(1000)), Some(json!(2000)), Some(2000))]
#[case::item_shorter_than_default(Some(json!(1000)), Some(json!(10)), Some(10))]
fn documented_tables(
    #[case] default_ttl: Option<Value>,
    #[case] item_ttl: Option<Value>,
    #[case] expires: Option<i64>,
    #[values(Purge::Background, Purge::Off)] purge: Purge,
) {
    let c = TestClient::with_container_and(default_ttl, purge);
    assert_eq!(c.create_item(&item("a", item_ttl)).status, 201);
    // A sibling without its own ttl shows what the default does meanwhile.
    assert!(c.is_visible("a", "p"));
    match expires {
        Some(at) => {
            c.at(at - 1);
            assert!(
                c.is_visible("a", "p"),
                "visible the second before {at} (L8)"
            );
            assert_eq!(c.count(), 1);
            c.at(at);
            assert!(!c.is_visible("a", "p"), "gone at {at} (R4)");
            assert_eq!(c.count(), 0, "COUNT excludes expired items (R5)");
            assert!(c.ids().is_empty(), "SELECT * excludes expired items (R5)");
        }
        None => {
            c.at(FAR);
            assert!(c.is_visible("a", "p"));
            assert_eq!(c.ids(), vec!["a"]);
        }
    }
}

/// M2.3 / M3.2 / M3.3: the override applies to one item; the others follow the default.
#[rstest]
fn others_inherit_the_default(#[values(Purge::Background, Purge::Off)] purge: Purge) {
    let c = TestClient::with_container_and(Some(json!(1000)), purge);
    c.create_item(&item("pinned", Some(json!(-1))));
    c.create_item(&item("own", Some(json!(2000))));
    c.create_item(&item("inherits", None));
    c.at(1000);
    assert_eq!(c.ids(), vec!["own", "pinned"]);
    c.at(2000);
    assert_eq!(c.ids(), vec!["pinned"]);
}

/// L1 Extend: a write near expiry restarts the countdown from the new `_ts` (R6).
#[rstest]
fn l1_extend(#[values(Purge::Background, Purge::Off)] purge: Purge) {
    let c = TestClient::with_container_and(Some(json!(1000)), purge);
    c.create_item(&item("a", None));
    c.at(900);
    let replaced = c.replace_item(&item("a", None));
    assert_eq!(replaced.status, 200);
    assert_eq!(replaced.body["_ts"], json!(crate::common::START + 900));
    c.at(1899);
    assert!(c.is_visible("a", "p"));
    c.at(1900);
    assert!(!c.is_visible("a", "p"));
}

/// L1 with upsert and patch: every kind of write extends.
#[rstest]
fn l1_extend_by_upsert_and_patch(#[values(Purge::Background, Purge::Off)] purge: Purge) {
    let c = TestClient::with_container_and(Some(json!(100)), purge);
    c.create_item(&item("u", None));
    c.create_item(&item("p", None));
    c.at(90);
    assert_eq!(c.upsert_item(&item("u", None)).status, 200);
    assert_eq!(
        c.patch_item("p", "p", json!([{"op": "set", "path": "/x", "value": 1}]))
            .status,
        200
    );
    c.at(189);
    assert_eq!(c.ids(), vec!["p", "u"]);
    c.at(190);
    assert!(c.ids().is_empty());
}

/// L2 Change: a new `ttl` value applies from the write that sets it.
#[rstest]
fn l2_change(#[values(Purge::Background, Purge::Off)] purge: Purge) {
    let c = TestClient::with_container_and(Some(json!(1000)), purge);
    c.create_item(&item("a", Some(json!(500))));
    c.at(100);
    c.replace_item(&item("a", Some(json!(50))));
    c.at(149);
    assert!(c.is_visible("a", "p"));
    c.at(150);
    assert!(!c.is_visible("a", "p"));
}

/// L2 through patch: setting `/ttl` by patch works like a replace.
#[rstest]
fn l2_change_by_patch(#[values(Purge::Background, Purge::Off)] purge: Purge) {
    let c = TestClient::with_container_and(Some(json!(-1)), purge);
    c.create_item(&item("a", None));
    c.at(10);
    assert_eq!(
        c.patch_item("a", "p", json!([{"op": "set", "path": "/ttl", "value": 5}]))
            .status,
        200
    );
    c.at(14);
    assert!(c.is_visible("a", "p"));
    c.at(15);
    assert!(!c.is_visible("a", "p"));
}

/// L3 Remove: replacing without `ttl` inherits the container default again (R7).
#[rstest]
fn l3_remove(#[values(Purge::Background, Purge::Off)] purge: Purge) {
    let c = TestClient::with_container_and(Some(json!(1000)), purge);
    c.create_item(&item("a", Some(json!(10))));
    c.at(5);
    c.replace_item(&item("a", None));
    c.at(1004);
    assert!(c.is_visible("a", "p"));
    c.at(1005);
    assert!(!c.is_visible("a", "p"));
}

/// L4 Pin: `ttl: -1` in a container with a default never expires (R7, M2.3).
#[rstest]
fn l4_pin(#[values(Purge::Background, Purge::Off)] purge: Purge) {
    let c = TestClient::with_container_and(Some(json!(1000)), purge);
    c.create_item(&item("a", None));
    c.at(500);
    c.patch_item(
        "a",
        "p",
        json!([{"op": "add", "path": "/ttl", "value": -1}]),
    );
    c.at(FAR);
    assert!(c.is_visible("a", "p"));
}

/// L5 Disable: removing `defaultTtl` stops all expiry, items' own ttl included (R8).
#[rstest]
fn l5_disable(#[values(Purge::Background, Purge::Off)] purge: Purge) {
    let c = TestClient::with_container_and(Some(json!(1000)), purge);
    c.create_item(&item("own", Some(json!(10))));
    c.create_item(&item("inherits", None));
    c.at(5);
    let replaced = c.set_default_ttl(None);
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    assert!(replaced.body.get("defaultTtl").is_none());
    c.at(FAR);
    assert_eq!(c.ids(), vec!["inherits", "own"]);
}

/// L5 with an explicit null: the same as removing the property.
#[rstest]
fn l5_disable_with_null(#[values(Purge::Background, Purge::Off)] purge: Purge) {
    let c = TestClient::with_container_and(Some(json!(100)), purge);
    c.create_item(&item("a", None));
    c.at(5);
    assert_eq!(c.set_default_ttl(Some(Value::Null)).status, 200);
    c.at(FAR);
    assert!(c.is_visible("a", "p"));
}

/// L6 Re-enable: items' own ttl applies again, counted from their `_ts`.
#[rstest]
fn l6_reenable(#[values(Purge::Background, Purge::Off)] purge: Purge) {
    let c = TestClient::with_container_and(None, purge);
    c.create_item(&item("own10", Some(json!(10))));
    c.create_item(&item("own5000", Some(json!(5000))));
    c.create_item(&item("inherits", None));
    c.at(100);
    assert_eq!(
        c.ids(),
        vec!["inherits", "own10", "own5000"],
        "TTL off: nothing expires"
    );
    assert_eq!(c.set_default_ttl(Some(json!(-1))).status, 200);
    assert_eq!(
        c.ids(),
        vec!["inherits", "own5000"],
        "own10 expired at 10 once TTL is on"
    );
    c.at(5000);
    assert_eq!(c.ids(), vec!["inherits"]);
}

/// L7 Switch: existing items follow the new default, counted from their `_ts`.
#[rstest]
fn l7_switch(#[values(Purge::Background, Purge::Off)] purge: Purge) {
    let c = TestClient::with_container_and(Some(json!(1000)), purge);
    c.create_item(&item("a", None));
    c.at(50);
    c.create_item(&item("b", None));
    assert_eq!(c.set_default_ttl(Some(json!(100))).status, 200);
    c.at(99);
    assert_eq!(c.ids(), vec!["a", "b"]);
    c.at(100);
    assert_eq!(c.ids(), vec!["b"]);
    assert_eq!(c.set_default_ttl(Some(json!(-1))).status, 200);
    c.at(FAR);
    assert_eq!(c.ids(), vec!["b"]);
}

/// L10 Gone means gone: every path treats an expired item as absent, and its id is free.
#[rstest]
fn l10_gone_means_gone(#[values(Purge::Background, Purge::Off)] purge: Purge) {
    let c = TestClient::with_container_and(Some(json!(10)), purge);
    let created = c.create_item(&item("a", None));
    let etag = created.header("etag").unwrap().to_string();
    c.at(10);
    c.read_item("a", "p").assert_error(404, "NotFound");
    c.replace_item(&item("a", None))
        .assert_error(404, "NotFound");
    c.patch_item("a", "p", json!([{"op": "set", "path": "/x", "value": 1}]))
        .assert_error(404, "NotFound");
    // If-Match with the old etag: absent, not a precondition failure.
    c.put(
        &format!("{COLL}/docs/a"),
        &item("a", None),
        &[
            ("x-ms-documentdb-partitionkey", "[\"p\"]"),
            ("if-match", &etag),
        ],
    )
    .assert_error(404, "NotFound");
    c.delete_item("a", "p").assert_error(404, "NotFound");
    assert!(c.ids().is_empty());
    let feed = c.get(&format!("{COLL}/docs"), &[]);
    assert_eq!(feed.body["_count"], json!(0));
    // The id is free again: create succeeds, with a fresh _ts.
    let again = c.create_item(&item("a", None));
    assert_eq!(again.status, 201, "{}", again.body);
    assert_eq!(again.body["_ts"], json!(crate::common::START + 10));
    c.at(20);
    assert_eq!(
        c.upsert_item(&item("a", None)).status,
        201,
        "upsert of an expired id creates"
    );
}

/// L11 No resurrection: changing the container's TTL never brings back an
/// item that had already expired (R5, R8).
#[rstest]
#[case::disable(None)]
#[case::never(Some(json!(-1)))]
#[case::raise(Some(json!(100_000)))]
fn l11_no_resurrection(
    #[case] new_default: Option<Value>,
    #[values(Purge::Background, Purge::Off)] purge: Purge,
) {
    let c = TestClient::with_container_and(Some(json!(10)), purge);
    c.create_item(&item("expired", None));
    c.create_item(&item("own", Some(json!(5))));
    c.at(10);
    c.create_item(&item("fresh", None));
    assert_eq!(c.set_default_ttl(new_default).status, 200);
    c.at(11);
    assert_eq!(c.ids(), vec!["fresh"]);
    assert!(!c.is_visible("expired", "p"));
    assert!(!c.is_visible("own", "p"));
}

/// R11: TTL applies to whole items; a property named like a TTL is data.
#[rstest]
fn r11_whole_items_only(#[values(Purge::Background, Purge::Off)] purge: Purge) {
    let c = TestClient::with_container_and(Some(json!(-1)), purge);
    c.create_item(&json!({"id": "a", "pk": "p", "nested": {"ttl": 1}}));
    c.at(FAR);
    assert_eq!(c.read_item("a", "p").body["nested"]["ttl"], json!(1));
}
