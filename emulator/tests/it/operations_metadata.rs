//! The metadata operations without HTTP, as a second protocol's front door
//! drives them (`docs/src/architecture.md`, "A second protocol"): a
//! database and a container created, read, replaced and deleted, their
//! throughput read and replaced as an offer, the partition key ranges'
//! feed and the account document, each answer read as typed values.

use cosmos_emulator::operations::containers::QUOTA;
use cosmos_emulator::operations::{
    account, answered, containers, databases, items, offers, ranges, ContainerPath, DatabasePath,
    GivenOptions, RequestOption, Response, ResponseEtag, Serving,
};
use cosmos_emulator::{Account, Clock, ClockMode, Store, REGION};
use serde_json::{json, Value};

use RequestOption::*;

fn account() -> Account {
    let store = Store::new(Clock::new(ClockMode::Manual { start: None }));
    let key =
        cosmos_emulator::protocol::auth::MasterKey::from_base64(cosmos_emulator::WELL_KNOWN_KEY);
    Account::new(store, key.unwrap(), REGION)
}

const DATABASE: DatabasePath<'static> = DatabasePath { database: "db" };
const CONTAINER: ContainerPath<'static> = ContainerPath {
    database: "db",
    container: "c",
};
const NONE: GivenOptions<'static> = GivenOptions(&[]);

fn body(response: &Response) -> Value {
    serde_json::from_slice(&response.body).unwrap()
}

/// The etag header a resource's answer carries: its `_etag`, as text.
fn etag(response: &Response) -> String {
    match &response.headers.etag {
        Some(ResponseEtag::Text(text)) => {
            assert_eq!(Some(text.as_str()), body(response)["_etag"].as_str());
            text.clone()
        }
        other => panic!("a resource's etag is its _etag, got {other:?}"),
    }
}

