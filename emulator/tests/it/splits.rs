//! Splits on demand (issue 13, point 5): `POST /_emulator/split` cuts a
//! range in two children with new ids and `parents`; the parent is then
//! 410/1002; `pkranges` is an incremental feed whose etag moves; item
//! responses and session tokens name the item's range; queries, read feeds
//! and change feeds begun on the parent continue on the children, each
//! item once; TTL stays exact.

use std::collections::BTreeSet;

use crate::common::{TestClient, COLL, DB};
use serde_json::{json, Value};

const ITEMS: usize = 40;

/// A container `c` of `throughput` RU/s (one range per 6,000 above 10,000).
pub(crate) fn container(throughput: &str) -> TestClient {
    let c = TestClient::start();
    assert_eq!(c.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    let body = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}});
    let reply = c.post(
        "/dbs/db/colls",
        &body,
        &[("x-ms-offer-throughput", throughput)],
    );
    assert_eq!(reply.status, 201, "{}", reply.body);
    c
}

fn fill(c: &TestClient) {
    for i in 0..ITEMS {
        let item = json!({"id": format!("i{i:02}"), "pk": format!("p{}", i % 8), "n": i});
        assert_eq!(c.create_item(&item).status, 201);
    }
}

fn split(c: &TestClient, range: &str) -> crate::common::Reply {
    c.post(
        "/_emulator/split",
        &json!({"database": DB, "container": "c", "range": range}),
        &[],
    )
}

fn pkranges(c: &TestClient, etag: Option<&str>) -> crate::common::Reply {
    let mut headers = vec![("a-im", "Incremental Feed")];
    if let Some(etag) = etag {
        headers.push(("if-none-match", etag));
    }
    c.get(&format!("{COLL}/pkranges"), &headers)
}

