//! Running scripts over real HTTP: stored procedure executions (arguments,
//! partition, log header, errors and their substatus, the time bound with
//! the emulator serving meanwhile, one change feed entry per execution),
//! triggers around item writes, UDFs in queries and the query plan, and
//! TTL inside scripts. The engine's own cases (hostile scripts, the
//! server-side API) are unit tests in `src/data/script/tests/`.

use std::time::{Duration, Instant};

use crate::common::{Reply, TestClient, COLL};
use cosmos_emulator::Config;
use serde_json::{json, Value};

const PK: &str = r#"["a"]"#;

fn create_sproc(client: &TestClient, id: &str, source: &str) {
    let reply = client.post(
        &format!("{COLL}/sprocs"),
        &json!({"id": id, "body": source}),
        &[],
    );
    assert_eq!(reply.status, 201, "{}", reply.body);
}

fn execute(client: &TestClient, id: &str, args: Value, headers: &[(&str, &str)]) -> Reply {
    let mut all = vec![("x-ms-documentdb-partitionkey", PK)];
    all.extend_from_slice(headers);
    client.post(&format!("{COLL}/sprocs/{id}"), &args, &all)
}

fn create_trigger(client: &TestClient, id: &str, kind: &str, operation: &str, source: &str) {
    let body =
        json!({"id": id, "body": source, "triggerType": kind, "triggerOperation": operation});
    let reply = client.post(&format!("{COLL}/triggers"), &body, &[]);
    assert_eq!(reply.status, 201, "{}", reply.body);
}

fn create_udf(client: &TestClient, id: &str, source: &str) {
    let reply = client.post(
        &format!("{COLL}/udfs"),
        &json!({"id": id, "body": source}),
        &[],
    );
    assert_eq!(reply.status, 201, "{}", reply.body);
}

fn query_in(client: &TestClient, sql: &str) -> Reply {
    client.post(
        &format!("{COLL}/docs"),
        &json!({"query": sql, "parameters": []}),
        &[
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-partitionkey", PK),
        ],
    )
}

#[test]
fn a_stored_procedure_runs_with_its_arguments_and_logs() {
    let client = TestClient::with_container(None);
    create_sproc(
        &client,
        "hello",
        "function (name) { console.log('The value of x is %s.', 1); getContext().getResponse().setBody('Hello, ' + name); }",
    );
    let reply = execute(
        &client,
        "hello",
        json!(["World"]),
        &[("x-ms-documentdb-script-enable-logging", "true")],
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body, json!("Hello, World"));
    assert_eq!(
        reply.header("x-ms-documentdb-script-log-results"),
        Some("The%20value%20of%20x%20is%201.")
    );
    assert!(reply.header("x-ms-session-token").is_some());
    // Without logging, no log header; without a body, no arguments.
    let reply = execute(&client, "hello", Value::Null, &[]);
    assert_eq!(reply.body, json!("Hello, undefined"));
    assert!(reply.header("x-ms-documentdb-script-log-results").is_none());
}

#[test]
fn execution_needs_the_partition_key_and_an_existing_procedure() {
    let client = TestClient::with_container(None);
    create_sproc(&client, "noop", "function () {}");
    let reply = client.post(&format!("{COLL}/sprocs/noop"), &json!([]), &[]);
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert!(
        reply.message().contains("PartitionKey"),
        "{}",
        reply.message()
    );
    let reply = execute(&client, "missing", json!([]), &[]);
    assert_eq!(reply.status, 404);
}

#[test]
fn a_thrown_error_is_400_with_its_number_as_substatus_and_nothing_is_written() {
    let client = TestClient::with_container(None);
    create_sproc(
        &client,
        "fails",
        r#"function () {
            var c = getContext().getCollection();
            c.createDocument(c.getSelfLink(), {id: 'x', pk: 'a'}, function (err) {
                if (err) throw err;
                throw new Error(1234, 'Error 1234');
            });
        }"#,
    );
    let reply = execute(&client, "fails", json!([]), &[]);
    reply.assert_error(400, "BadRequest");
    assert_eq!(reply.header("x-ms-substatus"), Some("1234"));
    assert!(
        reply
            .message()
            .starts_with("Encountered exception while executing function."),
        "{}",
        reply.message()
    );
    assert!(!client.is_visible("x", "a"));
}

