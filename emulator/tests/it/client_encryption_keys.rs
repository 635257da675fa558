//! Client encryption keys (`/dbs/{db}/clientencryptionkeys`) and a
//! container's `clientEncryptionPolicy`: what the service stores, serves and
//! refuses (see `data/store/client_encryption_keys.rs` and
//! `data/store/encryption_policy.rs` for the sources of each rule).

use crate::common::{TestClient, START};
use cosmos_emulator::{ClockMode, Config};
use serde_json::{json, Value};

const KEYS: &str = "/dbs/db/clientencryptionkeys";
const ALGORITHM: &str = "AEAD_AES_256_CBC_HMAC_SHA256";

fn key(id: &str, wrapped: &str, vault_key: &str) -> Value {
    json!({
        "id": id,
        "encryptionAlgorithm": ALGORITHM,
        "wrappedDataEncryptionKey": wrapped,
        "keyWrapMetadata": {
            "type": "AZURE_KEY_VAULT",
            "name": vault_key,
            "value": format!("https://vault.example/keys/{vault_key}/1"),
            "algorithm": "RSA-OAEP"
        }
    })
}

fn included(path: &str, key: &str, kind: &str) -> Value {
    json!({"path": path, "clientEncryptionKeyId": key, "encryptionType": kind, "encryptionAlgorithm": ALGORITHM})
}

fn container(id: &str, pk: &str, paths: Vec<Value>, version: u64) -> Value {
    json!({
        "id": id,
        "partitionKey": {"paths": [pk], "kind": "Hash"},
        "clientEncryptionPolicy": {"includedPaths": paths, "policyFormatVersion": version}
    })
}

/// An emulator with the database `db` and the keys `key1` and `key2`.
fn with_keys() -> TestClient {
    let client = TestClient::start();
    assert_eq!(client.post("/dbs", &json!({"id": "db"}), &[]).status, 201);
    for id in ["key1", "key2"] {
        let created = client.post(KEYS, &key(id, "AAECAwQFBgc=", "kek1"), &[]);
        assert_eq!(created.status, 201, "{}", created.body);
    }
    client
}

