//! Regression tests for the hostile inputs that once crashed the emulator,
//! dropped a connection or answered without a Cosmos error body (issue 8),
//! each sent over real HTTP; after each, the emulator must still serve.

use crate::common::{TestClient, COLL};
use reqwest::Method;
use rstest::rstest;
use serde_json::{json, Value};

/// The emulator still answers, and the container still works.
#[track_caller]
fn still_serving(c: &TestClient) {
    assert_eq!(c.get("/", &[]).status, 200, "the emulator still serves");
    assert!(c.count() >= 0);
}

fn query_reply(c: &TestClient, query: &str, parameters: Value) -> crate::common::Reply {
    c.post(
        &format!("{COLL}/docs"),
        &json!({"query": query, "parameters": parameters}),
        &[
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-query-enablecrosspartition", "True"),
        ],
    )
}

/// Sets `/t` on item `a` of partition `p` if `condition` holds.
fn patch_with_condition(c: &TestClient, condition: &str) -> crate::common::Reply {
    c.send(
        Method::PATCH,
        &format!("{COLL}/docs/a"),
        &[
            ("x-ms-documentdb-partitionkey", "[\"p\"]"),
            ("content-type", "application/json-patch+json"),
        ],
        Some(&json!({
            "operations": [{"op": "set", "path": "/t", "value": 1}],
            "condition": condition
        })),
    )
}

fn repeat(unit: &str, n: usize) -> String {
    unit.repeat(n)
}

/// Expressions nested thousands deep: once a stack overflow that killed the
/// process, now a 400 that names the limit.
#[rstest]
#[case::parentheses(format!("SELECT VALUE {}1{} FROM c", repeat("(", 5000), repeat(")", 5000)))]
#[case::arrays(format!("SELECT VALUE {}1{} FROM c", repeat("[", 5000), repeat("]", 5000)))]
#[case::objects(format!("SELECT VALUE {}1{} FROM c", repeat("{a:", 5000), repeat("}", 5000)))]
#[case::functions(format!("SELECT VALUE {}1{} FROM c", repeat("ABS(", 5000), repeat(")", 5000)))]
#[case::nots(format!("SELECT * FROM c WHERE {}true", repeat("NOT ", 50_000)))]
#[case::signs(format!("SELECT VALUE {}1 FROM c", repeat("- ", 50_000)))]
#[case::properties(format!("SELECT VALUE c{} FROM c", repeat(".a", 50_000)))]
#[case::indexes(format!("SELECT VALUE c{} FROM c", repeat("[0]", 50_000)))]
#[case::conditionals(format!("SELECT VALUE {}1{} FROM c", repeat("true ? ", 5000), repeat(" : 0", 5000)))]
fn deeply_nested_queries_are_refused_naming_the_limit(#[case] query: String) {
    let c = TestClient::with_container(None);
    c.create_item(&json!({"id": "a", "pk": "p"}));
    let reply = query_reply(&c, &query, json!([]));
    reply.assert_error(400, "BadRequest");
    assert!(
        reply.message().contains("128 levels"),
        "the message names the limit: {}",
        reply.message()
    );
    assert!(
        reply.message().len() < 2000,
        "the query is not echoed whole"
    );
    still_serving(&c);
}

/// Long flat runs of one operator do not nest: they are valid queries.
#[rstest]
#[case::sum(format!("SELECT VALUE 1{} FROM c", repeat("+1", 50_000)), json!(50_001))]
#[case::ands(format!("SELECT VALUE true{} FROM c", repeat(" AND true", 50_000)), json!(true))]
#[case::ors(format!("SELECT VALUE false{} FROM c", repeat(" OR false", 50_000)), json!(false))]
#[case::concat(format!("SELECT VALUE 'a'{} FROM c", repeat(" || 'a'", 20_000)), json!("a".repeat(20_001)))]
fn long_flat_operator_runs_evaluate(#[case] query: String, #[case] expected: Value) {
    let c = TestClient::with_container(None);
    c.create_item(&json!({"id": "a", "pk": "p"}));
    assert_eq!(c.query(&query, json!([])), vec![expected]);
}

