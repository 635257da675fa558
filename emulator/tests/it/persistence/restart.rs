//! What a restart keeps: settings, offers, users, items, the feed, sessions, the clock, TTL and RIDs.

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use reqwest::Method;
use serde_json::{json, Value};

use super::support::*;

// ---- c. what a restart keeps ----------------------------------------------

/// Everything readable about the account's resources, to compare across a
/// restart: the lists and each resource as read back.
pub(crate) fn resources(api: &Api) -> BTreeMap<String, Value> {
    let hierarchical = json!(["t1", "u1"]).to_string();
    let mut out = BTreeMap::new();
    for path in [
        "/dbs",
        "/dbs/db",
        "/dbs/db/colls",
        COLL,
        "/dbs/db/colls/plain",
        "/dbs/db/colls/plain/pkranges",
        "/dbs/db/colls/c/pkranges",
        "/offers",
        "/dbs/db/users",
        "/dbs/db/users/alice",
        "/dbs/db/users/alice/permissions",
        "/dbs/db/users/alice/permissions/read-c",
    ] {
        let reply = api.get(path, &[]);
        out.insert(path.to_string(), api.ok(reply));
    }
    for id in ["i1", "i2"] {
        let path = format!("{COLL}/docs/{id}");
        let reply = api.get(&path, &[("x-ms-documentdb-partitionkey", &hierarchical)]);
        out.insert(path, api.ok(reply));
    }
    let reply = api.get(
        "/dbs/db/colls/plain/docs/p1",
        &[("x-ms-documentdb-partitionkey", r#"["p"]"#)],
    );
    out.insert("plain/p1".to_string(), api.ok(reply));
    let reply = api.get(&format!("{COLL}/docs"), &[]);
    out.insert("read feed of c".to_string(), api.ok(reply));
    out
}

#[test]
pub(crate) fn a_restart_keeps_settings_offers_users_items_feed_and_sessions() {
    let scratch = Scratch::new("keeps");
    let start = START.to_string();
    let args = ["--clock", "manual", "--clock-start", &start];
    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    api.ok(api.post(
        "/dbs",
        &json!({"id": "db"}),
        &[("x-ms-offer-throughput", "800")],
    ));
    let settings = json!({
        "id": "c",
        "partitionKey": {"paths": ["/tenant", "/user"], "kind": "MultiHash", "version": 2},
        "defaultTtl": 3600,
        "indexingPolicy": {
            "indexingMode": "consistent",
            "automatic": true,
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": "/secret/?"}, {"path": "/\"_etag\"/?"}]
        },
        "uniqueKeyPolicy": {"uniqueKeys": [{"paths": ["/email"]}]}
    });
    let created = api.post(
        "/dbs/db/colls",
        &settings,
        &[("x-ms-offer-throughput", "1200")],
    );
    assert_eq!(created.status, 201, "{}", created.body);
    let plain = json!({"id": "plain", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
    api.ok(api.post("/dbs/db/colls", &plain, &[]));
    let split = api.post(
        "/_emulator/split",
        &json!({"database": "db", "container": "plain", "range": "0"}),
        &[],
    );
    api.ok(split);
    // The feed from before the first item.
    let (none, feed_start) = api.all_versions("*");
    assert!(none.is_empty());
    let hierarchical = json!(["t1", "u1"]).to_string();
    let pk = ("x-ms-documentdb-partitionkey", hierarchical.as_str());
    let docs = format!("{COLL}/docs");
    for (id, email) in [("i1", "a@x"), ("i2", "b@x"), ("i3", "c@x")] {
        let item = json!({"id": id, "tenant": "t1", "user": "u1", "email": email, "ttl": 7200});
        assert_eq!(api.post(&docs, &item, &[pk]).status, 201);
    }
    let replaced = json!({"id": "i2", "tenant": "t1", "user": "u1", "email": "b2@x", "n": 2});
    api.ok(api.send(Method::PUT, &format!("{docs}/i2"), &[pk], Some(&replaced)));
    assert_eq!(api.delete(&format!("{docs}/i3"), &[pk]).status, 204);
    let p1 = json!({"id": "p1", "pk": "p"});
    api.ok(api.post(
        "/dbs/db/colls/plain/docs",
        &p1,
        &[("x-ms-documentdb-partitionkey", r#"["p"]"#)],
    ));
    api.ok(api.post("/dbs/db/users", &json!({"id": "alice"}), &[]));
    api.ok(api.post("/dbs/db/users", &json!({"id": "bob"}), &[]));
    let permission = api.post(
        "/dbs/db/users/alice/permissions",
        &json!({"id": "read-c", "permissionMode": "Read", "resource": "dbs/db/colls/c"}),
        &[],
    );
    let token = api.ok(permission)["_token"].as_str().unwrap().to_string();
    // The last write of c, and its session token.
    let last = api.send(
        Method::PUT,
        &format!("{docs}/i1"),
        &[pk],
        Some(&json!(
        {"id": "i1", "tenant": "t1", "user": "u1", "email": "a@x", "n": 1})),
    );
    assert_eq!(last.status, 200, "{}", last.body);
    let session = last.header("x-ms-session-token").unwrap().to_string();

    let before = resources(&api);
    let (changes_before, _) = api.all_versions(&feed_start);
    assert_eq!(
        summary(&changes_before)
            .iter()
            .map(|(op, id, _)| format!("{op} {id}"))
            .collect::<Vec<_>>(),
        [
            "create i1",
            "create i2",
            "create i3",
            "replace i2",
            "delete i3",
            "replace i1"
        ]
    );
    emu.kill();

    let emu = Emu::start(&scratch, &args);
    let api = emu.api();
    let after = resources(&api);
    for (what, value) in &before {
        assert_eq!(
            Some(value),
            after.get(what),
            "{what} changed across the restart"
        );
    }
    assert_eq!(before.len(), after.len());
    // The same feed from the same continuation, byte for byte.
    let (changes_after, _) = api.all_versions(&feed_start);
    assert_eq!(changes_before, changes_after);

    // A session token from before is one the emulator has reached.
    let read = api.get(
        &format!("{docs}/i1"),
        &[pk, ("x-ms-session-token", &session)],
    );
    assert_eq!(read.status, 200, "{}", read.body);
    // Tokens name the container's LSN, which the replay restores exactly.
    assert_eq!(read.header("x-ms-session-token"), Some(session.as_str()));
    // A resource token from before still reads.
    let with_token = api.send_with_authorization(
        &token,
        Method::GET,
        &format!("{COLL}/docs/i1"),
        &[("x-ms-documentdb-partitionkey", &hierarchical)],
        None,
    );
    assert_eq!(with_token.status, 200, "{}", with_token.body);
    // The LSN and the session go on from where they were.
    let next = json!({"id": "i4", "tenant": "t1", "user": "u1", "email": "d@x"});
    let written = api.post(&docs, &next, &[pk]);
    assert_eq!(written.status, 201, "{}", written.body);
    assert_eq!(
        session_lsn(&written),
        session_lsn(&last) + 1,
        "session token {:?} after {session:?}",
        written.header("x-ms-session-token")
    );
    let (changes, _) = api.all_versions(&feed_start);
    assert_eq!(&changes[..changes_before.len()], &changes_before[..]);
    assert_eq!(
        summary(&changes[changes_before.len()..]),
        [("create".to_string(), "i4".to_string(), false)]
    );
    let lsn = |d: &Value| d["metadata"]["lsn"].as_u64().unwrap();
    assert!(lsn(changes.last().unwrap()) > lsn(&changes_before[changes_before.len() - 1]));
    // The unique key index came back with the items: i1 holds "a@x" and i4
    // "d@x"; i2's replace freed "b@x" and i3's delete "c@x".
    for (id, email, status) in [
        ("i5", "a@x", 409),
        ("i5", "d@x", 409),
        ("i5", "b@x", 201),
        ("i6", "c@x", 201),
    ] {
        let item = json!({"id": id, "tenant": "t1", "user": "u1", "email": email});
        let reply = api.post(&docs, &item, &[pk]);
        assert_eq!(reply.status, status, "{email}: {}", reply.body);
    }
}

#[test]
pub(crate) fn the_manual_clock_and_ttl_survive_restarts() {
    let scratch = Scratch::new("clock");
    let start = START.to_string();
    let args = ["--clock", "manual", "--clock-start", &start];
    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    api.create_db_and_container(json!({"defaultTtl": -1}));
    assert_eq!(api.advance(1000), START + 1000);
    let (_, feed_start) = api.all_versions("*");
    assert_eq!(
        api.create_item(&json!({"id": "short", "pk": "p", "ttl": 10}))
            .status,
        201
    );
    assert_eq!(
        api.create_item(&json!({"id": "long", "pk": "p"})).status,
        201
    );
    assert_eq!(api.advance(2), START + 1002);
    // Killed right after the clock moved: the move was durable before its answer.
    emu.kill();

    // The same --clock-start, earlier than the persisted position.
    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    assert_eq!(api.now(), START + 1002, "{}", emu.stderr());
    assert_eq!(api.read_item("short", "p").status, 200, "8 s left");
    assert_eq!(api.advance(9), START + 1011);
    assert_eq!(api.read_item("short", "p").status, 404);
    api.purge();
    assert_eq!(api.read_item("long", "p").status, 200);
    let expected: Vec<(String, String, bool)> = [
        ("create", "short", false),
        ("create", "long", false),
        ("delete", "short", true),
    ]
    .iter()
    .map(|(op, id, ttl)| (op.to_string(), id.to_string(), *ttl))
    .collect();
    let (changes, _) = api.all_versions(&feed_start);
    assert_eq!(summary(&changes), expected);
    assert_eq!(changes[2]["metadata"]["crts"], START + 1011);
    emu.terminate();

    // Stopped cleanly this time: the clock, the purge and its one TTL delete stay.
    let emu = Emu::start(&scratch, &args);
    let api = emu.api();
    assert_eq!(api.now(), START + 1011);
    assert_eq!(api.advance(1), START + 1012);
    assert_eq!(api.purge(), 0);
    assert_eq!(summary(&api.all_versions(&feed_start).0), expected);
    assert_eq!(api.stored_items(), 1);
}

#[test]
pub(crate) fn with_the_system_clock_items_that_expired_while_stopped_are_purged_at_start() {
    let scratch = Scratch::new("wall");
    let mut emu = Emu::start(&scratch, &[]);
    let api = emu.api();
    api.create_db_and_container(json!({"defaultTtl": -1}));
    let (_, feed_start) = api.all_versions("*");
    assert_eq!(
        api.create_item(&json!({"id": "kept", "pk": "p"})).status,
        201
    );
    // Early in a second, so that the item cannot expire (and be purged)
    // before the kill right after it.
    while SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .subsec_millis()
        > 200
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        api.create_item(&json!({"id": "brief", "pk": "p", "ttl": 1}))
            .status,
        201
    );
    emu.kill();
    std::thread::sleep(Duration::from_millis(2500));

    let restarted_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let emu = Emu::start(&scratch, &[]);
    let api = emu.api();
    // The very first request already misses it.
    assert_eq!(api.read_item("brief", "p").status, 404, "{}", emu.stderr());
    assert_eq!(api.read_item("kept", "p").status, 200);
    let deadline = Instant::now() + Duration::from_secs(30);
    while api.stored_items() != 1 {
        assert!(Instant::now() < deadline, "brief is never purged");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (changes, _) = api.all_versions(&feed_start);
    assert_eq!(
        summary(&changes),
        [
            ("create".to_string(), "kept".to_string(), false),
            ("create".to_string(), "brief".to_string(), false),
            ("delete".to_string(), "brief".to_string(), true),
        ]
    );
    let crts = changes[2]["metadata"]["crts"].as_i64().unwrap();
    assert!(
        crts >= restarted_at,
        "purged at {crts}, restarted at {restarted_at}"
    );
}

// ---- d. RID counters --------------------------------------------------------

#[test]
pub(crate) fn rids_are_never_reused_after_a_restart() {
    rids_are_never_reused(false);
}

/// The same with a compaction after the deletes: the snapshot, which
/// holds only live items, keeps each range's highest RID counter given.
#[test]
pub(crate) fn rids_are_never_reused_after_a_compaction_and_a_restart() {
    rids_are_never_reused(true);
}

fn rids_are_never_reused(compact: bool) {
    let scratch = Scratch::new(if compact { "rids-compacted" } else { "rids" });
    let start = START.to_string();
    let args = ["--clock", "manual", "--clock-start", &start];
    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    api.create_db_and_container(json!({}));
    let mut rids = HashSet::new();
    for i in 0..5 {
        let reply = api.create_item(&json!({"id": format!("a{i}"), "pk": "p"}));
        assert_eq!(reply.status, 201);
        assert!(rids.insert(reply.body["_rid"].as_str().unwrap().to_string()));
    }
    // The newest item and the newest container go: their RIDs were the highest.
    assert_eq!(
        api.delete(
            &format!("{COLL}/docs/a4"),
            &[("x-ms-documentdb-partitionkey", r#"["p"]"#)]
        )
        .status,
        204
    );
    let gone = api.post(
        "/dbs/db/colls",
        &json!({"id": "gone", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}}),
        &[],
    );
    let gone_rid = api.ok(gone)["_rid"].as_str().unwrap().to_string();
    assert_eq!(api.delete("/dbs/db/colls/gone", &[]).status, 204);
    if compact {
        api.ok(api.post("/_emulator/compact", &json!({}), &[]));
    }
    emu.kill();

    let emu = Emu::start(&scratch, &args);
    let api = emu.api();
    for id in ["a4", "b0"] {
        let reply = api.create_item(&json!({"id": id, "pk": "p"}));
        assert_eq!(reply.status, 201, "{}", reply.body);
        let rid = reply.body["_rid"].as_str().unwrap().to_string();
        assert!(rids.insert(rid.clone()), "{id} got {rid} again");
    }
    let again = api.post(
        "/dbs/db/colls",
        &json!({"id": "new", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}}),
        &[],
    );
    assert_ne!(api.ok(again)["_rid"].as_str().unwrap(), gone_rid);
}

/// A restore (and a reset) is kept like any write: SIGKILLed right after
/// the answer, the emulator comes back with the restored account, the
/// clock the snapshot had, and TTL counting from the restored `_ts`.
#[test]
pub(crate) fn a_restore_and_a_reset_survive_a_sigkill() {
    let scratch = Scratch::new("restore");
    let start = START.to_string();
    let args = ["--clock", "manual", "--clock-start", &start];
    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    api.create_db_and_container(json!({"defaultTtl": 100}));
    let fixture = api.ok(api.create_item(&json!({"id": "fixture", "pk": "p"})));
    let taken = api.put("/_emulator/snapshots/base", &json!({}), &[]);
    assert_eq!(taken.status, 201, "{}", taken.body);
    assert_eq!(api.advance(50), START + 50);
    api.ok(api.create_item(&json!({"id": "test-only", "pk": "p"})));
    api.ok(api.post("/dbs", &json!({"id": "scratch"}), &[]));
    let restored = api.post("/_emulator/snapshots/base/restore", &json!({}), &[]);
    assert_eq!(restored.status, 200, "{}", restored.body);
    emu.kill();

    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    assert_eq!(api.now(), START, "the restored clock, {}", emu.stderr());
    let read = api.ok(api.read_item("fixture", "p"));
    assert_eq!(read["_etag"], fixture["_etag"]);
    assert_eq!(read["_ts"], fixture["_ts"]);
    assert_eq!(api.read_item("test-only", "p").status, 404);
    assert_eq!(api.get("/dbs/scratch", &[]).status, 404);
    assert_eq!(api.advance(99), START + 99);
    assert_eq!(api.read_item("fixture", "p").status, 200);
    assert_eq!(api.advance(1), START + 100);
    assert_eq!(
        api.read_item("fixture", "p").status,
        404,
        "TTL from the restored _ts"
    );

    let reset = api.post("/_emulator/reset", &json!({}), &[]);
    assert_eq!(reset.status, 200, "{}", reset.body);
    emu.kill();
    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    assert_eq!(api.get("/dbs", &[]).body["_count"], 0, "{}", emu.stderr());
    assert_eq!(api.now(), START + 100);
    emu.terminate();
}

/// LSNs are per range (issue 47, point 9): each range's LSN comes back
/// exactly after a restart from the journal, after a compaction whose
/// range's last LSN was a delete (no live item holds it), and for the
/// children of a split, which continue from their parent's.
#[test]
pub(crate) fn each_ranges_lsn_survives_restarts_compactions_and_splits() {
    let scratch = Scratch::new("range-lsns");
    let mut emu = Emu::start(&scratch, &[]);
    let api = emu.api();
    api.ok(api.post("/dbs", &json!({"id": "db"}), &[]));
    let body = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}});
    let reply = api.post(
        "/dbs/db/colls",
        &body,
        &[("x-ms-offer-throughput", "18000")],
    );
    assert_eq!(reply.status, 201, "{}", reply.body);
    // Each range's last LSN, and a partition key of each.
    let mut last: BTreeMap<String, u64> = BTreeMap::new();
    let mut key_of: BTreeMap<String, String> = BTreeMap::new();
    let range = |reply: &Reply| {
        reply
            .header("x-ms-documentdb-partitionkeyrangeid")
            .expect("a range")
            .to_string()
    };
    let write = |api: &Api, id: &str, pk: &str, last: &mut BTreeMap<String, u64>| {
        let written = api.create_item(&json!({"id": id, "pk": pk}));
        assert_eq!(written.status, 201, "{}", written.body);
        let r = range(&written);
        let lsn = session_lsn(&written);
        if let Some(before) = last.get(&r) {
            assert_eq!(lsn, before + 1, "range {r} after {before}");
        }
        last.insert(r.clone(), lsn);
        r
    };
    for i in 0..30 {
        let pk = format!("p{i}");
        let r = write(&api, &format!("a{i}"), &pk, &mut last);
        key_of.entry(r).or_insert(pk);
    }
    assert_eq!(last.len(), 3, "{last:?}");
    assert_eq!(
        last.values().sum::<u64>(),
        30,
        "one LSN per write: {last:?}"
    );
    emu.kill();

    // From the journal.
    let mut emu = Emu::start(&scratch, &[]);
    let api = emu.api();
    for (r, pk) in &key_of {
        assert_eq!(&write(&api, &format!("b{r}"), pk, &mut last), r);
    }
    // Range 0's last LSN is a delete's, then a compaction.
    let deleted = api.delete(
        &format!("{COLL}/docs/b0"),
        &[(
            "x-ms-documentdb-partitionkey",
            &format!("[\"{}\"]", key_of["0"]),
        )],
    );
    assert_eq!(deleted.status, 204);
    assert_eq!(session_lsn(&deleted), last["0"] + 1);
    last.insert("0".into(), last["0"] + 1);
    api.ok(api.post("/_emulator/compact", &json!({}), &[]));
    emu.kill();

    // From the snapshot.
    let mut emu = Emu::start(&scratch, &[]);
    let api = emu.api();
    for (r, pk) in &key_of {
        assert_eq!(&write(&api, &format!("c{r}"), pk, &mut last), r);
    }
    // A split of range 0: both children continue from its LSN.
    let split = api.post(
        "/_emulator/split",
        &json!({"database": "db", "container": "c", "range": "0"}),
        &[],
    );
    api.ok(split);
    let parent = last["0"];
    let mut children = BTreeMap::new();
    for i in 0..40 {
        let pk = format!("q{i}");
        let written = api.create_item(&json!({"id": format!("d{i}"), "pk": &pk}));
        let r = range(&written);
        if r == "3" || r == "4" {
            let lsn = session_lsn(&written);
            let before = *children.get(&r).unwrap_or(&parent);
            assert_eq!(lsn, before + 1, "child {r}");
            children.insert(r.clone(), lsn);
            key_of.entry(r).or_insert(pk);
        }
    }
    assert_eq!(children.len(), 2, "both children written: {children:?}");
    emu.kill();

    let emu = Emu::start(&scratch, &[]);
    let api = emu.api();
    for (r, lsn) in &children {
        let written = api.create_item(&json!({"id": format!("e{r}"), "pk": &key_of[r]}));
        assert_eq!(written.status, 201, "{}", written.body);
        assert_eq!(&range(&written), r);
        assert_eq!(
            session_lsn(&written),
            lsn + 1,
            "child {r} after the restart"
        );
    }
}
