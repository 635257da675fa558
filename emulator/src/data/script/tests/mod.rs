//! Stored procedure executions against a store, without HTTP: the
//! server-side API and all-or-nothing commits (hostile scripts and the
//! bounds: `hostile.rs`; UDFs: `udf.rs`). The HTTP surface
//! and the SDKs are tested in `tests/it/scripts.rs` and `sdk-tests/`.

mod hostile;
mod udf;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::*;
use crate::data::clock::{Clock, ClockMode};
use crate::data::store::{ItemWrite, WriteMode};

pub(super) fn object(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

pub(super) fn store() -> Arc<Store> {
    let store = Store::new(Clock::new(ClockMode::Manual { start: Some(1_000) }));
    store
        .create_database(&object(json!({"id": "db"})), None)
        .unwrap();
    let pk = json!({"paths": ["/pk"], "kind": "Hash", "version": 2});
    store
        .create_container("db", &object(json!({"id": "c", "partitionKey": pk})), None)
        .unwrap();
    Arc::new(store)
}

pub(super) fn put(store: &Store, body: Value) {
    store
        .write_item(
            "db",
            "c",
            ItemWrite {
                mode: WriteMode::Upsert,
                url_id: None,
                partition_key_header: None,
                if_match: None,
                body: object(body),
            },
        )
        .unwrap();
}

pub(super) fn scripts() -> ScriptEngine {
    ScriptEngine::new(Limits {
        time: Duration::from_millis(600),
        ..Limits::SERVICE
    })
}

pub(super) fn call(source: &str, args: Option<Value>) -> SprocCall {
    SprocCall {
        database: "db".into(),
        container: "c".into(),
        source: source.into(),
        partition_key: Some(r#"["a"]"#.into()),
        arguments: args.map(|a| a.to_string()),
        logging: true,
    }
}

pub(super) fn run(store: &Arc<Store>, source: &str, args: Option<Value>) -> ApiResult<SprocResult> {
    scripts().run_stored_procedure(store, call(source, args), &Default::default())
}

pub(super) fn body(result: ApiResult<SprocResult>) -> Value {
    let result = result.expect("the execution succeeds");
    serde_json::from_str(&result.body).unwrap_or(Value::Null)
}

pub(super) fn read(store: &Store, id: &str) -> Option<Value> {
    store
        .read_item("db", "c", Some(r#"["a"]"#), id)
        .ok()
        .map(|item| serde_json::from_slice(&item.body).unwrap())
}

#[test]
fn set_body_and_arguments() {
    let store = store();
    let source = "function (a, b) { getContext().getResponse().setBody(a + b.x); }";
    assert_eq!(
        body(run(&store, source, Some(json!([1, {"x": 2}])))),
        json!(3)
    );
    // No body set: the empty string, as the service answers.
    assert_eq!(run(&store, "function () {}", None).unwrap().body, r#""""#);
    // appendValue on the initial empty body concatenates.
    let source = "function () { for (var i = 0; i < 10; i++) getContext().getResponse().appendValue('Body', i); }";
    assert_eq!(body(run(&store, source, None)), json!("0123456789"));
}

#[test]
fn arguments_bind_like_apply() {
    let store = store();
    let source =
        "function (p) { getContext().getResponse().setBody(typeof p + ':' + arguments.length); }";
    assert_eq!(
        body(run(&store, source, Some(json!(null)))),
        json!("undefined:0")
    );
    assert_eq!(
        body(run(&store, source, Some(json!({"param1": 4})))),
        json!("undefined:0")
    );
    assert_eq!(
        body(run(&store, source, Some(json!({"0": "a", "length": 1})))),
        json!("string:1")
    );
    for bad in [
        json!("hello"),
        json!(0),
        json!(false),
        json!({"length": 1e9}),
    ] {
        let error = run(&store, source, Some(bad.clone())).unwrap_err();
        assert_eq!(error.status, 400, "{bad}: {error}");
    }
}

#[test]
fn writes_commit_together_with_one_lsn() {
    let store = store();
    let source = r#"function () {
        var c = getContext().getCollection();
        for (var i = 0; i < 3; i++) {
            c.createDocument(c.getSelfLink(), {id: 'i' + i, pk: 'a'}, function (err) { if (err) throw err; });
        }
    }"#;
    let result = run(&store, source, None).unwrap();
    assert_eq!(result.committed.writes, 3);
    let lsns: Vec<u64> = ["i0", "i1", "i2"]
        .iter()
        .map(|id| {
            store
                .read_item("db", "c", Some(r#"["a"]"#), id)
                .unwrap()
                .lsn
        })
        .collect();
    assert_eq!(
        lsns,
        vec![lsns[0]; 3],
        "one change log entry for the whole execution"
    );
}

#[test]
fn a_throw_after_writes_keeps_none_of_them() {
    let store = store();
    put(&store, json!({"id": "kept", "pk": "a", "v": 1}));
    let source = r#"function () {
        var c = getContext().getCollection();
        c.createDocument(c.getSelfLink(), {id: 'new', pk: 'a'}, function (err) {
            if (err) throw err;
            c.replaceDocument(c.getAltLink() + '/docs/kept', {id: 'kept', pk: 'a', v: 2}, function (err) {
                if (err) throw err;
                throw new Error(1234, 'stop here');
            });
        });
    }"#;
    let error = run(&store, source, None).unwrap_err();
    assert_eq!(error.status, 400);
    assert_eq!(error.substatus, Some(1234));
    assert!(
        error.message.starts_with(
            "Encountered exception while executing function. Exception = Error: stop here"
        ),
        "{}",
        error.message
    );
    assert!(read(&store, "new").is_none());
    assert_eq!(read(&store, "kept").unwrap()["v"], 1);
}

#[test]
fn abort_rolls_back_even_from_a_promise() {
    let store = store();
    let source = r#"async function () {
        var c = getContext().getCollection();
        c.createDocument(c.getSelfLink(), {id: 'x', pk: 'a'});
        await Promise.resolve();
        getContext().abort(new Error(77, 'aborted'));
    }"#;
    let error = run(&store, source, None).unwrap_err();
    assert_eq!(error.substatus, Some(77));
    assert!(read(&store, "x").is_none());
}

#[test]
fn thrown_values_of_every_kind_are_400() {
    let store = store();
    for (thrown, expected) in [
        ("'a string'", "Exception = a string"),
        ("{a: 1}", r#"Exception = {"a":1}"#),
        ("undefined", "Exception = undefined"),
        ("null", "Exception = null"),
        ("new TypeError('t')", "Exception = TypeError: t"),
        (
            "{number: 409, toJSON: function () { throw 1; }}",
            "Exception = [object Object]",
        ),
    ] {
        let error = run(&store, &format!("function () {{ throw {thrown}; }}"), None).unwrap_err();
        assert_eq!(error.status, 400, "{thrown}");
        assert!(
            error.message.contains(expected),
            "{thrown}: {}",
            error.message
        );
    }
}

#[test]
fn compile_errors_say_where() {
    let store = store();
    let error = run(&store, "function () { var x = ; }", None).unwrap_err();
    assert_eq!(error.status, 400);
    assert!(
        error.message.starts_with(
            "Encountered exception while compiling Javascript. Exception = SyntaxError"
        ),
        "{}",
        error.message
    );
    assert!(
        error.message.contains("line: 1, column: 23"),
        "{}",
        error.message
    );
    // A trailing semicolon and an arrow function compile, as on the service.
    assert!(run(&store, "function () {};", None).is_ok());
    assert!(run(&store, "() => getContext().getResponse().setBody(1)", None).is_ok());
}

#[test]
fn reads_see_the_transaction_and_queries_page() {
    let store = store();
    for i in 0..5 {
        put(&store, json!({"id": format!("d{i}"), "pk": "a", "n": i}));
    }
    put(&store, json!({"id": "other", "pk": "b", "n": 100}));
    let source = r#"function () {
        var c = getContext().getCollection(), seen = [];
        c.deleteDocument(c.getAltLink() + '/docs/d0', function (err) {
            if (err) throw err;
            c.createDocument(c.getSelfLink(), {id: 'd9', pk: 'a', n: 9});
            page();
        });
        function page(token) {
            c.queryDocuments(c.getSelfLink(),
                {query: 'SELECT VALUE r.n FROM r WHERE r.n >= @min', parameters: [{name: '@min', value: 0}]},
                {pageSize: 2, continuation: token},
                function (err, values, options) {
                    if (err) throw err;
                    seen = seen.concat(values);
                    if (options.continuation) page(options.continuation);
                    else getContext().getResponse().setBody(seen);
                });
        }
    }"#;
    assert_eq!(body(run(&store, source, None)), json!([1, 2, 3, 4, 9]));
}

#[test]
fn a_write_to_another_partition_fails_that_write() {
    let store = store();
    let source = r#"function () {
        var c = getContext().getCollection();
        c.createDocument(c.getSelfLink(), {id: 'x', pk: 'b'}, function (err) {
            getContext().getResponse().setBody(err.number);
        });
    }"#;
    assert_eq!(body(run(&store, source, None)), json!(400));
    let unhandled = "function () { var c = getContext().getCollection(); c.createDocument(c.getSelfLink(), {id: 'x', pk: 'b'}); }";
    let error = run(&store, unhandled, None).unwrap_err();
    assert_eq!((error.status.as_u16(), error.substatus), (400, Some(400)));
}

#[test]
fn errors_reach_callbacks_with_number_and_body() {
    let store = store();
    let source = r#"function () {
        var c = getContext().getCollection();
        c.readDocument(c.getAltLink() + '/docs/missing', function (err, doc) {
            getContext().getResponse().setBody([err.number, typeof doc, JSON.parse(err.body).Errors.length, err instanceof Error]);
        });
    }"#;
    assert_eq!(
        body(run(&store, source, None)),
        json!([404, "undefined", 1, true])
    );
    let outside = "function () { var c = getContext().getCollection(); c.readDocument('dbs/db/colls/other/docs/x'); }";
    let error = run(&store, outside, None).unwrap_err();
    assert!(
        error.message.contains("outside current collection"),
        "{}",
        error.message
    );
}

#[test]
fn console_log_is_kept_with_logging_on() {
    let store = store();
    let source =
        "function () { console.log('The value of %s is %s.', 'x', 1); console.log(' done'); }";
    let result = run(&store, source, None).unwrap();
    assert_eq!(result.log.as_deref(), Some("The value of x is 1. done"));
    let mut quiet = call(source, None);
    quiet.logging = false;
    assert_eq!(
        scripts()
            .run_stored_procedure(&store, quiet, &Default::default())
            .unwrap()
            .log,
        None
    );
}

#[test]
fn the_query_api_filters_maps_and_sorts() {
    let store = store();
    for (id, n) in [("x", 3), ("y", 1), ("z", 2)] {
        put(&store, json!({"id": id, "pk": "a", "n": n}));
    }
    let source = r#"function () {
        var r = __.chain().filter(function (d) { return d.n > 1; }).sortByDescending(function (d) { return d.n; })
            .map(function (d) { return d.id; })
            .value(function (err, ids) { if (err) throw err; getContext().getResponse().setBody(ids); });
        if (!r.isAccepted) throw new Error('not accepted');
    }"#;
    assert_eq!(body(run(&store, source, None)), json!(["x", "z"]));
    let pluck = "function () { __.pluck('n', function (err, ns) { getContext().getResponse().setBody(ns); }); }";
    assert_eq!(body(run(&store, pluck, None)), json!([3, 1, 2]));
}

#[test]
fn no_state_leaks_between_executions() {
    let store = store();
    let first = "function () { globalThis.leak = 1; Array.prototype.evil = 2; }";
    run(&store, first, None).unwrap();
    let second =
        "function () { getContext().getResponse().setBody([typeof leak, [].evil === undefined]); }";
    assert_eq!(body(run(&store, second, None)), json!(["undefined", true]));
}

#[test]
fn a_concurrent_write_reruns_the_script() {
    let store = store();
    put(&store, json!({"id": "counter", "pk": "a", "n": 0}));
    // The first run's read is followed by a write from outside: its commit
    // conflicts, the script runs again and sees the new value.
    let writer = store.clone();
    let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = runs.clone();
    std::thread::scope(|scope| {
        let handle = scope.spawn(move || {
            let source = r#"function () {
                var c = getContext().getCollection();
                c.readDocument(c.getAltLink() + '/docs/counter', function (err, doc) {
                    if (err) throw err;
                    var until = Date.now() + 150; while (Date.now() < until) {}
                    doc.n += 1;
                    c.replaceDocument(doc._self, doc, function (err) { if (err) throw err; });
                });
            }"#;
            run(&store, source, None).unwrap()
        });
        std::thread::sleep(Duration::from_millis(50));
        put(&writer, json!({"id": "counter", "pk": "a", "n": 10}));
        seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        handle.join().unwrap();
    });
    assert_eq!(
        read(&writer, "counter").unwrap()["n"],
        11,
        "the increment applies to the concurrent write"
    );
}