/// Nesting just under the limit is served, through every recursive part of
/// the parser and the evaluator, without exhausting the server's stack.
#[test]
fn nesting_at_the_limit_is_served() {
    let c = TestClient::with_container(None);
    c.create_item(&json!({"id": "a", "pk": "p", "n": -3}));
    let mixed = repeat("ABS([{a: (", 30) + "c.n" + &repeat(")}][0].a)", 30);
    assert_eq!(
        c.query(&format!("SELECT VALUE {mixed} FROM c"), json!([])),
        vec![json!(3)]
    );
    let parens = format!(
        "SELECT VALUE {}c.n{} FROM c",
        repeat("(", 120),
        repeat(")", 120)
    );
    assert_eq!(c.query(&parens, json!([])), vec![json!(-3)]);
}

#[test]
fn query_text_over_512_kb_is_refused() {
    let c = TestClient::with_container(None);
    let query = format!("SELECT * FROM c WHERE c.id = '{}'", "x".repeat(512 * 1024));
    let reply = query_reply(&c, &query, json!([]));
    reply.assert_error(400, "BadRequest");
    assert!(reply.message().contains("524288"), "{}", reply.message());
}

/// SUBSTRING with a length of 1e300 once overflowed `start + len` and
/// dropped the connection.
#[test]
fn huge_substring_lengths_saturate() {
    let c = TestClient::with_container(None);
    c.create_item(&json!({"id": "a", "pk": "p", "s": "abc"}));
    assert_eq!(
        c.query("SELECT VALUE SUBSTRING('abc', 1, 1e300) FROM c", json!([])),
        vec![json!("bc")]
    );
    assert_eq!(
        c.query(
            "SELECT VALUE SUBSTRING(c.s, @start, @len) FROM c",
            json!([{"name": "@start", "value": 1e300}, {"name": "@len", "value": 1e300}])
        ),
        vec![json!("")]
    );
    let patched = patch_with_condition(&c, "from c where SUBSTRING(c.s, 1, 1e300) = 'bc'");
    assert_eq!(patched.status, 200, "{}", patched.body);
    still_serving(&c);
}

#[test]
fn a_deeply_nested_patch_condition_is_refused() {
    let c = TestClient::with_container(None);
    c.create_item(&json!({"id": "a", "pk": "p"}));
    let condition = format!(
        "from c where {}true{}",
        repeat("(", 3000),
        repeat(")", 3000)
    );
    let reply = patch_with_condition(&c, &condition);
    reply.assert_error(400, "BadRequest");
    still_serving(&c);
}

/// `depth` levels of objects: the item itself, then `{"d": {...}}` inside.
fn nested_item(id: &str, depth: usize) -> Value {
    let mut inner = json!({});
    for _ in 2..depth {
        inner = json!({ "d": inner });
    }
    json!({"id": id, "pk": "p", "d": inner})
}

/// An array nested `depth` levels (the array itself the first).
fn nested_array(depth: usize) -> Value {
    let mut value = json!([]);
    for _ in 1..depth {
        value = json!([value]);
    }
    value
}

/// Once, a 126-level item patched with a 100-level array was stored, and from
/// then on every query of the container dropped the connection.
#[test]
fn a_patch_cannot_nest_an_item_past_the_limit() {
    let c = TestClient::with_container(None);
    assert_eq!(c.create_item(&nested_item("deep", 126)).status, 201);
    // Inside the deep part, as the original report did.
    let deep_path = format!("{}/extra", "/d".repeat(120));
    let reply = c.patch_item(
        "deep",
        "p",
        json!([{"op": "add", "path": deep_path, "value": nested_array(100)}]),
    );
    reply.assert_error(400, "BadRequest");
    assert!(
        reply.message().contains("128 levels"),
        "{}",
        reply.message()
    );
    // Nothing changed, and the item still reads back, queries and patches.
    assert_eq!(c.read_item("deep", "p").status, 200);
    assert!(!c.read_item("deep", "p").body.to_string().contains("extra"));
    assert_eq!(
        c.query("SELECT VALUE c.id FROM c", json!([])),
        vec![json!("deep")]
    );
    let ok = c.patch_item(
        "deep",
        "p",
        json!([{"op": "add", "path": "/extra", "value": nested_array(2)}]),
    );
    assert_eq!(ok.status, 200, "{}", ok.body);
    still_serving(&c);
}