#[test]
fn keys_are_created_read_listed_and_queried_in_the_service_shape() {
    let client = TestClient::start();
    let db = client.post("/dbs", &json!({"id": "db"}), &[]);
    let db_rid = db.body["_rid"].as_str().unwrap().to_string();

    let created = client.post(KEYS, &key("key1", "AAECAwQFBgc=", "kek1"), &[]);
    assert_eq!(created.status, 201, "{}", created.body);
    let body = &created.body;
    assert_eq!(body["id"], "key1");
    assert_eq!(body["encryptionAlgorithm"], ALGORITHM);
    assert_eq!(body["wrappedDataEncryptionKey"], "AAECAwQFBgc=");
    assert_eq!(body["keyWrapMetadata"]["name"], "kek1");
    assert_eq!(body["keyWrapMetadata"]["algorithm"], "RSA-OAEP");
    assert_eq!(body["_ts"], START);
    let rid = body["_rid"].as_str().unwrap();
    assert_eq!(
        rid.len(),
        24,
        "16 bytes, as the service lays a key's RID out"
    );
    assert_eq!(
        body["_self"],
        format!("dbs/{db_rid}/clientencryptionkeys/{rid}/")
    );
    assert!(body["_etag"].is_string());

    let read = client.get(&format!("{KEYS}/key1"), &[]);
    assert_eq!(read.status, 200);
    assert_eq!(&read.body, body);
    // By RID, as other resources are addressed.
    let by_rid = client.get(&format!("/dbs/{db_rid}/clientencryptionkeys/{rid}"), &[]);
    assert_eq!(by_rid.status, 200, "{}", by_rid.body);
    assert_eq!(by_rid.body["id"], "key1");

    client.post(KEYS, &key("key2", "CAkK", "kek2"), &[]);
    let feed = client.get(KEYS, &[]);
    assert_eq!(feed.status, 200);
    assert_eq!(feed.body["_count"], 2);
    assert_eq!(feed.body["_rid"], db_rid.as_str());
    let ids: Vec<&str> = feed.body["ClientEncryptionKeys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["key1", "key2"]);

    let query = client.post(
        KEYS,
        &json!({"query": "SELECT * FROM k WHERE k.keyWrapMetadata.name = @n", "parameters": [{"name": "@n", "value": "kek2"}]}),
        &[
            ("x-ms-documentdb-isquery", "true"),
            ("content-type", "application/query+json"),
        ],
    );
    assert_eq!(query.status, 200, "{}", query.body);
    assert_eq!(query.body["ClientEncryptionKeys"][0]["id"], "key2");
    assert_eq!(query.body["_count"], 1);
}

#[test]
fn duplicates_absent_keys_and_stale_etags_are_refused() {
    let client = with_keys();
    client
        .post(KEYS, &key("key1", "AAAA", "other"), &[])
        .assert_error(409, "Conflict");
    client
        .get(&format!("{KEYS}/nokey"), &[])
        .assert_error(404, "NotFound");
    client
        .get("/dbs/nodb/clientencryptionkeys", &[])
        .assert_error(404, "NotFound");
    client
        .put(&format!("{KEYS}/nokey"), &key("nokey", "AAAA", "k"), &[])
        .assert_error(404, "NotFound");
    client
        .put(
            &format!("{KEYS}/key1"),
            &key("key1", "AAAA", "k"),
            &[("if-match", "\"not-the-etag\"")],
        )
        .assert_error(412, "PreconditionFailed");
}

#[test]
fn a_rewrap_replaces_the_wrapped_key_and_metadata_under_if_match() {
    let client = with_keys();
    let before = client.get(&format!("{KEYS}/key1"), &[]).body;
    client.advance(5);
    let etag = before["_etag"].as_str().unwrap();
    let rewrapped = client.put(
        &format!("{KEYS}/key1"),
        &key("key1", "CQgHBgUEAwIBAA==", "kek2"),
        &[("if-match", etag)],
    );
    assert_eq!(rewrapped.status, 200, "{}", rewrapped.body);
    assert_eq!(
        rewrapped.body["wrappedDataEncryptionKey"],
        "CQgHBgUEAwIBAA=="
    );
    assert_eq!(rewrapped.body["keyWrapMetadata"]["name"], "kek2");
    assert_eq!(rewrapped.body["_rid"], before["_rid"]);
    assert_ne!(rewrapped.body["_etag"], before["_etag"]);
    assert_eq!(rewrapped.body["_ts"], START + 5);
    // A read naming the current etag is 304 (the SDKs' check that the key
    // they hold is current); naming the old one, the key.
    let new_etag = rewrapped.body["_etag"].as_str().unwrap();
    let current = client.get(&format!("{KEYS}/key1"), &[("if-none-match", new_etag)]);
    assert_eq!(current.status, 304);
    let stale = client.get(&format!("{KEYS}/key1"), &[("if-none-match", etag)]);
    assert_eq!(stale.status, 200);
    assert_eq!(stale.body["keyWrapMetadata"]["name"], "kek2");
    // The old etag is stale now.
    client
        .put(
            &format!("{KEYS}/key1"),
            &key("key1", "AAAA", "kek3"),
            &[("if-match", etag)],
        )
        .assert_error(412, "PreconditionFailed");
    // A key cannot be renamed: policies name it.
    let renamed = client.put(&format!("{KEYS}/key1"), &key("key9", "AAAA", "k"), &[]);
    renamed.assert_error(400, "BadRequest");
    assert!(
        renamed.message().contains("cannot be renamed"),
        "{}",
        renamed.message()
    );
}

#[test]
fn invalid_bodies_are_400_naming_the_field() {
    let client = with_keys();
    let refused = |change: &dyn Fn(&mut Value), says: &str| {
        let mut body = key("bad", "AAAA", "k");
        change(&mut body);
        let reply = client.post(KEYS, &body, &[]);
        reply.assert_error(400, "BadRequest");
        assert!(
            reply.message().contains(says),
            "{says}: {}",
            reply.message()
        );
    };
    refused(
        &|b| b["encryptionAlgorithm"] = json!("RSA-OAEP"),
        "'encryptionAlgorithm'",
    );
    refused(
        &|b| {
            b.as_object_mut().unwrap().remove("encryptionAlgorithm");
        },
        "'encryptionAlgorithm'",
    );
    refused(
        &|b| b["wrappedDataEncryptionKey"] = json!("***"),
        "'wrappedDataEncryptionKey'",
    );
    refused(
        &|b| b["wrappedDataEncryptionKey"] = json!(42),
        "'wrappedDataEncryptionKey'",
    );
    refused(&|b| b["keyWrapMetadata"] = json!(null), "'keyWrapMetadata'");
    refused(
        &|b| {
            b["keyWrapMetadata"]
                .as_object_mut()
                .unwrap()
                .remove("value");
        },
        "'keyWrapMetadata.value'",
    );
    refused(&|b| b["id"] = json!(""), "");
    refused(&|b| b["id"] = json!("a/b"), "");
    // Nothing was created.
    assert_eq!(client.get(KEYS, &[]).body["_count"], 2);
}

#[test]
fn a_key_cannot_be_deleted_and_goes_with_its_database() {
    let client = with_keys();
    let reply = client.delete(&format!("{KEYS}/key1"), &[]);
    reply.assert_error(405, "MethodNotAllowed");
    assert!(
        reply.message().contains("cannot be deleted"),
        "{}",
        reply.message()
    );
    assert_eq!(client.get(&format!("{KEYS}/key1"), &[]).status, 200);

    assert_eq!(client.delete("/dbs/db", &[]).status, 204);
    assert_eq!(client.post("/dbs", &json!({"id": "db"}), &[]).status, 201);
    let feed = client.get(KEYS, &[]);
    assert_eq!(feed.body["_count"], 0, "{}", feed.body);
    client
        .get(&format!("{KEYS}/key1"), &[])
        .assert_error(404, "NotFound");
}

#[test]
fn a_container_policy_is_accepted_and_served_in_the_service_shape() {
    let client = with_keys();
    let body = container(
        "c",
        "/pk",
        vec![
            included("/pk", "key1", "Deterministic"),
            included("/id", "key2", "Deterministic"),
            included("/ssn", "key2", "Randomized"),
        ],
        2,
    );
    let created = client.post("/dbs/db/colls", &body, &[]);
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        created.body["clientEncryptionPolicy"],
        body["clientEncryptionPolicy"]
    );
    let read = client.get("/dbs/db/colls/c", &[]);
    assert_eq!(
        read.body["clientEncryptionPolicy"],
        body["clientEncryptionPolicy"]
    );

    // Without policyFormatVersion the policy is version 1, as served.
    let v1 = json!({
        "id": "v1",
        "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
        "clientEncryptionPolicy": {"includedPaths": [included("/ssn", "key1", "Randomized")]}
    });
    let created = client.post("/dbs/db/colls", &v1, &[]);
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        created.body["clientEncryptionPolicy"]["policyFormatVersion"],
        1
    );
    // A container without a policy shows none.
    let plain = client.create_container("plain", None);
    assert!(plain.body.get("clientEncryptionPolicy").is_none());
}

