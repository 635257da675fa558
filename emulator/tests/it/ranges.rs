//! Several physical partition key ranges (issue 13, point 4): a container
//! gets one range up to 10,000 RU/s of its own throughput, then one per 6,000
//! (an autoscale maximum: per 10,000); `pkranges` lists
//! them; a query, read feed or change feed addressed to one range reads
//! exactly that range's items; an unknown range is 410/1002.

use std::collections::BTreeSet;

use crate::common::{TestClient, COLL, DB};
use serde_json::{json, Value};

const ITEMS: usize = 60;

/// A client with `db`/`c` provisioned at `throughput` RU/s (None: the default).
fn container(throughput: Option<&str>) -> TestClient {
    let c = TestClient::start();
    assert_eq!(c.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    let body = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}});
    let headers: Vec<(&str, &str)> = throughput
        .map(|t| vec![("x-ms-offer-throughput", t)])
        .unwrap_or_default();
    let reply = c.post("/dbs/db/colls", &body, &headers);
    assert_eq!(reply.status, 201, "{}", reply.body);
    c
}

fn ranges(c: &TestClient) -> Vec<Value> {
    let reply = c.get(&format!("{COLL}/pkranges"), &[]);
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body["PartitionKeyRanges"].as_array().unwrap().clone()
}

fn fill(c: &TestClient) {
    for i in 0..ITEMS {
        let item = json!({"id": format!("i{i}"), "pk": format!("p{i}"), "n": i});
        assert_eq!(c.create_item(&item).status, 201);
    }
}

fn ids(docs: &[Value]) -> Vec<String> {
    docs.iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect()
}

/// Every page of a query or read feed addressed to range `range`.
fn read_range(c: &TestClient, range: &str, query: Option<&str>, page: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut continuation: Option<String> = None;
    loop {
        let mut headers = vec![
            ("x-ms-documentdb-partitionkeyrangeid", range),
            ("x-ms-max-item-count", page),
        ];
        if let Some(token) = &continuation {
            headers.push(("x-ms-continuation", token));
        }
        let reply = match query {
            Some(q) => {
                headers.extend([
                    ("x-ms-documentdb-isquery", "True"),
                    ("content-type", "application/query+json"),
                    ("x-ms-documentdb-query-enablecrosspartition", "True"),
                ]);
                c.post(&format!("{COLL}/docs"), &json!({"query": q}), &headers)
            }
            None => c.get(&format!("{COLL}/docs"), &headers),
        };
        assert_eq!(reply.status, 200, "{}", reply.body);
        out.extend(ids(reply.body["Documents"].as_array().unwrap()));
        match reply.header("x-ms-continuation") {
            Some(token) => continuation = Some(token.to_string()),
            None => return out,
        }
    }
}

/// The latest-version change feed of one range, from `start` until 304;
/// returns the ids and the etag to continue from.
fn change_feed(c: &TestClient, range: &str, start: Option<String>) -> (Vec<String>, String) {
    let mut out = Vec::new();
    let mut etag = start;
    loop {
        let mut headers = vec![
            ("a-im", "Incremental Feed"),
            ("x-ms-documentdb-partitionkeyrangeid", range),
            ("x-ms-max-item-count", "7"),
        ];
        if let Some(token) = &etag {
            headers.push(("if-none-match", token));
        }
        let reply = c.get(&format!("{COLL}/docs"), &headers);
        let next = reply.header("etag").expect("an etag").to_string();
        if reply.status == 304 {
            return (out, next);
        }
        assert_eq!(reply.status, 200, "{}", reply.body);
        out.extend(ids(reply.body["Documents"].as_array().unwrap()));
        etag = Some(next);
    }
}

/// Asserts that the per-range lists partition all `ITEMS` items: none lost,
/// none in two ranges, and each range holds some.
fn assert_partition(per_range: &[Vec<String>]) {
    let mut seen = BTreeSet::new();
    for ids in per_range {
        assert!(!ids.is_empty(), "every range holds items: {per_range:?}");
        for id in ids {
            assert!(seen.insert(id.clone()), "{id} read twice: {per_range:?}");
        }
    }
    assert_eq!(seen.len(), ITEMS, "{per_range:?}");
}

