//! The operation layer without HTTP, as a second protocol's front door
//! drives it (`docs/src/architecture.md`, "A second protocol"): an account
//! made in-process, options given by meaning, answers read as typed
//! values. TTL, the test clock, preconditions, session checks and charges
//! hold here exactly as over the wire.

use cosmos_emulator::operations::{
    answered, items, ContainerPath, GivenOptions, ItemPath, RequestOption, Response, Serving,
};
use cosmos_emulator::protocol::auth::{MasterKey, WELL_KNOWN_KEY};
use cosmos_emulator::{Account, Clock, ClockMode, Store, REGION};
use serde_json::{json, Value};

use RequestOption::*;

/// An account whose database `db` holds container `c` (partition key
/// `/pk`, `defaultTtl` 10 s), on the manual clock.
pub(crate) fn account() -> Account {
    let store = Store::new(Clock::new(ClockMode::Manual { start: None }));
    let object = |v: Value| v.as_object().unwrap().clone();
    store
        .create_database(&object(json!({"id": "db"})), None)
        .unwrap();
    let container = json!({
        "id": "c",
        "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2},
        "defaultTtl": 10
    });
    store
        .create_container("db", &object(container), None)
        .unwrap();
    Account::new(
        store,
        MasterKey::from_base64(WELL_KNOWN_KEY).unwrap(),
        REGION,
    )
}

pub(crate) const CONTAINER: ContainerPath<'static> = ContainerPath {
    database: "db",
    container: "c",
};

fn item(id: &str) -> ItemPath<'_> {
    ItemPath {
        database: "db",
        container: "c",
        id,
    }
}

pub(crate) fn body(response: &Response) -> Value {
    serde_json::from_slice(&response.body).unwrap()
}

/// `futures`-free: the operations that may run triggers are async, and
/// run to completion at once without them.
pub(crate) fn now<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(future)
}

