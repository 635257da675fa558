//! Fault rules over real HTTP (`docs/src/faults.md`): the routes and their
//! refusals, the service-shaped answers, hits, `when: after`, reset, the
//! partition key range match, and connection faults seen by a real client.

use std::time::{Duration, Instant};

use cosmos_emulator::protocol::auth::{authorization_header, payload, signed_resource, MasterKey};
use cosmos_emulator::{Config, Protocol};
use reqwest::Method;
use serde_json::{json, Value};

use crate::common::{TestClient, COLL};

const FAULTS: &str = "/_emulator/faults";

fn item(id: &str, pk: &str) -> Value {
    json!({"id": id, "pk": pk})
}

#[test]
fn the_issues_body_throttles_three_creates_then_lets_the_fourth_through() {
    let client = TestClient::with_container(None);
    let rule = client.post(
        FAULTS,
        &json!({"match": {"operation": "create"}, "respond": {"status": 429, "subStatus": 3200, "retryAfterMs": 50}, "hits": 3}),
        &[],
    );
    assert_eq!(rule.status, 201, "{}", rule.body);
    assert_eq!(rule.body["id"], "f1");
    assert_eq!(rule.body["hitCount"], 0);
    for attempt in 1..=3 {
        let reply = client.create_item(&item("a", "p"));
        reply.assert_error(429, "TooManyRequests");
        assert_eq!(reply.header("x-ms-substatus"), Some("3200"));
        assert_eq!(reply.header("x-ms-retry-after-ms"), Some("50"));
        assert!(reply.header("x-ms-request-charge").is_some());
        assert!(reply.message().contains("\"f1\""), "{}", reply.message());
        assert_eq!(
            client.get(&format!("{FAULTS}/f1"), &[]).body["hitCount"],
            attempt
        );
    }
    // Nothing was written: the fourth create is the first to store the item.
    let created = client.create_item(&item("a", "p"));
    assert_eq!(created.status, 201, "{}", created.body);
    // Other operations never matched.
    assert_eq!(client.read_item("a", "p").status, 200);
    let listed = client.get(FAULTS, &[]);
    assert_eq!(listed.status, 200);
    assert_eq!(listed.body["faults"][0]["hitCount"], 3);
    assert_eq!(listed.body["faults"][0]["hits"], 3);
}

#[test]
fn routes_list_read_delete_and_refuse() {
    let client = TestClient::start();
    let respond = json!({"status": 503});
    let first = client.post(FAULTS, &json!({"respond": respond}), &[]);
    let named = client.post(FAULTS, &json!({"id": "mine", "respond": respond}), &[]);
    assert_eq!((first.status, named.status), (201, 201));
    assert_eq!(named.body["id"], "mine");
    client
        .post(FAULTS, &json!({"id": "mine", "respond": respond}), &[])
        .assert_error(409, "Conflict");
    let ids = |client: &TestClient| -> Vec<Value> {
        let listed = client.get(FAULTS, &[]).body["faults"].clone();
        listed
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].clone())
            .collect()
    };
    assert_eq!(
        ids(&client),
        [json!("f1"), json!("mine")],
        "in creation order"
    );
    assert_eq!(
        client.get(&format!("{FAULTS}/mine"), &[]).body["id"],
        "mine"
    );
    client
        .get(&format!("{FAULTS}/nope"), &[])
        .assert_error(404, "NotFound");
    assert_eq!(client.delete(&format!("{FAULTS}/mine"), &[]).status, 204);
    client
        .delete(&format!("{FAULTS}/mine"), &[])
        .assert_error(404, "NotFound");
    for bad in [
        json!({"respond": {"status": 429}, "bogus": 1}),
        json!({"respond": {"status": 200}}),
        json!({"respond": {"status": 500}, "probability": 2}),
        json!({"match": {"operation": "readItem"}, "respond": {"status": 500}}),
        json!({"match": {"operation": "read"}}),
    ] {
        client
            .post(FAULTS, &bad, &[])
            .assert_error(400, "BadRequest");
    }
    let not_json = client.send_signed_with(
        &MasterKey::from_base64(client.emulator.key()).unwrap(),
        Method::POST,
        FAULTS,
        &[],
        Some(b"{not json".to_vec()),
    );
    not_json.assert_error(400, "BadRequest");
    assert_eq!(ids(&client), [json!("f1")], "refusals changed nothing");
    let cleared = client.send(Method::DELETE, FAULTS, &[], None);
    assert_eq!(cleared.status, 200);
    assert_eq!(cleared.body["deleted"], 1);
    assert!(ids(&client).is_empty());
}

