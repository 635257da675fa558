//! The dispatcher driven as the Java SDK drives a replica, without a
//! socket: request frames built with the codec (as `RntbdRequest.encode`
//! writes them: the golden Create Document of the reference page is the
//! model), answered by [`answer`], decoded back with the codec and
//! checked token by token. Items here; feeds, batches, scripts and
//! sessions in `feeds.rs`.

mod feeds;
mod properties;

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use serde_json::{json, Value};
use uuid::Uuid;

use super::answer;
use crate::account::Account;
use crate::data::clock::{Clock, ClockMode};
use crate::data::store::Store;
use crate::net::transport::ConnectionControl;
use crate::protocol::auth::{self, MasterKey, WELL_KNOWN_KEY};
use crate::rntbd::codec::{
    OperationType, RequestFrame, RequestTokens, ResourceType, ResponseFrame, ResponseTokens,
};

/// An account whose database `db` holds container `c` (partition key
/// `/pk`), on the manual clock.
pub(super) fn account() -> Arc<Account> {
    let store = Store::new(Clock::new(ClockMode::Manual { start: None }));
    let object = |v: Value| v.as_object().unwrap().clone();
    store
        .create_database(&object(json!({"id": "db"})), None)
        .unwrap();
    let container = json!({
        "id": "c",
        "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2},
        "defaultTtl": -1
    });
    store
        .create_container("db", &object(container), None)
        .unwrap();
    let key = MasterKey::from_base64(WELL_KNOWN_KEY).unwrap();
    Arc::new(Account::new(store, key, "South Central US"))
}

/// A request as the SDK would send it: names, PartitionKey, Date, the
/// signature of (verb, resource type, link, date), TransportRequestID 7.
pub(super) struct Ask<'a> {
    pub(super) resource: ResourceType,
    pub(super) operation: OperationType,
    pub(super) names: &'a [&'a str],
    pub(super) body: Option<&'a [u8]>,
    pub(super) tweak: &'a dyn Fn(&mut RequestTokens<'static>),
}

pub(super) const TRANSPORT: u32 = 7;

pub(super) fn ask<'a>(
    resource: ResourceType,
    operation: OperationType,
    names: &'a [&'a str],
    body: Option<&'a [u8]>,
) -> Ask<'a> {
    Ask {
        resource,
        operation,
        names,
        body,
        tweak: &|_| {},
    }
}

fn signed(verb: &str, segment: &str, link: &str, date: &str) -> String {
    let key = MasterKey::from_base64(WELL_KNOWN_KEY).unwrap();
    auth::authorization_header(&key, &auth::payload(verb, segment, link, date, ""))
}

/// The tokens borrow their text: a test's few strings live to its end.
pub(super) fn leak(text: &str) -> &'static str {
    Box::leak(text.to_string().into_boxed_str())
}

/// The frame's bytes, signed for `verb` / `segment` / `link`.
pub(super) fn frame(ask: &Ask<'_>, verb: &str, segment: &str, link: &str) -> Bytes {
    let date = leak(&httpdate::fmt_http_date(std::time::SystemTime::now()));
    let authorization = leak(&signed(verb, segment, link, date));
    let mut tokens = RequestTokens::new();
    tokens
        .set_authorization_token(authorization)
        .set_date(date)
        .set_replica_path("/apps/emu/services/c/partitions/0/replicas/1p")
        .set_transport_request_id(TRANSPORT);
    for (i, name) in ask.names.iter().enumerate() {
        let name = leak(name);
        match i {
            0 => tokens.set_database_name(name),
            1 => tokens.set_collection_name(name),
            _ => tokens.set_document_name(name),
        };
    }
    (ask.tweak)(&mut tokens);
    let request = RequestFrame {
        resource_type: ask.resource,
        operation_type: ask.operation,
        activity_id: Uuid::from_u128(0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10),
        tokens,
        payload: ask.body,
    };
    let mut out = BytesMut::new();
    request.encode(&mut out).unwrap();
    out.freeze()
}