#[test]
fn an_execution_is_one_change_feed_entry() {
    let client = TestClient::with_container(None);
    create_sproc(
        &client,
        "three",
        r#"function () {
            var c = getContext().getCollection();
            ['x', 'y', 'z'].forEach(function (id) { c.createDocument(c.getSelfLink(), {id: id, pk: 'a'}); });
        }"#,
    );
    assert_eq!(execute(&client, "three", json!([]), &[]).status, 200);
    let lsns: Vec<u64> = ["x", "y", "z"]
        .iter()
        .map(|id| {
            let reply = client.read_item(id, "a");
            reply.header("x-ms-item-lsn").unwrap().parse().unwrap()
        })
        .collect();
    assert_eq!(lsns, vec![lsns[0]; 3], "{lsns:?}");
}

#[test]
fn an_endless_loop_is_408_at_the_bound_while_the_emulator_serves_others() {
    let client = TestClient::with_container(None);
    client.create_item(&json!({"id": "other", "pk": "b"}));
    create_sproc(
        &client,
        "spin",
        "function () { var c = getContext().getCollection(); c.createDocument(c.getSelfLink(), {id: 'spun', pk: 'a'}); while (true) {} }",
    );
    let api = (*client).clone();
    let started = Instant::now();
    let spinning = std::thread::spawn(move || {
        api.post(
            &format!("{COLL}/sprocs/spin"),
            &json!([]),
            &[("x-ms-documentdb-partitionkey", PK)],
        )
    });
    std::thread::sleep(Duration::from_millis(300));
    // Reads and writes are served while the script spins.
    let during = Instant::now();
    assert_eq!(client.read_item("other", "b").status, 200);
    assert_eq!(
        client
            .create_item(&json!({"id": "meanwhile", "pk": "b"}))
            .status,
        201
    );
    assert!(
        during.elapsed() < Duration::from_secs(2),
        "{:?}",
        during.elapsed()
    );
    let reply = spinning.join().unwrap();
    assert_eq!(reply.status, 408, "{}", reply.body);
    assert_eq!(reply.code(), "RequestTimeout");
    assert_eq!(
        reply.message(),
        "The requested operation exceeded maximum alloted time."
    );
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(8),
        "{took:?}"
    );
    assert!(!client.is_visible("spun", "a"));
}

#[test]
fn a_pre_trigger_changes_the_item_and_a_post_trigger_can_undo_the_write() {
    let client = TestClient::with_container(None);
    create_trigger(
        &client,
        "upper",
        "Pre",
        "All",
        "function () { var item = getContext().getRequest().getBody(); item.id = item.id.toUpperCase(); getContext().getRequest().setBody(item); }",
    );
    create_trigger(
        &client,
        "veto",
        "Post",
        "Create",
        "function () { var written = getContext().getResponse().getBody(); if (written.veto) throw new Error(409, 'vetoed'); }",
    );
    let pre = [
        ("x-ms-documentdb-pre-trigger-include", "upper"),
        ("x-ms-documentdb-partitionkey", PK),
    ];
    let reply = client.post(
        &format!("{COLL}/docs"),
        &json!({"id": "doc", "pk": "a"}),
        &pre,
    );
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(reply.body["id"], "DOC");
    assert!(client.is_visible("DOC", "a"));
    let post = [
        ("x-ms-documentdb-post-trigger-include", "veto"),
        ("x-ms-documentdb-partitionkey", PK),
    ];
    let reply = client.post(
        &format!("{COLL}/docs"),
        &json!({"id": "v", "pk": "a", "veto": true}),
        &post,
    );
    reply.assert_error(400, "BadRequest");
    assert_eq!(reply.header("x-ms-substatus"), Some("409"));
    assert!(
        !client.is_visible("v", "a"),
        "the post-trigger's failure rolls the write back"
    );
    let reply = client.post(
        &format!("{COLL}/docs"),
        &json!({"id": "ok", "pk": "a"}),
        &post,
    );
    assert_eq!(reply.status, 201, "{}", reply.body);
}

