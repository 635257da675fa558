//! Hostile scripts and the bounds: endless loops, recursion and
//! allocation, thrown values of every kind, a native call the interrupt
//! cannot stop, and the gate that keeps a late execution from committing.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{body, call, object, put, read, run, store};
use crate::data::script::*;

#[test]
fn endless_loop_times_out_rolls_back_and_frees_the_store() {
    let store = store();
    let source = r#"function () {
        var c = getContext().getCollection();
        c.createDocument(c.getSelfLink(), {id: 'looped', pk: 'a'}, function () { while (true) {} });
    }"#;
    let started = Instant::now();
    let error = run(&store, source, None).unwrap_err();
    assert_eq!(error.status, 408);
    assert_eq!(
        error.message,
        "The requested operation exceeded maximum alloted time."
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(read(&store, "looped").is_none());
    // The store took writes meanwhile and still does.
    put(&store, json!({"id": "after", "pk": "a"}));
}

#[test]
fn runaway_recursion_and_allocation_fail_cleanly() {
    let store = store();
    let deep = run(&store, "function f() { return f() + 1; }", None).unwrap_err();
    assert_eq!(deep.status, 400, "{deep}");
    let huge = run(
        &store,
        "function () { var a = []; while (true) a.push(new Array(1e5).fill(1)); }",
        None,
    )
    .unwrap_err();
    assert!(matches!(huge.status.as_u16(), 400 | 408), "{huge}");
    let huge_string = run(
        &store,
        "function () { var s = 'x'; while (true) s = s + s; }",
        None,
    )
    .unwrap_err();
    assert!(
        matches!(huge_string.status.as_u16(), 400 | 408),
        "{huge_string}"
    );
}

#[test]
fn paging_reads_until_not_accepted_ends_gracefully() {
    let store = store();
    put(&store, json!({"id": "one", "pk": "a"}));
    // Reads the partition over and over: near the bound calls are not
    // accepted, the script ends by itself and succeeds with what it did.
    let source = r#"function () {
        var c = getContext().getCollection(), count = 0;
        function again() {
            var accepted = c.readDocuments(c.getSelfLink(), {}, function (err, docs) {
                if (err) throw err;
                count += docs.length;
                again();
            });
            if (!accepted) getContext().getResponse().setBody(count);
        }
        again();
    }"#;
    let n = body(run(&store, source, None));
    assert!(n.as_u64().unwrap() > 10, "{n}");
}

#[test]
fn many_nested_callbacks_do_not_grow_the_stack() {
    let store = store();
    let source = r#"function () {
        var c = getContext().getCollection(), depth = 0;
        function next() {
            if (depth++ === 3000) { getContext().getResponse().setBody(depth); return; }
            c.readDocument(c.getAltLink() + '/docs/none', function () { next(); });
        }
        next();
    }"#;
    assert_eq!(body(run(&store, source, None)), json!(3001));
}

#[test]
fn hostile_scripts_end_in_an_answer() {
    let store = store();
    // (A native call that loops in C, e.g. `new Array(1e9).join('x')`, is
    // not here: the interrupt cannot stop it; see the bound tests below.)
    let hostile = [
        "function () { Promise.reject(new Error('unhandled')); }",
        "async function () { await new Promise(function () {}); }",
        "function () { getContext().abort(); }",
        "function () { throw Symbol('s'); }",
        "function () { throw new Proxy({}, { get: function () { throw 1; }, getPrototypeOf: function () { throw 2; } }); }",
        "function () { JSON.stringify = null; JSON.parse = null; Array.prototype.shift = null; getContext().getResponse().setBody(1); }",
        "function () { Object.defineProperty(globalThis, 'getContext', { value: 1 }); }",
        "function () { var c = getContext().getCollection(); c.createDocument(c.getSelfLink(), 'not an object'); }",
        "function () { var c = getContext().getCollection(); c.queryDocuments(c.getSelfLink(), 'SELECT * FROM'); }",
        "function () { var c = getContext().getCollection(); c.readDocuments(c.getSelfLink(), {continuation: 'bogus'}); }",
        "function () { var a = []; a[0] = a; getContext().getResponse().setBody(a); }",
        "function () { var o = {}; for (var i = 0; i < 100000; i++) o = {o: o}; var c = getContext().getCollection(); c.createDocument(c.getSelfLink(), {id: 'deep', pk: 'a', o: o}); }",
        "function () { console.log(); console.log(undefined, 1); }",
        "function () { 'use strict'; return arguments.callee; }",
        "42",
        "",
        "})(); (function () {",
    ];
    for source in hostile {
        match run(&store, source, None) {
            Ok(_) => {}
            Err(error) => assert!(
                matches!(error.status.as_u16(), 400 | 408 | 413),
                "{source}: {error}"
            ),
        }
    }
    assert!(read(&store, "deep").is_none());
    // The store still works after all of them.
    put(&store, json!({"id": "after", "pk": "a"}));
    assert!(read(&store, "after").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_native_call_the_interrupt_cannot_stop_is_answered_at_the_bound() {
    let store = store();
    let engine = Arc::new(ScriptEngine::new(Limits {
        time: Duration::from_millis(300),
        ..Limits::SERVICE
    }));
    // join() over 10^8 holes runs seconds in C without checking the
    // interrupt; the request is answered 408 at the bound and a half.
    let source = "function () { var c = getContext().getCollection(); c.createDocument(c.getSelfLink(), {id: 'stuck', pk: 'a'}); new Array(1e8).join(''); }";
    let started = Instant::now();
    let error = engine
        .execute_stored_procedure(&store, call(source, None))
        .await
        .unwrap_err();
    assert_eq!(error.status, 408, "{error}");
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
    assert!(read(&store, "stuck").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_execution_answered_408_never_commits_afterwards() {
    use crate::data::store::{Action, Operation};
    let store = store();
    let worker = store.clone();
    let answer = bound::run(Duration::from_millis(100), move |gate| {
        let mut tx = worker.begin_transaction("db", "c", Some(r#"["a"]"#))?;
        let create = Operation {
            action: Action::Create(object(json!({"id": "late", "pk": "a"}))),
            id: None,
            partition_key: None,
            if_match: None,
            if_none_match: None,
        };
        worker.transact(&mut tx, create)?;
        // Stuck past the bound and the grace, as in a native call.
        std::thread::sleep(Duration::from_millis(900));
        if !gate.begin_commit() {
            return Err(bound::timed_out());
        }
        worker.commit_transaction(tx)?.expect("no conflict");
        Ok(())
    })
    .await;
    assert_eq!(answer.unwrap_err().status, 408);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(
        read(&store, "late").is_none(),
        "the thread gave up its commit"
    );
}
