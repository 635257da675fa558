//! Reset and named snapshots: a restore gives back exactly what was
//! captured, numbers behind RIDs and LSNs keep growing, and with a data
//! directory both survive a restart.

use serde_json::{json, Value};

use super::super::durable::tests::{fingerprint, object, open, scratch, workload, write};
use super::*;
use crate::data::clock::{Clock, ClockMode};

/// The state as a reader sees it: the fingerprint without the numbers a
/// restore moves on (counters, next numbers), which no read returns.
fn readable(store: &Store) -> Value {
    let mut print = fingerprint(store);
    for c in print["containers"].as_array_mut().unwrap() {
        let c = c.as_object_mut().unwrap();
        c.remove("counters");
        c.remove("rid_counters");
    }
    let catalog = print["catalog"].as_array_mut().unwrap();
    catalog.retain(|piece| piece[0] != "counters");
    for piece in catalog.iter_mut() {
        if piece[0].as_str().unwrap().starts_with("db/") {
            let mut db: Value = serde_json::from_str(piece[1].as_str().unwrap()).unwrap();
            db.as_object_mut().unwrap().remove("nextContainer");
            db.as_object_mut().unwrap().remove("nextUser");
            piece[1] = db;
        }
    }
    print
}

/// Changes after a snapshot: new items, a new container and database, a
/// deleted container, time moving on past expiries, a purge.
fn later_changes(store: &Store) {
    write(store, "c", json!({"id": "later", "pk": "p0"}));
    let pk = json!({"paths": ["/pk"], "kind": "Hash", "version": 2});
    store
        .create_container(
            "db",
            &object(json!({"id": "new", "partitionKey": pk})),
            None,
        )
        .unwrap();
    write(store, "new", json!({"id": "n", "pk": "n"}));
    store
        .create_database(&object(json!({"id": "other"})), None)
        .unwrap();
    store.delete_container("db", "h").unwrap();
    store.clock.advance(1_000).unwrap();
    store.clock_moved().unwrap();
    store.purge_batch(usize::MAX);
}

fn manual() -> Store {
    Store::new(Clock::new(ClockMode::Manual {
        start: Some(1_000_000),
    }))
}

#[test]
fn a_restore_gives_back_exactly_what_the_snapshot_captured() {
    let store = manual();
    workload(&store);
    let (summary, written) = store.take_snapshot("base").unwrap();
    assert_eq!(written, Written::Created);
    assert_eq!((summary.databases, summary.containers), (1, 2));
    let captured = readable(&store);
    let clock = store.clock.now();
    later_changes(&store);
    assert_ne!(readable(&store), captured);
    let session = store.session_lsn();
    let restored = store.restore_snapshot("base").unwrap();
    assert_eq!(readable(&store), captured);
    assert_eq!(
        store.clock.now(),
        clock,
        "the manual clock goes back with it"
    );
    assert_eq!(restored.now, clock);
    assert!(store.session_lsn() > session, "session tokens stay valid");
    // A second restore of the same snapshot gives the same state again.
    later_changes(&store);
    store.restore_snapshot("base").unwrap();
    assert_eq!(readable(&store), captured);
}

#[test]
fn numbers_behind_rids_and_lsns_keep_growing_across_a_restore() {
    let store = manual();
    workload(&store);
    store.take_snapshot("base").unwrap();
    let lsn_before = store
        .with_container("db", "c", |c, _| Ok(c.log().last_lsn()))
        .unwrap();
    // A container made after the snapshot, gone with the restore, must not
    // hand its RID to the next container.
    let pk = json!({"paths": ["/pk"], "kind": "Hash", "version": 2});
    let gone = store
        .create_container(
            "db",
            &object(json!({"id": "new", "partitionKey": pk})),
            None,
        )
        .unwrap();
    for i in 0..5 {
        write(&store, "c", json!({"id": format!("x{i}"), "pk": "p"}));
    }
    let lsn_written = store
        .with_container("db", "c", |c, _| Ok(c.log().last_lsn()))
        .unwrap();
    assert!(lsn_written > lsn_before);
    let rids_written = store
        .with_container("db", "c", |c, _| Ok(c.rid_counters()))
        .unwrap();
    store.restore_snapshot("base").unwrap();
    assert_eq!(
        store
            .with_container("db", "c", |c, _| Ok(c.rid_counters()))
            .unwrap(),
        rids_written,
        "the items written after the snapshot keep their RIDs given"
    );
    let next = store
        .create_container(
            "db",
            &object(json!({"id": "next", "partitionKey": pk})),
            None,
        )
        .unwrap();
    assert_ne!(next["_rid"], gone["_rid"], "no RID is handed out twice");
    write(&store, "c", json!({"id": "after", "pk": "p"}));
    let lsn_after = store
        .with_container("db", "c", |c, _| Ok(c.log().last_lsn()))
        .unwrap();
    assert!(
        lsn_after > lsn_written,
        "a continuation taken before the restore still sees the writes after it"
    );
}