#[test]
fn triggers_of_the_wrong_type_or_operation_are_refused() {
    let client = TestClient::with_container(None);
    create_trigger(&client, "on-delete", "Post", "Delete", "function () {}");
    create_trigger(&client, "pre-all", "Pre", "All", "function () {}");
    let headers = |name: &'static str, which: &'static str| {
        [(which, name), ("x-ms-documentdb-partitionkey", PK)]
    };
    let post = "x-ms-documentdb-post-trigger-include";
    let pre = "x-ms-documentdb-pre-trigger-include";
    let reply = client.post(
        &format!("{COLL}/docs"),
        &json!({"id": "x", "pk": "a"}),
        &headers("on-delete", post),
    );
    assert_eq!(
        reply.status, 400,
        "a Delete trigger on a create: {}",
        reply.body
    );
    let reply = client.post(
        &format!("{COLL}/docs"),
        &json!({"id": "x", "pk": "a"}),
        &headers("pre-all", post),
    );
    assert_eq!(
        reply.status, 400,
        "a pre-trigger named as post: {}",
        reply.body
    );
    let reply = client.post(
        &format!("{COLL}/docs"),
        &json!({"id": "x", "pk": "a"}),
        &headers("pre-all,pre-all", pre),
    );
    assert_eq!(reply.status, 400, "two pre-triggers: {}", reply.body);
    assert!(!client.is_visible("x", "a"));
    // The Delete trigger runs on a delete.
    client.create_item(&json!({"id": "gone", "pk": "a"}));
    let reply = client.delete(&format!("{COLL}/docs/gone"), &headers("on-delete", post));
    assert_eq!(reply.status, 204, "{}", reply.body);
    assert!(!client.is_visible("gone", "a"));
}

#[test]
fn udfs_in_queries_and_the_query_plan() {
    let client = TestClient::with_container(None);
    create_udf(&client, "tax", "function (income) { return income * 0.5; }");
    create_udf(
        &client,
        "boom",
        "function () { throw new Error(32766, 'Error'); }",
    );
    for (id, income) in [("a", 10), ("b", 40)] {
        client.create_item(&json!({"id": id, "pk": "a", "income": income}));
    }
    let reply = query_in(
        &client,
        "SELECT VALUE udf.tax(c.income) FROM c WHERE udf.tax(c.income) > 10",
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["Documents"], json!([20]));
    let reply = query_in(&client, "SELECT VALUE udf.boom(c.id) FROM c");
    reply.assert_error(400, "BadRequest");
    assert_eq!(reply.header("x-ms-substatus"), Some("32766"));
    let reply = query_in(&client, "SELECT VALUE udf.nothing(c.id) FROM c");
    assert_eq!(reply.status, 400);
    assert!(
        reply.message().contains("udf.nothing"),
        "{}",
        reply.message()
    );
    // A replaced UDF is used at once (no cached result of the old one).
    let reply = client.put(
        &format!("{COLL}/udfs/tax"),
        &json!({"id": "tax", "body": "function (income) { return income * 2; }"}),
        &[],
    );
    assert_eq!(reply.status, 200);
    let reply = query_in(
        &client,
        "SELECT VALUE udf.tax(c.income) FROM c ORDER BY udf.tax(c.income)",
    );
    assert_eq!(reply.body["Documents"], json!([20, 80]));
    // The plan route takes a query that calls a UDF.
    let reply = client.post(
        &format!("{COLL}/docs"),
        &json!({"query": "SELECT VALUE udf.tax(c.income) FROM c", "parameters": []}),
        &[
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-cosmos-is-query-plan-request", "True"),
            ("x-ms-cosmos-supported-query-features", "Aggregate, CompositeAggregate, Distinct, MultipleOrderBy, OffsetAndLimit, OrderBy, Top, NonValueAggregate, DCount, NonStreamingOrderBy"),
        ],
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
}

#[test]
fn ttl_holds_inside_a_stored_procedure() {
    let client = TestClient::with_container(Some(json!(10)));
    client.create_item(&json!({"id": "old", "pk": "a"}));
    client.advance(11);
    create_sproc(
        &client,
        "probe",
        r#"function () {
            var c = getContext().getCollection(), out = {};
            c.readDocument(c.getAltLink() + '/docs/old', function (err) {
                out.read = err ? err.number : 200;
                c.queryDocuments(c.getSelfLink(), 'SELECT * FROM c', function (err, docs) {
                    out.query = docs.length;
                    c.createDocument(c.getSelfLink(), {id: 'old', pk: 'a', ttl: 5}, function (err, doc) {
                        out.created = err ? err.number : 201;
                        c.createDocument(c.getSelfLink(), {id: 'bad', pk: 'a', ttl: -2}, function (err) {
                            out.invalid = err ? err.number : 201;
                            getContext().getResponse().setBody(out);
                        });
                    });
                });
            });
        }"#,
    );
    let reply = execute(&client, "probe", json!([]), &[]);
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.body,
        json!({"read": 404, "query": 0, "created": 201, "invalid": 400})
    );
    // The new item counts from its commit's _ts, with its own ttl.
    client.advance(4);
    assert!(client.is_visible("old", "a"));
    client.advance(2);
    assert!(!client.is_visible("old", "a"));
    assert!(!client.is_visible("bad", "a"));
}