#[test]
fn default_container_keeps_its_one_range() {
    let c = container(None);
    let ranges = ranges(&c);
    assert_eq!(ranges.len(), 1);
    assert_eq!(ranges[0]["id"], "0");
    assert_eq!(ranges[0]["minInclusive"], "");
    assert_eq!(ranges[0]["maxExclusive"], "FF");
    assert_eq!(ranges[0]["throughputFraction"], 1);
    let c = container(Some("10000"));
    assert_eq!(self::ranges(&c).len(), 1, "10,000 RU/s is one partition");
}

#[test]
fn ranges_as_the_service_lays_out_a_new_container_in_its_shape() {
    // One up to 10,000 RU/s, then one per 6,000 (the Python SDK's
    // THROUGHPUT_FOR_2_PARTITIONS and THROUGHPUT_FOR_5_PARTITIONS).
    for (throughput, count) in [("12000", 2), ("30000", 5)] {
        assert_eq!(
            ranges(&container(Some(throughput))).len(),
            count,
            "{throughput}"
        );
    }
    let c = container(Some("18000"));
    let listed = ranges(&c);
    assert_eq!(listed.len(), 3);
    let ids: Vec<&str> = listed.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["0", "1", "2"]);
    // Contiguous, from the minimum to the maximum, cut evenly.
    assert_eq!(listed[0]["minInclusive"], "");
    assert_eq!(
        listed[0]["maxExclusive"],
        "15555555555555555555555555555555"
    );
    assert_eq!(listed[1]["minInclusive"], listed[0]["maxExclusive"]);
    assert_eq!(listed[2]["minInclusive"], listed[1]["maxExclusive"]);
    assert_eq!(listed[2]["maxExclusive"], "FF");
    let rids: BTreeSet<&str> = listed.iter().map(|r| r["_rid"].as_str().unwrap()).collect();
    assert_eq!(rids.len(), 3);
    for (i, range) in listed.iter().enumerate() {
        assert_eq!(range["parents"], json!([]));
        assert_eq!(range["status"], "online");
        assert_eq!(range["ridPrefix"], i);
        assert!((range["throughputFraction"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-9);
    }
    // The incremental feed ends with a 304 on the etag it gave.
    let reply = c.get(&format!("{COLL}/pkranges"), &[("a-im", "Incremental Feed")]);
    let etag = reply.header("etag").unwrap().to_string();
    let again = c.get(
        &format!("{COLL}/pkranges"),
        &[("a-im", "Incremental Feed"), ("if-none-match", &etag)],
    );
    assert_eq!(again.status, 304);
}

#[test]
fn autoscale_counts_its_maximum() {
    let c = TestClient::start();
    assert_eq!(c.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    let reply = c.post(
        "/dbs/db/colls",
        &json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}}),
        &[(
            "x-ms-cosmos-offer-autopilot-settings",
            r#"{"maxThroughput": 40000}"#,
        )],
    );
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(ranges(&c).len(), 4);
}

#[test]
fn queries_and_read_feeds_per_range_partition_the_items() {
    let c = container(Some("18000"));
    fill(&c);
    let queried: Vec<Vec<String>> = ["0", "1", "2"]
        .iter()
        .map(|r| read_range(&c, r, Some("SELECT * FROM c"), "5"))
        .collect();
    assert_partition(&queried);
    let fed: Vec<Vec<String>> = ["0", "1", "2"]
        .iter()
        .map(|r| read_range(&c, r, None, "4"))
        .collect();
    assert_eq!(fed, queried, "a read feed reads what SELECT * reads");
    // A range's count agrees with its items.
    let count = c.post(
        &format!("{COLL}/docs"),
        &json!({"query": "SELECT VALUE COUNT(1) FROM c"}),
        &[
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-partitionkeyrangeid", "1"),
        ],
    );
    assert_eq!(count.body["Documents"], json!([queried[1].len()]));
    // An EPK range inside a physical range narrows it further: the lower
    // half of range 1 and the upper half together are range 1.
    let half = |start: &str, end: &str| {
        let reply = c.get(
            &format!("{COLL}/docs"),
            &[
                ("x-ms-documentdb-partitionkeyrangeid", "1"),
                ("x-ms-start-epk", start),
                ("x-ms-end-epk", end),
            ],
        );
        assert_eq!(reply.status, 200, "{}", reply.body);
        ids(reply.body["Documents"].as_array().unwrap())
    };
    let mid = "20000000000000000000000000000000";
    let mut halves = half("", mid);
    halves.extend(half(mid, "FF"));
    halves.sort();
    let mut whole = queried[1].clone();
    whole.sort();
    assert_eq!(halves, whole);
}

