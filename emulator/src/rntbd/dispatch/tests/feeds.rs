//! The dispatcher's feeds and the rest: the change feed with its 304,
//! a transactional batch, a stored procedure with its log, a session
//! token the replica has not reached, and the steps around every
//! operation (a fault rule matches a Direct-mode request).

use super::*;
use crate::operations::{scripts, ContainerPath, GivenOptions, Serving};

fn create(account: &Arc<Account>, id: &str) -> i64 {
    let body = format!(r#"{{"id":"{id}","pk":"a"}}"#);
    let created = item_op(
        account,
        OperationType::Create,
        None,
        Some(body.as_bytes()),
        &|_| {},
    );
    assert_eq!(created.status(), 201);
    created.tokens().lsn().unwrap()
}

#[test]
fn the_change_feed_pages_then_answers_304_with_its_etag() {
    let account = account();
    create(&account, "f1");
    let lsn = create(&account, "f2");
    let change_feed = |t: &mut RequestTokens<'static>| {
        t.set_a_im("Incremental Feed")
            .set_partition_key_range_id("0")
            .set_page_size(u32::MAX);
    };
    let page = item_op(&account, OperationType::ReadFeed, None, None, &change_feed);
    assert_eq!(page.status(), 200);
    every_answer_carries(&page);
    assert_eq!(page.body()["_count"], 2);
    assert_eq!(page.tokens().item_count(), Some(2));
    let etag = leak(page.tokens().etag().expect("the continuation"));

    // From that etag: nothing new, a 304 (a success) with the etag again.
    let unchanged = item_op(&account, OperationType::ReadFeed, None, None, &move |t| {
        change_feed(t);
        t.set_match_condition(etag);
    });
    assert_eq!(unchanged.status(), 304);
    assert_eq!(every_answer_carries(&unchanged), lsn);
    assert_eq!(unchanged.tokens().etag(), Some(etag));

    create(&account, "f3");
    let next = item_op(&account, OperationType::ReadFeed, None, None, &move |t| {
        change_feed(t);
        t.set_match_condition(etag);
    });
    assert_eq!(next.status(), 200);
    assert_eq!(next.body()["Documents"][0]["id"], "f3");

    // Without A_IM, the read feed.
    let feed = item_op(&account, OperationType::ReadFeed, None, None, &|_| {});
    assert_eq!(feed.status(), 200);
    assert_eq!(feed.body()["_count"], 3);
}

#[test]
fn a_transactional_batch_commits_all_or_nothing() {
    let account = account();
    let batch = br#"[
        {"operationType":"Create","resourceBody":{"id":"b1","pk":"a"}},
        {"operationType":"Upsert","resourceBody":{"id":"b2","pk":"a"}}
    ]"#;
    let atomic = |t: &mut RequestTokens<'static>| {
        t.set_is_batch_atomic(1);
    };
    let done = item_op(&account, OperationType::Batch, None, Some(batch), &atomic);
    assert_eq!(done.status(), 200, "{}", done.body());
    every_answer_carries(&done);
    let results = done.body();
    assert_eq!(results.as_array().unwrap().len(), 2);
    assert_eq!(results[0]["statusCode"], 201);

    // A second create of b1 fails: nothing of the batch is kept.
    let failing = br#"[
        {"operationType":"Create","resourceBody":{"id":"b3","pk":"a"}},
        {"operationType":"Create","resourceBody":{"id":"b1","pk":"a"}}
    ]"#;
    let refused = item_op(&account, OperationType::Batch, None, Some(failing), &atomic);
    assert_eq!(refused.status(), 207);
    let read = item_op(&account, OperationType::Read, Some("b3"), None, &|_| {});
    assert_eq!(read.status(), 404);
}

#[test]
fn a_stored_procedure_runs_and_sends_its_log() {
    let account = account();
    let serving = Serving::new(&account, 0);
    let container = ContainerPath {
        database: "db",
        container: "c",
    };
    let sproc = json!({
        "id": "hello",
        "body": "function (name) { console.log('hi ' + name); getContext().getResponse().setBody('hello ' + name); }"
    })
    .to_string();
    let kind = crate::data::store::ScriptKind::StoredProcedure;
    let made = scripts::create(
        &serving,
        container,
        kind,
        &GivenOptions::default(),
        sproc.as_bytes(),
    );
    assert_eq!(made.unwrap().status, 201);

    let names = ["db", "c"];
    let tweak = |t: &mut RequestTokens<'static>| {
        t.set_stored_procedure_name("hello")
            .set_partition_key(PK)
            .set_enable_logging(1);
    };
    let request = Ask {
        tweak: &tweak,
        ..ask(
            ResourceType::StoredProcedure,
            OperationType::ExecuteJavaScript,
            &names,
            Some(br#"["you"]"#),
        )
    };
    let ran = run(
        &account,
        frame(&request, "post", "sprocs", "dbs/db/colls/c/sprocs/hello"),
    );
    assert_eq!(ran.status(), 200, "{:?}", ran.frame().payload);
    every_answer_carries(&ran);
    assert_eq!(ran.body(), json!("hello you"));
    assert_eq!(ran.tokens().log_results(), Some("hi%20you"));
}