/// A decoded answer, owning its bytes.
pub(super) struct Answered {
    bytes: Bytes,
}

impl Answered {
    pub(super) fn frame(&self) -> ResponseFrame<'_> {
        let (frame, used) = ResponseFrame::decode(&self.bytes).unwrap().unwrap();
        assert_eq!(used, self.bytes.len(), "one whole frame");
        frame
    }
    pub(super) fn status(&self) -> u32 {
        self.frame().status
    }
    pub(super) fn tokens(&self) -> ResponseTokens<'_> {
        self.frame().tokens
    }
    pub(super) fn body(&self) -> Value {
        serde_json::from_slice(self.frame().payload.expect("a body")).unwrap()
    }
}

pub(super) fn run(account: &Arc<Account>, request: Bytes) -> Answered {
    let bytes = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(answer(
            Arc::clone(account),
            0,
            request,
            ConnectionControl::default(),
        ));
    Answered { bytes }
}

pub(super) const PK: &str = r#"["a"]"#;

pub(super) fn with_pk(t: &mut RequestTokens<'static>) {
    t.set_partition_key(PK);
}

/// An item operation on `id` (or the container's feed when `id` is None).
pub(super) fn item_op(
    account: &Arc<Account>,
    operation: OperationType,
    id: Option<&str>,
    body: Option<&[u8]>,
    tweak: &dyn Fn(&mut RequestTokens<'static>),
) -> Answered {
    let names: Vec<&str> = ["db", "c"].into_iter().chain(id).collect();
    let verb = match operation {
        OperationType::Create
        | OperationType::Upsert
        | OperationType::Query
        | OperationType::Batch => "post",
        OperationType::Replace => "put",
        OperationType::Patch => "patch",
        OperationType::Delete => "delete",
        _ => "get",
    };
    let link = match id {
        Some(id) => format!("dbs/db/colls/c/docs/{id}"),
        None => "dbs/db/colls/c".to_string(),
    };
    let both = |t: &mut RequestTokens<'static>| {
        with_pk(t);
        tweak(t);
    };
    let request = Ask {
        tweak: &both,
        ..ask(ResourceType::Document, operation, &names, body)
    };
    run(account, frame(&request, verb, "docs", &link))
}

/// The tokens every answer carries, checked; the LSN returned.
pub(super) fn every_answer_carries(answered: &Answered) -> i64 {
    let tokens = answered.tokens();
    assert_eq!(tokens.transport_request_id(), Some(TRANSPORT), "echoed");
    let lsn = tokens.lsn().expect("LSN");
    assert!(lsn > 0, "LSN > 0");
    assert_eq!(tokens.global_committed_lsn(), Some(lsn));
    assert_eq!(tokens.quorum_acked_lsn(), Some(lsn));
    // What the Java SDK reads instead for every read but a Strong one.
    assert_eq!(tokens.local_lsn(), Some(lsn));
    assert_eq!(tokens.quorum_acked_local_lsn(), Some(lsn));
    assert_eq!(tokens.current_replica_set_size(), Some(4));
    assert_eq!(tokens.current_write_quorum(), Some(3));
    assert_eq!(tokens.number_of_read_regions(), Some(0));
    let range = tokens.partition_key_range_id().expect("range");
    assert_eq!(range, "0");
    let session = tokens.session_token().expect("session token");
    assert_eq!(session, format!("-1#{lsn}"), "no range prefix");
    assert!(tokens.request_charge().is_some());
    assert_eq!(
        answered.frame().activity_id.as_u128() >> 64,
        0x0102_0304_0506_0708
    );
    lsn
}

pub(super) fn owner_is_the_container(answered: &Answered) {
    let tokens = answered.tokens();
    assert_eq!(tokens.owner_full_name(), Some("dbs/db/colls/c"));
    assert!(tokens.owner_id().is_some_and(|rid| !rid.is_empty()));
}