/// The service's limit, exactly: 128 levels are stored and read back
/// through every path; 129 are refused on every write.
#[test]
fn items_nest_at_most_128_levels() {
    let c = TestClient::with_container(None);
    assert_eq!(c.create_item(&nested_item("max", 128)).status, 201);
    assert!(c.read_item("max", "p").body["d"]["d"]["d"].is_object());
    assert_eq!(c.query("SELECT * FROM c", json!([])).len(), 1);
    assert_eq!(
        c.query(
            "SELECT VALUE c.id FROM c WHERE IS_DEFINED(c.d.d)",
            json!([])
        ),
        vec![json!("max")]
    );
    for reply in [
        c.create_item(&nested_item("over", 129)),
        c.upsert_item(&nested_item("over", 129)),
        c.replace_item(&nested_item("max", 129)),
    ] {
        reply.assert_error(400, "BadRequest");
        assert!(reply.message().contains("128"), "{}", reply.message());
    }
    assert_eq!(c.ids(), vec!["max".to_string()]);
}

/// Wrong-typed indexing policies were stored and echoed; now refused, with
/// nothing stored.
#[rstest]
#[case(json!({"includedPaths": "x"}))]
#[case(json!({"includedPaths": [{"path": 5}]}))]
#[case(json!({"automatic": "yes"}))]
#[case(json!({"spatialIndexes": 7}))]
#[case(json!({"compositeIndexes": [[{"path": 1}]]}))]
#[case(json!({"includedPaths": [{"path": "/a"}]}))]
fn wrong_indexing_policies_are_refused_and_nothing_is_stored(#[case] policy: Value) {
    let c = TestClient::with_container(None);
    let body = json!({"id": "x", "partitionKey": {"paths": ["/pk"]}, "indexingPolicy": policy});
    c.post("/dbs/db/colls", &body, &[])
        .assert_error(400, "BadRequest");
    c.get("/dbs/db/colls/x", &[]).assert_error(404, "NotFound");
    let replace = json!({"id": "c", "partitionKey": {"paths": ["/pk"]}, "indexingPolicy": policy});
    c.put(COLL, &replace, &[]).assert_error(400, "BadRequest");
    assert_eq!(
        c.get(COLL, &[]).body["indexingPolicy"]["includedPaths"],
        json!([{"path": "/*"}])
    );
}

/// Percent-encoded bytes that are not UTF-8 once decoded: a Cosmos 400, not
/// axum's plain text.
#[rstest]
#[case("%FF")]
#[case("%C0%AF")]
#[case("%ED%A0%80")]
fn invalid_percent_encoding_is_a_cosmos_400(#[case] segment: &str) {
    let c = TestClient::with_container(None);
    for path in [
        format!("/dbs/{segment}"),
        format!("/dbs/db/colls/{segment}"),
        format!("{COLL}/docs/{segment}"),
    ] {
        let reply = c.get(&path, &[("x-ms-documentdb-partitionkey", "[\"p\"]")]);
        reply.assert_error(400, "BadRequest");
        assert_eq!(
            reply.header("content-type"),
            Some("application/json"),
            "{path}"
        );
    }
    still_serving(&c);
}