#[test]
fn a_session_the_replica_has_not_reached_is_404_1002_with_a_session_token() {
    let account = account();
    let lsn = create(&account, "s");
    let ahead = item_op(&account, OperationType::Read, Some("s"), None, &|t| {
        t.set_session_token("0:-1#999999");
    });
    assert_eq!(ahead.status(), 404);
    assert_eq!(ahead.tokens().sub_status(), Some(1002));
    assert_eq!(every_answer_carries(&ahead), lsn);
    // The token of the write is honoured by the next read.
    let token = leak(&format!("0:-1#{lsn}"));
    let read = item_op(&account, OperationType::Read, Some("s"), None, &move |t| {
        t.set_session_token(token);
    });
    assert_eq!(read.status(), 200);
}

#[test]
fn a_consistency_stronger_than_the_accounts_is_refused() {
    let account = account();
    create(&account, "k");
    let strong = item_op(&account, OperationType::Read, Some("k"), None, &|t| {
        t.set_consistency_level(0);
    });
    assert_eq!(
        strong.status(),
        400,
        "a Session account: Strong is stronger"
    );
    let eventual = item_op(&account, OperationType::Read, Some("k"), None, &|t| {
        t.set_consistency_level(3);
    });
    assert_eq!(eventual.status(), 200);
}

