//! Throughput offers over HTTP: created with their database or container,
//! read by query, by feed and by RID, replaced and migrated, validated as the
//! service validates them, and gone with their resource. Also the conflicts
//! feed and the normalised container shape.

use crate::common::{Reply, TestClient};
use serde_json::{json, Value};

trait AssertStatus {
    fn assert_status(&self, status: u16);
}

impl AssertStatus for Reply {
    #[track_caller]
    fn assert_status(&self, status: u16) {
        assert_eq!(self.status, status, "{}", self.body);
    }
}

const QUERY_HEADERS: [(&str, &str); 2] = [
    ("x-ms-documentdb-isquery", "True"),
    ("content-type", "application/query+json"),
];

/// The offers whose `resource` is `link`, as the SDKs query them.
fn offers_of(c: &TestClient, link: &str) -> Vec<Value> {
    let reply = c.post(
        "/offers",
        &json!({
            "query": "SELECT * FROM root r WHERE r.resource = @link",
            "parameters": [{"name": "@link", "value": link}],
        }),
        &QUERY_HEADERS,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.body["_count"],
        reply.body["Offers"].as_array().unwrap().len()
    );
    reply.body["Offers"].as_array().unwrap().clone()
}

fn create_db(c: &TestClient, id: &str, headers: &[(&str, &str)]) -> Reply {
    c.post("/dbs", &json!({ "id": id }), headers)
}

fn create_coll(c: &TestClient, db: &str, id: &str, headers: &[(&str, &str)]) -> Reply {
    c.post(
        &format!("/dbs/{db}/colls"),
        &json!({"id": id, "partitionKey": {"paths": ["/pk"], "kind": "Hash"}}),
        headers,
    )
}

fn self_link(reply: &Reply) -> String {
    reply.body["_self"].as_str().unwrap().to_string()
}

#[test]
fn a_container_gets_the_throughput_it_asks_for_in_the_service_shape() {
    let c = TestClient::start();
    create_db(&c, "db", &[]).assert_status(201);
    let coll = create_coll(&c, "db", "c", &[("x-ms-offer-throughput", "1200")]);
    coll.assert_status(201);
    let offers = offers_of(&c, &self_link(&coll));
    assert_eq!(offers.len(), 1, "{offers:?}");
    let offer = &offers[0];
    assert_eq!(offer["offerVersion"], "V2");
    assert_eq!(offer["offerType"], "Invalid");
    assert_eq!(offer["resource"], coll.body["_self"]);
    assert_eq!(offer["offerResourceId"], coll.body["_rid"]);
    assert_eq!(offer["content"]["offerThroughput"], 1200);
    assert_eq!(
        offer["content"]["offerIsRUPerMinuteThroughputEnabled"],
        false
    );
    assert!(offer["content"].get("offerAutopilotSettings").is_none());
    let rid = offer["_rid"].as_str().unwrap();
    assert_eq!(offer["id"], rid);
    assert_eq!(rid.len(), 4);
    assert_eq!(offer["_self"], format!("offers/{rid}/"));
    assert!(offer["_etag"].is_string() && offer["_ts"].is_i64());

    // By RID, signed with the RID in lower case, and in the feed.
    let read = c.get(&format!("/offers/{rid}"), &[]);
    read.assert_status(200);
    assert_eq!(&read.body, offer);
    assert_eq!(read.header("x-ms-cosmos-min-throughput"), Some("400"));
    let feed = c.get("/offers", &[]);
    feed.assert_status(200);
    assert!(feed.body["Offers"].as_array().unwrap().contains(offer));
}

