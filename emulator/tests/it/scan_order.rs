//! Scans in the order the service returns them (issue 47, item 2): within
//! a physical partition, queries without ORDER BY and read feeds give the
//! items in the order they were first written (`_rid` order), not by
//! partition key and id, across pages and ranges and after a split; a
//! replace, upsert or patch keeps an item's place, a delete and a new
//! create put it last (`data/store/container/scan.rs`).

use crate::common::{Reply, TestClient, COLL, DB};
use serde_json::{json, Value};

/// Ids in an order no sort by key gives: written in turn to partitions
/// `p0`, `p1` and `p2`.
const IDS: [&str; 12] = ["m", "c", "x", "a", "q", "b", "z", "k", "e", "y", "d", "n"];

fn pk_of(i: usize) -> String {
    format!("p{}", i % 3)
}

/// A container of one range (400 RU/s) holding [`IDS`], written in order.
fn written() -> TestClient {
    let c = TestClient::with_container(None);
    for (i, id) in IDS.iter().enumerate() {
        let item = json!({"id": id, "pk": pk_of(i), "n": i, "kind": "same"});
        assert_eq!(c.create_item(&item).status, 201);
    }
    c
}

/// Every page of a query across partitions (served by the gateway), with
/// `max_items` a page; the ids read and the number of pages.
fn query_across(c: &TestClient, query: &str, max_items: &str) -> (Vec<String>, usize) {
    let mut ids = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let reply = c.query_page_across(query, max_items, token.as_deref());
        assert_eq!(reply.status, 200, "{}", reply.body);
        pages += 1;
        ids.extend(reply.document_ids());
        match reply.header("x-ms-continuation") {
            Some(next) => token = Some(next.to_string()),
            None => return (ids, pages),
        }
    }
}

/// Every page of the read feed with `headers`, 5 items a page.
fn read_feed(c: &TestClient, headers: &[(&str, &str)]) -> Vec<String> {
    read_feed_from(c, headers, None)
}

/// The read feed's pages with `headers` from `token` on, 5 items a page.
fn read_feed_from(c: &TestClient, headers: &[(&str, &str)], token: Option<String>) -> Vec<String> {
    let mut ids = Vec::new();
    let mut token = token;
    loop {
        let mut all = vec![("x-ms-max-item-count", "5")];
        all.extend_from_slice(headers);
        if let Some(token) = &token {
            all.push(("x-ms-continuation", token));
        }
        let reply = c.get(&format!("{COLL}/docs"), &all);
        assert_eq!(reply.status, 200, "{}", reply.body);
        ids.extend(reply.document_ids());
        match reply.header("x-ms-continuation") {
            Some(next) => token = Some(next.to_string()),
            None => return ids,
        }
    }
}

/// One page of a query in partition `pk`, from `continuation`.
fn page_in(c: &TestClient, pk: &str, query: &str, continuation: Option<&str>) -> Reply {
    let key = json!([pk]).to_string();
    let mut headers = vec![
        ("x-ms-documentdb-isquery", "True"),
        ("content-type", "application/query+json"),
        ("x-ms-documentdb-partitionkey", key.as_str()),
        ("x-ms-max-item-count", "2"),
    ];
    if let Some(token) = continuation {
        headers.push(("x-ms-continuation", token));
    }
    c.post(
        &format!("{COLL}/docs"),
        &json!({ "query": query }),
        &headers,
    )
}

fn in_partition(c: &TestClient, pk: &str, query: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let reply = page_in(c, pk, query, token.as_deref());
        assert_eq!(reply.status, 200, "{}", reply.body);
        ids.extend(reply.document_ids());
        match reply.header("x-ms-continuation") {
            Some(next) => token = Some(next.to_string()),
            None => return ids,
        }
    }
}

fn strings(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|s| s.to_string()).collect()
}