#[test]
fn change_feed_per_range_neither_loses_nor_repeats() {
    let c = container(Some("18000"));
    fill(&c);
    let mut etags = Vec::new();
    let mut first = Vec::new();
    for range in ["0", "1", "2"] {
        let (ids, etag) = change_feed(&c, range, None);
        first.push(ids);
        etags.push(etag);
    }
    assert_partition(&first);
    // Later writes appear once, in their range's feed only.
    for i in 0..ITEMS {
        let item = json!({"id": format!("i{i}"), "pk": format!("p{i}"), "n": -1});
        assert_eq!(c.upsert_item(&item).status, 200);
    }
    let mut second = Vec::new();
    for (range, etag) in ["0", "1", "2"].iter().zip(etags) {
        second.push(change_feed(&c, range, Some(etag)).0);
    }
    assert_partition(&second);
    for (a, b) in first.iter().zip(&second) {
        let (a, b): (BTreeSet<_>, BTreeSet<_>) = (a.iter().collect(), b.iter().collect());
        assert_eq!(a, b, "an item stays in its range");
    }
}

#[test]
fn an_unknown_range_is_gone() {
    let c = container(Some("12000"));
    fill(&c);
    for range in ["2", "01", "x"] {
        let feed = c.get(
            &format!("{COLL}/docs"),
            &[("x-ms-documentdb-partitionkeyrangeid", range)],
        );
        feed.assert_error(410, "Gone");
        assert_eq!(feed.header("x-ms-substatus"), Some("1002"), "{range}");
        let changes = c.get(
            &format!("{COLL}/docs"),
            &[
                ("a-im", "Incremental Feed"),
                ("x-ms-documentdb-partitionkeyrangeid", range),
            ],
        );
        changes.assert_error(410, "Gone");
        assert_eq!(changes.header("x-ms-substatus"), Some("1002"));
    }
    // The default container: only "0" exists, as before.
    let one = container(None);
    let reply = one.get(
        &format!("{COLL}/docs"),
        &[("x-ms-documentdb-partitionkeyrangeid", "1")],
    );
    reply.assert_error(410, "Gone");
}

#[test]
fn point_operations_and_ttl_are_the_same_in_every_range() {
    let c = container(Some("18000"));
    let reply = c.put(
        COLL,
        &json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}, "defaultTtl": 10}),
        &[],
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    fill(&c);
    for i in 0..ITEMS {
        let reply = c.read_item(&format!("i{i}"), &format!("p{i}"));
        assert_eq!(reply.status, 200);
    }
    c.advance(9);
    let live: usize = ["0", "1", "2"]
        .iter()
        .map(|r| read_range(&c, r, None, "100").len())
        .sum();
    assert_eq!(live, ITEMS);
    c.advance(1);
    for range in ["0", "1", "2"] {
        assert!(read_range(&c, range, None, "100").is_empty(), "{range}");
    }
    assert_eq!(c.read_item("i0", "p0").status, 404);
}

