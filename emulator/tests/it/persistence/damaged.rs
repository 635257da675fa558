//! Torn and corrupt logs, a damaged snapshot, the directory lock, and compaction.

use std::collections::BTreeMap;

use reqwest::Method;
use serde_json::{json, Value};

use super::support::*;

// ---- e. a torn or corrupt log ---------------------------------------------

pub(crate) fn numbered(n: usize) -> Vec<String> {
    let mut ids: Vec<String> = (0..n).map(|i| format!("item-{i:03}")).collect();
    ids.sort();
    ids
}

#[test]
pub(crate) fn a_torn_tail_is_cut_and_said() {
    const N: usize = 20;
    let scratch = Scratch::new("torn");
    let start = START.to_string();
    let args = ["--clock", "manual", "--clock-start", &start];
    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    api.create_db_and_container(json!({}));
    for id in numbered(N) {
        assert_eq!(api.create_item(&json!({"id": id, "pk": "p"})).status, 201);
    }
    emu.kill();
    let log = scratch.newest_log();
    let len = std::fs::metadata(&log).unwrap().len();
    assert!(len > 3, "{} is {len} bytes", log.display());
    let file = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
    file.set_len(len - 3).unwrap();
    drop(file);

    let mut emu = Emu::start(&scratch, &args);
    let stderr = emu.stderr();
    assert!(stderr.lines().any(|l| l.contains("dropped")), "{stderr}");
    assert_eq!(emu.api().ids(), numbered(N - 1), "{stderr}");
    assert_eq!(scratch.files("dropped").len(), 1, "a dropped-* file");
    // The cut log takes new writes, which survive the next kill.
    assert_eq!(
        emu.api()
            .create_item(&json!({"id": "after", "pk": "p"}))
            .status,
        201
    );
    emu.kill();
    let emu = Emu::start(&scratch, &args);
    let mut expected = numbered(N - 1);
    expected.push("after".to_string());
    expected.sort();
    assert_eq!(emu.api().ids(), expected, "{}", emu.stderr());
}

#[test]
pub(crate) fn a_corrupt_frame_cuts_the_log_there_and_is_said() {
    const N: usize = 40;
    let scratch = Scratch::new("corrupt");
    let start = START.to_string();
    let args = ["--clock", "manual", "--clock-start", &start];
    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    api.create_db_and_container(json!({}));
    for id in numbered(N) {
        let item = json!({"id": id, "pk": "p", "marker": format!("MARK-{id}")});
        assert_eq!(api.create_item(&item).status, 201);
    }
    emu.kill();
    let log = scratch.newest_log();
    let mut bytes = std::fs::read(&log).unwrap();
    // Where the 21st item's frame is, when its text shows in the log;
    // otherwise the middle of the log.
    let marker = b"MARK-item-020";
    let found = bytes.windows(marker.len()).position(|w| w == marker);
    eprintln!("the corrupt byte: {found:?} (None: the middle of the log)");
    let at = found.map_or(bytes.len() / 2, |p| p + 2);
    bytes[at] ^= 0x5a;
    std::fs::write(&log, &bytes).unwrap();

    let emu = Emu::start(&scratch, &args);
    let stderr = emu.stderr();
    assert!(stderr.lines().any(|l| l.contains("dropped")), "{stderr}");
    assert!(!scratch.files("dropped").is_empty(), "a dropped-* file");
    let ids = emu.api().ids();
    // A prefix of the writes, and not all of them.
    assert!(ids.len() < N, "nothing was dropped: {stderr}");
    assert_eq!(ids, numbered(ids.len()), "{stderr}");
    if found.is_some() {
        assert_eq!(
            ids,
            numbered(20),
            "everything before the corrupt frame: {stderr}"
        );
    } else {
        assert!(!ids.is_empty(), "items before the corrupt frame: {stderr}");
    }
}

#[test]
pub(crate) fn a_damaged_snapshot_stops_the_start_and_says_so() {
    let scratch = Scratch::new("snapshot");
    let mut emu = Emu::start(&scratch, &[]);
    let api = emu.api();
    api.create_db_and_container(json!({}));
    assert_eq!(api.create_item(&json!({"id": "a", "pk": "p"})).status, 201);
    api.ok(api.post("/_emulator/compact", &json!({}), &[]));
    emu.kill();
    let snapshot = scratch.files("snapshot-").pop().expect("a snapshot");
    let mut bytes = std::fs::read(&snapshot).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x5a;
    std::fs::write(&snapshot, &bytes).unwrap();
    // Starting empty would lose everything silently: it must not start.
    let failure = match Emu::try_start(&scratch, &[]) {
        Ok(_) => panic!("the emulator started on a damaged snapshot"),
        Err(failure) => failure,
    };
    let status = failure.status.expect("it exits");
    assert!(!status.success(), "{status:?}");
    let name = snapshot.file_name().unwrap().to_str().unwrap();
    assert!(failure.stderr.contains(name), "{}", failure.stderr);
}