/// Every refusal of the routing layer has the Cosmos body.
#[rstest]
#[case(Method::POST, "/_explorer/emulator.pem", 405, "MethodNotAllowed")]
#[case(Method::DELETE, "/_explorer/emulator.pem", 405, "MethodNotAllowed")]
#[case(Method::GET, "/_explorer/emulator.pem", 404, "NotFound")]
#[case(Method::DELETE, "/", 405, "MethodNotAllowed")]
#[case(Method::PUT, "/dbs", 405, "MethodNotAllowed")]
#[case(Method::from_bytes(b"PROPFIND").unwrap(), "/dbs/db", 405, "MethodNotAllowed")]
#[case(Method::PATCH, "/dbs/db/colls/c", 405, "MethodNotAllowed")]
#[case(Method::GET, "/nowhere", 404, "NotFound")]
#[case(Method::GET, "/dbs/db/colls/c/docs/a/b", 404, "NotFound")]
fn routing_refusals_have_the_cosmos_body(
    #[case] method: Method,
    #[case] path: &str,
    #[case] status: u16,
    #[case] code: &str,
) {
    let c = TestClient::with_container(None);
    let reply = c.send(method, path, &[], None);
    assert_eq!(reply.status, status, "{}", reply.body);
    assert_eq!(reply.code(), code, "{}", reply.body);
    assert!(!reply.message().is_empty());
}

/// Bodies that are not what a route reads: a Cosmos 400 whatever the content type.
#[rstest]
#[case("/dbs", "text/plain", b"not json".to_vec())]
#[case("/dbs", "application/json", b"[1, 2]".to_vec())]
#[case("/dbs/db/colls", "application/xml", b"<x/>".to_vec())]
#[case("/dbs/db/colls/c/docs", "application/octet-stream", vec![0xff, 0xfe, 0x00])]
#[case("/_emulator/clock", "text/plain", b"advance=5".to_vec())]
fn bodies_of_the_wrong_type_are_cosmos_400s(
    #[case] path: &str,
    #[case] content_type: &str,
    #[case] body: Vec<u8>,
) {
    let c = TestClient::with_container(None);
    let key = cosmos_emulator::protocol::auth::MasterKey::from_base64(c.emulator.key()).unwrap();
    let reply = c.send_signed_with(
        &key,
        Method::POST,
        path,
        &[
            ("content-type", content_type),
            ("x-ms-documentdb-partitionkey", "[\"p\"]"),
        ],
        Some(body),
    );
    reply.assert_error(400, "BadRequest");
    still_serving(&c);
}

/// A captured request cannot be replayed forever: dates more than 15 minutes
/// from the server's wall clock are refused with the service's 403, an
/// unreadable or missing date with 401, whatever the test clock says.
#[rstest]
#[case::a_year_old(Some(-365 * 24 * 3600), 403, "Forbidden")]
#[case::thirty_minutes_ahead(Some(30 * 60), 403, "Forbidden")]
#[case::sixteen_minutes_old(Some(-16 * 60), 403, "Forbidden")]
#[case::fourteen_minutes_old(Some(-14 * 60), 200, "")]
#[case::unreadable(None, 401, "Unauthorized")]
fn signed_dates_are_checked_against_the_wall_clock(
    #[case] offset: Option<i64>,
    #[case] status: u16,
    #[case] code: &str,
) {
    use std::time::{Duration, SystemTime};
    let c = TestClient::with_container(None);
    // The manual clock is far from the wall clock: it plays no part here.
    c.advance(10 * 365 * 24 * 3600);
    let date = match offset {
        Some(s) if s >= 0 => {
            httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(s as u64))
        }
        Some(s) => {
            httpdate::fmt_http_date(SystemTime::now() - Duration::from_secs(s.unsigned_abs()))
        }
        None => "the day before yesterday".to_string(),
    };
    let key = cosmos_emulator::protocol::auth::MasterKey::from_base64(c.emulator.key()).unwrap();
    let auth = cosmos_emulator::protocol::auth::authorization_header(
        &key,
        &cosmos_emulator::protocol::auth::payload("GET", "dbs", "", &date, ""),
    );
    let response = reqwest::blocking::Client::new()
        .get(format!("{}/dbs", c.emulator.endpoint()))
        .header("x-ms-date", &date)
        .header("authorization", auth)
        .send()
        .unwrap();
    assert_eq!(response.status().as_u16(), status);
    let body: Value = response.json().unwrap();
    if status != 200 {
        assert_eq!(body["code"], code, "{body}");
        assert!(body["message"].as_str().unwrap().len() > 20, "{body}");
    }
}