fn offer_of(serving: &Serving<'_>, resource: &Value) -> Value {
    let listed = body(&offers::list(serving).unwrap());
    let link = resource["_self"].as_str().unwrap();
    listed["Offers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|offer| offer["resource"] == link)
        .expect("the resource's offer")
        .clone()
}

#[test]
fn a_database_and_its_container_live_through_the_operation_layer() {
    let account = account();
    let serving = Serving::new(&account, 0);

    // A database with throughput of its own: 201, charged, with its etag.
    let throughput = GivenOptions(&[(OfferThroughput, "400")]);
    let created = databases::create(&serving, &throughput, br#"{"id":"db"}"#).unwrap();
    assert_eq!(created.status, 201);
    assert_eq!(created.headers.charge.unwrap().ru(), 5.71);
    let database = body(&created);
    assert_eq!(database["id"], "db");
    etag(&created);
    let again = answered(databases::create(&serving, &NONE, br#"{"id":"db"}"#));
    assert_eq!(again.status, 409, "one database of a name");
    let read = databases::read(&serving, DATABASE).unwrap();
    assert_eq!(
        (read.status.as_u16(), body(&read)["_rid"].clone()),
        (200, database["_rid"].clone())
    );
    let listed = databases::list(&serving).unwrap();
    assert_eq!(listed.headers.item_count, Some(1));
    let queried = databases::query(
        &serving,
        br#"{"query":"SELECT VALUE r.id FROM r WHERE r.id = @id","parameters":[{"name":"@id","value":"db"}]}"#,
    )
    .unwrap();
    assert_eq!(body(&queried)["Databases"], json!(["db"]));

    // A container, its quota stated on every read, its sizes on request.
    let definition = br#"{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}"#;
    let created = containers::create(&serving, DATABASE, &NONE, definition).unwrap();
    assert_eq!(created.status, 201);
    let pk = GivenOptions(&[(PartitionKey, r#"["a"]"#)]);
    let item = br#"{"id":"x","pk":"a"}"#;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime
        .block_on(items::create(&serving, CONTAINER, &pk, item))
        .unwrap();
    let read = containers::read(&serving, CONTAINER, &NONE).unwrap();
    assert_eq!(read.headers.resource_quota, Some(QUOTA));
    assert_eq!(
        read.headers.resource_usage.as_deref(),
        Some("documentsCount=1;")
    );
    assert_eq!(read.headers.index_transformation_progress, None);
    let quota = GivenOptions(&[(PopulateQuotaInfo, "true")]);
    let read = containers::read(&serving, CONTAINER, &quota).unwrap();
    let usage = read.headers.resource_usage.clone().unwrap();
    assert!(
        usage.starts_with("functions=0;storedProcedures=0;triggers=0;"),
        "{usage}"
    );
    assert!(usage.contains("documentsCount=1;"), "{usage}");
    assert_eq!(read.headers.index_transformation_progress, Some(100));

    // A replace under a stale etag changes nothing; under the current one,
    // it takes, and the etag moves.
    let current = etag(&read);
    let replacement =
        br#"{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2},"defaultTtl":5}"#;
    let stale = GivenOptions(&[(IfMatch, "\"stale\"")]);
    let refused = answered(containers::replace(
        &serving,
        CONTAINER,
        &stale,
        replacement,
    ));
    assert_eq!(refused.status, 412);
    let unchanged = containers::read(&serving, CONTAINER, &NONE).unwrap();
    assert_eq!(body(&unchanged)["defaultTtl"], Value::Null);
    let matching = GivenOptions(&[(IfMatch, &current)]);
    let replaced = containers::replace(&serving, CONTAINER, &matching, replacement).unwrap();
    assert_eq!(
        (
            replaced.status.as_u16(),
            body(&replaced)["defaultTtl"].clone()
        ),
        (200, json!(5))
    );
    assert_ne!(etag(&replaced), current);

    // The database's throughput is an offer: read, replaced, read again.
    let offer = offer_of(&serving, &database);
    let rid = offer["id"].as_str().unwrap();
    let read = offers::read(&serving, rid).unwrap();
    assert_eq!(body(&read)["content"]["offerThroughput"], 400);
    let minimum = read.headers.min_throughput.expect("the least throughput");
    assert!((1..=400).contains(&minimum), "{minimum}");
    let mut more = body(&read);
    more["content"]["offerThroughput"] = json!(500);
    let replaced = offers::replace(&serving, rid, &NONE, more.to_string().as_bytes()).unwrap();
    assert_eq!(replaced.status, 200);
    let read = offers::read(&serving, rid).unwrap();
    assert_eq!(body(&read)["content"]["offerThroughput"], 500);

    // Deleted: 204 with no body, then 404; the container goes with its
    // database.
    let deleted = containers::delete(&serving, CONTAINER).unwrap();
    assert_eq!((deleted.status.as_u16(), deleted.body.len()), (204, 0));
    assert_eq!(
        answered(containers::read(&serving, CONTAINER, &NONE)).status,
        404
    );
    containers::create(&serving, DATABASE, &NONE, definition).unwrap();
    assert_eq!(databases::delete(&serving, DATABASE).unwrap().status, 204);
    assert_eq!(answered(databases::read(&serving, DATABASE)).status, 404);
    assert_eq!(
        answered(containers::read(&serving, CONTAINER, &NONE)).status,
        404
    );
}

#[test]
fn the_ranges_feed_answers_304_to_its_current_version() {
    let account = account();
    let serving = Serving::new(&account, 0);
    databases::create(&serving, &NONE, br#"{"id":"db"}"#).unwrap();
    let definition = br#"{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}"#;
    containers::create(&serving, DATABASE, &NONE, definition).unwrap();
    let feed = ranges::read(&serving, CONTAINER, &NONE).unwrap();
    assert_eq!(body(&feed)["PartitionKeyRanges"][0]["maxExclusive"], "FF");
    let Some(ResponseEtag::Text(version)) = feed.headers.etag.clone() else {
        panic!("the ranges' version is their etag");
    };
    let current = GivenOptions(&[(IfNoneMatch, &version)]);
    let unchanged = ranges::read(&serving, CONTAINER, &current).unwrap();
    assert_eq!((unchanged.status.as_u16(), unchanged.body.len()), (304, 0));
    assert!(unchanged.headers.charge.is_none(), "a 304 is not charged");
}

#[test]
fn the_account_document_lists_where_the_front_door_is_reached() {
    let account = account();
    let serving = Serving::new(&account, 0);
    let reached = account::Reached {
        endpoint: "rntbd://example:10251/".into(),
        regions: None,
    };
    let document = body(&account::read(&serving, reached).unwrap());
    let location = json!([{"name": REGION, "databaseAccountEndpoint": "rntbd://example:10251/"}]);
    assert_eq!(document["writableLocations"], location);
    assert_eq!(document["readableLocations"], location);
    assert_eq!(document["id"], "localhost");
}