// ---- f. one emulator per directory ----------------------------------------

#[test]
pub(crate) fn a_second_emulator_on_the_same_directory_refuses_to_start() {
    let scratch = Scratch::new("lock");
    let mut first = Emu::start(&scratch, &[]);
    first.api().create_db_and_container(json!({}));
    let failure = match Emu::try_start(&scratch, &[]) {
        Ok(_) => panic!("a second emulator started on the same directory"),
        Err(failure) => failure,
    };
    let status = failure.status.expect("the second emulator exits");
    assert!(!status.success(), "{status:?}");
    assert!(
        failure.stderr.contains("is in use by another emulator"),
        "{}",
        failure.stderr
    );
    // The first one serves on, undisturbed.
    let api = first.api();
    assert_eq!(api.create_item(&json!({"id": "a", "pk": "p"})).status, 201);
    assert_eq!(api.read_item("a", "p").status, 200);
    // Its lock goes with it, even killed.
    first.kill();
    let again = Emu::start(&scratch, &[]);
    assert_eq!(again.api().read_item("a", "p").status, 200);
}

// ---- g. compaction ----------------------------------------------------------

#[test]
pub(crate) fn compaction_then_more_writes_then_sigkill_keeps_everything() {
    let scratch = Scratch::new("compact");
    let start = START.to_string();
    let args = ["--clock", "manual", "--clock-start", &start];
    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    api.create_db_and_container(json!({}));
    let mut expected: BTreeMap<String, Value> = BTreeMap::new();
    for i in 0..30 {
        let item = json!({"id": format!("old-{i:02}"), "pk": format!("p{}", i % 3), "n": i});
        assert_eq!(api.create_item(&item).status, 201);
        expected.insert(item["id"].as_str().unwrap().to_string(), item);
    }
    let reply = api.post("/_emulator/compact", &json!({}), &[]);
    let compacted = api.ok(reply);
    for field in ["generation", "snapshotBytes", "logBytesBefore"] {
        assert!(compacted[field].is_u64(), "{field}: {compacted}");
    }
    assert!(
        compacted["snapshotBytes"].as_u64().unwrap() > 0,
        "{compacted}"
    );
    assert!(compacted["millis"].is_number(), "{compacted}");
    assert!(!scratch.files("snapshot-").is_empty());
    // After the snapshot: creates, a replace, a delete, and the clock.
    for i in 0..10 {
        let item = json!({"id": format!("new-{i:02}"), "pk": "q", "n": i});
        assert_eq!(api.create_item(&item).status, 201);
        expected.insert(item["id"].as_str().unwrap().to_string(), item);
    }
    let replaced = json!({"id": "old-04", "pk": "p1", "n": 400});
    let reply = api.send(
        Method::PUT,
        &format!("{COLL}/docs/old-04"),
        &[("x-ms-documentdb-partitionkey", r#"["p1"]"#)],
        Some(&replaced),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    expected.insert("old-04".to_string(), replaced);
    assert_eq!(
        api.delete(
            &format!("{COLL}/docs/old-05"),
            &[("x-ms-documentdb-partitionkey", r#"["p2"]"#)]
        )
        .status,
        204
    );
    expected.remove("old-05");
    assert_eq!(api.advance(50), START + 50);
    // A second compaction moves to a newer generation.
    let second = api.post("/_emulator/compact", &json!({}), &[]);
    let second = api.ok(second);
    assert!(
        second["generation"].as_u64() > compacted["generation"].as_u64(),
        "{second} after {compacted}"
    );
    let late = json!({"id": "late", "pk": "q"});
    assert_eq!(api.create_item(&late).status, 201);
    expected.insert("late".to_string(), late);
    emu.kill();

    let emu = Emu::start(&scratch, &args);
    let api = emu.api();
    assert_eq!(api.now(), START + 50);
    let stored: BTreeMap<String, Value> = api
        .query("SELECT * FROM c", json!([]))
        .iter()
        .map(|d| (d["id"].as_str().unwrap().to_string(), user_part(d)))
        .collect();
    assert_eq!(stored, expected, "{}", emu.stderr());
}

#[test]
pub(crate) fn compaction_without_a_data_dir_is_a_bad_request() {
    let scratch = Scratch::new("compact-memory");
    let emu = Emu::spawn(&scratch, &[]).unwrap();
    emu.api()
        .post("/_emulator/compact", &json!({}), &[])
        .assert_error(400, "BadRequest");
    assert!(!scratch.data().exists(), "nothing touches the disk");
}