#[test]
fn a_policy_naming_a_missing_key_is_refused_in_the_service_words() {
    let client = with_keys();
    // The .NET SDK's test sends the path "/": the key is what is refused.
    let body = container(
        "c",
        "/pk",
        vec![included("/", "unknownKey", "Deterministic")],
        1,
    );
    let reply = client.post("/dbs/db/colls", &body, &[]);
    reply.assert_error(400, "BadRequest");
    assert!(
        reply
            .message()
            .contains("ClientEncryptionKey with id '[unknownKey]' does not exist."),
        "{}",
        reply.message()
    );
    // Keys of another database do not count.
    client.post("/dbs", &json!({"id": "other"}), &[]);
    let body = container("c", "/pk", vec![included("/ssn", "key1", "Randomized")], 1);
    let reply = client.post("/dbs/other/colls", &body, &[]);
    reply.assert_error(400, "BadRequest");
    assert!(reply.message().contains("'[key1]'"), "{}", reply.message());
    assert_eq!(client.get("/dbs/db/colls/c", &[]).status, 404);
}

#[test]
fn policies_the_rules_forbid_are_refused_naming_what_to_fix() {
    let client = with_keys();
    let refused = |paths: Vec<Value>, version: u64, says: &str| {
        let reply = client.post("/dbs/db/colls", &container("c", "/pk", paths, version), &[]);
        reply.assert_error(400, "BadRequest");
        assert!(
            reply.message().contains(says),
            "{says}: {}",
            reply.message()
        );
    };
    refused(
        vec![included("/pk", "key1", "Deterministic")],
        1,
        "Path: /pk which is part of the partition key cannot be encrypted with PolicyFormatVersion: 1",
    );
    refused(
        vec![included("/pk", "key1", "Randomized")],
        2,
        "Path: /pk which is part of the partition key has to be encrypted with Deterministic",
    );
    refused(
        vec![included("/id", "key1", "Deterministic")],
        1,
        "Path: /id cannot be encrypted with PolicyFormatVersion: 1",
    );
    refused(
        vec![included("/id", "key1", "Randomized")],
        2,
        "Only Deterministic encryption type is supported for path: /id.",
    );
    refused(
        vec![included("/a/b", "key1", "Randomized")],
        2,
        "Invalid path '/a/b'",
    );
    refused(
        vec![included("a", "key1", "Randomized")],
        2,
        "Invalid path 'a'",
    );
    refused(
        vec![
            included("/a", "key1", "Randomized"),
            included("/a", "key2", "Randomized"),
        ],
        2,
        "Duplicate Path found: /a.",
    );
    refused(
        vec![included("/a", "key1", "Plaintext")],
        2,
        "'Deterministic' or 'Randomized'",
    );
    let mut other_algorithm = included("/a", "key1", "Randomized");
    other_algorithm["encryptionAlgorithm"] = json!("AEAes256CbcHmacSha256Randomized");
    refused(vec![other_algorithm], 2, "EncryptionAlgorithm should be");
    refused(
        vec![],
        3,
        "Supported versions of client encryption policy are 1 and 2.",
    );
    assert_eq!(client.get("/dbs/db/colls/c", &[]).status, 404);
}

