//! Unique keys at the store: the policy's validation, and the index kept
//! right by every write path, by expiry, purge, delete by partition key,
//! journal replay, compaction and named snapshots.

use serde_json::{json, Value};

use super::*;
use crate::data::clock::{Clock, ClockMode};
use crate::data::store::durable::tests::{object, open, scratch};
use crate::data::store::{
    Action, BatchMode, ItemAddress, ItemWrite, Operation, Outcome, Store, WriteMode,
};

fn parse(policy: Value) -> ApiResult<UniqueKeyPolicy> {
    UniqueKeyPolicy::parse(Some(&policy))
}

#[test]
fn the_shapes_the_sdks_send_are_accepted() {
    // The Python SDK's sample, .NET's empty policy, none at all.
    assert!(
        !parse(json!({"uniqueKeys": [{"paths": ["/field1/field2", "/field3"]}]}))
            .unwrap()
            .is_empty()
    );
    assert!(parse(json!({"uniqueKeys": []})).unwrap().is_empty());
    assert!(parse(json!({})).unwrap().is_empty());
    assert!(UniqueKeyPolicy::parse(None).unwrap().is_empty());
    assert!(parse(Value::Null).unwrap().is_empty());
    // The documented limits, reached exactly: 10 keys, 16 paths.
    let mut keys: Vec<Value> = (0..9)
        .map(|i| json!({"paths": [format!("/k{i}")]}))
        .collect();
    keys.push(json!({"paths": ["/a", "/b", "/c", "/d", "/e", "/f", "/g"]}));
    assert!(parse(json!({ "uniqueKeys": keys })).is_ok());
}

#[test]
fn malformed_policies_are_refused_naming_what_to_fix() {
    let eleven: Vec<Value> = (0..11)
        .map(|i| json!({"paths": [format!("/k{i}")]}))
        .collect();
    let seventeen: Vec<String> = (0..17).map(|i| format!("/p{i}")).collect();
    for (policy, says) in [
        (json!("x"), "must be an object"),
        (
            json!({"uniqueKeys": {"paths": ["/a"]}}),
            "'uniqueKeys' must be an array",
        ),
        (json!({"uniqueKeys": ["/a"]}), "uniqueKeys[0]"),
        (json!({"uniqueKeys": [{"paths": []}]}), "non-empty array"),
        (json!({"uniqueKeys": [{"paths": "/a"}]}), "non-empty array"),
        (json!({"uniqueKeys": [{"paths": [1]}]}), "starting with '/'"),
        (
            json!({"uniqueKeys": [{"paths": ["a"]}]}),
            "starting with '/'",
        ),
        (
            json!({"uniqueKeys": [{"paths": [""]}]}),
            "starting with '/'",
        ),
        (
            json!({"uniqueKeys": [{"paths": ["/"]}]}),
            "starting with '/'",
        ),
        (json!({"uniqueKeys": [{"paths": ["/a", "/a"]}]}), "twice"),
        (
            json!({"uniqueKeys": [{"paths": ["/a", "/b"]}, {"paths": ["/b", "/a"]}]}),
            "same paths",
        ),
        (json!({ "uniqueKeys": eleven }), "at most 10"),
        (json!({"uniqueKeys": [{ "paths": seventeen }]}), "16 paths"),
    ] {
        let error = parse(policy.clone()).expect_err(&policy.to_string());
        assert_eq!(error.status.as_u16(), 400);
        assert!(
            error.message.contains("uniqueKeyPolicy"),
            "{}",
            error.message
        );
        assert!(error.message.contains(says), "{policy}: {}", error.message);
    }
}