#[test]
fn scans_across_partitions_come_in_write_order_page_by_page() {
    let c = written();
    let all = strings(&IDS);
    // 12 items in pages of 5: 3 pages, the last short (no look-ahead:
    // a full page always continues).
    let (ids, pages) = query_across(&c, "SELECT * FROM c", "5");
    assert_eq!(ids, all);
    assert_eq!(pages, 3);
    let (ids, pages) = query_across(&c, "SELECT * FROM c", "4");
    assert_eq!((ids, pages), (all.clone(), 4), "a full last page continues");
    // A filter (scanned), then the same through the path's index (built
    // by the first query that can use it): the same order.
    for _ in 0..2 {
        let (ids, _) = query_across(&c, "SELECT * FROM c WHERE c.kind = 'same'", "5");
        assert_eq!(ids, all);
        let (ids, _) = query_across(&c, "SELECT * FROM c WHERE c.n >= 0", "5");
        assert_eq!(ids, all);
    }
    assert_eq!(read_feed(&c, &[]), all);
}

#[test]
fn one_partition_reads_in_write_order() {
    let c = written();
    for p in 0..3 {
        let pk = format!("p{p}");
        let expected: Vec<String> = IDS
            .iter()
            .enumerate()
            .filter(|(i, _)| pk_of(*i) == pk)
            .map(|(_, id)| id.to_string())
            .collect();
        assert_eq!(in_partition(&c, &pk, "SELECT * FROM c"), expected);
        assert_eq!(
            in_partition(&c, &pk, "SELECT * FROM c WHERE c.kind = 'same'"),
            expected
        );
        let key = json!([pk]).to_string();
        assert_eq!(
            read_feed(&c, &[("x-ms-documentdb-partitionkey", &key)]),
            expected
        );
    }
}

#[test]
fn a_rewrite_keeps_the_items_place_and_a_new_create_goes_last() {
    let c = written();
    // IDS[1] "c" is in p1, IDS[2] "x" in p2, IDS[3] "a" in p0 (with m, z, y).
    let replaced = c.replace_item(&json!({"id": "c", "pk": "p1", "n": 100}));
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    let upserted = c.upsert_item(&json!({"id": "x", "pk": "p2", "n": 200}));
    assert_eq!(upserted.status, 200, "{}", upserted.body);
    let patched = c.patch_item(
        "a",
        "p0",
        json!([{"op": "set", "path": "/n", "value": 300}]),
    );
    assert_eq!(patched.status, 200, "{}", patched.body);
    let (ids, _) = query_across(&c, "SELECT * FROM c", "5");
    assert_eq!(ids, strings(&IDS), "a rewrite keeps its place");
    // The rewritten item keeps its RID: its place is its RID's.
    let before: Value = c.read_item("m", "p0").body;
    assert_eq!(c.delete_item("m", "p0").status, 204);
    let again = c.create_item(&json!({"id": "m", "pk": "p0", "n": 0}));
    assert_eq!(again.status, 201);
    assert_ne!(
        again.body["_rid"], before["_rid"],
        "a new create, a new RID"
    );
    let mut expected = strings(&IDS[1..]);
    expected.push("m".into());
    let (ids, _) = query_across(&c, "SELECT * FROM c", "5");
    assert_eq!(ids, expected, "deleted and created again: last");
    assert_eq!(
        in_partition(&c, "p0", "SELECT * FROM c"),
        ["a", "z", "y", "m"]
    );
}

#[test]
fn a_page_resumes_in_write_order_whatever_is_written_between_pages() {
    let c = written();
    let first = c.query_page_across("SELECT * FROM c", "4", None);
    assert_eq!(first.document_ids(), strings(&IDS[..4]));
    let token = first.header("x-ms-continuation").unwrap().to_string();
    // Between pages: an item already read is replaced (it stays behind),
    // the next one is deleted (the position does not depend on it), and
    // a new item is created (it comes last).
    assert_eq!(
        c.replace_item(&json!({"id": "a", "pk": "p0", "n": 1}))
            .status,
        200
    );
    assert_eq!(c.delete_item("q", "p1").status, 204);
    assert_eq!(c.create_item(&json!({"id": "aa", "pk": "p1"})).status, 201);
    let mut rest = Vec::new();
    let mut token = Some(token);
    while let Some(t) = token {
        let reply = c.query_page_across("SELECT * FROM c", "4", Some(&t));
        assert_eq!(reply.status, 200, "{}", reply.body);
        rest.extend(reply.document_ids());
        token = reply.header("x-ms-continuation").map(str::to_owned);
    }
    let mut expected = strings(&IDS[5..]);
    expected.push("aa".into());
    assert_eq!(rest, expected);
}