#[test]
fn a_response_over_4_mb_is_refused_and_rolls_back() {
    let store = store();
    let source = r#"function () {
        var c = getContext().getCollection();
        c.createDocument(c.getSelfLink(), {id: 'big', pk: 'a'});
        getContext().getResponse().setBody('x'.repeat(5 * 1024 * 1024));
    }"#;
    let error = run(&store, source, None).unwrap_err();
    assert_eq!(error.status, 413, "{error}");
    assert!(read(&store, "big").is_none());
}

#[test]
fn the_api_still_works_after_the_response_was_set() {
    let store = store();
    let source = r#"function () {
        var c = getContext().getCollection(), r = getContext().getResponse();
        r.setBody('first');
        c.createDocument(c.getSelfLink(), {id: 'late', pk: 'a'}, function (err, doc) {
            if (err) throw err;
            r.setBody(r.getBody() + ' then ' + doc.id);
            r.appendBody('!');
        });
    }"#;
    assert_eq!(body(run(&store, source, None)), json!("first then late!"));
    assert!(read(&store, "late").is_some());
}

#[test]
fn the_items_a_script_writes_carry_its_system_properties() {
    let store = store();
    let source = r#"function () {
        var c = getContext().getCollection();
        c.createDocument(c.getSelfLink(), {pk: 'a', n: 1}, function (err, doc) {
            if (err) throw err;
            c.readDocument(doc._self, function (err, again) {
                if (err) throw err;
                getContext().getResponse().setBody([doc.id.length, again._etag === doc._etag, typeof doc._ts]);
            });
        });
    }"#;
    // A generated id (a GUID), the item readable by its _self within the
    // script, its etag stable.
    assert_eq!(body(run(&store, source, None)), json!([36, true, "number"]));
    let refused = r#"function () {
        var c = getContext().getCollection();
        c.createDocument(c.getSelfLink(), {pk: 'a'}, {disableAutomaticIdGeneration: true}, function (err) {
            getContext().getResponse().setBody(err.number);
        });
    }"#;
    assert_eq!(body(run(&store, refused, None)), json!(400));
}
