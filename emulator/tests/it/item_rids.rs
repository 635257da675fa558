//! Items' RIDs as the service gives them (issue 47, point 5): each
//! physical partition numbers its own items from 1, and its `ridPrefix`
//! lies bit-reversed in the RID's last byte (`rid::item_document`). The
//! SDKs' hybrid search sorts drained results by `_rid` before ranking, so
//! which equally scored items fill the last places depends on it
//! (`docs/src/search.md`). A split's children keep their items' RIDs and
//! number their new items under their own prefixes; a batch's creates take
//! their range's next counters; a replace keeps the RID, a recreate takes
//! a new one; every RID reads its item back.

use std::collections::HashMap;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use serde_json::json;

use crate::common::{TestClient, COLL};
use crate::splits::container;

/// (`ridPrefix`, counter) of an item RID: its last 8 bytes, little-endian,
/// the prefix bit-reversed from bit 59 down, the counter from bit 0 up.
fn prefix_and_counter(rid: &str) -> (u32, u64) {
    let bytes = BASE64.decode(rid.replace('-', "/")).unwrap();
    assert_eq!(bytes.len(), 16, "{rid}");
    let document = u64::from_le_bytes(bytes[8..].try_into().unwrap());
    assert_eq!(document >> 60, 0, "a document's kind nibble: {rid}");
    let prefix = (((document >> 32) as u32) << 4).reverse_bits();
    (prefix, document & 0xffff_ffff)
}

/// Creates `{"id", "pk"}`; returns its RID and the range that took it.
fn create(c: &TestClient, id: &str, pk: &str) -> (String, String) {
    let reply = c.create_item(&json!({"id": id, "pk": pk}));
    assert_eq!(reply.status, 201, "{}", reply.body);
    let range = reply
        .header("x-ms-documentdb-partitionkeyrangeid")
        .expect("an item response names its range")
        .to_string();
    (reply.body["_rid"].as_str().unwrap().to_string(), range)
}

/// The id of the item read by its RID link, `dbs/{rid}/colls/{rid}/docs/{rid}`.
fn read_by_rid(c: &TestClient, rid: &str, pk: &str) -> String {
    let coll = c.get(COLL, &[]);
    let self_link = coll.body["_self"].as_str().unwrap().to_string();
    let key = json!([pk]).to_string();
    let reply = c.get(
        &format!("/{self_link}docs/{rid}"),
        &[("x-ms-documentdb-partitionkey", key.as_str())],
    );
    assert_eq!(reply.status, 200, "{rid}: {}", reply.body);
    reply.body["id"].as_str().unwrap().to_string()
}

#[test]
fn each_physical_partition_numbers_its_own_items() {
    // Two ranges, as the Python SDK's hybrid search tests make them.
    let c = container("12000");
    let mut counted: HashMap<String, u64> = HashMap::new();
    let mut written = Vec::new();
    for i in 0..8 {
        let pk = format!("{}", i % 2 + 1);
        let (rid, range) = create(&c, &i.to_string(), &pk);
        let counter = counted.entry(range.clone()).or_default();
        *counter += 1;
        assert_eq!(
            prefix_and_counter(&rid),
            (range.parse().unwrap(), *counter),
            "item {i} in range {range}: {rid}"
        );
        // The service's range 1 items end in `CA==` (byte 15 is 0x08).
        let end = if range == "1" {
            "AAAAAAAACA=="
        } else {
            "AAAAAAAAAA=="
        };
        assert!(rid.ends_with(end), "{rid}");
        assert_eq!(read_by_rid(&c, &rid, &pk), i.to_string());
        written.push((rid, i));
    }
    assert_eq!(counted.len(), 2, "both ranges took items: {counted:?}");
    // Sorted by `_rid` text (as the SDKs' hybrid search sorts before
    // ranking), each range's first item comes before either's second: not
    // the order of writing.
    written.sort();
    let sorted: Vec<u64> = written
        .iter()
        .map(|(rid, _)| prefix_and_counter(rid).1)
        .collect();
    assert_eq!(sorted, [1, 1, 2, 2, 3, 3, 4, 4]);
}

#[test]
fn replace_keeps_the_rid_a_recreate_and_a_batch_take_the_next() {
    let c = container("400");
    let (first, _) = create(&c, "a", "p");
    let (second, _) = create(&c, "b", "p");
    assert_eq!(prefix_and_counter(&first), (0, 1));
    assert_eq!(prefix_and_counter(&second), (0, 2));
    let replaced = c.replace_item(&json!({"id": "a", "pk": "p", "v": 2}));
    assert_eq!(replaced.body["_rid"], first.as_str());
    assert_eq!(c.delete_item("b", "p").status, 204);
    let (again, _) = create(&c, "b", "p");
    assert_eq!(prefix_and_counter(&again), (0, 3));
    let batch = c.batch(
        "p",
        &json!([
            {"operationType": "Create", "resourceBody": {"id": "c", "pk": "p"}},
            {"operationType": "Upsert", "resourceBody": {"id": "a", "pk": "p", "v": 3}},
            {"operationType": "Create", "resourceBody": {"id": "d", "pk": "p"}},
        ]),
    );
    assert_eq!(batch.status, 200, "{}", batch.body);
    let rids: Vec<String> = batch
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["resourceBody"]["_rid"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(rids[1], first);
    assert_eq!(prefix_and_counter(&rids[0]), (0, 4));
    assert_eq!(prefix_and_counter(&rids[2]), (0, 5));
    assert_eq!(read_by_rid(&c, &rids[2], "p"), "d");
}

#[test]
fn a_splits_children_keep_rids_and_number_their_new_items() {
    let c = container("400");
    let mut before = Vec::new();
    for i in 0..6 {
        let pk = format!("p{i}");
        let (rid, range) = create(&c, &format!("i{i}"), &pk);
        assert_eq!(range, "0");
        assert_eq!(prefix_and_counter(&rid), (0, i + 1));
        before.push((rid, pk, format!("i{i}")));
    }
    let split = c.post(
        "/_emulator/split",
        &json!({"database": "db", "container": "c", "range": "0"}),
        &[],
    );
    assert_eq!(split.status, 200, "{}", split.body);
    for (rid, pk, id) in &before {
        assert_eq!(&read_by_rid(&c, rid, pk), id);
    }
    let mut counted: HashMap<String, u64> = HashMap::new();
    for i in 0..6 {
        let pk = format!("p{i}");
        let (rid, range) = create(&c, &format!("n{i}"), &pk);
        assert!(range == "1" || range == "2", "{range}");
        let counter = counted.entry(range.clone()).or_default();
        *counter += 1;
        assert_eq!(prefix_and_counter(&rid), (range.parse().unwrap(), *counter));
        assert_eq!(read_by_rid(&c, &rid, &pk), format!("n{i}"));
    }
}