#[test]
fn a_continuation_this_emulator_never_gave_is_a_400_that_says_so() {
    let c = written();
    let headers = |token: &'static str| {
        vec![
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-query-enablecrosspartition", "True"),
            ("x-ms-continuation", token),
        ]
    };
    for token in [
        "not a token",
        r#"{"after": "seven"}"#,
        r#"{"after": -1}"#,
        // The form of the key-ordered scans before issue 47.
        r#"{"pk": "[\"p0\"]", "id": "m"}"#,
    ] {
        let reply = c.post(
            &format!("{COLL}/docs"),
            &json!({"query": "SELECT * FROM c"}),
            &headers(token),
        );
        reply.assert_error(400, "BadRequest");
        assert!(
            reply.message().contains("Continuation Token"),
            "{token}: {}",
            reply.message()
        );
        let feed = c.get(&format!("{COLL}/docs"), &[("x-ms-continuation", token)]);
        feed.assert_error(400, "BadRequest");
    }
}

/// A container of `throughput` RU/s with 40 items written in turn to 8
/// partitions; the ids in write order.
fn ranged(throughput: &str) -> (TestClient, Vec<String>) {
    let c = crate::splits::container(throughput);
    // Ids falling in key order, so that write order is its reverse.
    let ids: Vec<String> = (0..40).map(|i| format!("i{:02}", 99 - i)).collect();
    for (i, id) in ids.iter().enumerate() {
        let item = json!({"id": id, "pk": format!("p{}", i % 8)});
        assert_eq!(c.create_item(&item).status, 201);
    }
    (c, ids)
}

/// Whether `seen` holds items of `order` in the order `order` has them.
fn in_order_of(seen: &[String], order: &[String]) -> bool {
    let at: Vec<usize> = seen
        .iter()
        .map(|id| order.iter().position(|o| o == id).expect("a known item"))
        .collect();
    at.windows(2).all(|w| w[0] < w[1])
}

fn range_feed(c: &TestClient, range: &str, token: Option<String>) -> Vec<String> {
    read_feed_from(c, &[("x-ms-documentdb-partitionkeyrangeid", range)], token)
}

#[test]
fn each_range_reads_in_write_order_and_a_walk_goes_range_by_range() {
    // 12000 RU/s: two physical ranges, "0" and "1".
    let (c, ids) = ranged("12000");
    let first = range_feed(&c, "0", None);
    let second = range_feed(&c, "1", None);
    assert!(
        !first.is_empty() && !second.is_empty(),
        "{first:?} {second:?}"
    );
    assert!(in_order_of(&first, &ids), "{first:?}");
    assert!(in_order_of(&second, &ids), "{second:?}");
    // Across partitions without a range: range by range, each in write order.
    let (walked, _) = query_across(&c, "SELECT * FROM c", "7");
    let mut expected = first.clone();
    expected.extend(second);
    assert_eq!(walked, expected);
}

#[test]
fn a_split_between_pages_keeps_the_parents_write_order() {
    let (c, ids) = ranged("400");
    let first = c.get(
        &format!("{COLL}/docs"),
        &[
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
            ("x-ms-max-item-count", "5"),
        ],
    );
    assert_eq!(first.document_ids(), ids[..5]);
    let token = first.header("x-ms-continuation").unwrap().to_string();
    let split = c.post(
        "/_emulator/split",
        &json!({"database": DB, "container": "c", "range": "0"}),
        &[],
    );
    assert_eq!(split.status, 200, "{}", split.body);
    let left = range_feed(&c, "1", Some(token.clone()));
    let right = range_feed(&c, "2", Some(token));
    assert!(in_order_of(&left, &ids[5..]), "{left:?}");
    assert!(in_order_of(&right, &ids[5..]), "{right:?}");
    assert_eq!(left.len() + right.len(), 35, "{left:?} {right:?}");
    // From the start, each child is its part of the parent, in its order.
    let left_all = range_feed(&c, "1", None);
    let right_all = range_feed(&c, "2", None);
    assert!(in_order_of(&left_all, &ids) && in_order_of(&right_all, &ids));
    assert_eq!(left_all.len() + right_all.len(), 40);
}