#[test]
fn values_compare_as_the_service_compares_them() {
    let policy = parse(json!({"uniqueKeys": [{"paths": ["/v"]}]})).unwrap();
    let entry = |v: Value| policy.entries("[\"p\"]", &object(json!({ "v": v })))[0].clone();
    assert_eq!(entry(json!(1)), entry(json!(1.0)));
    assert_ne!(entry(json!(1)), entry(json!("1")));
    assert_ne!(entry(json!("Gaby")), entry(json!("gaby")));
    assert_eq!(
        entry(json!({"a": 1, "b": 2})),
        entry(json!({"b": 2, "a": 1}))
    );
    // Missing is null.
    let missing = policy.entries("[\"p\"]", &object(json!({"w": 1})))[0].clone();
    assert_eq!(missing, entry(Value::Null));
    // Another partition, another entry.
    assert_ne!(
        policy.entries("[\"q\"]", &object(json!({"v": 1})))[0],
        entry(json!(1))
    );
}

// ---- the store ---------------------------------------------------------

fn manual() -> Store {
    Store::new(Clock::new(ClockMode::Manual {
        start: Some(1_000_000),
    }))
}

/// A container `u` partitioned on `/pk`, TTL on (-1), unique on `/email`.
fn container(store: &Store) {
    container_with(store, json!({"uniqueKeys": [{"paths": ["/email"]}]}));
}

fn container_with(store: &Store, policy: Value) {
    if store.database("db").is_err() {
        store
            .create_database(&object(json!({"id": "db"})), None)
            .unwrap();
    }
    store
        .create_container(
            "db",
            &object(json!({
                "id": "u",
                "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
                "defaultTtl": -1,
                "uniqueKeyPolicy": policy
            })),
            None,
        )
        .unwrap();
}

fn put(store: &Store, mode: WriteMode, body: Value) -> Result<u16, (u16, String)> {
    let url_id = body["id"].as_str().unwrap().to_string();
    store
        .write_item(
            "db",
            "u",
            ItemWrite {
                mode,
                url_id: (mode == WriteMode::Replace).then_some(url_id.as_str()),
                partition_key_header: None,
                if_match: None,
                body: object(body),
            },
        )
        .map(|(written, _, _)| written.status().as_u16())
        .map_err(|e| (e.status.as_u16(), e.message))
}

fn create(store: &Store, body: Value) -> Result<u16, (u16, String)> {
    put(store, WriteMode::Create, body)
}

fn held(store: &Store) -> usize {
    store
        .with_container("db", "u", |c, _| Ok(c.unique_values_held()))
        .unwrap()
}

fn conflict(result: Result<u16, (u16, String)>) {
    let (status, message) = result.expect_err("a conflict");
    assert_eq!(status, 409);
    assert!(
        message.contains("Unique index constraint violation"),
        "{message}"
    );
}

#[test]
fn create_upsert_and_replace_refuse_another_items_values() {
    let store = manual();
    container(&store);
    assert_eq!(
        create(&store, json!({"id": "a", "pk": "p", "email": "x@y"})),
        Ok(201)
    );
    conflict(create(
        &store,
        json!({"id": "b", "pk": "p", "email": "x@y"}),
    ));
    // Case matters, types matter, and another partition is another scope.
    assert_eq!(
        create(&store, json!({"id": "b", "pk": "p", "email": "X@y"})),
        Ok(201)
    );
    assert_eq!(
        create(&store, json!({"id": "c", "pk": "q", "email": "x@y"})),
        Ok(201)
    );
    // Upsert as an insert, and as a replace of b with a's email.
    conflict(put(
        &store,
        WriteMode::Upsert,
        json!({"id": "d", "pk": "p", "email": "x@y"}),
    ));
    conflict(put(
        &store,
        WriteMode::Upsert,
        json!({"id": "b", "pk": "p", "email": "x@y"}),
    ));
    conflict(put(
        &store,
        WriteMode::Replace,
        json!({"id": "b", "pk": "p", "email": "x@y"}),
    ));
    // Its own values again, or new ones, are fine; the old ones are then free.
    assert_eq!(
        put(
            &store,
            WriteMode::Replace,
            json!({"id": "a", "pk": "p", "email": "x@y"})
        ),
        Ok(200)
    );
    assert_eq!(
        put(
            &store,
            WriteMode::Upsert,
            json!({"id": "a", "pk": "p", "email": "new@y"})
        ),
        Ok(200)
    );
    assert_eq!(
        put(
            &store,
            WriteMode::Replace,
            json!({"id": "b", "pk": "p", "email": "x@y"})
        ),
        Ok(200)
    );
    // Nothing of a refused write was stored.
    let d = store.read_item("db", "u", Some("[\"p\"]"), "d");
    assert_eq!(d.unwrap_err().status.as_u16(), 404);
}