#[test]
fn containers_without_throughput_get_400_unless_the_database_shares_throughput() {
    let c = TestClient::start();
    let plain_db = create_db(&c, "plain", &[]);
    assert!(
        offers_of(&c, &self_link(&plain_db)).is_empty(),
        "no database offer"
    );
    let dedicated = create_coll(&c, "plain", "c", &[]);
    let offers = offers_of(&c, &self_link(&dedicated));
    assert_eq!(offers[0]["content"]["offerThroughput"], 400);

    let shared_db = create_db(&c, "shared", &[("x-ms-offer-throughput", "800")]);
    shared_db.assert_status(201);
    assert_eq!(
        offers_of(&c, &self_link(&shared_db))[0]["content"]["offerThroughput"],
        800
    );
    let sharing = create_coll(&c, "shared", "s", &[]);
    assert!(offers_of(&c, &self_link(&sharing)).is_empty());
    let own = create_coll(&c, "shared", "own", &[("x-ms-offer-throughput", "500")]);
    assert_eq!(
        offers_of(&c, &self_link(&own))[0]["content"]["offerThroughput"],
        500
    );
}

#[test]
fn autoscale_offers_show_the_maximum_and_scale_from_a_tenth() {
    let c = TestClient::start();
    let db = create_db(
        &c,
        "db",
        &[(
            "x-ms-cosmos-offer-autopilot-settings",
            r#"{"maxThroughput": 4000}"#,
        )],
    );
    db.assert_status(201);
    let offer = offers_of(&c, &self_link(&db)).remove(0);
    assert_eq!(
        offer["content"]["offerAutopilotSettings"]["maxThroughput"],
        4000
    );
    assert_eq!(offer["content"]["offerThroughput"], 400);
    let read = c.get(&format!("/offers/{}", offer["id"].as_str().unwrap()), &[]);
    assert_eq!(read.header("x-ms-cosmos-min-throughput"), Some("1000"));

    // The raise: a new maximum, and the policy the Python SDK sends, echoed.
    let mut raised = offer.clone();
    raised["content"]["offerAutopilotSettings"] = json!({
        "maxThroughput": 10000,
        "autoUpgradePolicy": {"throughputPolicy": {"incrementPercent": 10}},
    });
    let reply = c.put(
        &format!("/offers/{}", offer["id"].as_str().unwrap()),
        &raised,
        &[],
    );
    reply.assert_status(200);
    assert_eq!(
        reply.body["content"]["offerAutopilotSettings"]["maxThroughput"],
        10000
    );
    assert_eq!(
        reply.body["content"]["offerAutopilotSettings"]["autoUpgradePolicy"]["throughputPolicy"]
            ["incrementPercent"],
        10
    );
    assert_eq!(reply.body["content"]["offerThroughput"], 1000);
    assert_ne!(reply.body["_etag"], offer["_etag"]);
}

