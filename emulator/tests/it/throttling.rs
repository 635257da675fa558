//! Throttling by provisioned throughput over HTTP (`--rate-limit`,
//! `throttle.rs`): the service's 429/3200 with `x-ms-retry-after-ms`, the
//! budget per physical partition and second of the test clock, shared
//! database throughput, priority, burst capacity, and what is never
//! throttled.

use crate::common::{Reply, TestClient, COLL, DB, START};
use cosmos_emulator::{ClockMode, Config};
use serde_json::{json, Value};

fn charge(reply: &Reply) -> f64 {
    reply
        .header("x-ms-request-charge")
        .unwrap()
        .parse()
        .unwrap()
}

fn started(config: Config) -> TestClient {
    let client = TestClient::start_config(Config {
        rate_limit: true,
        clock: ClockMode::Manual { start: Some(START) },
        ..config
    });
    assert_eq!(client.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    client
}

/// An item of about 1 KB.
fn item(id: &str, pk: &str) -> Value {
    json!({"id": id, "pk": pk, "blob": "x".repeat(800)})
}

/// Writes to `pk` until one is throttled: the charges of those admitted,
/// and the 429.
fn write_until_throttled(
    client: &TestClient,
    coll: &str,
    pk: &str,
    tag: &str,
) -> (Vec<f64>, Reply) {
    let mut charges = Vec::new();
    for i in 0..10_000 {
        let reply = client.post(
            &format!("/dbs/db/colls/{coll}/docs"),
            &item(&format!("{tag}{i}"), pk),
            &[("x-ms-documentdb-partitionkey", &json!([pk]).to_string())],
        );
        if reply.status == 429 {
            return (charges, reply);
        }
        assert_eq!(reply.status, 201, "{}", reply.body);
        charges.push(charge(&reply));
    }
    panic!("never throttled");
}

#[test]
fn a_partition_over_its_second_answers_429_3200_and_refills_when_the_clock_moves() {
    let client = started(Config::for_tests());
    assert_eq!(client.create_container("c", None).status, 201);
    let (charges, throttled) = write_until_throttled(&client, "c", "p", "a");
    let spent: f64 = charges.iter().sum();
    let last = charges.last().copied().unwrap();
    assert!(
        spent >= 400.0,
        "the 400 RU/s were spent before the 429: {spent}"
    );
    assert!(spent < 400.0 + last, "by no more than one request: {spent}");
    // The service's shape, and always the wait.
    throttled.assert_error(429, "TooManyRequests");
    assert_eq!(throttled.header("x-ms-substatus"), Some("3200"));
    assert_eq!(throttled.header("x-ms-retry-after-ms"), Some("1000"));
    assert_eq!(throttled.header("x-ms-request-charge"), Some("0"));
    assert!(
        throttled.message().contains("Request rate is large"),
        "{}",
        throttled.message()
    );
    assert!(throttled.header("x-ms-activity-id").is_some());
    // Nothing changed: the refused write is not there.
    let refused = format!("a{}", charges.len());
    assert_eq!(
        client.read_item(&refused, "p").status,
        429,
        "reads wait too"
    );
    client.emulator.advance(1).unwrap();
    assert_eq!(
        client.read_item(&refused, "p").status,
        404,
        "and it was not written"
    );
    assert_eq!(
        client.create_item(&item(&refused, "p")).status,
        201,
        "refilled"
    );
}

#[test]
fn control_routes_the_account_and_metadata_are_not_spent_by_data() {
    let client = started(Config::for_tests());
    assert_eq!(client.create_container("c", None).status, 201);
    let (_, throttled) = write_until_throttled(&client, "c", "p", "a");
    assert_eq!(throttled.status, 429);
    assert_eq!(client.get("/", &[]).status, 200, "the account read");
    assert_eq!(
        client.get("/_emulator/clock", &[]).status,
        200,
        "control routes"
    );
    assert_eq!(
        client.get("/dbs/db/colls/c", &[]).status,
        200,
        "metadata has its own budget"
    );
    assert_eq!(
        client.post("/dbs", &json!({"id": "other"}), &[]).status,
        201
    );
    // Reset forgets the spending with the data.
    assert_eq!(client.post("/_emulator/reset", &json!({}), &[]).status, 200);
    assert_eq!(client.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    assert_eq!(client.create_container("c", None).status, 201);
    assert_eq!(client.create_item(&item("fresh", "p")).status, 201);
}

/// A partition key whose range in `container` (of database `db`) is not
/// the range of `k0`: probe items are written until one lands elsewhere.
fn key_in_another_range_than_k0(client: &TestClient, container: &str) -> String {
    let range_of = |pk: &str| {
        let reply = client.post(
            &format!("/dbs/db/colls/{container}/docs"),
            &item(&format!("probe-{pk}"), pk),
            &[("x-ms-documentdb-partitionkey", &json!([pk]).to_string())],
        );
        assert_eq!(reply.status, 201, "{}", reply.body);
        reply
            .header("x-ms-documentdb-partitionkeyrangeid")
            .unwrap()
            .to_string()
    };
    let first = range_of("k0");
    (1..100)
        .map(|i| format!("k{i}"))
        .find(|pk| range_of(pk) != first)
        .expect("a key in the other range")
}

#[test]
fn each_physical_partition_has_its_share() {
    let client = started(Config {
        min_ranges_per_container: 2,
        ..Config::for_tests()
    });
    assert_eq!(client.create_container("c", None).status, 201);
    let other = key_in_another_range_than_k0(&client, "c");
    client.emulator.advance(1).unwrap();
    let (charges, _) = write_until_throttled(&client, "c", "k0", "a");
    let spent: f64 = charges.iter().sum();
    assert!(
        (200.0..200.0 + charges[0] + 0.01).contains(&spent),
        "400 RU/s over 2 partitions: {spent}"
    );
    assert_eq!(
        client.create_item(&item("b", &other)).status,
        201,
        "the other partition still has its own"
    );
}

/// Writes to `coll` of the database `db` in `pk` until one is throttled:
/// what the admitted writes spent.
fn spend_until_throttled(client: &TestClient, db: &str, coll: &str, pk: &str, tag: &str) -> f64 {
    let mut spent = 0.0;
    for i in 0..10_000 {
        let reply = client.post(
            &format!("/dbs/{db}/colls/{coll}/docs"),
            &item(&format!("{tag}{i}"), pk),
            &[("x-ms-documentdb-partitionkey", &json!([pk]).to_string())],
        );
        if reply.status == 429 {
            assert_eq!(reply.header("x-ms-substatus"), Some("3200"));
            return spent;
        }
        assert_eq!(reply.status, 201, "{}", reply.body);
        spent += charge(&reply);
    }
    panic!("never throttled");
}

/// A database of `ru` RU/s shared by the containers `colls`.
fn shared_database(client: &TestClient, ru: &str, colls: &[&str]) {
    let reply = client.post(
        "/dbs",
        &json!({"id": "shared"}),
        &[("x-ms-offer-throughput", ru)],
    );
    assert_eq!(reply.status, 201, "{}", reply.body);
    for coll in colls {
        let body = json!({"id": coll, "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
        assert_eq!(client.post("/dbs/shared/colls", &body, &[]).status, 201);
    }
}

#[test]
fn one_busy_container_may_use_its_shared_databases_whole_throughput() {
    for containers in [2, 4] {
        let client = started(Config::for_tests());
        let colls: Vec<String> = (0..containers).map(|i| format!("c{i}")).collect();
        let colls: Vec<&str> = colls.iter().map(String::as_str).collect();
        shared_database(&client, "400", &colls);
        // The others idle: the busy one spends all 400 RU of the second
        // (not 400 divided among the containers).
        let spent = spend_until_throttled(&client, "shared", "c0", "p", "a");
        assert!(
            (400.0..415.0).contains(&spent),
            "{containers} containers, one busy: {spent}"
        );
        // The second is the database's: every container sharing it is
        // refused until the clock moves.
        for coll in &colls[1..] {
            let reply = client.post(
                &format!("/dbs/shared/colls/{coll}/docs"),
                &item("b", "q"),
                &[("x-ms-documentdb-partitionkey", "[\"q\"]")],
            );
            reply.assert_error(429, "TooManyRequests");
        }
        client.emulator.advance(1).unwrap();
        // Two busy ones share it: together they spend the 400 once.
        let mut spent = 0.0;
        let mut i = 0;
        loop {
            let coll = colls[i % 2];
            let reply = client.post(
                &format!("/dbs/shared/colls/{coll}/docs"),
                &item(&format!("t{i}"), "p"),
                &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
            );
            if reply.status == 429 {
                break;
            }
            assert_eq!(reply.status, 201, "{}", reply.body);
            spent += charge(&reply);
            i += 1;
        }
        assert!((400.0..415.0).contains(&spent), "two busy: {spent}");
        assert!(i >= 4, "both wrote: {i}");
    }
}

#[test]
fn a_container_of_its_own_throughput_in_a_shared_database_keeps_its_budget_apart() {
    let client = started(Config::for_tests());
    shared_database(&client, "400", &["one"]);
    let body = json!({"id": "own", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
    let reply = client.post(
        "/dbs/shared/colls",
        &body,
        &[("x-ms-offer-throughput", "400")],
    );
    assert_eq!(reply.status, 201, "{}", reply.body);
    let shared = spend_until_throttled(&client, "shared", "one", "p", "a");
    assert!((400.0..415.0).contains(&shared), "{shared}");
    // The database's second is spent; the dedicated container's is whole.
    let own = spend_until_throttled(&client, "shared", "own", "p", "b");
    assert!((400.0..415.0).contains(&own), "its own 400: {own}");
}

#[test]
fn a_shared_database_over_10000_rus_has_physical_partitions_of_its_own() {
    let client = started(Config::for_tests());
    // 12,000 RU/s are two physical partitions of 6,000 (as a container of
    // its own 12,000 is): find a key in each through such a container,
    // whose ranges cut the hash space where the database's do.
    let body = json!({"id": "probe", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
    let reply = client.post(
        "/dbs/db/colls",
        &body,
        &[("x-ms-offer-throughput", "12000")],
    );
    assert_eq!(reply.status, 201, "{}", reply.body);
    let other = key_in_another_range_than_k0(&client, "probe");
    shared_database(&client, "12000", &["one", "two"]);
    client.emulator.advance(1).unwrap();
    let spent = spend_until_throttled(&client, "shared", "one", "k0", "a");
    assert!(
        (6000.0..6015.0).contains(&spent),
        "one partition of 6,000: {spent}"
    );
    // The other container's items of the same key share that partition;
    // those of the other key are in the other, unspent.
    let write = |pk: &str, id: &str| {
        client.post(
            "/dbs/shared/colls/two/docs",
            &item(id, pk),
            &[("x-ms-documentdb-partitionkey", &json!([pk]).to_string())],
        )
    };
    write("k0", "x").assert_error(429, "TooManyRequests");
    assert_eq!(write(&other, "y").status, 201);
}

#[test]
fn low_priority_is_throttled_before_high() {
    let client = started(Config::for_tests());
    assert_eq!(client.create_container("c", None).status, 201);
    let low = [
        ("x-ms-documentdb-partitionkey", "[\"p\"]"),
        ("x-ms-cosmos-priority-level", "Low"),
    ];
    let mut spent = 0.0;
    let mut i = 0;
    loop {
        let reply = client.post(&format!("{COLL}/docs"), &item(&format!("l{i}"), "p"), &low);
        if reply.status == 429 {
            assert_eq!(reply.header("x-ms-substatus"), Some("3200"));
            break;
        }
        spent += charge(&reply);
        i += 1;
    }
    assert!(
        (320.0..330.0).contains(&spent),
        "Low stops at four fifths: {spent}"
    );
    assert_eq!(
        client.create_item(&item("high", "p")).status,
        201,
        "High still gets the rest"
    );
}

#[test]
fn burst_capacity_spends_saved_seconds() {
    let client = started(Config {
        burst_capacity: true,
        ..Config::for_tests()
    });
    assert_eq!(client.create_container("c", None).status, 201);
    assert_eq!(client.create_item(&item("first", "p")).status, 201);
    client.emulator.advance(10).unwrap();
    let (charges, _) = write_until_throttled(&client, "c", "p", "a");
    let spent: f64 = charges.iter().sum();
    assert!(
        spent > 2900.0 && spent < 3010.0,
        "saved seconds spent at up to 3,000 RU/s: {spent}"
    );
    // Without burst, the same wait saves nothing.
    let plain = started(Config::for_tests());
    assert_eq!(plain.create_container("c", None).status, 201);
    assert_eq!(plain.create_item(&item("first", "p")).status, 201);
    plain.emulator.advance(10).unwrap();
    let (charges, _) = write_until_throttled(&plain, "c", "p", "a");
    assert!(charges.iter().sum::<f64>() < 410.0);
}

#[test]
fn without_rate_limit_nothing_is_throttled() {
    let client = TestClient::start();
    assert_eq!(client.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    assert_eq!(client.create_container("c", None).status, 201);
    for i in 0..150 {
        assert_eq!(client.create_item(&item(&format!("a{i}"), "p")).status, 201);
    }
}

#[test]
fn metadata_requests_spend_the_accounts_own_budget() {
    let client = started(Config::for_tests());
    assert_eq!(client.create_container("c", None).status, 201);
    client.emulator.advance(1).unwrap(); // a second of its own
                                         // Databases made until the metadata second is spent: 1,000 RU.
    let mut spent = 0.0;
    let mut refused = None;
    for i in 0..1000 {
        let reply = client.post("/dbs", &json!({"id": format!("d{i}")}), &[]);
        if reply.status == 429 {
            refused = Some(reply);
            break;
        }
        assert_eq!(reply.status, 201, "{}", reply.body);
        spent += charge(&reply);
    }
    let refused = refused.expect("metadata is throttled too");
    assert_eq!(refused.header("x-ms-substatus"), Some("3200"));
    assert!((1000.0..1010.0).contains(&spent), "{spent}");
    // The container's partitions have their own: data still flows.
    assert_eq!(client.create_item(&item("a", "p")).status, 201);
    client.emulator.advance(1).unwrap();
    assert_eq!(
        client.post("/dbs", &json!({"id": "later"}), &[]).status,
        201
    );
}

#[test]
fn a_serverless_account_takes_no_throughput_and_gives_each_partition_5000_ru() {
    let client = started(Config {
        serverless: true,
        ..Config::for_tests()
    });
    // Throughput can be neither set nor read, in the service's words.
    let body = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
    let refused = client.post("/dbs/db/colls", &body, &[("x-ms-offer-throughput", "400")]);
    refused.assert_error(400, "BadRequest");
    assert!(
        refused.message().contains("serverless"),
        "{}",
        refused.message()
    );
    let refused = client.post(
        "/dbs",
        &json!({"id": "shared"}),
        &[("x-ms-offer-throughput", "400")],
    );
    refused.assert_error(400, "BadRequest");
    assert_eq!(client.post("/dbs/db/colls", &body, &[]).status, 201);
    let offers = client.get("/offers", &[]);
    offers.assert_error(400, "BadRequest");
    assert!(offers
        .message()
        .contains("not supported for serverless accounts"));
    // 5,000 RU/s for the container's one partition.
    let (charges, throttled) = write_until_throttled(&client, "c", "p", "a");
    let spent: f64 = charges.iter().sum();
    assert!(
        (5000.0..5000.0 + charges[0] + 0.01).contains(&spent),
        "{spent}"
    );
    assert_eq!(throttled.header("x-ms-substatus"), Some("3200"));
}

#[test]
fn a_batch_in_a_spent_second_is_refused_whole_and_writes_nothing() {
    let client = started(Config::for_tests());
    assert_eq!(client.create_container("c", None).status, 201);
    let (_, throttled) = write_until_throttled(&client, "c", "p", "a");
    assert_eq!(throttled.status, 429);
    let batch = json!([
        {"operationType": "Create", "resourceBody": {"id": "b1", "pk": "p"}},
        {"operationType": "Create", "resourceBody": {"id": "b2", "pk": "p"}},
    ]);
    let refused = client.batch("p", &batch);
    refused.assert_error(429, "TooManyRequests");
    assert_eq!(refused.header("x-ms-substatus"), Some("3200"));
    client.emulator.advance(1).unwrap();
    assert_eq!(
        client.read_item("b1", "p").status,
        404,
        "nothing of the batch was written"
    );
    let admitted = client.batch("p", &batch);
    assert_eq!(admitted.status, 200, "{}", admitted.body);
    assert!(charge(&admitted) > 2.0 * 5.5, "charged its two creates");
}
