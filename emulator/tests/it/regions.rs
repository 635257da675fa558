//! A multi-region account over HTTP (`--regions`, `regions.rs`,
//! `http/regions.rs`): each region's endpoint and the account document, the
//! 403/3 of a write sent to a read region and a failover moving it, every
//! outage mode with its end on the test clock, replication lag and pause
//! seen through session tokens (404/1002), the control routes' refusals,
//! and reset.

use std::time::Duration;

use crate::common::{Api, Reply, TestClient, START};
use cosmos_emulator::protocol::auth::MasterKey;
use cosmos_emulator::{ClockMode, Config};
use reqwest::blocking::Client;
use serde_json::{json, Value};

const REGIONS: [&str; 3] = ["West US", "East US", "North Europe"];

/// An emulator of three regions, with a client of each region's endpoint.
fn three_regions(multi_write: bool) -> (TestClient, Vec<Api>) {
    let client = TestClient::start_config(Config {
        regions: REGIONS.iter().map(|r| r.to_string()).collect(),
        multi_write,
        clock: ClockMode::Manual { start: Some(START) },
        ..Config::for_tests()
    });
    let key = MasterKey::from_base64(client.emulator.key()).unwrap();
    let http = Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let regions: Vec<Api> = client
        .emulator
        .region_endpoints()
        .iter()
        .map(|(_, url)| Api::new(url.clone(), key.clone(), http.clone()))
        .collect();
    assert_eq!(regions.len(), 3);
    (client, regions)
}

fn names(locations: &Value) -> Vec<&str> {
    locations
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect()
}

fn create_db(api: &Api, id: &str) -> Reply {
    api.post("/dbs", &json!({"id": id}), &[])
}

#[test]
fn every_region_answers_the_account_document_with_every_region_reachable_as_advertised() {
    let (client, regions) = three_regions(false);
    for (i, region) in regions.iter().enumerate() {
        let account = region.get("/", &[]);
        assert_eq!(account.status, 200, "region {i}");
        assert_eq!(names(&account.body["writableLocations"]), ["West US"]);
        assert_eq!(names(&account.body["readableLocations"]), REGIONS);
        assert_eq!(account.body["enableMultipleWriteLocations"], false);
        // Each advertised endpoint is the region's own and answers GET /.
        for (location, (name, url)) in account.body["readableLocations"]
            .as_array()
            .unwrap()
            .iter()
            .zip(client.emulator.region_endpoints())
        {
            assert_eq!(location["name"], name.as_str());
            let advertised = location["databaseAccountEndpoint"].as_str().unwrap();
            assert_eq!(advertised.trim_end_matches('/'), url.trim_end_matches('/'));
        }
    }
    let (_running, multi) = three_regions(true);
    let account = multi[1].get("/", &[]);
    assert_eq!(names(&account.body["writableLocations"]), REGIONS);
    assert_eq!(account.body["enableMultipleWriteLocations"], true);
}

#[test]
fn writes_go_to_the_write_region_and_follow_a_failover() {
    let (client, regions) = three_regions(false);
    assert_eq!(create_db(&regions[0], "db").status, 201);
    let refused = create_db(&regions[1], "other");
    refused.assert_error(403, "Forbidden");
    assert_eq!(refused.header("x-ms-substatus"), Some("3"));
    assert!(
        refused.message().contains("West US"),
        "{}",
        refused.message()
    );
    // Reads are served everywhere, on the one store.
    for region in &regions {
        assert_eq!(region.get("/dbs/db", &[]).status, 200);
    }
    let moved = client.post(
        "/_emulator/failover",
        &json!({"writeRegion": "east us"}),
        &[],
    );
    assert_eq!(moved.status, 200, "{}", moved.body);
    assert_eq!(
        create_db(&regions[0], "after").header("x-ms-substatus"),
        Some("3")
    );
    assert_eq!(create_db(&regions[1], "after").status, 201);
    let account = regions[2].get("/", &[]);
    assert_eq!(names(&account.body["writableLocations"]), ["East US"]);
    assert_eq!(
        names(&account.body["readableLocations"]),
        ["East US", "West US", "North Europe"],
        "failover order: the write region first"
    );
    // Reset puts the first region back in charge.
    assert_eq!(client.post("/_emulator/reset", &json!({}), &[]).status, 200);
    assert_eq!(create_db(&regions[0], "db").status, 201);
    // With multi-write every region writes, and there is nothing to fail over.
    let (multi_client, multi) = three_regions(true);
    assert_eq!(create_db(&multi[2], "anywhere").status, 201);
    let refused = multi_client.post(
        "/_emulator/failover",
        &json!({"writeRegion": "East US"}),
        &[],
    );
    refused.assert_error(400, "BadRequest");
}