fn range_ids(reply: &crate::common::Reply) -> Vec<String> {
    reply.body["PartitionKeyRanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

fn ids(reply: &crate::common::Reply) -> Vec<String> {
    reply.body["Documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect()
}

/// One page of a query (`query`) or read feed (None) addressed to `range`.
fn page(
    c: &TestClient,
    range: &str,
    query: Option<&str>,
    continuation: Option<&str>,
) -> crate::common::Reply {
    let mut headers = vec![
        ("x-ms-documentdb-partitionkeyrangeid", range),
        ("x-ms-max-item-count", "5"),
    ];
    if let Some(token) = continuation {
        headers.push(("x-ms-continuation", token));
    }
    match query {
        Some(q) => {
            headers.extend([
                ("x-ms-documentdb-isquery", "True"),
                ("content-type", "application/query+json"),
            ]);
            c.post(&format!("{COLL}/docs"), &json!({"query": q}), &headers)
        }
        None => c.get(&format!("{COLL}/docs"), &headers),
    }
}

/// Every remaining page of `range` from `continuation`.
fn drain(
    c: &TestClient,
    range: &str,
    query: Option<&str>,
    mut continuation: Option<String>,
) -> Vec<String> {
    let mut out = Vec::new();
    loop {
        let reply = page(c, range, query, continuation.as_deref());
        assert_eq!(reply.status, 200, "{}", reply.body);
        out.extend(ids(&reply));
        match reply.header("x-ms-continuation") {
            Some(token) => continuation = Some(token.to_string()),
            None => return out,
        }
    }
}

fn assert_once(seen: &[String], expected: &BTreeSet<String>) {
    let unique: BTreeSet<String> = seen.iter().cloned().collect();
    assert_eq!(unique.len(), seen.len(), "an item read twice: {seen:?}");
    assert_eq!(&unique, expected, "items lost or foreign");
}

#[test]
fn a_split_makes_two_children_with_new_ids_and_parents() {
    let c = container("12000");
    let before = pkranges(&c, None);
    let old_etag = before.header("etag").unwrap().to_string();
    assert_eq!(range_ids(&before), ["0", "1"]);
    let reply = split(&c, "1");
    assert_eq!(reply.status, 200, "{}", reply.body);
    let children = reply.body["PartitionKeyRanges"].as_array().unwrap();
    assert_eq!(children.len(), 2);
    assert_eq!(children[0]["id"], "2");
    assert_eq!(children[1]["id"], "3");
    for child in children {
        assert_eq!(child["parents"], json!(["1"]));
    }
    assert_eq!(
        children[0]["minInclusive"],
        "20000000000000000000000000000000"
    );
    assert_eq!(
        children[0]["maxExclusive"],
        "30000000000000000000000000000000"
    );
    assert_eq!(children[1]["minInclusive"], children[0]["maxExclusive"]);
    assert_eq!(children[1]["maxExclusive"], "FF");

    // The old etag gets the current ranges, the new one a 304.
    let after = pkranges(&c, Some(&old_etag));
    assert_eq!(after.status, 200, "{}", after.body);
    assert_eq!(range_ids(&after), ["0", "2", "3"]);
    let new_etag = after.header("etag").unwrap().to_string();
    assert_ne!(new_etag, old_etag);
    assert_eq!(pkranges(&c, Some(&new_etag)).status, 304);
    assert_eq!(after.body["PartitionKeyRanges"][0]["parents"], json!([]));

    // A grandchild lists its parent, then the parent's parents.
    let reply = split(&c, "3");
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["PartitionKeyRanges"][0]["id"], "4");
    assert_eq!(
        reply.body["PartitionKeyRanges"][0]["parents"],
        json!(["3", "1"])
    );
    let listed = pkranges(&c, Some(&new_etag));
    assert_eq!(listed.status, 200);
    assert_eq!(range_ids(&listed), ["0", "2", "4", "5"]);
}

#[test]
fn refusals_are_cosmos_errors_and_change_nothing() {
    let c = container("400");
    let etag = pkranges(&c, None).header("etag").unwrap().to_string();
    let send = |body: Value| c.post("/_emulator/split", &body, &[]);
    send(json!({"database": "nope", "container": "c", "range": "0"})).assert_error(404, "NotFound");
    send(json!({"database": DB, "container": "nope", "range": "0"})).assert_error(404, "NotFound");
    send(json!({"database": DB, "container": "c", "range": "7"})).assert_error(404, "NotFound");
    send(json!({"database": DB, "container": "c", "range": "00"})).assert_error(404, "NotFound");
    send(json!({"database": DB, "container": "c"})).assert_error(400, "BadRequest");
    send(json!({"database": DB, "container": "c", "range": 0})).assert_error(400, "BadRequest");
    send(json!([1, 2])).assert_error(400, "BadRequest");
    send(json!({"database": DB, "container": "c", "range": "0", "extra": 1}))
        .assert_error(400, "BadRequest");
    assert_eq!(pkranges(&c, Some(&etag)).status, 304, "nothing changed");

    // A V1 range one hash value wide cannot be split.
    let body =
        json!({"id": "v1", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 1}});
    assert_eq!(c.post("/dbs/db/colls", &body, &[]).status, 201);
    let mut range = "0".to_string();
    for _ in 0..32 {
        let reply = c.post(
            "/_emulator/split",
            &json!({"database": DB, "container": "v1", "range": range}),
            &[],
        );
        assert_eq!(reply.status, 200, "{}", reply.body);
        range = reply.body["PartitionKeyRanges"][0]["id"]
            .as_str()
            .unwrap()
            .to_string();
    }
    let narrow = c.post(
        "/_emulator/split",
        &json!({"database": DB, "container": "v1", "range": range}),
        &[],
    );
    narrow.assert_error(400, "BadRequest");
    assert!(
        narrow.message().contains("cannot be split"),
        "{}",
        narrow.body
    );
}

#[test]
fn the_parent_is_gone_after_a_split() {
    let c = container("400");
    fill(&c);
    assert_eq!(split(&c, "0").status, 200);
    for query in [None, Some("SELECT * FROM c")] {
        let reply = page(&c, "0", query, None);
        reply.assert_error(410, "Gone");
        assert_eq!(reply.header("x-ms-substatus"), Some("1002"));
        assert!(reply.message().contains("is gone"), "{}", reply.body);
    }
    let changes = c.get(
        &format!("{COLL}/docs"),
        &[
            ("a-im", "Incremental Feed"),
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
        ],
    );
    changes.assert_error(410, "Gone");
    assert_eq!(changes.header("x-ms-substatus"), Some("1002"));
    // The children hold every item between them.
    let mut both = drain(&c, "1", None, None);
    both.extend(drain(&c, "2", None, None));
    let all: BTreeSet<String> = (0..ITEMS).map(|i| format!("i{i:02}")).collect();
    assert_once(&both, &all);
}

#[test]
fn item_responses_and_session_tokens_name_the_items_range() {
    let c = container("400");
    assert_eq!(split(&c, "0").status, 200);
    assert_eq!(split(&c, "2").status, 200);
    // Ranges 1, 3, 4: which holds each item, by the per-range feeds.
    fill(&c);
    for range in ["1", "3", "4"] {
        let held = drain(&c, range, None, None);
        assert!(!held.is_empty(), "range {range} holds items");
        for id in held {
            let n: usize = id[1..].parse().unwrap();
            let pk = format!("p{}", n % 8);
            let read = c.read_item(&id, &pk);
            assert_eq!(read.status, 200);
            assert_eq!(
                read.header("x-ms-documentdb-partitionkeyrangeid"),
                Some(range),
                "{id}"
            );
            let token = read.header("x-ms-session-token").unwrap();
            assert!(token.starts_with(&format!("{range}:-1#")), "{id}: {token}");
            let item = json!({"id": id, "pk": pk, "n": -1});
            let written = c.upsert_item(&item);
            assert_eq!(
                written.header("x-ms-documentdb-partitionkeyrangeid"),
                Some(range)
            );
            let token = written.header("x-ms-session-token").unwrap();
            assert!(token.starts_with(&format!("{range}:-1#")), "{token}");
            // The token works for a read of the same item, whatever its range.
            let again = c.get(
                &format!("{COLL}/docs/{id}"),
                &[
                    ("x-ms-documentdb-partitionkey", &format!("[\"{pk}\"]")),
                    ("x-ms-session-token", token),
                ],
            );
            assert_eq!(again.status, 200, "{}", again.body);
        }
    }
    // A feed addressed to a range names it.
    let reply = page(&c, "3", None, None);
    assert_eq!(
        reply.header("x-ms-documentdb-partitionkeyrangeid"),
        Some("3")
    );
    assert!(reply
        .header("x-ms-session-token")
        .unwrap()
        .starts_with("3:-1#"));
}

/// A query or read feed read page by page on range "0", split after the
/// first page, continued with the same continuation on both children.
fn continue_across_split(query: Option<&str>) {
    let c = container("400");
    fill(&c);
    let first = page(&c, "0", query, None);
    assert_eq!(first.status, 200, "{}", first.body);
    let mut seen = ids(&first);
    assert_eq!(seen.len(), 5);
    let token = first.header("x-ms-continuation").unwrap().to_string();
    let children = split(&c, "0");
    assert_eq!(children.status, 200);
    page(&c, "0", query, Some(&token)).assert_error(410, "Gone");
    for child in ["1", "2"] {
        seen.extend(drain(&c, child, query, Some(token.clone())));
    }
    let all: BTreeSet<String> = (0..ITEMS).map(|i| format!("i{i:02}")).collect();
    assert_once(&seen, &all);
}

#[test]
fn a_query_continues_on_the_children() {
    continue_across_split(Some("SELECT * FROM c"));
    continue_across_split(Some("SELECT c.id FROM c WHERE c.n >= 0"));
}

#[test]
fn a_read_feed_continues_on_the_children() {
    continue_across_split(None);
}

#[test]
fn the_change_feed_continues_on_the_children() {
    let c = container("400");
    fill(&c);
    let read = |range: &str, etag: Option<&str>| {
        let mut headers = vec![
            ("a-im", "Incremental Feed"),
            ("x-ms-documentdb-partitionkeyrangeid", range),
            ("x-ms-max-item-count", "5"),
        ];
        if let Some(etag) = etag {
            headers.push(("if-none-match", etag));
        }
        c.get(&format!("{COLL}/docs"), &headers)
    };
    let first = read("0", None);
    assert_eq!(first.status, 200, "{}", first.body);
    let mut seen = ids(&first);
    let etag = first.header("etag").unwrap().to_string();
    assert_eq!(split(&c, "0").status, 200);
    read("0", Some(&etag)).assert_error(410, "Gone");
    for child in ["1", "2"] {
        let mut etag = etag.clone();
        loop {
            let reply = read(child, Some(&etag));
            if reply.status == 304 {
                break;
            }
            assert_eq!(reply.status, 200, "{}", reply.body);
            seen.extend(ids(&reply));
            etag = reply.header("etag").unwrap().to_string();
        }
    }
    let all: BTreeSet<String> = (0..ITEMS).map(|i| format!("i{i:02}")).collect();
    assert_once(&seen, &all);
}

#[test]
fn ttl_is_exact_after_a_split() {
    let c = container("400");
    // Items' own ttl counts once the container has a defaultTtl (-1: none).
    let body = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}, "defaultTtl": -1});
    assert_eq!(c.put(COLL, &body, &[]).status, 200);
    let item = json!({"id": "short", "pk": "p1", "ttl": 10});
    assert_eq!(c.create_item(&item).status, 201);
    fill(&c);
    assert_eq!(split(&c, "0").status, 200);
    let holder = ["1", "2"]
        .into_iter()
        .find(|r| drain(&c, r, None, None).contains(&"short".to_string()))
        .expect("a child holds the item");
    c.advance(9);
    assert!(drain(&c, holder, Some("SELECT * FROM c"), None).contains(&"short".to_string()));
    c.advance(1);
    assert!(!drain(&c, holder, None, None).contains(&"short".to_string()));
    assert!(!drain(&c, holder, Some("SELECT * FROM c"), None).contains(&"short".to_string()));
    assert_eq!(c.read_item("short", "p1").status, 404);
    assert_eq!(
        drain(&c, holder, None, None).len()
            + drain(&c, if holder == "1" { "2" } else { "1" }, None, None).len(),
        ITEMS
    );
}

