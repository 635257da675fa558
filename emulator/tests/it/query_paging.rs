//! Pages of a query that resumes at an offset into its whole result (ORDER
//! BY, aggregates, DISTINCT...): the result is kept between pages
//! (`data/query/results.rs`), and a page must be exactly what running the query
//! again would give: a write, a clock move that expires an item, or another
//! scope between two pages is seen by the next page.

use crate::common::{Purge, TestClient, COLL};
use serde_json::{json, Value};

/// One page of `query` (3 results), from `continuation`, with `extra` headers.
fn page(
    c: &TestClient,
    query: &str,
    continuation: Option<&str>,
    extra: &[(&str, &str)],
) -> (Vec<Value>, Option<String>) {
    let mut headers = vec![
        ("x-ms-documentdb-isquery", "True"),
        ("content-type", "application/query+json"),
        ("x-ms-documentdb-query-enablecrosspartition", "True"),
        ("x-ms-documentdb-partitionkeyrangeid", "0"),
        ("x-ms-max-item-count", "3"),
    ];
    headers.extend_from_slice(extra);
    if let Some(token) = continuation {
        headers.push(("x-ms-continuation", token));
    }
    let reply = c.post(
        &format!("{COLL}/docs"),
        &json!({"query": query, "parameters": []}),
        &headers,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let documents = reply.body["Documents"].as_array().unwrap().clone();
    (
        documents,
        reply.header("x-ms-continuation").map(str::to_owned),
    )
}

fn numbers(values: &[Value]) -> Vec<i64> {
    values.iter().map(|v| v.as_i64().unwrap()).collect()
}

const BY_N: &str = "SELECT VALUE c.n FROM c ORDER BY c.n";

fn with_items(ns: impl IntoIterator<Item = i64>) -> TestClient {
    let c = TestClient::with_container_and(Some(json!(-1)), Purge::Off);
    for n in ns {
        let item = json!({"id": format!("i{n}"), "pk": format!("p{}", n % 3), "n": n});
        assert_eq!(c.create_item(&item).status, 201);
    }
    c
}

#[test]
fn every_page_of_an_unchanged_result_in_order() {
    let c = with_items([5, 3, 9, 1, 7, 2, 8]);
    let mut all = Vec::new();
    let mut token = None;
    loop {
        let (documents, next) = page(&c, BY_N, token.as_deref(), &[]);
        all.extend(numbers(&documents));
        match next {
            Some(next) => token = Some(next),
            None => break,
        }
    }
    assert_eq!(all, [1, 2, 3, 5, 7, 8, 9]);
}

#[test]
fn a_write_between_pages_is_seen_by_the_next_page() {
    let c = with_items(1..=9);
    let (first, token) = page(&c, BY_N, None, &[]);
    assert_eq!(numbers(&first), [1, 2, 3]);
    // A smaller number sorts first: the result moves by one.
    let item = json!({"id": "zero", "pk": "p0", "n": 0});
    assert_eq!(c.create_item(&item).status, 201);
    let (second, _) = page(&c, BY_N, token.as_deref(), &[]);
    assert_eq!(
        numbers(&second),
        [3, 4, 5],
        "the offset into the new result"
    );
}

#[test]
fn an_item_expiring_between_pages_is_gone_from_the_next_page() {
    let c = with_items(2..=9);
    let item = json!({"id": "short", "pk": "p0", "n": 1, "ttl": 10});
    assert_eq!(c.create_item(&item).status, 201);
    let (first, token) = page(&c, BY_N, None, &[]);
    assert_eq!(numbers(&first), [1, 2, 3]);
    c.advance(10);
    let (second, _) = page(&c, BY_N, token.as_deref(), &[]);
    assert_eq!(
        numbers(&second),
        [5, 6, 7],
        "n = 1 expired: the result lost its first"
    );
}

#[test]
fn another_partition_key_is_another_result() {
    let c = with_items(1..=9);
    let (all, _) = page(&c, BY_N, None, &[]);
    assert_eq!(numbers(&all), [1, 2, 3]);
    let key = json!(["p1"]).to_string();
    let (one, token) = page(
        &c,
        BY_N,
        None,
        &[("x-ms-documentdb-partitionkey", key.as_str())],
    );
    assert_eq!(numbers(&one), [1, 4, 7]);
    assert!(token.is_none());
}

/// A token this emulator did not give out: in the service's own backend
/// form (a static one from the Python SDK's tests) it names no item here
/// and the query starts from the beginning; any other is refused with the
/// service's "Invalid Continuation Token".
#[test]
fn foreign_continuation_tokens() {
    let c = with_items(1..=5);
    let service_token = "-RID:~a0NPAOszCpOChB4AAAAAAA==#RT:1#TRC:2#ISV:2#IEO:65567#QCF:8";
    let (from_start, _) = page(&c, BY_N, Some(service_token), &[]);
    assert_eq!(numbers(&from_start), [1, 2, 3]);
    let (scan, _) = page(&c, "SELECT VALUE c.n FROM c", Some(service_token), &[]);
    assert_eq!(scan.len(), 3);

    for bad in ["not a token", "{\"offset\": \"x\"}", "-RID:~abc"] {
        let reply = c.post(
            &format!("{COLL}/docs"),
            &json!({"query": BY_N, "parameters": []}),
            &[
                ("x-ms-documentdb-isquery", "True"),
                ("content-type", "application/query+json"),
                ("x-ms-documentdb-query-enablecrosspartition", "True"),
                ("x-ms-documentdb-partitionkeyrangeid", "0"),
                ("x-ms-continuation", bad),
            ],
        );
        reply.assert_error(400, "BadRequest");
        assert!(
            reply.message().contains("Invalid Continuation Token"),
            "{}",
            reply.message()
        );
    }
}