#[test]
fn an_item_lives_its_ttl_through_the_operation_layer() {
    let account = account();
    let serving = Serving::new(&account, 0);
    let options = GivenOptions(&[(PartitionKey, r#"["a"]"#)]);
    let created = now(items::create(
        &serving,
        CONTAINER,
        &options,
        br#"{"id":"x","pk":"a","n":1}"#,
    ))
    .unwrap();
    assert_eq!(created.status, 201);
    assert_eq!(body(&created)["n"], 1);
    assert!(created.headers.charge.unwrap().ru() > 1.0, "a write costs");
    let state = created
        .headers
        .container
        .clone()
        .expect("names its container");
    assert_eq!(state.lsn, Some(1), "the range's first LSN");
    assert_eq!(state.item_lsn, Some(1));

    let read = items::read(&serving, item("x"), &options).unwrap();
    assert_eq!(read.status, 200);
    let served = read.headers.container.as_ref().unwrap();
    assert_eq!(served.item_lsn, Some(1), "the item's LSN");
    assert_eq!(read.headers.etag, created.headers.etag);

    // The container's default TTL, counted from the write, on the test clock.
    account.store.advance_clock(10).unwrap();
    let expired = answered(items::read(&serving, item("x"), &options));
    assert_eq!(expired.status, 404);
    let error = body(&expired);
    assert_eq!(error["code"], "NotFound");
}

#[test]
fn preconditions_and_minimal_answers_are_options() {
    let account = account();
    let serving = Serving::new(&account, 0);
    let pk = GivenOptions(&[(PartitionKey, r#"["a"]"#)]);
    let created = now(items::create(
        &serving,
        CONTAINER,
        &pk,
        br#"{"id":"y","pk":"a"}"#,
    ))
    .unwrap();
    let mut etag = [0u8; 38];
    let etag = created.headers.etag.unwrap().encode(&mut etag).to_string();

    // If-None-Match with the current etag: 304, no body.
    let unchanged = GivenOptions(&[(PartitionKey, r#"["a"]"#), (IfNoneMatch, &etag)]);
    let read = items::read(&serving, item("y"), &unchanged).unwrap();
    assert_eq!((read.status.as_u16(), read.body.len()), (304, 0));

    // If-Match with a stale etag: 412, and nothing changed.
    let stale = GivenOptions(&[
        (PartitionKey, r#"["a"]"#),
        (IfMatch, "\"00000000-0000-0000-0000-000000000000\""),
    ]);
    let refused = answered(now(items::replace(
        &serving,
        item("y"),
        &stale,
        br#"{"id":"y","pk":"a","v":2}"#,
    )));
    assert_eq!(refused.status, 412);
    assert_eq!(
        body(&items::read(&serving, item("y"), &pk).unwrap())["v"],
        Value::Null
    );

    // Prefer: return=minimal: the status and headers, no body.
    let minimal = GivenOptions(&[
        (PartitionKey, r#"["a"]"#),
        (IfMatch, &etag),
        (Prefer, "return=minimal"),
    ]);
    let replaced = now(items::replace(
        &serving,
        item("y"),
        &minimal,
        br#"{"id":"y","pk":"a","v":2}"#,
    ))
    .unwrap();
    assert_eq!((replaced.status.as_u16(), replaced.body.len()), (200, 0));
    assert!(replaced.headers.etag.is_some());
    assert_eq!(
        body(&items::read(&serving, item("y"), &pk).unwrap())["v"],
        2
    );
}

#[test]
fn a_session_the_replica_has_not_reached_is_refused_with_its_container() {
    let account = account();
    let serving = Serving::new(&account, 0);
    let pk = GivenOptions(&[(PartitionKey, r#"["a"]"#)]);
    now(items::create(
        &serving,
        CONTAINER,
        &pk,
        br#"{"id":"z","pk":"a"}"#,
    ))
    .unwrap();
    let ahead = GivenOptions(&[(PartitionKey, r#"["a"]"#), (SessionToken, "0:-1#99")]);
    let refused = answered(items::read(&serving, item("z"), &ahead));
    assert_eq!(refused.status, 404);
    assert_eq!(refused.headers.substatus, Some(1002));
    let container = refused.headers.container.expect("names its container");
    assert_eq!(&container.owner.path[..], b"dbs/db/colls/c");
    assert_eq!(container.lsn, None, "a refusal reached no LSN");

    let stale = GivenOptions(&[
        (PartitionKey, r#"["a"]"#),
        (IntendedCollectionRid, "AAAAAA=="),
    ]);
    let refused = answered(now(items::delete(&serving, item("z"), &stale)));
    assert_eq!(
        (refused.status.as_u16(), refused.headers.substatus),
        (400, Some(1024))
    );
    assert_eq!(
        items::read(&serving, item("z"), &pk).unwrap().status,
        200,
        "not deleted"
    );
}

#[test]
fn patch_and_delete_answer_as_the_service() {
    let account = account();
    let serving = Serving::new(&account, 0);
    let pk = GivenOptions(&[(PartitionKey, r#"["a"]"#)]);
    now(items::create(
        &serving,
        CONTAINER,
        &pk,
        br#"{"id":"p","pk":"a","n":1}"#,
    ))
    .unwrap();
    let patch = br#"{"operations":[{"op":"incr","path":"/n","value":2}]}"#;
    let patched = items::patch(&serving, item("p"), &pk, patch).unwrap();
    assert_eq!(body(&patched)["n"], 3);
    let deleted = now(items::delete(&serving, item("p"), &pk)).unwrap();
    assert_eq!((deleted.status.as_u16(), deleted.body.len()), (204, 0));
    let state = deleted.headers.container.unwrap();
    assert_eq!(state.lsn, Some(3), "create, patch, delete: three LSNs");
    let gone = answered(now(items::delete(&serving, item("p"), &pk)));
    assert_eq!(gone.status, 404);
}