#[test]
fn a_reset_drops_every_database_and_leaves_the_clock_unless_asked() {
    let store = manual();
    workload(&store);
    let db_rid = store.database("db").unwrap()["_rid"].clone();
    let now = store.clock.now();
    assert_eq!(store.reset(None).unwrap(), 1);
    assert!(store.databases().is_empty());
    assert!(store.stats().is_empty());
    assert_eq!(store.clock.now(), now);
    let again = store
        .create_database(&object(json!({"id": "db"})), None)
        .unwrap();
    assert_ne!(
        again["_rid"], db_rid,
        "a new database, not the old one back"
    );
    assert_eq!(store.reset(Some(5)).unwrap(), 1);
    assert_eq!(
        store.clock.now(),
        5,
        "asked, the clock moves, even backwards"
    );
}

#[test]
fn the_system_clock_cannot_be_set_by_a_reset() {
    let store = Store::new(Clock::new(ClockMode::System));
    let error = store.reset(Some(5)).unwrap_err();
    assert_eq!(error.status, Status::BAD_REQUEST);
    assert_eq!(store.reset(None).unwrap(), 0);
}

#[test]
fn snapshots_are_named_listed_replaced_and_deleted() {
    let store = manual();
    assert_eq!(
        store.restore_snapshot("none").unwrap_err().status,
        Status::NOT_FOUND
    );
    for bad in ["", "a/b", "a b", "ü", &"x".repeat(MAX_SNAPSHOT_NAME + 1)] {
        assert_eq!(
            store.take_snapshot(bad).unwrap_err().status,
            Status::BAD_REQUEST,
            "{bad:?}"
        );
    }
    store.take_snapshot("empty").unwrap();
    workload(&store);
    let (_, written) = store.take_snapshot("empty").unwrap();
    assert_eq!(written, Written::Replaced);
    let (full, _) = store.take_snapshot("full.1_A-z").unwrap();
    let names: Vec<String> = store.snapshots().into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["empty", "full.1_A-z"]);
    assert!(full.items > 0);
    store.delete_snapshot("empty").unwrap();
    assert_eq!(
        store.delete_snapshot("empty").unwrap_err().status,
        Status::NOT_FOUND
    );
    // A reset keeps the snapshots: they are what tests restore from.
    store.reset(None).unwrap();
    assert_eq!(store.snapshots().len(), 1);
}

#[test]
fn a_restore_and_a_reset_survive_a_restart() {
    let dir = scratch("account-restore");
    let store = open(&dir);
    workload(&store);
    store.take_snapshot("base").unwrap();
    later_changes(&store);
    store.restore_snapshot("base").unwrap();
    // Writes after the restore go on top of it.
    write(&store, "c", json!({"id": "after-restore", "pk": "p0"}));
    let state = fingerprint(&store);
    drop(store);
    let store = open(&dir);
    assert_eq!(fingerprint(&store), state, "the restore was journaled");
    // A reset, then a restart: still empty, with the clock it was given.
    store.reset(Some(1_000_500)).unwrap();
    drop(store);
    let store = open(&dir);
    assert!(store.databases().is_empty());
    assert_eq!(store.clock.now(), 1_000_500);
    // And a compaction after it keeps that.
    workload(&store);
    store.compact().unwrap();
    let state = fingerprint(&store);
    drop(store);
    assert_eq!(fingerprint(&open(&dir)), state);
    std::fs::remove_dir_all(&dir).unwrap();
}