#[test]
fn an_emulator_option_gives_every_container_several_ranges() {
    let c = TestClient::start_config(cosmos_emulator::Config {
        clock: cosmos_emulator::ClockMode::Manual {
            start: Some(crate::common::START),
        },
        min_ranges_per_container: 4,
        ..cosmos_emulator::Config::for_tests()
    });
    assert_eq!(c.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    assert_eq!(c.create_container("c", None).status, 201);
    assert_eq!(ranges(&c).len(), 4, "the default 400 RU/s, four ranges");
    fill(&c);
    let per_range: Vec<Vec<String>> = ["0", "1", "2", "3"]
        .iter()
        .map(|r| read_range(&c, r, None, "100"))
        .collect();
    assert_partition(&per_range);
    // Throughput above the option still counts: 30,000 RU/s, five ranges.
    let reply = c.post(
        "/dbs/db/colls",
        &json!({"id": "big", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}}),
        &[("x-ms-offer-throughput", "30000")],
    );
    assert_eq!(reply.status, 201, "{}", reply.body);
    let big = c.get("/dbs/db/colls/big/pkranges", &[]);
    assert_eq!(big.body["PartitionKeyRanges"].as_array().unwrap().len(), 5);
}

/// A query across partitions that the gateway answers itself walks the
/// ranges one at a time, as the service does (the Python SDK's
/// `test_cross_partition_query_response_hook` counts one page per range):
/// each page holds one range's items, the continuation moves to the next
/// range, and the pages together are the whole answer, each item once.
#[test]
fn a_query_across_partitions_pages_range_by_range() {
    let c = container(Some("18000"));
    fill(&c);
    let per_range: Vec<Vec<String>> = ["0", "1", "2"]
        .iter()
        .map(|r| read_range(&c, r, Some("SELECT * FROM c"), "100"))
        .collect();
    let query_pages = |page: &str| {
        let mut pages = Vec::new();
        let mut continuation: Option<String> = None;
        loop {
            let reply = c.query_page_across(
                "SELECT * FROM c WHERE c.n >= 0",
                page,
                continuation.as_deref(),
            );
            assert_eq!(reply.status, 200, "{}", reply.body);
            pages.push(ids(reply.body["Documents"].as_array().unwrap()));
            match reply.header("x-ms-continuation") {
                Some(token) => continuation = Some(token.to_string()),
                None => return pages,
            }
        }
    };
    // Pages as large as a range: exactly one page per range, in range order.
    assert_eq!(query_pages("100"), per_range);
    // Smaller pages: never two ranges in one page; all of each range, in order.
    let small = query_pages("7");
    let joined: Vec<String> = small.concat();
    assert_eq!(joined, per_range.concat());
    let mut at = 0;
    for range in &per_range {
        let mut seen = 0;
        while seen < range.len() {
            let page = &small[at];
            assert!(
                page.iter().all(|id| range.contains(id)),
                "{page:?} spans ranges"
            );
            seen += page.len();
            at += 1;
        }
    }
}