#[test]
fn each_outage_mode_fails_clients_its_way_and_ends_on_the_test_clock() {
    let (client, regions) = three_regions(false);
    let down = |mode: &str, for_ms: Option<i64>| {
        let mut body = json!({"mode": mode});
        if let Some(ms) = for_ms {
            body["forMs"] = json!(ms);
        }
        let reply = client.post("/_emulator/regions/East%20US/down", &body, &[]);
        assert_eq!(reply.status, 200, "{}", reply.body);
    };
    let up = || {
        assert_eq!(
            client
                .post("/_emulator/regions/East%20US/up", &json!({}), &[])
                .status,
            200
        )
    };

    down("503", Some(5_000));
    let unavailable = regions[1].get("/", &[]);
    unavailable.assert_error(503, "ServiceUnavailable");
    assert_eq!(
        regions[0].get("/", &[]).status,
        200,
        "the other regions serve"
    );
    // Control routes still answer on the region that is down.
    assert_eq!(regions[1].get("/_emulator/regions", &[]).status, 200);
    client.emulator.advance(5).unwrap();
    assert_eq!(
        regions[1].get("/", &[]).status,
        200,
        "up again when its time is over"
    );

    down("403-1008", None);
    let removed = regions[1].get("/", &[]);
    removed.assert_error(403, "Forbidden");
    assert_eq!(removed.header("x-ms-substatus"), Some("1008"));
    up();

    down("reset", None);
    let reset = regions[1].try_send(reqwest::Method::GET, "/", &[], None);
    assert!(reset.is_err(), "the connection is reset");
    up();
    assert_eq!(regions[1].get("/", &[]).status, 200);

    down("hang", None);
    let hung = regions[1].try_send(reqwest::Method::GET, "/", &[], None);
    assert!(
        hung.err().is_some_and(|e| e.is_timeout()),
        "no answer comes"
    );
    up();

    down("refuse", None);
    let refused = regions[1].try_send(reqwest::Method::GET, "/", &[], None);
    assert!(
        refused.err().is_some_and(|e| e.is_connect()),
        "nothing listens"
    );
    up();
    assert_eq!(regions[1].get("/", &[]).status, 200, "listening again");
}

#[test]
fn a_read_region_behind_the_session_token_answers_404_1002() {
    let (client, regions) = three_regions(false);
    assert_eq!(create_db(&regions[0], "db").status, 201);
    let container = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
    assert_eq!(
        regions[0].post("/dbs/db/colls", &container, &[]).status,
        201
    );
    let paused = client.post(
        "/_emulator/regions/East%20US/replication",
        &json!({"paused": true}),
        &[],
    );
    assert_eq!(paused.status, 200, "{}", paused.body);
    let pk = [("x-ms-documentdb-partitionkey", "[\"a\"]")];
    let written = regions[0].post("/dbs/db/colls/c/docs", &json!({"id": "x", "pk": "a"}), &pk);
    assert_eq!(written.status, 201);
    let token = written.header("x-ms-session-token").unwrap().to_string();
    let with_token = |api: &Api| {
        api.get(
            "/dbs/db/colls/c/docs/x",
            &[pk[0], ("x-ms-session-token", token.as_str())],
        )
    };
    let behind = with_token(&regions[1]);
    behind.assert_error(404, "NotFound");
    assert_eq!(behind.header("x-ms-substatus"), Some("1002"));
    assert_eq!(
        with_token(&regions[2]).status,
        200,
        "a region that keeps up"
    );
    assert_eq!(with_token(&regions[0]).status, 200, "the write region");
    // The lagging region's own tokens name what it has, never more.
    let own = regions[1].get("/dbs/db/colls/c/docs/x", &pk);
    assert_eq!(own.status, 200);
    let own_token = own.header("x-ms-session-token").unwrap();
    assert_ne!(own_token, token, "{own_token} vs {token}");
    // Resumed: caught up.
    let resumed = client.post(
        "/_emulator/regions/East%20US/replication",
        &json!({"paused": false}),
        &[],
    );
    assert_eq!(resumed.status, 200);
    assert_eq!(with_token(&regions[1]).status, 200);

    // A lag on the emulator's clock: the write arrives lagMs later.
    let lagging = client.post(
        "/_emulator/regions/North%20Europe/replication",
        &json!({"lagMs": 3000}),
        &[],
    );
    assert_eq!(lagging.status, 200);
    let written = regions[0].post("/dbs/db/colls/c/docs", &json!({"id": "y", "pk": "a"}), &pk);
    let token = written.header("x-ms-session-token").unwrap().to_string();
    let read = |api: &Api| {
        api.get(
            "/dbs/db/colls/c/docs/y",
            &[pk[0], ("x-ms-session-token", token.as_str())],
        )
        .status
    };
    assert_eq!(read(&regions[2]), 404);
    client.emulator.advance(3).unwrap();
    assert_eq!(read(&regions[2]), 200);
}

