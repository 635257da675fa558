//! A query page, the read feed, the change feed and a transactional batch
//! through the operation layer, without HTTP (as a second protocol's front
//! door drives them): options by meaning, answers as typed values.

use cosmos_emulator::operations::{
    answered, batch, change_feed, items, query, GivenOptions, ResponseEtag, Serving,
};
use serde_json::Value;

use super::operations::{account, body, now, CONTAINER};
use cosmos_emulator::operations::RequestOption::*;

const PK_A: &str = r#"["a"]"#;

/// Writes items `{"id": id, "pk": "a", "n": n}` for each id.
fn write(serving: &Serving<'_>, ids: &[&str]) {
    let options = GivenOptions(&[(PartitionKey, PK_A)]);
    for (n, id) in ids.iter().enumerate() {
        let item = format!(r#"{{"id":"{id}","pk":"a","n":{n}}}"#);
        now(items::create(serving, CONTAINER, &options, item.as_bytes())).unwrap();
    }
}

fn ids(page: &Value) -> Vec<&str> {
    page["Documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect()
}

#[test]
fn a_query_pages_with_its_continuation_and_metrics() {
    let account = account();
    let serving = Serving::new(&account, 0);
    write(&serving, &["q1", "q2", "q3"]);
    let text = br#"{"query":"SELECT * FROM c WHERE c.n >= 0 ORDER BY c.n"}"#;
    let first = GivenOptions(&[
        (PartitionKey, PK_A),
        (MaxItemCount, "2"),
        (PopulateQueryMetrics, "true"),
    ]);
    let page = now(query::query(&serving, CONTAINER, &first, text)).unwrap();
    assert_eq!(page.status, 200);
    assert_eq!(ids(&body(&page)), ["q1", "q2"]);
    assert_eq!(page.headers.item_count, Some(2));
    let metrics = page.headers.query_metrics.as_deref().expect("asked for");
    assert!(metrics.contains("outputDocumentCount=2;"), "{metrics}");
    assert!(page.headers.index_utilization.is_none(), "not asked for");
    let state = page
        .headers
        .container
        .as_ref()
        .expect("names its container");
    assert_eq!(state.lsn, Some(3), "the range's LSN after three writes");
    let charge = page.headers.charge.unwrap().ru();
    assert!(charge >= 2.0, "a query costs its base and more: {charge}");

    let token = page.headers.continuation.clone().expect("a third item");
    let next = GivenOptions(&[
        (PartitionKey, PK_A),
        (MaxItemCount, "2"),
        (Continuation, &token),
    ]);
    let last = now(query::query(&serving, CONTAINER, &next, text)).unwrap();
    assert_eq!(ids(&body(&last)), ["q3"]);
    assert_eq!(last.headers.continuation, None, "the last page");
    assert!(last.headers.query_metrics.is_none());

    // The read feed is the same page, priced as a feed: cheaper.
    let feed = now(query::read_feed(&serving, CONTAINER, &first)).unwrap();
    assert_eq!(ids(&body(&feed)), ["q1", "q2"]);
    assert!(feed.headers.charge.unwrap().ru() < charge);

    // A malformed continuation is refused, and says so.
    let bad = GivenOptions(&[(PartitionKey, PK_A), (Continuation, "not a token")]);
    let refused = answered(now(query::query(&serving, CONTAINER, &bad, text)));
    assert_eq!(refused.status, 400);
}

#[test]
fn a_query_plan_is_a_resource_of_its_own() {
    let account = account();
    let serving = Serving::new(&account, 0);
    let text = br#"{"query":"SELECT * FROM c ORDER BY c.n"}"#;
    let options = GivenOptions(&[(
        SupportedQueryFeatures,
        "OrderBy, OffsetAndLimit, Aggregate, Distinct, Top, CompositeAggregate, \
         MultipleOrderBy, GroupBy, MultipleAggregates, NonValueAggregate",
    )]);
    let plan = query::plan(&serving, CONTAINER, &options, text).unwrap();
    assert_eq!(plan.status, 200);
    let plan = body(&plan);
    assert_eq!(plan["queryInfo"]["orderBy"][0], "Ascending", "{plan}");
    let missing = cosmos_emulator::operations::ContainerPath {
        database: "db",
        container: "absent",
    };
    let refused = answered(query::plan(&serving, missing, &options, text));
    assert_eq!(
        refused.status, 404,
        "no plan for a container that is not there"
    );
}

#[test]
fn the_change_feed_continues_from_its_etag_and_answers_304_when_up_to_date() {
    let account = account();
    let serving = Serving::new(&account, 0);
    write(&serving, &["f1", "f2"]);
    let latest = GivenOptions(&[(PartitionKey, PK_A), (ChangeFeedMode, "Incremental Feed")]);
    let page = change_feed::read(&serving, CONTAINER, &latest).unwrap();
    assert_eq!(page.status, 200);
    let changes = body(&page);
    assert_eq!(ids(&changes), ["f1", "f2"]);
    assert_eq!(
        changes["Documents"][1]["_lsn"], 2,
        "each change with its LSN"
    );
    let Some(ResponseEtag::Text(etag)) = page.headers.etag.clone() else {
        panic!("a change feed answer carries its etag");
    };
    assert!(etag.starts_with('"'), "quoted: {etag}");

    // From that etag, nothing new: 304, no body, no items, still charged.
    let from = GivenOptions(&[
        (PartitionKey, PK_A),
        (ChangeFeedMode, "Incremental Feed"),
        (IfNoneMatch, &etag),
    ]);
    let idle = change_feed::read(&serving, CONTAINER, &from).unwrap();
    assert_eq!((idle.status.as_u16(), idle.body.len()), (304, 0));
    assert_eq!(idle.headers.item_count, Some(0));
    assert!(idle.headers.charge.is_some());
    assert_eq!(idle.headers.etag, page.headers.etag, "still there");

    // A replace: the next page holds its latest version alone.
    let options = GivenOptions(&[(PartitionKey, PK_A)]);
    let item = cosmos_emulator::operations::ItemPath {
        database: "db",
        container: "c",
        id: "f1",
    };
    let replaced = br#"{"id":"f1","pk":"a","n":10}"#;
    now(items::replace(&serving, item, &options, replaced)).unwrap();
    let next = change_feed::read(&serving, CONTAINER, &from).unwrap();
    let changes = body(&next);
    assert_eq!(ids(&changes), ["f1"]);
    assert_eq!(changes["Documents"][0]["n"], 10);

    // All versions and deletes needs its wire format; an unknown mode is refused.
    let full = GivenOptions(&[(ChangeFeedMode, "Full-Fidelity Feed"), (IfNoneMatch, "*")]);
    assert_eq!(
        answered(change_feed::read(&serving, CONTAINER, &full)).status,
        400
    );
    let wrapped = GivenOptions(&[
        (ChangeFeedMode, "Full-Fidelity Feed"),
        (ChangeFeedWireFormat, "2021-09-15"),
        (IfNoneMatch, "*"),
    ]);
    let now_on = change_feed::read(&serving, CONTAINER, &wrapped).unwrap();
    assert_eq!(now_on.status, 304, "nothing since now");
}

#[test]
fn a_transactional_batch_is_all_or_nothing() {
    let account = account();
    let serving = Serving::new(&account, 0);
    let options = GivenOptions(&[(PartitionKey, PK_A)]);
    let operations = br#"[
        {"operationType":"Create","resourceBody":{"id":"b1","pk":"a"}},
        {"operationType":"Upsert","resourceBody":{"id":"b2","pk":"a","n":1}},
        {"operationType":"Read","id":"b1"}
    ]"#;
    let done = batch::execute(&serving, CONTAINER, &options, operations).unwrap();
    assert_eq!(done.status, 200);
    let results = body(&done);
    let statuses: Vec<_> = results
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["statusCode"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, [201, 201, 200]);
    assert_eq!(results[2]["resourceBody"]["id"], "b1");
    let total = done.headers.charge.unwrap().ru();
    let parts: f64 = results
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["requestCharge"].as_f64().unwrap())
        .sum();
    assert!(
        (total - parts).abs() < 0.01,
        "{total} is the sum of {parts}"
    );
    let state = done.headers.container.expect("names its container");
    assert_eq!(state.lsn, Some(1), "a batch commits under one LSN");

    // A failed create fails the batch: 207, the upsert before it undone.
    let failing = br#"[
        {"operationType":"Upsert","resourceBody":{"id":"b2","pk":"a","n":2}},
        {"operationType":"Create","resourceBody":{"id":"b1","pk":"a"}}
    ]"#;
    let refused = batch::execute(&serving, CONTAINER, &options, failing).unwrap();
    assert_eq!(refused.status, 207);
    assert_eq!(body(&refused)[1]["statusCode"], 409);
    let item = cosmos_emulator::operations::ItemPath {
        database: "db",
        container: "c",
        id: "b2",
    };
    assert_eq!(
        body(&items::read(&serving, item, &options).unwrap())["n"],
        1
    );

    // A range the SDK grouped for that is gone: 410/1002, nothing run.
    let gone = GivenOptions(&[(PartitionKey, PK_A), (PartitionKeyRangeId, "7")]);
    let refused = answered(batch::execute(&serving, CONTAINER, &gone, operations));
    assert_eq!(
        (refused.status.as_u16(), refused.headers.substatus),
        (410, Some(1002))
    );
    // Not JSON operations: 400, nothing run.
    let refused = answered(batch::execute(&serving, CONTAINER, &options, b"{}"));
    assert_eq!(refused.status, 400);
}