#[test]
fn unsigned_requests_are_refused_before_any_rule() {
    let client = TestClient::start();
    assert_eq!(
        client
            .post(FAULTS, &json!({"respond": {"status": 503}}), &[])
            .status,
        201
    );
    let wrong = MasterKey::from_base64(&base64_key(b"not the key")).unwrap();
    for path in ["/dbs", FAULTS] {
        let reply = client.send_signed_with(&wrong, Method::GET, path, &[], None);
        reply.assert_error(401, "Unauthorized");
    }
    // The control API is never faulted; data requests are.
    assert_eq!(client.get(FAULTS, &[]).status, 200);
    client
        .get("/dbs", &[])
        .assert_error(503, "ServiceUnavailable");
    // The account read only when a rule names it.
    assert_eq!(client.get("/", &[]).status, 200);
}

fn base64_key(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn reset_clears_the_rules() {
    let client = TestClient::with_container(None);
    client.post(FAULTS, &json!({"respond": {"status": 500}}), &[]);
    client
        .create_item(&item("a", "p"))
        .assert_error(500, "InternalServerError");
    assert_eq!(client.post("/_emulator/reset", &json!({}), &[]).status, 200);
    assert_eq!(client.get(FAULTS, &[]).body["faults"], json!([]));
    assert_eq!(client.get("/dbs", &[]).status, 200);
}

#[test]
fn a_fault_after_the_write_keeps_the_write() {
    let client = TestClient::with_container(None);
    let rule = json!({"match": {"operation": "create", "container": "c", "database": "db"},
                      "respond": {"status": 408}, "when": "after", "hits": 1});
    assert_eq!(client.post(FAULTS, &rule, &[]).status, 201);
    let reply = client.create_item(&item("a", "p"));
    reply.assert_error(408, "RequestTimeout");
    assert!(
        reply.message().contains("changes were kept"),
        "{}",
        reply.message()
    );
    assert_eq!(client.read_item("a", "p").status, 200, "the item IS stored");
    client
        .create_item(&item("a", "p"))
        .assert_error(409, "Conflict");
}

#[test]
fn a_delay_alone_slows_the_real_answer() {
    let client = TestClient::with_container(None);
    let rule = json!({"match": {"operation": ["create", "upsert"]}, "respond": {"delayMs": 300}, "hits": 1});
    assert_eq!(client.post(FAULTS, &rule, &[]).status, 201);
    let started = Instant::now();
    assert_eq!(client.create_item(&item("a", "p")).status, 201);
    assert!(started.elapsed() >= Duration::from_millis(300));
    let started = Instant::now();
    assert_eq!(client.upsert_item(&item("a", "p")).status, 200);
    assert!(
        started.elapsed() < Duration::from_millis(300),
        "one hit only"
    );
}

#[test]
fn a_window_follows_the_test_clock() {
    let client = TestClient::with_container(None);
    let rule = json!({"match": {"operation": "read"}, "respond": {"status": 503},
                      "startAfterMs": 10_000, "forMs": 5_000});
    assert_eq!(client.post(FAULTS, &rule, &[]).status, 201);
    assert_eq!(client.create_item(&item("a", "p")).status, 201);
    assert_eq!(client.read_item("a", "p").status, 200, "not started");
    client.emulator.advance(10).unwrap();
    client
        .read_item("a", "p")
        .assert_error(503, "ServiceUnavailable");
    client.emulator.advance(5).unwrap();
    assert_eq!(client.read_item("a", "p").status, 200, "over");
}

#[test]
fn a_range_rule_hits_the_items_of_that_range_only() {
    let client = TestClient::with_container(None);
    let split = client.post(
        "/_emulator/split",
        &json!({"database": "db", "container": "c", "range": "0"}),
        &[],
    );
    assert_eq!(split.status, 200, "{}", split.body);
    // Items until both children hold one, each with the range it went to.
    let mut by_range = std::collections::BTreeMap::new();
    for n in 0..64 {
        let pk = format!("p{n}");
        let created = client.create_item(&item("x", &pk));
        let range = created
            .header("x-ms-documentdb-partitionkeyrangeid")
            .unwrap();
        by_range.entry(range.to_string()).or_insert(pk);
        if by_range.len() == 2 {
            break;
        }
    }
    let ranges: Vec<_> = by_range.keys().cloned().collect();
    assert_eq!(ranges.len(), 2, "{by_range:?}");
    let rule = json!({"match": {"operation": "read", "partitionKeyRangeId": ranges[1]},
                      "respond": {"status": 410, "subStatus": 1002}});
    assert_eq!(client.post(FAULTS, &rule, &[]).status, 201);
    assert_eq!(client.read_item("x", &by_range[&ranges[0]]).status, 200);
    let gone = client.read_item("x", &by_range[&ranges[1]]);
    gone.assert_error(410, "Gone");
    assert_eq!(gone.header("x-ms-substatus"), Some("1002"));
    // A feed sent to one range names it in its header.
    let feed = client.get(
        &format!("{COLL}/docs"),
        &[("x-ms-documentdb-partitionkeyrangeid", &ranges[1])],
    );
    feed.assert_error(410, "Gone");
}

#[test]
fn a_partition_key_rule_as_the_header_holds_it() {
    let client = TestClient::with_container(None);
    let rule =
        json!({"match": {"partitionKey": ["b"]}, "respond": {"status": 500, "subStatus": 0}});
    assert_eq!(client.post(FAULTS, &rule, &[]).status, 201);
    assert_eq!(client.create_item(&item("a", "a")).status, 201);
    client
        .create_item(&item("a", "b"))
        .assert_error(500, "InternalServerError");
}

/// A signed request from a client of its own (no pooled connection), with
/// a timeout: what a real client sees of a connection fault.
fn raw_get(client: &TestClient, path: &str, timeout: Duration) -> Result<u16, reqwest::Error> {
    let key = MasterKey::from_base64(client.emulator.key()).unwrap();
    let date = httpdate::fmt_http_date(std::time::SystemTime::now());
    let resource = signed_resource(path);
    let auth = authorization_header(
        &key,
        &payload(
            "GET",
            &resource.resource_type,
            &resource.links[0],
            &date,
            "",
        ),
    );
    let http = reqwest::blocking::Client::builder()
        .timeout(timeout)
        .danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    http.get(format!("{}{path}", client.emulator.endpoint()))
        .header("x-ms-date", &date)
        .header("x-ms-version", "2020-07-15")
        .header("authorization", auth)
        .send()
        .map(|r| r.status().as_u16())
}

/// The error's causes, outermost first, as text and I/O kinds.
fn causes(error: &reqwest::Error) -> (String, Vec<std::io::ErrorKind>) {
    let mut text = error.to_string();
    let mut kinds = Vec::new();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(" / ");
        text.push_str(&cause.to_string());
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            kinds.push(io.kind());
        }
        source = cause.source();
    }
    (text, kinds)
}