#[test]
fn region_control_bodies_are_checked() {
    let (client, _) = three_regions(false);
    let post = |path: &str, body: Value| client.post(path, &body, &[]);
    post("/_emulator/regions/Mars/down", json!({})).assert_error(404, "NotFound");
    post("/_emulator/regions/Mars/up", json!({})).assert_error(404, "NotFound");
    post(
        "/_emulator/regions/East%20US/down",
        json!({"mode": "flood"}),
    )
    .assert_error(400, "BadRequest");
    post("/_emulator/regions/East%20US/down", json!({"forMs": 0})).assert_error(400, "BadRequest");
    post("/_emulator/regions/East%20US/down", json!({"mood": "503"}))
        .assert_error(400, "BadRequest");
    post("/_emulator/failover", json!({})).assert_error(400, "BadRequest");
    post("/_emulator/failover", json!({"writeRegion": "Mars"})).assert_error(404, "NotFound");
    post("/_emulator/regions/East%20US/replication", json!({})).assert_error(400, "BadRequest");
    post(
        "/_emulator/regions/East%20US/replication",
        json!({"lagMs": -1}),
    )
    .assert_error(400, "BadRequest");
    // Nothing changed.
    let regions = client.get("/_emulator/regions", &[]);
    for region in regions.body["regions"].as_array().unwrap() {
        assert_eq!(region["down"], Value::Null, "{region}");
        assert_eq!(region["lagMs"], 0);
    }
    assert_eq!(regions.body["regions"][0]["writes"], true);
}

#[test]
fn one_region_serves_as_before() {
    let client = TestClient::start();
    let account = client.get("/", &[]);
    assert_eq!(
        names(&account.body["readableLocations"]),
        [cosmos_emulator::REGION]
    );
    assert_eq!(client.emulator.region_endpoints().len(), 1);
    assert_eq!(
        client.get("/_emulator/regions", &[]).body["regions"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_read_region_serves_queries_feeds_and_expiry_on_the_one_store() {
    let (client, regions) = three_regions(false);
    assert_eq!(create_db(&regions[0], "db").status, 201);
    let container =
        json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}, "defaultTtl": 10});
    assert_eq!(
        regions[0].post("/dbs/db/colls", &container, &[]).status,
        201
    );
    let pk = [("x-ms-documentdb-partitionkey", "[\"a\"]")];
    for id in ["x", "y"] {
        let reply = regions[0].post("/dbs/db/colls/c/docs", &json!({"id": id, "pk": "a"}), &pk);
        assert_eq!(reply.status, 201);
    }
    let query = regions[2].post(
        "/dbs/db/colls/c/docs",
        &json!({"query": "SELECT VALUE c.id FROM c"}),
        &[
            pk[0],
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
        ],
    );
    assert_eq!(query.status, 200, "{}", query.body);
    assert_eq!(query.body["Documents"], json!(["x", "y"]));
    let feed = regions[1].get(
        "/dbs/db/colls/c/docs",
        &[
            ("a-im", "Incremental feed"),
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
        ],
    );
    assert_eq!(feed.status, 200, "{}", feed.body);
    assert_eq!(feed.body["Documents"].as_array().unwrap().len(), 2);
    // TTL runs on the one clock: gone from every region at once.
    client.emulator.advance(10).unwrap();
    for region in &regions {
        assert_eq!(region.get("/dbs/db/colls/c/docs/x", &pk).status, 404);
    }
}

#[test]
fn a_fault_rule_can_name_a_region() {
    let (client, regions) = three_regions(false);
    let rule =
        json!({"match": {"region": "East US", "operation": "read"}, "respond": {"status": 503}});
    let added = client.post("/_emulator/faults", &rule, &[]);
    assert_eq!(added.status, 201, "{}", added.body);
    assert_eq!(create_db(&regions[0], "db").status, 201);
    assert_eq!(
        regions[1].get("/dbs/db", &[]).status,
        200,
        "metadata is not a read"
    );
    assert_eq!(regions[0].get("/dbs/db", &[]).status, 200);
    let container = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
    assert_eq!(
        regions[0].post("/dbs/db/colls", &container, &[]).status,
        201
    );
    let pk = [("x-ms-documentdb-partitionkey", "[\"a\"]")];
    assert_eq!(
        regions[0]
            .post("/dbs/db/colls/c/docs", &json!({"id": "x", "pk": "a"}), &pk)
            .status,
        201
    );
    regions[1]
        .get("/dbs/db/colls/c/docs/x", &pk)
        .assert_error(503, "ServiceUnavailable");
    assert_eq!(regions[2].get("/dbs/db/colls/c/docs/x", &pk).status, 200);
    assert_eq!(regions[0].get("/dbs/db/colls/c/docs/x", &pk).status, 200);
}