#[test]
fn a_replace_keeps_the_policy_and_refuses_to_change_or_drop_it() {
    let client = with_keys();
    let body = container(
        "c",
        "/pk",
        vec![
            included("/ssn", "key1", "Randomized"),
            included("/card", "key2", "Deterministic"),
        ],
        2,
    );
    assert_eq!(client.post("/dbs/db/colls", &body, &[]).status, 201);

    // The container as read, with another setting: accepted.
    let mut read = client.get("/dbs/db/colls/c", &[]).body;
    read["defaultTtl"] = json!(60);
    let replaced = client.put("/dbs/db/colls/c", &read, &[]);
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    assert_eq!(
        replaced.body["clientEncryptionPolicy"],
        body["clientEncryptionPolicy"]
    );
    // The same paths in another order are the same policy.
    let mut reordered = read.clone();
    let paths = reordered["clientEncryptionPolicy"]["includedPaths"]
        .as_array_mut()
        .unwrap();
    paths.reverse();
    assert_eq!(client.put("/dbs/db/colls/c", &reordered, &[]).status, 200);

    let immutable =
        "'clientEncryptionPolicy' cannot be changed as part of collection replace operation.";
    let refused = |body: &Value| {
        let reply = client.put("/dbs/db/colls/c", body, &[]);
        reply.assert_error(400, "BadRequest");
        assert!(reply.message().contains(immutable), "{}", reply.message());
    };
    let mut changed = read.clone();
    changed["clientEncryptionPolicy"]["includedPaths"][0]["encryptionType"] =
        json!("Deterministic");
    refused(&changed);
    let mut dropped = read.clone();
    dropped
        .as_object_mut()
        .unwrap()
        .remove("clientEncryptionPolicy");
    refused(&dropped);
    let mut nulled = read.clone();
    nulled["clientEncryptionPolicy"] = Value::Null;
    refused(&nulled);

    // A container without a policy cannot get one.
    let plain = client.create_container("plain", None).body;
    let mut added = plain.clone();
    added["clientEncryptionPolicy"] = body["clientEncryptionPolicy"].clone();
    let reply = client.put("/dbs/db/colls/plain", &added, &[]);
    reply.assert_error(400, "BadRequest");
    assert!(reply.message().contains(immutable));
    assert_eq!(
        client.get("/dbs/db/colls/c", &[]).body["clientEncryptionPolicy"],
        body["clientEncryptionPolicy"]
    );
}