/// Found by the fuzz tests: a partition key header carrying raw UTF-8 (as
/// JSON may) was read as no header at all.
#[test]
fn partition_key_headers_may_carry_utf8() {
    let c = TestClient::with_container(None);
    assert_eq!(
        c.create_item(&json!({"id": "a", "pk": "é\u{10ffff}"}))
            .status,
        201
    );
    let read = c.read_item("a", "é\u{10ffff}");
    assert_eq!(read.status, 200, "{}", read.body);
}

/// A short query that copies a large item thousands of times would exhaust
/// memory and kill the process; it is refused instead.
#[rstest]
#[case::array(format!("SELECT VALUE [{}] FROM c", vec!["c"; 200].join(", ")))]
#[case::object(format!("SELECT VALUE {{{}}} FROM c", (0..200).map(|i| format!("a{i}: c.s")).collect::<Vec<_>>().join(", ")))]
#[case::projection(format!("SELECT {} FROM c", (0..200).map(|i| format!("c.s AS a{i}")).collect::<Vec<_>>().join(", ")))]
#[case::concatenation(format!("SELECT VALUE c.s{} FROM c", " || c.s".repeat(200)))]
#[case::concat_function(format!("SELECT VALUE CONCAT({}) FROM c", vec!["c.s"; 200].join(", ")))]
#[case::in_a_filter(format!("SELECT * FROM c WHERE ARRAY_LENGTH([{}]) > 0", vec!["c"; 200].join(", ")))]
fn queries_that_copy_an_item_hundreds_of_times_are_refused(#[case] query: String) {
    let c = TestClient::with_container(None);
    c.create_item(&json!({"id": "big", "pk": "p", "s": "x".repeat(1024 * 1024)}));
    let reply = query_reply(&c, &query, json!([]));
    reply.assert_error(400, "BadRequest");
    assert!(reply.message().contains("64 MB"), "{}", reply.message());
    // The same shapes over a small item are fine.
    c.delete_item("big", "p");
    c.create_item(&json!({"id": "small", "pk": "p", "s": "x"}));
    assert_eq!(query_reply(&c, &query, json!([])).status, 200);
}

#[test]
fn a_large_parameter_referenced_many_times_is_refused() {
    let c = TestClient::with_container(None);
    let query = format!("SELECT VALUE [{}] FROM c", vec!["@p"; 100].join(", "));
    let reply = query_reply(
        &c,
        &query,
        json!([{"name": "@p", "value": "x".repeat(1024 * 1024)}]),
    );
    reply.assert_error(400, "BadRequest");
    assert!(
        reply.message().contains("16777216 bytes"),
        "{}",
        reply.message()
    );
}

/// The service measures the request as sent: an item whose JSON the client
/// escapes (`\u00e9` for `é`, as the Python SDK does) is refused when the
/// payload passes 2 MB, though it would be stored in less; so is any other
/// request body, a query among them.
#[test]
fn request_payloads_over_2_mb_are_413() {
    let c = TestClient::with_container(None);
    let escaped = format!(
        r#"{{"id": "e", "pk": "p", "s": "{}"}}"#,
        "\\u00e9".repeat(400_000)
    );
    assert!(escaped.len() > 2 * 1024 * 1024);
    let key = cosmos_emulator::protocol::auth::MasterKey::from_base64(c.emulator.key()).unwrap();
    let reply = c.send_signed_with(
        &key,
        Method::POST,
        &format!("{COLL}/docs"),
        &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
        Some(escaped.into_bytes()),
    );
    reply.assert_error(413, "RequestEntityTooLarge");
    let query = format!("SELECT * FROM c WHERE c.s = '{}'", "x".repeat(100));
    let big_parameters = json!([{"name": "@p", "value": "x".repeat(2 * 1024 * 1024)}]);
    query_reply(&c, &query, big_parameters).assert_error(413, "RequestEntityTooLarge");
    assert!(c.ids().is_empty());
}