#[test]
fn a_bulk_request_for_the_parent_is_gone_and_writes_nothing() {
    let c = container("400");
    assert_eq!(split(&c, "0").status, 200);
    let operations = json!([{"operationType": "Create", "partitionKey": "[\"p1\"]", "resourceBody": {"id": "b", "pk": "p1"}}]);
    let send = |range: &str| {
        c.post(
            &format!("{COLL}/docs"),
            &operations,
            &[
                ("x-ms-cosmos-is-batch-request", "True"),
                ("x-ms-cosmos-batch-atomic", "False"),
                ("x-ms-documentdb-partitionkeyrangeid", range),
            ],
        )
    };
    let gone = send("0");
    gone.assert_error(410, "Gone");
    assert_eq!(gone.header("x-ms-substatus"), Some("1002"));
    assert_eq!(c.read_item("b", "p1").status, 404, "nothing written");
    // A current range takes it.
    let reply = send("1");
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(c.read_item("b", "p1").status, 200);
}

#[test]
fn splits_need_the_master_key_and_work_with_the_system_clock() {
    let c = TestClient::start_with(
        cosmos_emulator::ClockMode::System,
        crate::common::Purge::Background,
    );
    assert_eq!(c.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    assert_eq!(c.create_container("c", None).status, 201);
    let body = json!({"database": DB, "container": "c", "range": "0"});
    let unsigned = c.send_with_authorization(
        "type=master&ver=1.0&sig=AAAA",
        reqwest::Method::POST,
        "/_emulator/split",
        &[],
        Some(&body),
    );
    unsigned.assert_error(401, "Unauthorized");
    assert_eq!(range_ids(&pkranges(&c, None)), ["0"], "nothing split");
    let reply = split(&c, "0");
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(range_ids(&pkranges(&c, None)), ["1", "2"]);
}

/// A query across partitions that the gateway walks range by range, split
/// between its pages (the range it is in, then a range it has not reached):
/// it goes on over the bounds it was walking, the children together, and
/// every item comes once.
#[test]
fn a_query_walking_the_ranges_continues_across_splits() {
    let c = container("12000");
    fill(&c);
    let expected: BTreeSet<String> = (0..ITEMS).map(|i| format!("i{i:02}")).collect();
    for (first, second) in [("0", "1"), ("1", "0")] {
        let mut seen = Vec::new();
        let mut token: Option<String> = None;
        let mut pages = 0;
        loop {
            let reply =
                c.query_page_across("SELECT * FROM c WHERE c.n >= 0", "5", token.as_deref());
            assert_eq!(reply.status, 200, "{}", reply.body);
            seen.extend(ids(&reply));
            pages += 1;
            // Split the range being walked after the first page, another later.
            if pages == 1 {
                let live = range_ids(&pkranges(&c, None));
                let target = if first == "0" {
                    live[0].clone()
                } else {
                    live[live.len() - 1].clone()
                };
                assert_eq!(split(&c, &target).status, 200);
            }
            if pages == 3 {
                let live = range_ids(&pkranges(&c, None));
                let target = if second == "1" {
                    live[live.len() - 1].clone()
                } else {
                    live[0].clone()
                };
                assert_eq!(split(&c, &target).status, 200);
            }
            match reply.header("x-ms-continuation") {
                Some(next) => token = Some(next.to_string()),
                None => break,
            }
        }
        assert_once(&seen, &expected);
    }
    // A container of one range (a plain key continuation) split after the
    // first page: the rest of the container in key order, each item once.
    let c = container("400");
    fill(&c);
    let first = c.query_page_across("SELECT * FROM c", "5", None);
    let mut seen = ids(&first);
    assert_eq!(split(&c, "0").status, 200);
    let mut token = first.header("x-ms-continuation").map(str::to_string);
    while let Some(current) = token {
        let reply = c.query_page_across("SELECT * FROM c", "5", Some(&current));
        assert_eq!(reply.status, 200, "{}", reply.body);
        seen.extend(ids(&reply));
        token = reply.header("x-ms-continuation").map(str::to_string);
    }
    assert_once(&seen, &expected);
}

/// The children of a split continue from their parent's LSN: a token from
/// before the split holds on either child, and each child then counts its
/// own writes (LSNs are per range): the next write names its child range
/// with the LSN after that child's last.
#[test]
fn session_tokens_of_the_children_continue_from_the_parent() {
    let c = container("400");
    fill(&c);
    let before = c.read_item("i00", "p0");
    let token = before.header("x-ms-session-token").unwrap().to_string();
    assert_eq!(token, format!("0:-1#{ITEMS}"));
    assert_eq!(split(&c, "0").status, 200);
    let mut lsns =
        std::collections::HashMap::from([("1".to_string(), ITEMS), ("2".to_string(), ITEMS)]);
    for i in 0..8 {
        let id = format!("i{i:02}");
        let pk = format!("p{i}");
        let read = c.get(
            &format!("{COLL}/docs/{id}"),
            &[
                ("x-ms-documentdb-partitionkey", &format!("[\"{pk}\"]")),
                ("x-ms-session-token", &token),
            ],
        );
        assert_eq!(read.status, 200, "{}", read.body);
        let range = read.header("x-ms-documentdb-partitionkeyrangeid").unwrap();
        assert!(range == "1" || range == "2", "{range}");
        let lsn = lsns.get_mut(range).unwrap();
        assert_eq!(
            read.header("x-ms-session-token"),
            Some(format!("{range}:-1#{lsn}").as_str())
        );
        let written = c.upsert_item(&json!({"id": id, "pk": pk, "n": -1}));
        *lsn += 1;
        assert_eq!(
            written.header("x-ms-session-token"),
            Some(format!("{range}:-1#{lsn}").as_str())
        );
    }
    assert!(
        lsns.values().all(|lsn| *lsn > ITEMS),
        "both children written: {lsns:?}"
    );
}
