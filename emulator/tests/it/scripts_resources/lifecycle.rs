//! Scripts live and die with their container: deleted with it, kept
//! across a restart and a compaction of the data directory, in named
//! snapshots, cleared by a reset.

use cosmos_emulator::{ClockMode, Config};
use serde_json::{json, Value};

use super::{create, feed_path, ids, path, rid_of, script, KINDS};
use crate::common::{TestClient, COLL, START};

#[test]
fn deleting_the_container_or_database_deletes_its_scripts() {
    let client = TestClient::with_container(None);
    for (kind, _) in KINDS {
        create(&client, kind, "s", "function () {}");
    }
    assert_eq!(client.delete(COLL, &[]).status, 204);
    client
        .get(&path("sprocs", "s"), &[])
        .assert_error(404, "NotFound");
    assert_eq!(client.create_container("c", None).status, 201);
    for (kind, feed) in KINDS {
        client
            .get(&path(kind, "s"), &[])
            .assert_error(404, "NotFound");
        let listed = client.get(&feed_path(kind), &[]);
        assert_eq!(listed.body["_count"], 0, "{}", listed.body);
        assert_eq!(listed.body[feed], json!([]));
    }
    create(&client, "sprocs", "s", "function () {}");
    assert_eq!(client.delete("/dbs/db", &[]).status, 204);
    client.post("/dbs", &json!({"id": "db"}), &[]);
    client.create_container("c", None);
    client
        .get(&path("sprocs", "s"), &[])
        .assert_error(404, "NotFound");
}

/// Every kind's feed, to compare across a restart or a restore.
fn all_scripts(client: &TestClient) -> Vec<Value> {
    KINDS
        .iter()
        .map(|(kind, _)| client.get(&feed_path(kind), &[]).body)
        .collect()
}

fn scratch_dir(name: &str) -> std::path::PathBuf {
    crate::common::scratch_dir(&format!("scripts-{name}"))
}

#[test]
fn scripts_survive_a_restart_and_a_compaction() {
    let dir = scratch_dir("restart");
    let config = || Config {
        clock: ClockMode::Manual { start: Some(START) },
        data_dir: Some(dir.clone()),
        ..Config::for_tests()
    };
    let before = {
        let client = TestClient::start_config(config());
        client.post("/dbs", &json!({"id": "db"}), &[]);
        client.create_container("c", None);
        for (kind, _) in KINDS {
            create(&client, kind, "a", "function () { 'a\u{2028}'; }");
            create(&client, kind, "b", "function () {}");
            create(&client, kind, "gone", "function () {}");
            client.delete(&path(kind, "gone"), &[]);
        }
        let trigger = json!({"id": "b", "body": "function () { 2; }", "triggerType": "post", "triggerOperation": "delete"});
        assert_eq!(
            client.put(&path("triggers", "b"), &trigger, &[]).status,
            200
        );
        all_scripts(&client)
    };
    let next_rid = {
        let client = TestClient::start_config(config());
        assert_eq!(all_scripts(&client), before);
        assert_eq!(
            client.get(&path("triggers", "b"), &[]).body["triggerType"],
            "post"
        );
        // The numbers came back: a new script gets a RID never handed out.
        let c = rid_of(&create(&client, "sprocs", "c", "function () {}"));
        let known: Vec<&Value> = before[0]["StoredProcedures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| &s["_rid"])
            .collect();
        assert!(!known.contains(&&json!(c)), "{c} reused");
        // A compaction writes them into a snapshot; later writes go to the log.
        let compacted = client.post("/_emulator/compact", &json!({}), &[]);
        assert_eq!(compacted.status, 200, "{}", compacted.body);
        assert_eq!(client.delete(&path("udfs", "a"), &[]).status, 204);
        c
    };
    let client = TestClient::start_config(config());
    let sprocs = ids(&client.get(&feed_path("sprocs"), &[]), "StoredProcedures");
    assert_eq!(sprocs, ["a", "b", "c"]);
    assert_eq!(
        client.get(&path("sprocs", "c"), &[]).body["_rid"],
        next_rid.as_str()
    );
    client
        .get(&path("udfs", "a"), &[])
        .assert_error(404, "NotFound");
    assert_eq!(all_scripts(&client)[1], before[1], "triggers as they were");
    drop(client);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn snapshots_bring_scripts_back_and_a_reset_clears_them() {
    let client = TestClient::with_container(None);
    for (kind, _) in KINDS {
        create(&client, kind, "kept", "function () { 1; }");
    }
    let before = all_scripts(&client);
    let taken = client.put("/_emulator/snapshots/s", &json!({}), &[]);
    assert_eq!(taken.status, 201, "{}", taken.body);

    for (kind, _) in KINDS {
        client.put(&path(kind, "kept"), &script(kind, "kept", "changed"), &[]);
        create(&client, kind, "later", "function () {}");
    }
    let later_rid = rid_of(&client.get(&path("sprocs", "later"), &[]));
    let restored = client.post("/_emulator/snapshots/s/restore", &json!({}), &[]);
    assert_eq!(restored.status, 200, "{}", restored.body);
    assert_eq!(all_scripts(&client), before);
    client
        .get(&path("sprocs", "later"), &[])
        .assert_error(404, "NotFound");
    // Numbers keep growing across the restore.
    let again = rid_of(&create(&client, "sprocs", "later", "function () {}"));
    assert_ne!(again, later_rid);

    assert_eq!(client.post("/_emulator/reset", &json!({}), &[]).status, 200);
    client
        .get(&feed_path("sprocs"), &[])
        .assert_error(404, "NotFound");
    client.post("/dbs", &json!({"id": "db"}), &[]);
    client.create_container("c", None);
    for (kind, _) in KINDS {
        assert_eq!(client.get(&feed_path(kind), &[]).body["_count"], 0);
    }
}