#[test]
fn create_read_replace_patch_delete_with_etags_and_preconditions() {
    let account = account();
    let none = |_: &mut RequestTokens<'static>| {};
    let created = item_op(
        &account,
        OperationType::Create,
        None,
        Some(br#"{"id":"x","pk":"a","n":1}"#),
        &none,
    );
    assert_eq!(created.status(), 201);
    let lsn = every_answer_carries(&created);
    owner_is_the_container(&created);
    assert_eq!(created.tokens().item_lsn(), Some(lsn));
    assert_eq!(created.body()["n"], 1);
    let etag = created.tokens().etag().unwrap().to_string();
    assert_eq!(created.body()["_etag"], etag.as_str());

    let read = item_op(&account, OperationType::Read, Some("x"), None, &none);
    assert_eq!(read.status(), 200);
    assert_eq!(every_answer_carries(&read), lsn);
    assert_eq!(read.tokens().etag(), Some(etag.as_str()));
    assert_eq!(read.tokens().item_lsn(), Some(lsn));

    // Match on a read is If-None-Match: 304 with the current etag.
    let tag: &'static str = leak(&etag);
    let unchanged = item_op(&account, OperationType::Read, Some("x"), None, &move |t| {
        t.set_match_condition(tag);
    });
    assert_eq!(unchanged.status(), 304);
    assert_eq!(unchanged.frame().payload, None);

    // Match on a write is If-Match: a stale etag is 412, nothing changed.
    let stale = item_op(
        &account,
        OperationType::Replace,
        Some("x"),
        Some(br#"{"id":"x","pk":"a","n":2}"#),
        &|t| {
            t.set_match_condition("\"00000000-0000-0000-0000-000000000000\"");
        },
    );
    assert_eq!(stale.status(), 412);
    every_answer_carries(&stale);
    assert_eq!(stale.body()["code"], "PreconditionFailed");

    let replaced = item_op(
        &account,
        OperationType::Replace,
        Some("x"),
        Some(br#"{"id":"x","pk":"a","n":2}"#),
        &move |t| {
            t.set_match_condition(tag);
        },
    );
    assert_eq!(replaced.status(), 200);
    let replaced_lsn = every_answer_carries(&replaced);
    assert!(replaced_lsn > lsn, "a write moves the LSN");
    assert_ne!(replaced.tokens().etag(), Some(etag.as_str()));

    let patched = item_op(
        &account,
        OperationType::Patch,
        Some("x"),
        Some(br#"{"operations":[{"op":"incr","path":"/n","value":5}]}"#),
        &none,
    );
    assert_eq!(patched.status(), 200);
    assert_eq!(patched.body()["n"], 7);

    // ReturnPreference: the answer without the body.
    let upserted = item_op(
        &account,
        OperationType::Upsert,
        None,
        Some(br#"{"id":"x","pk":"a","n":9}"#),
        &|t| {
            t.set_return_preference(1);
        },
    );
    assert_eq!(upserted.status(), 200, "an upsert of an existing item");
    assert_eq!(upserted.frame().payload, None);
    assert!(upserted.tokens().etag().is_some());

    let deleted = item_op(&account, OperationType::Delete, Some("x"), None, &none);
    assert_eq!(deleted.status(), 204);
    let deleted_lsn = every_answer_carries(&deleted);

    let gone = item_op(&account, OperationType::Read, Some("x"), None, &none);
    assert_eq!(gone.status(), 404);
    let gone_lsn = every_answer_carries(&gone);
    assert!(gone_lsn >= replaced_lsn, "a 404 names the range's LSN");
    // The client holds the delete's session token: a 404 whose token is
    // older reads as "this replica has not caught up", and it retries.
    assert!(
        gone_lsn >= deleted_lsn,
        "{gone_lsn} < the delete's {deleted_lsn}"
    );
    owner_is_the_container(&gone);
    assert_eq!(gone.body()["code"], "NotFound");
}

#[test]
fn an_item_with_a_ttl_is_gone_once_the_test_clock_passes_it() {
    let account = account();
    let none = |_: &mut RequestTokens<'static>| {};
    let created = item_op(
        &account,
        OperationType::Create,
        None,
        Some(br#"{"id":"t","pk":"a","ttl":5}"#),
        &none,
    );
    assert_eq!(created.status(), 201);
    assert_eq!(
        item_op(&account, OperationType::Read, Some("t"), None, &none).status(),
        200
    );
    account.store.advance_clock(5).unwrap();
    let expired = item_op(&account, OperationType::Read, Some("t"), None, &none);
    assert_eq!(expired.status(), 404);
    every_answer_carries(&expired);
}

#[test]
fn a_fresh_container_and_a_missing_database_still_answer_an_lsn() {
    let account = account();
    let missing = item_op(
        &account,
        OperationType::Read,
        Some("nothing"),
        None,
        &|_| {},
    );
    assert_eq!(missing.status(), 404);
    every_answer_carries(&missing);

    // `createDatabaseIfNotExists` begins with a Database Read.
    let names = ["other"];
    let request = ask(ResourceType::Database, OperationType::Read, &names, None);
    let answered = run(&account, frame(&request, "get", "dbs", "dbs/other"));
    assert_eq!(answered.status(), 404);
    every_answer_carries(&answered);

    let names = ["db"];
    let request = ask(ResourceType::Database, OperationType::Read, &names, None);
    let answered = run(&account, frame(&request, "get", "dbs", "dbs/db"));
    assert_eq!(answered.status(), 200);
    assert_eq!(answered.body()["id"], "db");
    assert_eq!(answered.tokens().owner_full_name(), Some("dbs/db"));
    every_answer_carries(&answered);
}

#[test]
fn a_bad_signature_is_401_and_changes_nothing() {
    let account = account();
    let names = ["db", "c"];
    let request = Ask {
        tweak: &with_pk,
        ..ask(
            ResourceType::Document,
            OperationType::Create,
            &names,
            Some(br#"{"id":"s","pk":"a"}"#),
        )
    };
    // Signed for another container.
    let answered = run(
        &account,
        frame(&request, "post", "docs", "dbs/db/colls/other"),
    );
    assert_eq!(answered.status(), 401);
    assert_eq!(answered.body()["code"], "Unauthorized");
    every_answer_carries(&answered);
    let read = item_op(&account, OperationType::Read, Some("s"), None, &|_| {});
    assert_eq!(read.status(), 404, "nothing was created");
}

#[test]
fn a_microsoft_entra_token_serves_the_data_plane_and_refuses_managing_resources() {
    use base64::Engine;
    let account = account();
    let url = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let jwt = |key: &str| {
        let header = r#"{"typ":"JWT","alg":"RS256","kid":"CosmosEmulatorPrimaryMaster"}"#;
        let claims = format!(r#"{{"nbf":{},"exp":{}}}"#, now - 10, now + 3600);
        [header, &claims, key]
            .map(|part| url.encode(part))
            .join(".")
    };
    // As the Java SDK sends a token credential's: URL-encoded.
    let header = |jwt: String| leak(&format!("type%3Daad%26ver%3D1.0%26sig%3D{jwt}"));
    let token = header(jwt(WELL_KNOWN_KEY));
    let entra = |t: &mut RequestTokens<'static>| {
        t.set_authorization_token(token);
    };
    let body = br#"{"id":"e","pk":"a"}"#;
    let created = item_op(&account, OperationType::Create, None, Some(body), &entra);
    assert_eq!(created.status(), 201, "{}", created.body());
    let read = item_op(&account, OperationType::Read, Some("e"), None, &entra);
    assert_eq!(read.status(), 200);
    // A data-plane principal creates no container: 403/5300, as over HTTP.
    let names = ["db"];
    let container = Ask {
        tweak: &entra,
        ..ask(
            ResourceType::Collection,
            OperationType::Create,
            &names,
            Some(br#"{"id":"d","partitionKey":{"paths":["/pk"],"kind":"Hash"}}"#),
        )
    };
    let refused = run(&account, frame(&container, "post", "colls", "dbs/db"));
    assert_eq!(refused.status(), 403);
    assert_eq!(refused.tokens().sub_status(), Some(5300));
    // Another key's token is refused.
    let forged = header(jwt("b3RoZXI="));
    let other = |t: &mut RequestTokens<'static>| {
        t.set_authorization_token(forged);
    };
    let refused = item_op(&account, OperationType::Read, Some("e"), None, &other);
    assert_eq!(refused.status(), 401);
}

#[test]
fn a_request_aimed_at_a_split_range_is_410_1007_for_an_item_and_1002_for_a_feed() {
    let account = account();
    account.store.split_range("db", "c", "0").unwrap();
    // The replica path names range 0, which is gone. A point operation is
    // told 1007 (splitting): the Java SDK's direct stack retries that after
    // re-reading the ranges, where a 1002 would reach the application.
    let answered = item_op(&account, OperationType::Read, Some("x"), None, &|_| {});
    assert_eq!(answered.status(), 410);
    assert_eq!(answered.tokens().sub_status(), Some(1007));
    assert!(answered.tokens().lsn().is_some_and(|l| l > 0));
    assert_eq!(answered.tokens().transport_request_id(), Some(TRANSPORT));
    // A child's replica answers.
    let child = item_op(&account, OperationType::Read, Some("x"), None, &|t| {
        t.set_replica_path("/apps/emu/services/c/partitions/1/replicas/2s");
    });
    assert_eq!(child.status(), 404);
    // PartitionKeyRangeId, `{collection rid},{range}`, names the parent.
    let query = item_op(
        &account,
        OperationType::Query,
        None,
        Some(br#"{"query":"SELECT * FROM c","parameters":[]}"#),
        &|t| {
            t.set_replica_path("/apps/emu/services/c/partitions/1/replicas/2s")
                .set_partition_key_range_id("abc=,0");
        },
    );
    assert_eq!(query.status(), 410);
    assert_eq!(query.tokens().sub_status(), Some(1002));
}

#[test]
fn a_container_created_again_under_its_name_is_410_1000_to_a_client_holding_its_old_rid() {
    use base64::Engine;
    let account = account();
    let rid_bytes = |account: &Arc<Account>| {
        let rid = account
            .store
            .with_container("db", "c", |c, _| Ok(c.rid.clone()))
            .unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(rid.replace('-', "/"))
            .unwrap();
        &*Box::leak(bytes.into_boxed_slice())
    };
    let old = rid_bytes(&account);
    let body = br#"{"id":"x","pk":"a"}"#;
    let with_old = |t: &mut RequestTokens<'static>| {
        t.set_resource_id(old);
    };
    // The RID the names resolve to: served.
    let created = item_op(&account, OperationType::Create, None, Some(body), &with_old);
    assert_eq!(created.status(), 201);
    // Deleted and created again: the same names, another RID.
    account.store.delete_container("db", "c").unwrap();
    let container =
        json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}});
    account
        .store
        .create_container("db", container.as_object().unwrap(), None)
        .unwrap();
    let new = rid_bytes(&account);
    assert_ne!(old, new);
    for (operation, id, body) in [
        (OperationType::Read, Some("x"), None),
        (OperationType::Create, None, Some(&body[..])),
        (
            OperationType::Query,
            None,
            Some(&br#"{"query":"SELECT * FROM c","parameters":[]}"#[..]),
        ),
    ] {
        let stale = item_op(&account, operation, id, body, &with_old);
        assert_eq!(stale.status(), 410, "{operation:?}");
        assert_eq!(stale.tokens().sub_status(), Some(1000), "{operation:?}");
        every_answer_carries(&stale);
    }
    // Nothing was written by the refused create; the client's retry with
    // the new RID is served.
    let with_new = |t: &mut RequestTokens<'static>| {
        t.set_resource_id(new);
    };
    let read = item_op(&account, OperationType::Read, Some("x"), None, &with_new);
    assert_eq!(read.status(), 404);
    let created = item_op(&account, OperationType::Create, None, Some(body), &with_new);
    assert_eq!(created.status(), 201);
}

#[test]
fn a_query_page_and_a_page_size_of_minus_one() {
    let account = account();
    for id in ["q1", "q2", "q3"] {
        let body = format!(r#"{{"id":"{id}","pk":"a"}}"#);
        let created = item_op(
            &account,
            OperationType::Create,
            None,
            Some(body.as_bytes()),
            &|_| {},
        );
        assert_eq!(created.status(), 201);
    }
    let query = br#"{"query":"SELECT * FROM c WHERE c.id != @x","parameters":[{"name":"@x","value":"q2"}]}"#;
    let page = item_op(&account, OperationType::Query, None, Some(query), &|t| {
        t.set_page_size(1).set_partition_key_range_id("0");
    });
    assert_eq!(page.status(), 200);
    every_answer_carries(&page);
    assert_eq!(page.body()["_count"], 1);
    assert_eq!(page.tokens().item_count(), Some(1));
    let continuation = page
        .tokens()
        .continuation_token()
        .expect("more")
        .to_string();
    let continuation: &'static str = leak(&continuation);
    let next = item_op(
        &account,
        OperationType::Query,
        None,
        Some(query),
        &move |t| {
            t.set_page_size(u32::MAX)
                .set_continuation_token(continuation);
        },
    );
    assert_eq!(next.status(), 200);
    assert_eq!(next.body()["_count"], 1);
    assert_eq!(next.tokens().continuation_token(), None);
}

#[test]
fn an_operation_not_served_is_a_cosmos_error_not_a_panic() {
    let account = account();
    let names = ["db", "c"];
    let request = ask(ResourceType::Offer, OperationType::Read, &names, None);
    let answered = run(&account, frame(&request, "get", "offers", ""));
    assert_eq!(answered.status(), 400);
    assert!(answered.body()["message"]
        .as_str()
        .unwrap()
        .contains("Direct mode"));
    every_answer_carries(&answered);
    // Bytes that are no frame: a 400 too.
    let answered = run(&account, Bytes::from_static(&[1, 2, 3]));
    assert_eq!(answered.status(), 400);
}

#[test]
fn barriers_answer_200_with_the_current_lsn_and_no_body() {
    let account = account();
    let created = item_op(
        &account,
        OperationType::Create,
        None,
        Some(br#"{"id":"b","pk":"a"}"#),
        &|_| {},
    );
    let lsn = created.tokens().lsn().unwrap();
    let names = ["db", "c"];
    let request = ask(ResourceType::Collection, OperationType::Head, &names, None);
    let head = run(&account, frame(&request, "head", "colls", "dbs/db/colls/c"));
    assert_eq!(head.status(), 200);
    assert_eq!(head.frame().payload, None);
    assert_eq!(every_answer_carries(&head), lsn);

    let request = ask(ResourceType::Database, OperationType::HeadFeed, &[], None);
    let head = run(&account, frame(&request, "head", "dbs", ""));
    assert_eq!(head.status(), 200);
    assert_eq!(head.frame().payload, None);
    assert!(every_answer_carries(&head) >= lsn);
}

/// The connections spawn the dispatcher on the runtime's threads.
#[test]
fn the_answer_is_a_send_future() {
    fn sendable<T: Send + 'static>(_: T) {}
    sendable(answer(
        account(),
        0,
        Bytes::new(),
        ConnectionControl::default(),
    ));
}