#[test]
fn composite_keys_nested_paths_and_missing_values() {
    let store = manual();
    container_with(
        &store,
        json!({"uniqueKeys": [{"paths": ["/email"]}, {"paths": ["/name/first", "/name/last"]}]}),
    );
    let person = |id: &str, first: Value, last: Value| json!({"id": id, "pk": "p", "email": id, "name": {"first": first, "last": last}});
    assert_eq!(
        create(&store, person("a", json!("Gaby"), json!("Duperre"))),
        Ok(201)
    );
    assert_eq!(
        create(&store, person("b", json!("Ivan"), json!("Duperre"))),
        Ok(201)
    );
    conflict(create(&store, person("c", json!("Gaby"), json!("Duperre"))));
    // Two items without an email: the second one's null is a duplicate.
    assert_eq!(
        create(
            &store,
            json!({"id": "n1", "pk": "p", "name": {"first": "y"}})
        ),
        Ok(201)
    );
    conflict(create(
        &store,
        json!({"id": "n2", "pk": "p", "name": {"first": "z"}}),
    ));
    conflict(create(
        &store,
        json!({"id": "n3", "pk": "p", "email": null, "name": {"first": "w"}}),
    ));
    // Missing paths of a composite key are nulls too: {first: "y"} is taken.
    conflict(create(
        &store,
        json!({"id": "n4", "pk": "p", "email": "n4", "name": {"first": "y", "last": null}}),
    ));
    assert_eq!(
        create(
            &store,
            json!({"id": "n5", "pk": "p", "email": "n5", "name": {"first": "y", "last": "l"}})
        ),
        Ok(201)
    );
}

#[test]
fn patch_refuses_another_items_values() {
    let store = manual();
    container(&store);
    create(&store, json!({"id": "a", "pk": "p", "email": "a"})).unwrap();
    create(&store, json!({"id": "b", "pk": "p", "email": "b"})).unwrap();
    let address = ItemAddress {
        database: "db",
        container: "u",
        partition_key: Some("[\"p\"]"),
        id: "b",
        if_match: None,
    };
    let set = |email: &'static str| {
        move |mut body: serde_json::Map<String, Value>| {
            body.insert("email".into(), json!(email));
            Ok(body)
        }
    };
    let refused = store.edit_item(address, set("a")).unwrap_err();
    assert_eq!(refused.status.as_u16(), 409);
    store.edit_item(address, set("c")).unwrap();
    // b let go of "b".
    assert_eq!(
        create(&store, json!({"id": "d", "pk": "p", "email": "b"})),
        Ok(201)
    );
}

