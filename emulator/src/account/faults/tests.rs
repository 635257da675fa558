//! The rules' parsing, matching, hit counting, probability and windows.

use serde_json::json;

use super::rule::DEFAULT_RETRY_AFTER_MS;
use super::*;

fn create(operation: &'static str) -> Target<'static> {
    Target {
        region: "South Central US",
        operation,
        database: Some("db"),
        container: Some("c"),
        partition_key: Some("[\"a\"]"),
    }
}

fn no_range() -> Option<String> {
    None
}

#[test]
fn the_issues_body_works_as_written() {
    let faults = Faults::default();
    assert!(faults.is_empty());
    let rule = faults
        .add(
            json!({"match": {"operation": "create"}, "respond": {"status": 429, "subStatus": 3200, "retryAfterMs": 50}, "hits": 3}),
            1_000,
        )
        .unwrap();
    assert_eq!(rule["id"], "f1");
    assert_eq!(rule["hitCount"], 0);
    assert_eq!(rule["match"], json!({"operation": ["create"]}));
    assert_eq!(
        rule["respond"],
        json!({"status": 429, "subStatus": 3200, "retryAfterMs": 50})
    );
    assert_eq!(rule["when"], "before");
    assert_eq!(rule["hits"], 3);
    assert!(!faults.is_empty());
    for _ in 0..3 {
        let hit = faults.hit(&create("create"), 1_000, no_range).unwrap();
        assert_eq!(hit.respond.status, Some(429));
    }
    assert!(faults.hit(&create("create"), 1_000, no_range).is_none());
    assert_eq!(faults.list()[0]["hitCount"], 3);
}

#[test]
fn only_matching_requests_are_hit() {
    let faults = Faults::default();
    faults
        .add(
            json!({"match": {"operation": ["upsert", "replace"], "database": "db", "container": "c",
                   "region": "South Central US", "partitionKey": "a"},
                   "respond": {"status": 503}}),
            0,
        )
        .unwrap();
    assert!(faults.hit(&create("create"), 0, no_range).is_none());
    assert!(faults.hit(&create("upsert"), 0, no_range).is_some());
    assert!(faults.hit(&create("replace"), 0, no_range).is_some());
    let other = |f: fn(&mut Target<'static>)| {
        let mut target = create("upsert");
        f(&mut target);
        faults.hit(&target, 0, no_range).is_some()
    };
    assert!(!other(|t| t.region = "West US"));
    assert!(!other(|t| t.database = Some("other")));
    assert!(!other(|t| t.container = None));
    assert!(!other(|t| t.partition_key = Some("[\"b\"]")));
    assert!(!other(|t| t.partition_key = None));
    assert_eq!(faults.list()[0]["hitCount"], 2, "unlimited, counted");
}

#[test]
fn the_account_read_only_when_named() {
    let faults = Faults::default();
    faults.add(json!({"respond": {"status": 503}}), 0).unwrap();
    assert!(faults.hit(&create("account"), 0, no_range).is_none());
    assert!(faults.hit(&create("metadata"), 0, no_range).is_some());
    faults
        .add(
            json!({"match": {"operation": "account"}, "respond": {"status": 503}}),
            0,
        )
        .unwrap();
    assert!(faults.hit(&create("account"), 0, no_range).is_some());
}

#[test]
fn a_range_is_asked_for_only_when_a_rule_names_one() {
    let faults = Faults::default();
    faults
        .add(json!({"respond": {"status": 500}, "hits": 1}), 0)
        .unwrap();
    let asked = std::cell::Cell::new(0);
    let range = || {
        asked.set(asked.get() + 1);
        Some("1".to_string())
    };
    assert!(faults.hit(&create("read"), 0, range).is_some());
    assert_eq!(asked.get(), 0);
    faults
        .add(
            json!({"match": {"partitionKeyRangeId": "1"}, "respond": {"status": 410, "subStatus": 1002}}),
            0,
        )
        .unwrap();
    let hit = faults.hit(&create("read"), 0, range).unwrap();
    assert_eq!(hit.respond.sub_status, Some(1002));
    assert_eq!(asked.get(), 1);
    assert!(faults
        .hit(&create("read"), 0, || Some("0".into()))
        .is_none());
}

#[test]
fn the_first_matching_rule_wins() {
    let faults = Faults::default();
    faults
        .add(
            json!({"match": {"operation": "read"}, "respond": {"status": 404}, "hits": 1}),
            0,
        )
        .unwrap();
    faults.add(json!({"respond": {"status": 503}}), 0).unwrap();
    let first = faults.hit(&create("read"), 0, no_range).unwrap();
    assert_eq!(first.respond.status, Some(404));
    let second = faults.hit(&create("read"), 0, no_range).unwrap();
    assert_eq!(second.respond.status, Some(503), "the first is used up");
}

#[test]
fn probability_zero_never_and_one_always() {
    let faults = Faults::default();
    faults
        .add(json!({"respond": {"status": 500}, "probability": 0}), 0)
        .unwrap();
    faults
        .add(json!({"respond": {"status": 503}, "probability": 1}), 0)
        .unwrap();
    for _ in 0..100 {
        let hit = faults.hit(&create("read"), 0, no_range).unwrap();
        assert_eq!(hit.respond.status, Some(503));
    }
    let listed = faults.list();
    assert_eq!(listed[0]["hitCount"], 0);
    assert_eq!(listed[1]["hitCount"], 100);
}

#[test]
fn a_half_probability_draws_from_a_fixed_seed() {
    let run = || {
        let faults = Faults::default();
        faults
            .add(json!({"respond": {"status": 500}, "probability": 0.5}), 0)
            .unwrap();
        (0..1000)
            .map(|_| faults.hit(&create("read"), 0, no_range).is_some())
            .collect::<Vec<_>>()
    };
    let first = run();
    assert_eq!(first, run(), "the same draws each run");
    let hits = first.iter().filter(|h| **h).count();
    assert!((400..600).contains(&hits), "{hits} of 1000");
}

#[test]
fn a_window_on_the_emulator_clock() {
    let faults = Faults::default();
    faults
        .add(
            json!({"respond": {"status": 503}, "startAfterMs": 1000, "forMs": 500}),
            10_000,
        )
        .unwrap();
    let at = |now| faults.hit(&create("read"), now, no_range).is_some();
    assert!(!at(10_000));
    assert!(!at(10_999));
    assert!(at(11_000));
    assert!(at(11_499));
    assert!(!at(11_500));
    let rule = &faults.list()[0];
    assert_eq!(rule["hitCount"], 2);
}

#[test]
fn ids_generated_given_and_taken() {
    let faults = Faults::default();
    let respond = json!({"status": 500});
    let given = faults
        .add(json!({"id": "f2", "respond": respond}), 0)
        .unwrap();
    assert_eq!(given["id"], "f2");
    assert_eq!(
        faults.add(json!({"respond": respond}), 0).unwrap()["id"],
        "f1"
    );
    assert_eq!(
        faults.add(json!({"respond": respond}), 0).unwrap()["id"],
        "f3"
    );
    let taken = faults
        .add(json!({"id": "f1", "respond": respond}), 0)
        .unwrap_err();
    assert_eq!(taken.status, 409);
    assert_eq!(faults.list().len(), 3, "nothing added");
    assert_eq!(faults.get("f3").unwrap()["id"], "f3");
    assert_eq!(faults.get("nope").unwrap_err().status, 404);
    faults.remove("f2").unwrap();
    assert_eq!(faults.remove("f2").unwrap_err().status, 404);
    assert_eq!(faults.clear(), 2);
    assert!(faults.is_empty());
    assert_eq!(
        faults.add(json!({"respond": respond}), 0).unwrap()["id"],
        "f1"
    );
}

#[test]
fn defaults_as_stored() {
    let faults = Faults::default();
    let rule = faults.add(json!({"respond": {"status": 429}}), 5).unwrap();
    assert_eq!(
        rule["respond"]["retryAfterMs"], DEFAULT_RETRY_AFTER_MS,
        "a 429 always says how long to wait"
    );
    assert_eq!(rule["hits"], Value::Null);
    assert_eq!(rule["probability"], 1.0);
    assert_eq!(rule["startAfterMs"], 0);
    assert_eq!(rule["forMs"], Value::Null);
    assert_eq!(rule["createdAtMs"], 5);
    let slow = faults
        .add(json!({"respond": {"delayMs": 20}, "when": "after"}), 0)
        .unwrap();
    assert_eq!(slow["respond"], json!({"delayMs": 20}));
    assert_eq!(slow["when"], "after");
    let reset = faults
        .add(json!({"respond": {"connection": "reset"}}), 0)
        .unwrap();
    assert_eq!(reset["respond"], json!({"connection": "reset"}));
}

#[test]
fn bad_bodies_are_refused_naming_the_field() {
    let refusals = [
        (json!([1]), "JSON object"),
        (json!({"respond": {"status": 429}, "extra": 1}), "extra"),
        (
            json!({"match": {"op": "read"}, "respond": {"status": 429}}),
            "op",
        ),
        (json!({"respond": {"status": 429, "sub": 1}}), "sub"),
        (json!({}), "respond"),
        (json!({"respond": {}}), "respond"),
        (json!({"respond": {"status": 200}}), "400 to 599"),
        (json!({"respond": {"status": 600}}), "400 to 599"),
        (json!({"respond": {"subStatus": 3200}}), "subStatus"),
        (
            json!({"respond": {"retryAfterMs": 5, "delayMs": 5}}),
            "retryAfterMs",
        ),
        (
            json!({"respond": {"status": 503, "connection": "reset"}}),
            "connection",
        ),
        (json!({"respond": {"connection": "drop"}}), "connection"),
        (
            json!({"respond": {"status": 500}, "probability": 1.5}),
            "probability",
        ),
        (
            json!({"respond": {"status": 500}, "probability": -0.1}),
            "probability",
        ),
        (json!({"respond": {"status": 500}, "hits": 0}), "hits"),
        (json!({"respond": {"status": 500}, "hits": -1}), "hits"),
        (
            json!({"respond": {"status": 500}, "when": "during"}),
            "when",
        ),
        (
            json!({"match": {"operation": "readItem"}, "respond": {"status": 500}}),
            "match.operation",
        ),
        (
            json!({"match": {"operation": []}, "respond": {"status": 500}}),
            "match.operation",
        ),
        (
            json!({"match": {"operation": [1]}, "respond": {"status": 500}}),
            "match.operation",
        ),
        (
            json!({"match": {"partitionKey": {"a": 1}}, "respond": {"status": 500}}),
            "partitionKey",
        ),
        (
            json!({"match": {"partitionKeyRangeId": "x"}, "respond": {"status": 500}}),
            "partitionKeyRangeId",
        ),
        (json!({"id": "a b", "respond": {"status": 500}}), "id"),
        (json!({"id": "", "respond": {"status": 500}}), "id"),
        (
            json!({"respond": {"status": 500}, "forMs": 100_000_000}),
            "forMs",
        ),
    ];
    let faults = Faults::default();
    for (body, field) in refusals {
        let error = faults.add(body.clone(), 0).unwrap_err();
        assert_eq!(error.status, 400, "{body}");
        assert!(error.message.contains(field), "{body}: {}", error.message);
    }
    assert!(faults.is_empty(), "nothing was added");
}

#[test]
fn a_hit_given_back_is_not_counted_and_may_be_used_again() {
    let faults = Faults::default();
    faults
        .add(
            json!({"id": "late", "match": {"operation": "create"}, "respond": {"status": 408},
                   "when": "after", "hits": 1}),
            0,
        )
        .unwrap();
    let hit = faults.hit(&create("create"), 0, no_range).unwrap();
    assert_eq!(hit.when, When::After);
    assert!(
        faults.hit(&create("create"), 0, no_range).is_none(),
        "its one hit is taken while the first request runs"
    );
    faults.give_back(&hit);
    assert_eq!(faults.list()[0]["hitCount"], 0);
    let again = faults.hit(&create("create"), 0, no_range).unwrap();
    assert_eq!(faults.list()[0]["hitCount"], 1);
    // A rule deleted and made again under its id is another rule: an old
    // hit given back leaves the new one's count alone.
    faults.remove("late").unwrap();
    faults
        .add(
            json!({"id": "late", "respond": {"status": 408}, "when": "after"}),
            0,
        )
        .unwrap();
    faults.hit(&create("create"), 0, no_range).unwrap();
    faults.give_back(&again);
    assert_eq!(faults.list()[0]["hitCount"], 1);
}