fn connection_faults(client: &TestClient) {
    let rule = |connection: &str| {
        let rule = json!({"match": {"operation": "metadata"}, "respond": {"connection": connection}, "hits": 1});
        assert_eq!(client.post(FAULTS, &rule, &[]).status, 201);
    };
    let long = Duration::from_secs(10);

    rule("reset");
    let error = raw_get(client, "/dbs", long).unwrap_err();
    let (text, kinds) = causes(&error);
    assert!(
        kinds.contains(&std::io::ErrorKind::ConnectionReset),
        "a reset: {text} {kinds:?}"
    );
    assert_eq!(raw_get(client, "/dbs", long).unwrap(), 200, "serves on");

    rule("close");
    let error = raw_get(client, "/dbs", long).unwrap_err();
    let (text, kinds) = causes(&error);
    assert!(
        !error.is_timeout() && !kinds.contains(&std::io::ErrorKind::ConnectionReset),
        "a close, not a reset: {text} {kinds:?}"
    );
    assert!(
        text.contains("closed") || text.contains("close_notify") || text.contains("EOF"),
        "{text}"
    );
    assert_eq!(raw_get(client, "/dbs", long).unwrap(), 200, "serves on");

    rule("hang");
    let started = Instant::now();
    let error = raw_get(client, "/dbs", Duration::from_millis(500)).unwrap_err();
    assert!(error.is_timeout(), "{}", causes(&error).0);
    assert!(started.elapsed() >= Duration::from_millis(500));
    assert_eq!(raw_get(client, "/dbs", long).unwrap(), 200, "serves on");
    assert_eq!(
        client.get(FAULTS, &[]).body["faults"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["hitCount"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [1, 1, 1]
    );
}

#[test]
fn connection_faults_over_http() {
    connection_faults(&TestClient::start());
}

#[test]
fn connection_faults_over_https() {
    let dir = crate::common::scratch_dir("faults-tls");
    let client = TestClient::start_config(Config {
        protocol: Protocol::Https,
        cert_out: Some(dir.join("emulator.pem")),
        ..Config::for_tests()
    });
    connection_faults(&client);
}

#[test]
fn connection_faults_over_auto() {
    let client = TestClient::start_config(Config {
        protocol: Protocol::Auto,
        ..Config::for_tests()
    });
    connection_faults(&client);
}

/// A hung connection left open by its client does not hold the emulator's
/// stop: the answer counts as written, so the connection is idle.
#[test]
fn a_hung_connection_does_not_hold_the_stop() {
    use std::io::{Read, Write};
    let client = TestClient::start();
    let rule = json!({"match": {"operation": "metadata"}, "respond": {"connection": "hang"}});
    assert_eq!(client.post(FAULTS, &rule, &[]).status, 201);
    let key = MasterKey::from_base64(client.emulator.key()).unwrap();
    let date = httpdate::fmt_http_date(std::time::SystemTime::now());
    let resource = signed_resource("/dbs");
    let auth = authorization_header(
        &key,
        &payload(
            "GET",
            &resource.resource_type,
            &resource.links[0],
            &date,
            "",
        ),
    );
    let address = client
        .emulator
        .endpoint()
        .trim_start_matches("http://")
        .to_string();
    let mut socket = std::net::TcpStream::connect(&address).unwrap();
    write!(
        socket,
        "GET /dbs HTTP/1.1\r\nhost: {address}\r\nx-ms-date: {date}\r\nx-ms-version: 2020-07-15\r\nauthorization: {auth}\r\n\r\n"
    )
    .unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut buffer = [0u8; 64];
    let read = socket.read(&mut buffer);
    assert!(
        matches!(&read, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock || e.kind() == std::io::ErrorKind::TimedOut),
        "no answer: {read:?}"
    );
    let (stopped, done) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        drop(client);
        let _ = stopped.send(());
    });
    assert!(
        done.recv_timeout(Duration::from_secs(10)).is_ok(),
        "the emulator stopped with the hung connection open"
    );
    drop(socket);
}