#[test]
fn a_fault_rule_matches_a_direct_mode_request_as_over_http() {
    let account = account();
    let rule = json!({
        "match": {"operation": "upsert", "database": "db", "container": "c"},
        "respond": {"status": 429, "subStatus": 3200, "retryAfterMs": 50},
        "hits": 1
    });
    account.faults.add(rule, 0).unwrap();
    let upsert = |account: &Arc<Account>| {
        item_op(
            account,
            OperationType::Upsert,
            None,
            Some(br#"{"id":"u","pk":"a"}"#),
            &|_| {},
        )
    };
    let throttled = upsert(&account);
    assert_eq!(throttled.status(), 429);
    assert_eq!(throttled.tokens().sub_status(), Some(3200));
    assert_eq!(throttled.tokens().retry_after_milliseconds(), Some(50));
    every_answer_carries(&throttled);
    // Another kind of operation does not match; the rule's one hit is spent.
    assert_eq!(create(&account, "other"), 1);
    assert_eq!(upsert(&account).status(), 201);
}

#[test]
fn the_golden_create_documents_tokens_are_all_understood() {
    // The reference page's golden Create Document (the Java SDK's own
    // encoder), on this account's names and its container's RID (the
    // golden frame's ResourceId, d98d2800e43e9f00, is a service
    // container's 8 bytes; this one's `AQAAAIAAAAE=` is 0100000080000001):
    // ResourceId, SessionToken and ConsistencyLevel Session, ClientVersion,
    // PartitionKey, ReplicaPath.
    let account = account();
    let golden = |t: &mut RequestTokens<'static>| {
        t.set_resource_id(&[0x01, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x01])
            .set_session_token("0:-1#5")
            .set_consistency_level(2)
            .set_client_version("2020-07-15")
            .set_partition_key(r#"["pk1"]"#);
    };
    let created = item_op(
        &account,
        OperationType::Create,
        None,
        Some(br#"{"id":"a","pk":"pk1"}"#),
        &golden,
    );
    assert_eq!(created.status(), 201, "{}", created.body());
    let lsn = every_answer_carries(&created);
    assert_eq!(created.tokens().item_lsn(), Some(lsn));
    assert_eq!(created.body()["id"], "a");
}

#[test]
fn the_master_partitions_reads_and_feeds() {
    let account = account();
    let serving = Serving::new(&account, 0);
    let database = crate::operations::DatabasePath { database: "db" };
    let none = GivenOptions::default();
    let made = crate::operations::users::create_user(&serving, database, &none, br#"{"id":"u1"}"#);
    assert_eq!(made.unwrap().status, 201);

    let master =
        |resource, operation, names: &'static [&'static str], body, verb, segment, link| {
            let request = ask(resource, operation, names, body);
            run(&account, frame(&request, verb, segment, link))
        };
    let dbs = master(
        ResourceType::Database,
        OperationType::ReadFeed,
        &[],
        None,
        "get",
        "dbs",
        "",
    );
    assert_eq!(dbs.status(), 200);
    assert_eq!(dbs.body()["Databases"][0]["id"], "db");
    every_answer_carries(&dbs);

    let query: &'static [u8] = br#"{"query":"SELECT * FROM c WHERE c.id = 'c'","parameters":[]}"#;
    let colls = master(
        ResourceType::Collection,
        OperationType::Query,
        &["db"],
        Some(query),
        "post",
        "colls",
        "dbs/db",
    );
    assert_eq!(colls.status(), 200, "{}", colls.body());
    assert_eq!(colls.body()["_count"], 1);

    // UserName (0x0019) names the user.
    let tweak = |t: &mut RequestTokens<'static>| {
        t.set_user_name("u1");
    };
    let request = Ask {
        tweak: &tweak,
        ..ask(ResourceType::User, OperationType::Read, &["db"], None)
    };
    let user = run(&account, frame(&request, "get", "users", "dbs/db/users/u1"));
    assert_eq!(user.status(), 200);
    assert_eq!(user.body()["id"], "u1");
    every_answer_carries(&user);
    let request = Ask {
        tweak: &tweak,
        ..ask(
            ResourceType::Permission,
            OperationType::ReadFeed,
            &["db"],
            None,
        )
    };
    let permissions = run(
        &account,
        frame(&request, "get", "permissions", "dbs/db/users/u1"),
    );
    assert_eq!(permissions.status(), 200);
    assert_eq!(permissions.body()["_count"], 0);
}

#[test]
fn a_resource_tokens_permission_decides_as_over_http() {
    let account = account();
    create(&account, "r");
    let serving = Serving::new(&account, 0);
    let none = GivenOptions::default();
    let database = crate::operations::DatabasePath { database: "db" };
    let made =
        crate::operations::users::create_user(&serving, database, &none, br#"{"id":"alice"}"#);
    assert_eq!(made.unwrap().status, 201);
    let alice = crate::operations::UserPath {
        database: "db",
        user: "alice",
    };
    let permission = json!({"id": "read", "permissionMode": "Read", "resource": "dbs/db/colls/c"});
    let granted = crate::operations::users::create_permission(
        &serving,
        alice,
        &none,
        permission.to_string().as_bytes(),
    )
    .unwrap();
    let token: Value = serde_json::from_slice(&granted.body).unwrap();
    let token = leak(
        &percent_encoding::utf8_percent_encode(
            token["_token"].as_str().unwrap(),
            percent_encoding::NON_ALPHANUMERIC,
        )
        .to_string(),
    );
    let with_token = move |t: &mut RequestTokens<'static>| {
        t.set_authorization_token(token);
    };
    let read = item_op(&account, OperationType::Read, Some("r"), None, &with_token);
    assert_eq!(read.status(), 200, "{}", read.body());
    let write = item_op(
        &account,
        OperationType::Create,
        None,
        Some(br#"{"id":"w","pk":"a"}"#),
        &with_token,
    );
    assert_eq!(write.status(), 403, "a Read permission writes nothing");
    every_answer_carries(&write);
}

#[test]
fn a_rule_that_resets_the_connection_breaks_the_one_given() {
    use crate::account::faults::Connection;
    use std::sync::Mutex;

    #[derive(Default, Clone)]
    struct Recorded(Arc<Mutex<Vec<Connection>>>);
    impl crate::operations::Breakable for Recorded {
        fn break_with(&self, how: Connection) {
            self.0.lock().unwrap_or_else(|p| p.into_inner()).push(how);
        }
    }

    let account = account();
    let rule = json!({"match": {"operation": "read"}, "respond": {"connection": "reset"}});
    account.faults.add(rule, 0).unwrap();
    let names = ["db", "c", "x"];
    let request = Ask {
        tweak: &with_pk,
        ..ask(ResourceType::Document, OperationType::Read, &names, None)
    };
    let bytes = frame(&request, "get", "docs", "dbs/db/colls/c/docs/x");
    let recorded = Recorded::default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let answered = runtime.block_on(super::super::answer(
        Arc::clone(&account),
        0,
        bytes,
        recorded.clone(),
    ));
    let broken = recorded.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
    assert_eq!(broken, [Connection::Reset]);
    // What is written back never reaches the client (the connection
    // breaks under it); it is still a whole frame with the request's ids.
    let answered = Answered { bytes: answered };
    every_answer_carries(&answered);
}