#[test]
fn keys_and_policies_come_back_from_a_snapshot() {
    let client = with_keys();
    let body = container("c", "/pk", vec![included("/ssn", "key1", "Randomized")], 2);
    assert_eq!(client.post("/dbs/db/colls", &body, &[]).status, 201);
    let before = client.get(KEYS, &[]).body["ClientEncryptionKeys"].clone();
    assert_eq!(
        client.put("/_emulator/snapshots/s", &json!({}), &[]).status,
        201
    );

    client.put(&format!("{KEYS}/key1"), &key("key1", "AAAA", "kek9"), &[]);
    client.post(KEYS, &key("key3", "AAAA", "k"), &[]);
    let restored = client.post("/_emulator/snapshots/s/restore", &json!({}), &[]);
    assert_eq!(restored.status, 200, "{}", restored.body);
    assert_eq!(client.get(KEYS, &[]).body["ClientEncryptionKeys"], before);
    assert_eq!(
        client.get("/dbs/db/colls/c", &[]).body["clientEncryptionPolicy"],
        body["clientEncryptionPolicy"]
    );
    // A new key after the restore gets a RID never handed out before.
    let key3 = client.post(KEYS, &key("key3", "AAAA", "k"), &[]);
    let rids: Vec<&Value> = before
        .as_array()
        .unwrap()
        .iter()
        .map(|k| &k["_rid"])
        .collect();
    assert!(!rids.contains(&&key3.body["_rid"]));

    assert_eq!(client.post("/_emulator/reset", &json!({}), &[]).status, 200);
    client.get(KEYS, &[]).assert_error(404, "NotFound");
}

#[test]
fn keys_and_policies_survive_a_restart_with_a_data_dir() {
    let dir = crate::common::scratch_dir("cek");
    let config = || Config {
        clock: ClockMode::Manual { start: Some(START) },
        data_dir: Some(dir.clone()),
        ..Config::for_tests()
    };
    let policy = container(
        "c",
        "/pk",
        vec![included("/pk", "key1", "Deterministic")],
        2,
    );
    let (keys, coll) = {
        let client = TestClient::start_config(config());
        client.post("/dbs", &json!({"id": "db"}), &[]);
        client.post(KEYS, &key("key1", "AAECAw==", "kek1"), &[]);
        client.post(KEYS, &key("key2", "BAUG", "kek2"), &[]);
        client.put(&format!("{KEYS}/key2"), &key("key2", "BwgJ", "kek3"), &[]);
        assert_eq!(client.post("/dbs/db/colls", &policy, &[]).status, 201);
        (
            client.get(KEYS, &[]).body["ClientEncryptionKeys"].clone(),
            client.get("/dbs/db/colls/c", &[]).body,
        )
    };
    let client = TestClient::start_config(config());
    assert_eq!(client.get(KEYS, &[]).body["ClientEncryptionKeys"], keys);
    assert_eq!(keys[1]["keyWrapMetadata"]["name"], "kek3");
    let read = client.get("/dbs/db/colls/c", &[]).body;
    assert_eq!(
        read["clientEncryptionPolicy"],
        coll["clientEncryptionPolicy"]
    );
    // The key counter came back too: a new key gets a new RID.
    let key3 = client.post(KEYS, &key("key3", "AAAA", "k"), &[]);
    assert_eq!(key3.status, 201);
    let rids: Vec<&Value> = keys
        .as_array()
        .unwrap()
        .iter()
        .map(|k| &k["_rid"])
        .collect();
    assert!(!rids.contains(&&key3.body["_rid"]));
    drop(client);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn keys_need_the_master_key() {
    let client = with_keys();
    // A user's resource token grants containers and items, never keys.
    let c = client.create_container("c", None);
    assert_eq!(c.status, 201);
    client.post("/dbs/db/users", &json!({"id": "u"}), &[]);
    let permission = client.post(
        "/dbs/db/users/u/permissions",
        &json!({"id": "p", "permissionMode": "All", "resource": "dbs/db/colls/c"}),
        &[],
    );
    let token = permission.body["_token"].as_str().unwrap();
    let reply = client.send_with_authorization(token, reqwest::Method::GET, KEYS, &[], None);
    reply.assert_error(403, "Forbidden");
}