#[test]
fn an_expired_item_holds_no_value_and_a_delete_frees_it() {
    let store = manual();
    container(&store);
    create(
        &store,
        json!({"id": "a", "pk": "p", "email": "v", "ttl": 10}),
    )
    .unwrap();
    create(
        &store,
        json!({"id": "k", "pk": "p", "email": "w", "ttl": 10}),
    )
    .unwrap();
    create(&store, json!({"id": "b", "pk": "p", "email": "other"})).unwrap();
    conflict(create(&store, json!({"id": "c", "pk": "p", "email": "v"})));
    store.clock.advance(9).unwrap();
    conflict(create(&store, json!({"id": "c", "pk": "p", "email": "v"})));
    store.clock.advance(1).unwrap();
    // Expired, not yet purged: its values are free to a create and a replace.
    assert_eq!(
        create(&store, json!({"id": "c", "pk": "p", "email": "v"})),
        Ok(201)
    );
    assert_eq!(
        put(
            &store,
            WriteMode::Replace,
            json!({"id": "b", "pk": "p", "email": "w"})
        ),
        Ok(200)
    );
    // The purge that comes later takes nothing from the new holders.
    store.purge_batch(usize::MAX);
    conflict(create(&store, json!({"id": "d", "pk": "p", "email": "v"})));
    conflict(create(&store, json!({"id": "d", "pk": "p", "email": "w"})));
    // A delete frees.
    let address = ItemAddress {
        database: "db",
        container: "u",
        partition_key: Some("[\"p\"]"),
        id: "c",
        if_match: None,
    };
    store.delete_item(address).unwrap();
    assert_eq!(
        create(&store, json!({"id": "d", "pk": "p", "email": "v"})),
        Ok(201)
    );
    // Delete by partition key frees them all.
    store.delete_partition("db", "u", Some("[\"p\"]")).unwrap();
    assert_eq!(held(&store), 0);
    assert_eq!(
        create(&store, json!({"id": "e", "pk": "p", "email": "v"})),
        Ok(201)
    );
}

fn op(action: Action, id: Option<&str>) -> Operation {
    Operation {
        action,
        id: id.map(str::to_string),
        partition_key: None,
        if_match: None,
        if_none_match: None,
    }
}

fn body(id: &str, email: &str) -> serde_json::Map<String, Value> {
    object(json!({"id": id, "pk": "p", "email": email}))
}

fn statuses(outcomes: &[Outcome]) -> Vec<u16> {
    outcomes.iter().map(|o| o.status.as_u16()).collect()
}

#[test]
fn a_batch_fails_whole_on_a_duplicate_and_sees_its_own_writes() {
    let store = manual();
    container(&store);
    create(&store, json!({"id": "a", "pk": "p", "email": "a"})).unwrap();
    let batch = |ops: Vec<Operation>| {
        store
            .batch("db", "u", Some("[\"p\"]"), ops, BatchMode::Atomic)
            .unwrap()
            .0
    };
    // A duplicate of a stored item, and of an earlier operation's.
    let out = batch(vec![
        op(Action::Create(body("x", "x")), None),
        op(Action::Create(body("y", "a")), None),
    ]);
    assert_eq!(statuses(&out), [424, 409]);
    let out = batch(vec![
        op(Action::Create(body("x", "x")), None),
        op(Action::Upsert(body("y", "x")), None),
    ]);
    assert_eq!(statuses(&out), [424, 409]);
    assert_eq!(held(&store), 1, "nothing of the failed batches is kept");
    // Values freed earlier in the batch (a delete, a replace) can be taken.
    let out = batch(vec![
        op(Action::Delete, Some("a")),
        op(Action::Create(body("b", "a")), None),
        op(Action::Replace(body("b", "b2")), Some("b")),
        op(Action::Create(body("c", "a")), None),
    ]);
    assert_eq!(statuses(&out), [204, 201, 200, 201]);
    conflict(create(&store, json!({"id": "z", "pk": "p", "email": "b2"})));
}

#[test]
fn bulk_refuses_each_duplicate_alone() {
    let store = manual();
    container(&store);
    let ops = vec![
        op(Action::Create(body("a", "v")), None),
        op(Action::Create(body("b", "v")), None),
        op(Action::Upsert(body("c", "w")), None),
        op(Action::Upsert(body("d", "w")), None),
    ];
    let out = store
        .batch(
            "db",
            "u",
            None,
            ops,
            BatchMode::Bulk {
                continue_on_error: true,
            },
        )
        .unwrap()
        .0;
    assert_eq!(statuses(&out), [201, 409, 201, 409]);
}