/// Session tokens name the container's LSN, and a read region checks them
/// against the LSN of that container its replica has applied: writes to
/// another container after replication paused hold back none of this
/// container's reads, a write to this one does.
#[test]
fn a_read_region_checks_a_session_token_against_its_containers_lsn() {
    let (client, regions) = three_regions(false);
    assert_eq!(create_db(&regions[0], "db").status, 201);
    for id in ["c", "other"] {
        let container = json!({"id": id, "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
        assert_eq!(
            regions[0].post("/dbs/db/colls", &container, &[]).status,
            201
        );
    }
    let pk = [("x-ms-documentdb-partitionkey", "[\"a\"]")];
    let write = |coll: &str, id: &str| {
        let reply = regions[0].post(
            &format!("/dbs/db/colls/{coll}/docs"),
            &json!({"id": id, "pk": "a"}),
            &pk,
        );
        assert_eq!(reply.status, 201, "{}", reply.body);
        reply.header("x-ms-session-token").unwrap().to_string()
    };
    assert_eq!(write("c", "x"), "0:-1#1");
    let before = write("c", "y");
    assert_eq!(before, "0:-1#2");
    let paused = client.post(
        "/_emulator/regions/East%20US/replication",
        &json!({"paused": true}),
        &[],
    );
    assert_eq!(paused.status, 200, "{}", paused.body);
    for i in 0..5 {
        write("other", &format!("o{i}"));
    }
    let read = |api: &Api, token: &str| {
        api.get(
            "/dbs/db/colls/c/docs/x",
            &[pk[0], ("x-ms-session-token", token)],
        )
    };
    let served = read(&regions[1], &before);
    assert_eq!(served.status, 200, "{}", served.body);
    assert_eq!(served.header("x-ms-session-token"), Some("0:-1#2"));
    let after = write("c", "z");
    assert_eq!(after, "0:-1#3");
    let behind = read(&regions[1], &after);
    behind.assert_error(404, "NotFound");
    assert_eq!(behind.header("x-ms-substatus"), Some("1002"));
    // The paused region names what it has applied of this container.
    let own = regions[1].get("/dbs/db/colls/c/docs/x", &pk);
    assert_eq!(own.header("x-ms-session-token"), Some("0:-1#2"));
    assert_eq!(read(&regions[0], &after).status, 200, "the write region");
}

/// The same per range: a read region checks a session token against the
/// LSN of the token's range its replica has applied. Writes to one range
/// after replication paused hold back none of another range's reads.
#[test]
fn a_read_region_checks_a_session_token_against_its_ranges_lsn() {
    let (client, regions) = three_regions(false);
    assert_eq!(create_db(&regions[0], "db").status, 201);
    let container =
        json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}});
    let created = regions[0].post(
        "/dbs/db/colls",
        &container,
        &[("x-ms-offer-throughput", "18000")],
    );
    assert_eq!(created.status, 201, "{}", created.body);
    let write = |pk: &str, id: &str| {
        let reply = regions[0].post(
            "/dbs/db/colls/c/docs",
            &json!({"id": id, "pk": pk}),
            &[("x-ms-documentdb-partitionkey", &format!("[\"{pk}\"]"))],
        );
        assert_eq!(reply.status, 201, "{}", reply.body);
        let range = reply
            .header("x-ms-documentdb-partitionkeyrangeid")
            .unwrap()
            .to_string();
        (
            range,
            reply.header("x-ms-session-token").unwrap().to_string(),
        )
    };
    // Two partitions in two ranges.
    let (range_a, token_a) = write("a", "a0");
    let (b, (range_b, _)) = (0..50)
        .map(|i| format!("b{i}"))
        .map(|pk| (pk.clone(), write(&pk, "first")))
        .find(|(_, (range, _))| *range != range_a)
        .expect("a partition in another range");
    assert_eq!(token_a, format!("{range_a}:-1#1"));
    let paused = client.post(
        "/_emulator/regions/East%20US/replication",
        &json!({"paused": true}),
        &[],
    );
    assert_eq!(paused.status, 200, "{}", paused.body);
    let (_, token_b) = write(&b, "second");
    assert!(token_b.starts_with(&format!("{range_b}:-1#")), "{token_b}");
    let read = |pk: &str, id: &str, token: &str| {
        regions[1].get(
            &format!("/dbs/db/colls/c/docs/{id}"),
            &[
                ("x-ms-documentdb-partitionkey", &format!("[\"{pk}\"]")),
                ("x-ms-session-token", token),
            ],
        )
    };
    let served = read("a", "a0", &token_a);
    assert_eq!(served.status, 200, "{}", served.body);
    assert_eq!(served.header("x-ms-session-token"), Some(token_a.as_str()));
    let behind = read(&b, "first", &token_b);
    behind.assert_error(404, "NotFound");
    assert_eq!(behind.header("x-ms-substatus"), Some("1002"));
}
