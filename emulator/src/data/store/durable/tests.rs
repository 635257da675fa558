//! The store comes back from its data directory exactly as it was: after
//! a replay of the journal, after a snapshot and the log after it, and
//! after a torn last frame (less the last operation only).

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::data::clock::{Clock, ClockMode};
use crate::data::persist::SyncMode;
use crate::data::store::{
    Action, BatchMode, CreateMode, ItemAddress, ItemWrite, Operation, Store, Throughput, WriteMode,
};
use crate::protocol::error::Status;

pub(in crate::data::store) fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "cosmos-emulator-durable-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

pub(in crate::data::store) fn open(dir: &Path) -> Store {
    Store::new(Clock::new(ClockMode::Manual {
        start: Some(1_000_000),
    }))
    .open_data_dir(dir, SyncMode::Never)
    .expect("the directory opens")
}

pub(in crate::data::store) fn object(value: Value) -> Map<String, Value> {
    value.as_object().expect("an object").clone()
}

/// Everything the store holds, as comparable JSON.
pub(in crate::data::store) fn fingerprint(store: &Store) -> Value {
    let catalog = store.read();
    let containers: Vec<Value> = catalog
        .databases
        .values()
        .flat_map(|db| db.containers())
        .map(|c| {
            let items: Vec<Value> = c
                .stored_in_lsn_order()
                .map(|(key, item)| {
                    json!([
                        format!("{key:?}"),
                        String::from_utf8_lossy(&item.body),
                        item.ts,
                        item.ttl.map(crate::data::ttl::Ttl::to_i64),
                        item.etag.to_string(),
                        item.number,
                        item.rid,
                        item.lsn
                    ])
                })
                .collect();
            let log: Vec<Value> = c
                .log()
                .retained()
                .map(|e| {
                    json!([
                        e.lsn,
                        e.crts,
                        format!("{:?}", e.key),
                        format!("{:?}", e.kind),
                        String::from_utf8_lossy(&e.body),
                        e.previous_lsn.map(|l| l.get())
                    ])
                })
                .collect();
            json!({"items": items, "log": log, "counters": c.counters(), "rid_counters": c.rid_counters()})
        })
        .collect();
    json!({
        "catalog": catalog
            .meta_pieces()
            .into_iter()
            .map(|(key, value)| (key, String::from_utf8(value).unwrap()))
            .collect::<Vec<_>>(),
        "containers": containers,
        "clock": store.clock.now(),
    })
}

pub(in crate::data::store) fn write(store: &Store, container: &str, body: Value) {
    store
        .write_item(
            "db",
            container,
            ItemWrite {
                mode: WriteMode::Upsert,
                url_id: None,
                partition_key_header: None,
                if_match: None,
                body: object(body),
            },
        )
        .expect("the write succeeds");
}

/// A bit of everything that changes state.
pub(in crate::data::store) fn workload(store: &Store) {
    store
        .create_database(&object(json!({"id": "db"})), None)
        .unwrap();
    let pk = json!({"paths": ["/pk"], "kind": "Hash", "version": 2});
    store
        .create_container(
            "db",
            &object(json!({"id": "c", "partitionKey": pk, "defaultTtl": 100})),
            None,
        )
        .unwrap();
    store
        .create_container(
            "db",
            &object(json!({"id": "h", "partitionKey": {"paths": ["/a", "/b"], "kind": "MultiHash", "version": 2}})),
            Some(Throughput::Manual(40_000)),
        )
        .unwrap();
    store
        .create_container(
            "db",
            &object(json!({"id": "gone", "partitionKey": pk})),
            None,
        )
        .unwrap();
    for i in 0..40 {
        let ttl = match i % 4 {
            0 => json!(5),
            1 => json!(-1),
            _ => Value::Null,
        };
        let mut body = json!({"id": format!("i{i}"), "pk": format!("p{}", i % 3), "n": i});
        if !ttl.is_null() {
            body["ttl"] = ttl;
        }
        write(store, "c", body);
        write(
            store,
            "h",
            json!({"id": format!("h{i}"), "a": "x", "b": i % 5}),
        );
    }
    write(
        store,
        "c",
        json!({"id": "i1", "pk": "p1", "n": "rewritten"}),
    );
    write(store, "gone", json!({"id": "g", "pk": "g"}));
    store
        .edit_item(
            ItemAddress {
                database: "db",
                container: "c",
                partition_key: Some("[\"p2\"]"),
                id: "i2",
                if_match: None,
            },
            |mut body| {
                body.insert("patched".into(), json!(true));
                Ok(body)
            },
        )
        .unwrap();
    store
        .delete_item(ItemAddress {
            database: "db",
            container: "c",
            partition_key: Some("[\"p0\"]"),
            id: "i3",
            if_match: None,
        })
        .unwrap();
    let operations = (0..5)
        .map(|i| Operation {
            action: Action::Create(object(json!({"id": format!("b{i}"), "pk": "batch"}))),
            id: None,
            partition_key: None,
            if_match: None,
            if_none_match: None,
        })
        .collect();
    store
        .batch(
            "db",
            "c",
            Some("[\"batch\"]"),
            operations,
            BatchMode::Atomic,
        )
        .unwrap();
    store
        .delete_partition("db", "h", Some("[\"x\", 4]"))
        .unwrap();
    store.split_range("db", "h", "1").unwrap();
    store.delete_container("db", "gone").unwrap();
    store
        .create_user("db", &object(json!({"id": "u"})), CreateMode::Create)
        .unwrap();
    store
        .create_permission(
            "db",
            "u",
            &object(json!({"id": "p", "permissionMode": "Read", "resource": "dbs/db/colls/c"})),
            CreateMode::Create,
        )
        .unwrap();
    // Some items expire and are purged; the container's default changes.
    store.clock.advance(6).unwrap();
    store.clock_moved().unwrap();
    store.purge_batch(usize::MAX);
    store
        .replace_container(
            "db",
            "c",
            &object(json!({"id": "c", "partitionKey": pk, "defaultTtl": 50})),
            None,
        )
        .unwrap();
}