#[test]
fn a_replace_of_the_container_cannot_change_or_drop_the_policy() {
    let store = manual();
    container_with(
        &store,
        json!({"uniqueKeys": [{"paths": ["/email"]}, {"paths": ["/name/first", "/name/last"]}]}),
    );
    let replace = |policy: Option<Value>| {
        let mut body =
            json!({"id": "u", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}, "defaultTtl": 5});
        if let Some(policy) = policy {
            body["uniqueKeyPolicy"] = policy;
        }
        store.replace_container("db", "u", &object(body), None)
    };
    for changed in [
        None,
        Some(json!({"uniqueKeys": []})),
        Some(json!({"uniqueKeys": [{"paths": ["/email"]}]})),
    ] {
        let error = replace(changed).unwrap_err();
        assert_eq!(error.status.as_u16(), 403);
        assert!(error
            .message
            .contains("The unique index cannot be modified"));
    }
    let malformed = replace(Some(json!({"uniqueKeys": 1}))).unwrap_err();
    assert_eq!(malformed.status.as_u16(), 400);
    let (body, _) = store.container("db", "u").unwrap();
    assert!(
        body.get("defaultTtl") == Some(&json!(-1)),
        "nothing changed"
    );
    // The same policy, keys in another order: accepted.
    replace(Some(json!({"uniqueKeys": [
        {"paths": ["/name/last", "/name/first"]}, {"paths": ["/email"]}
    ]})))
    .unwrap();
}

#[test]
fn the_index_comes_back_from_the_journal_a_compaction_and_a_named_snapshot() {
    let dir = scratch("unique-keys");
    let store = open(&dir);
    container(&store);
    create(
        &store,
        json!({"id": "a", "pk": "p", "email": "a", "ttl": 5}),
    )
    .unwrap();
    create(&store, json!({"id": "b", "pk": "p", "email": "b"})).unwrap();
    drop(store);
    // Replayed from the journal.
    let store = open(&dir);
    assert_eq!(held(&store), 2);
    conflict(create(&store, json!({"id": "c", "pk": "p", "email": "b"})));
    // From a compacted snapshot, with an expired holder not yet purged.
    store.clock.advance(5).unwrap();
    store.clock_moved().unwrap();
    store.compact().unwrap();
    drop(store);
    let store = open(&dir);
    assert_eq!(
        create(&store, json!({"id": "c", "pk": "p", "email": "a"})),
        Ok(201)
    );
    conflict(create(&store, json!({"id": "d", "pk": "p", "email": "b"})));
    // A named snapshot, then changes, then its restore: the index is the
    // snapshot's.
    store.take_snapshot("s").unwrap();
    create(&store, json!({"id": "e", "pk": "p", "email": "e"})).unwrap();
    let address = ItemAddress {
        database: "db",
        container: "u",
        partition_key: Some("[\"p\"]"),
        id: "b",
        if_match: None,
    };
    store.delete_item(address).unwrap();
    store.restore_snapshot("s").unwrap();
    conflict(create(&store, json!({"id": "f", "pk": "p", "email": "b"})));
    assert_eq!(
        create(&store, json!({"id": "f", "pk": "p", "email": "e"})),
        Ok(201)
    );
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_container_without_unique_keys_keeps_no_index() {
    let store = manual();
    store
        .create_database(&object(json!({"id": "db"})), None)
        .unwrap();
    store
        .create_container(
            "db",
            &object(json!({"id": "u", "partitionKey": {"paths": ["/pk"]}, "uniqueKeyPolicy": {"uniqueKeys": []}})),
            None,
        )
        .unwrap();
    create(&store, json!({"id": "a", "pk": "p", "email": "v"})).unwrap();
    assert_eq!(
        create(&store, json!({"id": "b", "pk": "p", "email": "v"})),
        Ok(201)
    );
    assert_eq!(held(&store), 0);
}