/// LSNs are per range, as the service numbers each physical partition's
/// writes (issue 47, point 9): a range's items carry `_lsn` 1, 2, 3... in
/// its change feed, whatever the other ranges wrote meanwhile; the range's
/// responses name its own LSN in `lsn` and the session token; a write in
/// one range moves no other range's LSN.
#[test]
fn each_range_numbers_its_own_lsns() {
    let c = container(Some("18000"));
    fill(&c);
    let mut counts = Vec::new();
    for range in ["0", "1", "2"] {
        let reply = c.get(
            &format!("{COLL}/docs"),
            &[
                ("a-im", "Incremental Feed"),
                ("x-ms-documentdb-partitionkeyrangeid", range),
                ("x-ms-max-item-count", "1000"),
            ],
        );
        assert_eq!(reply.status, 200, "{}", reply.body);
        let lsns: Vec<u64> = reply.body["Documents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["_lsn"].as_u64().unwrap())
            .collect();
        let n = lsns.len() as u64;
        assert!(n > 0 && n < ITEMS as u64, "range {range}: {lsns:?}");
        assert_eq!(lsns, (1..=n).collect::<Vec<_>>(), "range {range}");
        assert_eq!(reply.header("lsn"), Some(n.to_string().as_str()));
        assert_eq!(
            reply.header("x-ms-session-token"),
            Some(format!("{range}:-1#{n}").as_str())
        );
        counts.push(n);
    }
    assert_eq!(counts.iter().sum::<u64>(), ITEMS as u64);
    // One item of each range, found by its point read's range.
    let mut in_range = std::collections::HashMap::new();
    for i in 0..ITEMS {
        let read = c.read_item(&format!("i{i}"), &format!("p{i}"));
        let range = read.header("x-ms-documentdb-partitionkeyrangeid").unwrap();
        let index: usize = range.parse().unwrap();
        assert_eq!(
            read.header("x-ms-session-token"),
            Some(format!("{range}:-1#{}", counts[index]).as_str())
        );
        in_range.entry(index).or_insert(i);
    }
    // A delete in range 0 takes its next LSN; range 1 stays where it was.
    let i = in_range[&0];
    let deleted = c.delete_item(&format!("i{i}"), &format!("p{i}"));
    assert_eq!(deleted.status, 204);
    assert_eq!(
        deleted.header("x-ms-session-token"),
        Some(format!("0:-1#{}", counts[0] + 1).as_str())
    );
    let j = in_range[&1];
    let read = c.read_item(&format!("i{j}"), &format!("p{j}"));
    assert_eq!(
        read.header("x-ms-session-token"),
        Some(format!("1:-1#{}", counts[1]).as_str())
    );
    // A token of range 0 beyond range 1's LSN, sent with a read in range
    // 1, names range 0's state: it holds there.
    let token = format!("0:-1#{}", counts[0] + 1);
    let read = c.get(
        &format!("{COLL}/docs/i{j}"),
        &[
            ("x-ms-documentdb-partitionkey", &format!("[\"p{j}\"]")),
            ("x-ms-session-token", &token),
        ],
    );
    assert_eq!(read.status, 200, "{}", read.body);
}

/// One page of the change feed with `headers`, from `start` (an etag).
fn feed_page(
    c: &TestClient,
    headers: &[(&str, &str)],
    start: Option<&str>,
) -> crate::common::Reply {
    let mut all = headers.to_vec();
    if let Some(start) = start {
        all.push(("if-none-match", start));
    }
    c.get(&format!("{COLL}/docs"), &all)
}

/// A change feed's etag is its range's LSN, as on the service: the `lsn`
/// of a write continues the feed of its partition right after it (the
/// JavaScript idiom `continuation: headers["lsn"]`), and a feed of one range
/// ends at the range's LSN. A feed that spans ranges (no range, no key)
/// names each range's LSN, and continues across a split, each change once.
#[test]
fn change_feed_etags_are_each_ranges_lsn() {
    let c = container(Some("18000"));
    fill(&c);
    let first = c.create_item(&json!({"id": "x", "pk": "px"}));
    let lsn = first.header("lsn").unwrap().to_string();
    let range = first
        .header("x-ms-documentdb-partitionkeyrangeid")
        .unwrap()
        .to_string();
    for n in 1..=2 {
        assert_eq!(
            c.upsert_item(&json!({"id": format!("x{n}"), "pk": "px"}))
                .status,
            201
        );
    }
    let scoped = [
        ("a-im", "Incremental Feed"),
        ("x-ms-documentdb-partitionkey", "[\"px\"]"),
    ];
    let after = feed_page(&c, &scoped, Some(&format!("\"{lsn}\"")));
    assert_eq!(after.status, 200, "{}", after.body);
    assert_eq!(
        ids(after.body["Documents"].as_array().unwrap()),
        ["x1", "x2"]
    );
    let last = c.read_item("x2", "px");
    assert_eq!(
        after.header("etag"),
        Some(format!("\"{}\"", last.header("lsn").unwrap()).as_str())
    );
    let of_range = [
        ("a-im", "Incremental Feed"),
        ("x-ms-documentdb-partitionkeyrangeid", range.as_str()),
    ];
    let whole = feed_page(&c, &of_range, None);
    assert_eq!(
        whole.header("etag"),
        after.header("etag"),
        "the range's LSN"
    );

    // Across every range, in pages of 7: each range's LSN in the etag.
    let across = [("a-im", "Incremental Feed"), ("x-ms-max-item-count", "7")];
    let mut seen = Vec::new();
    let mut etag: Option<String> = None;
    loop {
        let page = feed_page(&c, &across, etag.as_deref());
        etag = Some(page.header("etag").unwrap().to_string());
        if page.status == 304 {
            break;
        }
        seen.extend(ids(page.body["Documents"].as_array().unwrap()));
    }
    assert_eq!(seen.len(), ITEMS + 3, "{seen:?}");
    let etag = etag.unwrap();
    assert!(
        etag.starts_with("\"0:") && etag.contains(",1:") && etag.contains(",2:"),
        "{etag}"
    );
    // A split, then writes to every partition: each once, after the etag.
    let split = c.post(
        "/_emulator/split",
        &json!({"database": "db", "container": "c", "range": "1"}),
        &[],
    );
    assert_eq!(split.status, 200, "{}", split.body);
    for i in 0..ITEMS {
        let item = json!({"id": format!("i{i}"), "pk": format!("p{i}"), "n": -2});
        assert_eq!(c.upsert_item(&item).status, 200);
    }
    let mut again = Vec::new();
    let mut next = Some(etag);
    loop {
        let page = feed_page(&c, &across, next.as_deref());
        next = Some(page.header("etag").unwrap().to_string());
        if page.status == 304 {
            break;
        }
        again.extend(ids(page.body["Documents"].as_array().unwrap()));
    }
    again.sort();
    let mut expected: Vec<String> = (0..ITEMS).map(|i| format!("i{i}")).collect();
    expected.sort();
    assert_eq!(again, expected);
    let after_split = next.unwrap();
    assert!(
        after_split.contains(",3:") && after_split.contains(",4:"),
        "{after_split}"
    );
}

/// The all-versions-and-deletes feed's retention is each range's: a reader
/// of a range whose changes are all kept goes on, though another range's
/// older changes left the log; a reader of that other range is refused.
#[test]
fn all_versions_retention_is_each_ranges() {
    let c = container(Some("18000"));
    let full = [
        ("a-im", "Full-Fidelity Feed"),
        ("x-ms-cosmos-changefeed-wire-format-version", "2021-09-15"),
    ];
    let now: Vec<String> = ["0", "1", "2"]
        .iter()
        .map(|range| {
            let mut headers = full.to_vec();
            headers.push(("x-ms-documentdb-partitionkeyrangeid", range));
            feed_page(&c, &headers, Some("*"))
                .header("etag")
                .unwrap()
                .to_string()
        })
        .collect();
    // An old write in one range, an hour, then writes in another only.
    let mut range_of = std::collections::HashMap::new();
    for i in 0..ITEMS {
        let item = json!({"id": format!("i{i}"), "pk": format!("p{i}")});
        let written = c.create_item(&item);
        let range = written
            .header("x-ms-documentdb-partitionkeyrangeid")
            .unwrap()
            .to_string();
        range_of.entry(range).or_insert(i);
        if range_of.len() == 2 {
            break;
        }
        if range_of.len() == 1 && i == 0 {
            c.advance(3601);
        }
    }
    let old: &str = range_of.iter().find(|(_, i)| **i == 0).unwrap().0;
    let new: &str = range_of.iter().find(|(_, i)| **i != 0).unwrap().0;
    for (range, status) in [(new, 200), (old, 400)] {
        let mut headers = full.to_vec();
        headers.push(("x-ms-documentdb-partitionkeyrangeid", range));
        let index: usize = range.parse().unwrap();
        let reply = feed_page(&c, &headers, Some(&now[index]));
        assert_eq!(reply.status, status, "range {range}: {}", reply.body);
        if status == 400 {
            assert!(reply.message().contains("retention"), "{}", reply.body);
        }
    }
}

/// A feed whose range of EPKs reaches no range (start and end both at the
/// top) reads nothing, and its etag still continues it: 304, then 304
/// again from that etag, never a malformed continuation.
#[test]
fn a_feed_that_reaches_no_range_continues_from_its_etag() {
    let c = container(Some("18000"));
    fill(&c);
    let empty = [
        ("a-im", "Incremental Feed"),
        ("x-ms-start-epk", "FF"),
        ("x-ms-end-epk", "FF"),
    ];
    let first = feed_page(&c, &empty, None);
    assert_eq!(first.status, 304, "{}", first.body);
    let etag = first.header("etag").unwrap().to_string();
    let again = feed_page(&c, &empty, Some(&etag));
    assert_eq!(again.status, 304, "{etag}: {}", again.body);
}