#[test]
fn a_reopened_store_holds_exactly_what_was_written() {
    let dir = scratch("replay");
    let store = open(&dir);
    workload(&store);
    let before = fingerprint(&store);
    let session = store.session_lsn();
    drop(store);
    let store = open(&dir);
    assert_eq!(fingerprint(&store), before);
    assert!(store.session_lsn() >= session, "session tokens stay valid");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_snapshot_and_the_log_after_it_give_the_same_state() {
    let dir = scratch("snapshot");
    let store = open(&dir);
    workload(&store);
    let report = store.compact().unwrap();
    assert_eq!(report.generation, 1);
    write(&store, "c", json!({"id": "after", "pk": "p0"}));
    store.clock.advance(100).unwrap();
    store.clock_moved().unwrap();
    store.purge_batch(usize::MAX);
    let before = fingerprint(&store);
    drop(store);
    let store = open(&dir);
    assert_eq!(fingerprint(&store), before);
    // Compacting what came back changes nothing either.
    store.compact().unwrap();
    drop(store);
    assert_eq!(fingerprint(&open(&dir)), before);
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".bin"))
        .collect();
    assert_eq!(files.len(), 2, "older generations are removed: {files:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_torn_last_frame_loses_the_last_operation_only() {
    let dir = scratch("torn");
    let store = open(&dir);
    workload(&store);
    let before = fingerprint(&store);
    write(&store, "c", json!({"id": "last", "pk": "p0"}));
    drop(store);
    let log = dir.join("log-00000000.bin");
    let length = std::fs::metadata(&log).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&log)
        .unwrap()
        .set_len(length - 3)
        .unwrap();
    let store = open(&dir);
    assert_eq!(fingerprint(&store), before);
    // Writes go on after the cut, and come back too.
    write(&store, "c", json!({"id": "later", "pk": "p0"}));
    let with_later = fingerprint(&store);
    drop(store);
    assert_eq!(fingerprint(&open(&dir)), with_later);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_manual_clock_resumes_where_it_was() {
    let dir = scratch("clock");
    let store = open(&dir);
    store.clock.advance(5_000).unwrap();
    store.clock_moved().unwrap();
    drop(store);
    // Started at an earlier instant, it still resumes at the later one.
    assert_eq!(open(&dir).clock.now(), 1_005_000);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn without_a_data_directory_there_is_nothing_to_compact() {
    let store = Store::new(Clock::new(ClockMode::System));
    let refused = store.compact().unwrap_err();
    assert_eq!(refused.status, Status::BAD_REQUEST);
}

#[test]
fn a_write_the_disk_refuses_is_reported_and_no_later_write_is_taken() {
    let dir = scratch("failing");
    let store = open(&dir);
    workload(&store);
    let kept = fingerprint(&store);
    let journal = store.journal().unwrap().clone();
    journal.fail_writes().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let ((), committed) = runtime.block_on(journal.track(async {
        write(&store, "c", json!({"id": "refused", "pk": "p0"}));
    }));
    assert_eq!(committed, crate::data::persist::Committed::Failed);
    let later = store
        .write_item(
            "db",
            "c",
            ItemWrite {
                mode: WriteMode::Create,
                url_id: None,
                partition_key_header: None,
                if_match: None,
                body: object(json!({"id": "later", "pk": "p0"})),
            },
        )
        .unwrap_err();
    assert_eq!(later.status, Status::SERVICE_UNAVAILABLE);
    assert!(
        later.message.contains("data directory"),
        "{}",
        later.message
    );
    drop((store, journal));
    assert_eq!(
        fingerprint(&open(&dir)),
        kept,
        "the refused write is not kept"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_damaged_snapshot_stops_the_start_with_what_to_do() {
    let dir = scratch("damaged");
    let store = open(&dir);
    workload(&store);
    store.compact().unwrap();
    drop(store);
    let snapshot = dir.join("snapshot-00000001.bin");
    let mut data = std::fs::read(&snapshot).unwrap();
    let middle = data.len() / 2;
    data[middle] ^= 1;
    std::fs::write(&snapshot, data).unwrap();
    let refused = Store::new(Clock::new(ClockMode::System))
        .open_data_dir(&dir, SyncMode::Never)
        .err()
        .expect("refused");
    let message = refused.to_string();
    assert!(message.contains("is damaged at byte"), "{message}");
    assert!(message.contains("Move the directory aside"), "{message}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_corrupt_frame_mid_log_keeps_what_came_before_and_sets_the_rest_aside() {
    let dir = scratch("corrupt");
    let store = open(&dir);
    workload(&store);
    let before = fingerprint(&store);
    let log = dir.join("log-00000000.bin");
    let length = std::fs::metadata(&log).unwrap().len();
    for i in 0..10 {
        write(&store, "c", json!({"id": format!("later{i}"), "pk": "p0"}));
    }
    drop(store);
    // Damage the first frame written after `before`.
    let mut data = std::fs::read(&log).unwrap();
    data[length as usize + 20] ^= 0xff;
    std::fs::write(&log, &data).unwrap();
    let store = open(&dir);
    assert_eq!(fingerprint(&store), before);
    let aside: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("dropped-")
        })
        .collect();
    assert_eq!(aside.len(), 1);
    assert_eq!(
        std::fs::read(&aside[0]).unwrap(),
        &data[length as usize..],
        "the dropped bytes are kept aside as they were"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_log_is_compacted_once_it_outgrows_the_last_snapshot() {
    let dir = scratch("automatic");
    let store = Store::new(Clock::new(ClockMode::Manual {
        start: Some(1_000_000),
    }))
    .open_data_dir(&dir, SyncMode::Never)
    .unwrap()
    .with_compaction_at_least(16 * 1024);
    workload(&store);
    assert!(store.compaction_due(), "the workload wrote over 16 KiB");
    store.compact_if_due();
    assert!(!store.compaction_due());
    let (generation, _) = store.journal().unwrap().log_size();
    assert_eq!(generation, 1);
    let snapshot = std::fs::metadata(dir.join("snapshot-00000001.bin"))
        .unwrap()
        .len();
    // The next compaction waits until the log is larger than the snapshot.
    let mut i = 0;
    while !store.compaction_due() {
        write(
            &store,
            "c",
            json!({"id": format!("n{i}"), "pk": "p0", "pad": "x".repeat(500)}),
        );
        i += 1;
    }
    assert!(store.journal().unwrap().log_size().1 > snapshot);
    let before = fingerprint(&store);
    store.compact_if_due();
    assert_eq!(store.journal().unwrap().log_size(), (2, 0));
    drop(store);
    assert_eq!(fingerprint(&open(&dir)), before);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_metadata_change_journals_what_changed_only() {
    let dir = scratch("pieces");
    let store = open(&dir);
    store
        .create_database(&object(json!({"id": "db"})), None)
        .unwrap();
    let pk = json!({"paths": ["/pk"], "kind": "Hash", "version": 2});
    let log_size = |store: &Store| store.journal().unwrap().log_size().1;
    let mut sizes = Vec::new();
    for i in 0..40 {
        let before = log_size(&store);
        store
            .create_container(
                "db",
                &object(json!({"id": format!("c{i}"), "partitionKey": pk})),
                None,
            )
            .unwrap();
        sizes.push(log_size(&store) - before);
    }
    // The 40th container costs what the first did: its own piece, its
    // offer's and the counters', not the other 39 containers'.
    assert!(sizes[39] <= sizes[0] + 64, "{sizes:?}");
    let before = log_size(&store);
    store
        .replace_container(
            "db",
            "c7",
            &object(json!({"id": "c7", "partitionKey": pk, "defaultTtl": 9})),
            None,
        )
        .unwrap();
    assert!(
        log_size(&store) - before < sizes[0],
        "a replace writes one container's piece"
    );
    store.delete_container("db", "c3").unwrap();
    let state = fingerprint(&store);
    drop(store);
    assert_eq!(fingerprint(&open(&dir)), state);
    std::fs::remove_dir_all(&dir).unwrap();
}