#[test]
fn create_throughput_is_validated_and_a_refusal_creates_nothing() {
    let c = TestClient::start();
    for (header, value) in [
        ("x-ms-offer-throughput", "300"),
        ("x-ms-offer-throughput", "450"),
        ("x-ms-offer-throughput", "1000100"),
        ("x-ms-offer-throughput", "many"),
        (
            "x-ms-cosmos-offer-autopilot-settings",
            r#"{"maxThroughput": 500}"#,
        ),
        (
            "x-ms-cosmos-offer-autopilot-settings",
            r#"{"maxThroughput": 4500}"#,
        ),
        ("x-ms-cosmos-offer-autopilot-settings", r#"{"max": 4000}"#),
        ("x-ms-cosmos-offer-autopilot-settings", "not json"),
    ] {
        let reply = create_db(&c, "db", &[(header, value)]);
        reply.assert_error(400, "BadRequest");
        assert!(reply.message().contains("throughput") || reply.message().contains("Throughput"));
    }
    // Under the minimum, negative or not: the service's words.
    for (header, value, expected) in [
        (
            "x-ms-offer-throughput",
            "300",
            "Requested throughput 300 is less than required minimum throughput 400.",
        ),
        (
            "x-ms-offer-throughput",
            "-5",
            "Requested throughput -5 is less than required minimum throughput 400.",
        ),
        (
            "x-ms-cosmos-offer-autopilot-settings",
            r#"{"maxThroughput": -200}"#,
            "Requested throughput -200 is less than required minimum throughput 1000.",
        ),
    ] {
        let reply = create_db(&c, "db", &[(header, value)]);
        reply.assert_error(400, "BadRequest");
        assert_eq!(reply.message(), expected);
    }
    let reply = create_db(&c, "db", &[("x-ms-offer-throughput", "450")]);
    assert!(
        reply
            .message()
            .contains("between 400 and 1000000 inclusive in increments of 100"),
        "{}",
        reply.message()
    );
    let both = create_db(
        &c,
        "db",
        &[
            ("x-ms-offer-throughput", "400"),
            (
                "x-ms-cosmos-offer-autopilot-settings",
                r#"{"maxThroughput": 4000}"#,
            ),
        ],
    );
    both.assert_error(400, "BadRequest");
    c.get("/dbs/db", &[]).assert_error(404, "NotFound");
    assert_eq!(c.get("/offers", &[]).body["_count"], 0);

    create_db(&c, "db", &[]).assert_status(201);
    create_coll(&c, "db", "c", &[("x-ms-offer-throughput", "399")]).assert_error(400, "BadRequest");
    c.get("/dbs/db/colls/c", &[]).assert_error(404, "NotFound");
    assert_eq!(c.get("/offers", &[]).body["_count"], 0);
}

#[test]
fn replace_changes_manual_throughput_and_refuses_what_the_service_refuses() {
    let c = TestClient::start();
    create_db(&c, "db", &[]);
    let coll = create_coll(&c, "db", "c", &[]);
    let offer = offers_of(&c, &self_link(&coll)).remove(0);
    let path = format!("/offers/{}", offer["id"].as_str().unwrap());
    let with = |throughput: Value| {
        let mut body = offer.clone();
        body["content"]["offerThroughput"] = throughput;
        body
    };
    let reply = c.put(&path, &with(json!(2500)), &[]);
    reply.assert_status(200);
    assert_eq!(reply.body["content"]["offerThroughput"], 2500);
    assert_eq!(
        reply.body["content"]["offerMinimumThroughputParameters"]["maxThroughputEverProvisioned"],
        2500
    );
    assert_eq!(c.get(&path, &[]).body, reply.body);

    for bad in [json!(350), json!(2550), json!("400"), json!(null)] {
        c.put(&path, &with(bad), &[])
            .assert_error(400, "BadRequest");
    }
    // An offer addressed by its `_self` instead of its id (as the JavaScript
    // SDK's test does on purpose): a malformed offer link, 400, not a 404.
    let by_self = format!("/offers/{}", offer["_self"].as_str().unwrap());
    let malformed = c.put(&by_self, &with(json!(600)), &[]);
    malformed.assert_error(400, "BadRequest");
    assert!(
        malformed.message().contains("/offers/{rid}"),
        "{}",
        malformed.message()
    );
    assert_eq!(c.get(&path, &[]).body["content"]["offerThroughput"], 2500);
    // Switching mode needs the migration API.
    let mut autoscale = offer.clone();
    autoscale["content"]["offerAutopilotSettings"] = json!({"maxThroughput": 4000});
    let refused = c.put(&path, &autoscale, &[]);
    refused.assert_error(400, "BadRequest");
    assert!(
        refused.message().contains("migrat"),
        "{}",
        refused.message()
    );
    // Not another resource's offer, not a stale etag.
    let mut other = with(json!(400));
    other["offerResourceId"] = json!("AAAAAAAAAAA=");
    c.put(&path, &other, &[]).assert_error(400, "BadRequest");
    c.put(&path, &with(json!(400)), &[("if-match", "\"stale\"")])
        .assert_error(412, "PreconditionFailed");
    c.put(&path, &json!({"id": offer["id"]}), &[])
        .assert_error(400, "BadRequest");
    // Nothing changed.
    assert_eq!(c.get(&path, &[]).body["content"]["offerThroughput"], 2500);
    c.put("/offers/ZZZZ", &with(json!(400)), &[])
        .assert_error(404, "NotFound");
    c.get("/offers/ZZZZ", &[]).assert_error(404, "NotFound");
}

#[test]
fn migration_headers_switch_between_manual_and_autoscale() {
    let c = TestClient::start();
    create_db(&c, "db", &[]);
    let coll = create_coll(&c, "db", "c", &[("x-ms-offer-throughput", "6000")]);
    let offer = offers_of(&c, &self_link(&coll)).remove(0);
    let path = format!("/offers/{}", offer["id"].as_str().unwrap());
    let to_auto = [("x-ms-cosmos-migrate-offer-to-autopilot", "true")];
    let to_manual = [("x-ms-cosmos-migrate-offer-to-manual-throughput", "true")];
    let migrated = c.put(&path, &offer, &to_auto);
    migrated.assert_status(200);
    assert_eq!(
        migrated.body["content"]["offerAutopilotSettings"]["maxThroughput"],
        6000
    );
    c.put(&path, &migrated.body, &to_auto)
        .assert_error(400, "BadRequest");
    // A manual value sent to an autoscale offer is refused, not ignored.
    let mut manual_body = migrated.body.clone();
    manual_body["content"]
        .as_object_mut()
        .unwrap()
        .remove("offerAutopilotSettings");
    let refused = c.put(&path, &manual_body, &[]);
    refused.assert_error(400, "BadRequest");
    assert!(
        refused.message().contains("migration API"),
        "{}",
        refused.message()
    );
    let back = c.put(&path, &migrated.body, &to_manual);
    back.assert_status(200);
    assert_eq!(back.body["content"]["offerThroughput"], 6000);
    assert!(back.body["content"].get("offerAutopilotSettings").is_none());
    let both = [to_auto[0], to_manual[0]];
    c.put(&path, &back.body, &both)
        .assert_error(400, "BadRequest");
}

#[test]
fn offers_go_with_their_resource() {
    let c = TestClient::start();
    create_db(&c, "db", &[("x-ms-offer-throughput", "400")]);
    create_coll(&c, "db", "own", &[("x-ms-offer-throughput", "400")]);
    create_db(&c, "other", &[]);
    let kept = create_coll(&c, "other", "c", &[]);
    let doomed = create_coll(&c, "other", "d", &[]);
    assert_eq!(c.get("/offers", &[]).body["_count"], 4);
    let doomed_rid = offers_of(&c, &self_link(&doomed))[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    c.delete("/dbs/other/colls/d", &[]).assert_status(204);
    c.get(&format!("/offers/{doomed_rid}"), &[])
        .assert_error(404, "NotFound");
    c.delete("/dbs/db", &[]).assert_status(204);
    let left = c.get("/offers", &[]);
    assert_eq!(left.body["_count"], 1, "{}", left.body);
    assert_eq!(left.body["Offers"][0]["resource"], kept.body["_self"]);
    // A recreated database starts without the old offer.
    let again = create_db(&c, "db", &[]);
    assert!(offers_of(&c, &self_link(&again)).is_empty());
}

#[test]
fn offers_are_signed_with_the_lowercased_rid() {
    let c = TestClient::start();
    create_db(&c, "db", &[]);
    let coll = create_coll(&c, "db", "c", &[]);
    let rid = offers_of(&c, &self_link(&coll))[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let resource = cosmos_emulator::protocol::auth::signed_resource(&format!("/offers/{rid}"));
    assert_eq!(resource.resource_type, "offers");
    assert_eq!(resource.links, vec![rid.to_lowercase()]);
    // A signature over the RID as written (not lower case) is refused,
    // unless the RID has no letters to lower.
    if rid != rid.to_lowercase() {
        let key =
            cosmos_emulator::protocol::auth::MasterKey::from_base64(c.emulator.key()).unwrap();
        let date = httpdate::fmt_http_date(std::time::SystemTime::now());
        let auth = cosmos_emulator::protocol::auth::authorization_header(
            &key,
            &cosmos_emulator::protocol::auth::payload("GET", "offers", &rid, &date, ""),
        );
        let response = reqwest::blocking::Client::new()
            .get(format!("{}/offers/{rid}", c.emulator.endpoint()))
            .header("x-ms-date", &date)
            .header("authorization", auth)
            .send()
            .unwrap();
        assert_eq!(response.status(), 401);
    }
}

#[test]
fn the_conflicts_feed_is_empty_and_well_formed() {
    let c = TestClient::start();
    create_db(&c, "db", &[]);
    let coll = create_coll(&c, "db", "c", &[]);
    let feed = c.get("/dbs/db/colls/c/conflicts", &[]);
    feed.assert_status(200);
    assert_eq!(
        feed.body,
        json!({"_rid": coll.body["_rid"], "Conflicts": [], "_count": 0})
    );
    let conflicts_query =
        json!({"query": "SELECT * FROM root r WHERE r.resourceType = 'document'"});
    // Across partitions only when asked for, as the service answers the
    // Python SDK's query_conflicts with partition_key=None.
    c.post(
        "/dbs/db/colls/c/conflicts",
        &conflicts_query,
        &QUERY_HEADERS,
    )
    .assert_error(400, "BadRequest");
    for scope in [
        ("x-ms-documentdb-query-enablecrosspartition", "True"),
        ("x-ms-documentdb-partitionkey", "[\"p\"]"),
    ] {
        let query = c.post(
            "/dbs/db/colls/c/conflicts",
            &conflicts_query,
            &[QUERY_HEADERS[0], QUERY_HEADERS[1], scope],
        );
        query.assert_status(200);
        assert_eq!(query.body["Conflicts"], json!([]));
    }
    c.post(
        "/dbs/db/colls/c/conflicts",
        &json!({"query": "SELECT FROM"}),
        &QUERY_HEADERS,
    )
    .assert_error(400, "BadRequest");
    c.get("/dbs/db/colls/c/conflicts/x", &[])
        .assert_error(404, "NotFound");
    c.get("/dbs/db/colls/nope/conflicts", &[])
        .assert_error(404, "NotFound");
}

#[test]
fn a_minimal_container_comes_back_in_the_service_shape() {
    let c = TestClient::start();
    create_db(&c, "db", &[]);
    let reply = c.post(
        "/dbs/db/colls",
        &json!({"id": "c", "partitionKey": {"paths": ["/pk"]}}),
        &[],
    );
    reply.assert_status(201);
    let body = &reply.body;
    assert_eq!(
        body["indexingPolicy"],
        json!({
            "indexingMode": "consistent",
            "automatic": true,
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": "/\"_etag\"/?"}],
        })
    );
    // Without a version, version 1 ("if not specified the default value is
    // 1": @azure/cosmos's PartitionKeyDefinition, which sends none).
    assert_eq!(
        body["partitionKey"],
        json!({"paths": ["/pk"], "kind": "Hash", "version": 1})
    );
    assert_eq!(
        body["conflictResolutionPolicy"],
        json!({"mode": "LastWriterWins", "conflictResolutionPath": "/_ts", "conflictResolutionProcedure": ""})
    );
    assert_eq!(body["geospatialConfig"], json!({"type": "Geography"}));
    for absent in [
        "fullTextPolicy",
        "vectorEmbeddingPolicy",
        "defaultTtl",
        "computedProperties",
    ] {
        assert!(body.get(absent).is_none(), "{absent}: {body}");
    }
    assert_eq!(c.get("/dbs/db/colls/c", &[]).body, reply.body);

    // The service adds the `_etag` exclusion to a client's own excluded paths.
    let custom = c.post(
        "/dbs/db/colls",
        &json!({"id": "custom", "partitionKey": {"paths": ["/pk"]},
                "indexingPolicy": {"excludedPaths": [{"path": "/big/*"}]}}),
        &[],
    );
    custom.assert_status(201);
    assert_eq!(
        custom.body["indexingPolicy"]["excludedPaths"],
        json!([{"path": "/big/*"}, {"path": "/\"_etag\"/?"}])
    );
}