#[test]
fn a_purge_during_an_execution_leaves_its_writes_which_expire_from_the_commit() {
    // defaultTtl -1: on, items live until their own ttl says otherwise.
    let client = TestClient::with_container(Some(json!(-1)));
    create_sproc(
        &client,
        "slow",
        r#"function () {
            var c = getContext().getCollection();
            c.createDocument(c.getSelfLink(), {id: 'fresh', pk: 'a', ttl: 5}, function (err) {
                if (err) throw err;
                var until = Date.now() + 400; while (Date.now() < until) {}
            });
        }"#,
    );
    let api = (*client).clone();
    let running = std::thread::spawn(move || {
        api.post(
            &format!("{COLL}/sprocs/slow"),
            &json!([]),
            &[("x-ms-documentdb-partitionkey", PK)],
        )
    });
    std::thread::sleep(Duration::from_millis(100));
    // Time passes far beyond the item's ttl while the script runs, and a
    // purge runs: what the execution staged is not the purge's.
    client.advance(100);
    assert_eq!(client.post("/_emulator/purge", &json!({}), &[]).status, 200);
    assert_eq!(running.join().unwrap().status, 200);
    let reply = client.read_item("fresh", "a");
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.body["_ts"],
        json!(client.now()),
        "stamped at the commit"
    );
    client.advance(6);
    assert!(!client.is_visible("fresh", "a"));
}

#[test]
fn a_udf_stuck_in_a_native_call_is_408_and_holds_no_lock() {
    let client = TestClient::start_config(Config {
        script_time_bound: Duration::from_millis(300),
        ..Config::for_tests()
    });
    assert_eq!(client.post("/dbs", &json!({"id": "db"}), &[]).status, 201);
    assert_eq!(client.create_container("c", None).status, 201);
    client.create_item(&json!({"id": "a", "pk": "a"}));
    // join() over 10^8 holes runs for seconds in C, where the interrupt
    // cannot stop it.
    create_udf(
        &client,
        "stuck",
        "function (x) { new Array(1e8).join(''); return x; }",
    );
    let api = (*client).clone();
    let started = Instant::now();
    let querying = std::thread::spawn(move || {
        api.post(
            &format!("{COLL}/docs"),
            &json!({"query": "SELECT VALUE udf.stuck(c.id) FROM c", "parameters": []}),
            &[
                ("x-ms-documentdb-isquery", "True"),
                ("content-type", "application/query+json"),
                ("x-ms-documentdb-partitionkey", PK),
            ],
        )
    });
    std::thread::sleep(Duration::from_millis(100));
    let during = Instant::now();
    assert_eq!(
        client.create_item(&json!({"id": "b", "pk": "a"})).status,
        201
    );
    assert!(
        during.elapsed() < Duration::from_millis(500),
        "{:?}",
        during.elapsed()
    );
    let reply = querying.join().unwrap();
    assert_eq!(reply.status, 408, "{}", reply.body);
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
}
