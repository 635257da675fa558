//! What a restart keeps of the order scans read items in: write order
//! (`data/store/container/scan.rs`), from the journal and from a snapshot.

use serde_json::json;

use super::support::*;

/// Every id of the read feed, page by page (3 a page).
fn read_feed(api: &Api) -> Vec<String> {
    let mut ids = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut headers = vec![("x-ms-max-item-count", "3")];
        if let Some(token) = &token {
            headers.push(("x-ms-continuation", token));
        }
        let reply = api.get(&format!("{COLL}/docs"), &headers);
        assert_eq!(reply.status, 200, "{}", reply.body);
        ids.extend(reply.document_ids());
        match reply.header("x-ms-continuation") {
            Some(next) => token = Some(next.to_string()),
            None => return ids,
        }
    }
}

#[test]
pub(crate) fn a_restart_keeps_write_order_from_the_snapshot_and_the_log() {
    let scratch = Scratch::new("order");
    let start = START.to_string();
    let args = ["--clock", "manual", "--clock-start", &start];
    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    api.create_db_and_container(json!({}));
    let mut expected: Vec<String> = Vec::new();
    // Before the snapshot: ids falling, partitions in turn.
    for i in 0..9 {
        let id = format!("s{}", 9 - i);
        let item = json!({"id": id, "pk": format!("p{}", i % 3)});
        assert_eq!(api.create_item(&item).status, 201);
        expected.push(id);
    }
    api.ok(api.post("/_emulator/compact", &json!({}), &[]));
    // After it, in the log: more creates, a replace of a snapshot item (it
    // keeps its place), a delete and a create again (last).
    for i in 0..4 {
        let id = format!("l{}", 4 - i);
        let item = json!({"id": id, "pk": format!("p{}", i % 3)});
        assert_eq!(api.create_item(&item).status, 201);
        expected.push(id);
    }
    let replaced = api.replace_item(&json!({"id": "s7", "pk": "p2", "n": 1}));
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    assert_eq!(api.delete_item("s9", "p0").status, 204);
    assert_eq!(
        api.create_item(&json!({"id": "s9", "pk": "p0"})).status,
        201
    );
    expected.retain(|id| id != "s9");
    expected.push("s9".into());
    assert_eq!(read_feed(&api), expected, "before the restart");

    emu.terminate();
    let emu = Emu::start(&scratch, &args);
    assert_eq!(read_feed(&emu.api()), expected, "after a clean stop");
    drop(emu);
    // Killed, then compacted again: the order comes from a snapshot alone.
    let mut emu = Emu::start(&scratch, &args);
    emu.kill();
    let emu = Emu::start(&scratch, &args);
    let api = emu.api();
    api.ok(api.post("/_emulator/compact", &json!({}), &[]));
    drop(emu);
    let emu = Emu::start(&scratch, &args);
    assert_eq!(read_feed(&emu.api()), expected, "after a second snapshot");
}
