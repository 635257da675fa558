//! Stored procedures, triggers and user-defined functions as resources of
//! their container (`/dbs/{db}/colls/{coll}/sprocs|triggers|udfs`), over
//! real HTTP: CRUD in the service's shape, feeds and queries, the
//! service's refusals (409, 404, 412, 400 with its messages), bodies kept
//! verbatim, trigger enums echoed as sent, signing as the SDKs sign,
//! resource tokens, and their life with the container, across a restart,
//! a compaction, a snapshot and a reset (`data/store/scripts.rs`).

mod lifecycle;
mod tokens;

use crate::common::{Reply, TestClient, COLL};
use cosmos_emulator::protocol::auth::{authorization_header, payload, MasterKey};
use reqwest::Method;
use serde_json::{json, Value};

/// Each kind: its path segment, its feed's key, and a valid body for `id`.
const KINDS: [(&str, &str); 3] = [
    ("sprocs", "StoredProcedures"),
    ("triggers", "Triggers"),
    ("udfs", "UserDefinedFunctions"),
];

fn script(kind: &str, id: &str, source: &str) -> Value {
    let mut body = json!({"id": id, "body": source});
    if kind == "triggers" {
        body["triggerType"] = json!("Pre");
        body["triggerOperation"] = json!("All");
    }
    body
}

fn feed_path(kind: &str) -> String {
    format!("{COLL}/{kind}")
}

fn path(kind: &str, id: &str) -> String {
    format!("{COLL}/{kind}/{id}")
}

fn create(client: &TestClient, kind: &str, id: &str, source: &str) -> Reply {
    client.post(&feed_path(kind), &script(kind, id, source), &[])
}

fn query(client: &TestClient, kind: &str, sql: &str, parameters: Value) -> Reply {
    client.post(
        &feed_path(kind),
        &json!({"query": sql, "parameters": parameters}),
        &[
            ("x-ms-documentdb-isquery", "true"),
            ("content-type", "application/query+json"),
        ],
    )
}

fn ids(reply: &Reply, feed: &str) -> Vec<String> {
    reply.body[feed]
        .as_array()
        .unwrap_or_else(|| panic!("a {feed} feed: {}", reply.body))
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

fn rid_of(reply: &Reply) -> String {
    reply.body["_rid"].as_str().unwrap().to_string()
}

#[test]
fn each_kind_is_created_read_listed_queried_replaced_and_deleted() {
    let client = TestClient::with_container(None);
    let db_rid = rid_of(&client.get("/dbs/db", &[]));
    let coll_rid = rid_of(&client.get(COLL, &[]));
    for (kind, feed) in KINDS {
        let created = create(&client, kind, "one", "function () { return 1; }");
        assert_eq!(created.status, 201, "{kind}: {}", created.body);
        let body = &created.body;
        assert_eq!(body["id"], "one");
        assert_eq!(body["body"], "function () { return 1; }");
        assert_eq!(body["_ts"], client.now());
        let rid = rid_of(&created);
        assert_eq!(rid.len(), 24, "{kind}: the container's 8 bytes and 8 more");
        assert!(rid.starts_with(&coll_rid[..8]), "{rid} extends {coll_rid}");
        assert_eq!(
            body["_self"],
            format!("dbs/{db_rid}/colls/{coll_rid}/{kind}/{rid}/")
        );
        let etag = body["_etag"].as_str().unwrap();
        assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
        assert_eq!(created.header("etag"), Some(etag));
        if kind == "triggers" {
            assert_eq!(body["triggerType"], "Pre");
            assert_eq!(body["triggerOperation"], "All");
        } else {
            assert!(body.get("triggerType").is_none(), "{body}");
        }

        let read = client.get(&path(kind, "one"), &[]);
        assert_eq!(read.status, 200);
        assert_eq!(&read.body, body);
        // By RID, as its _self names it.
        let by_rid = client.get(&format!("/dbs/{db_rid}/colls/{coll_rid}/{kind}/{rid}"), &[]);
        assert_eq!(by_rid.status, 200, "{}", by_rid.body);
        assert_eq!(&by_rid.body, body);

        assert_eq!(create(&client, kind, "two", "function () {}").status, 201);
        let listed = client.get(&feed_path(kind), &[]);
        assert_eq!(listed.status, 200);
        assert_eq!(listed.body["_rid"], coll_rid.as_str());
        assert_eq!(listed.body["_count"], 2);
        assert_eq!(ids(&listed, feed), ["one", "two"]);
        assert_eq!(listed.body[feed][0], *body);

        let found = query(
            &client,
            kind,
            "SELECT * FROM root r WHERE r.id=@id",
            json!([{"name": "@id", "value": "two"}]),
        );
        assert_eq!(found.status, 200, "{}", found.body);
        assert_eq!(ids(&found, feed), ["two"]);
        assert_eq!(found.body["_count"], 1);
        assert_eq!(found.body["_rid"], coll_rid.as_str());

        client.advance(1);
        let replaced = client.put(
            &path(kind, "one"),
            &script(kind, "one", "function () { return 2; }"),
            &[("if-match", etag)],
        );
        assert_eq!(replaced.status, 200, "{}", replaced.body);
        assert_eq!(replaced.body["body"], "function () { return 2; }");
        assert_eq!(replaced.body["_rid"], body["_rid"]);
        assert_ne!(replaced.body["_etag"], body["_etag"]);
        assert_eq!(replaced.body["_ts"], client.now());
        assert_eq!(client.get(&path(kind, "one"), &[]).body, replaced.body);

        let deleted = client.delete(&path(kind, "one"), &[]);
        assert_eq!(deleted.status, 204);
        client
            .get(&path(kind, "one"), &[])
            .assert_error(404, "NotFound");
        assert_eq!(ids(&client.get(&feed_path(kind), &[]), feed), ["two"]);
    }
    // Each kind is its own feed.
    for (kind, feed) in KINDS {
        assert_eq!(ids(&client.get(&feed_path(kind), &[]), feed), ["two"]);
    }
}

#[test]
fn creates_and_reads_carry_the_script_quota_and_usage() {
    let client = TestClient::with_container(None);
    let created = create(&client, "sprocs", "s1", "function () {}");
    assert_eq!(
        created.header("x-ms-resource-quota"),
        Some("functions=25;storedProcedures=100;triggers=25;")
    );
    assert_eq!(
        created.header("x-ms-resource-usage"),
        Some("functions=0;storedProcedures=1;triggers=0;")
    );
    create(&client, "udfs", "u1", "function (x) { return x; }");
    create(&client, "udfs", "u2", "function (x) { return x; }");
    create(&client, "triggers", "t1", "function () {}");
    let read = client.get(&path("sprocs", "s1"), &[]);
    assert_eq!(
        read.header("x-ms-resource-usage"),
        Some("functions=2;storedProcedures=1;triggers=1;")
    );
    // The container's own quota usage counts them too.
    let container = client.get(COLL, &[("x-ms-documentdb-populatequotainfo", "true")]);
    let usage = container.header("x-ms-resource-usage").unwrap();
    assert!(
        usage.starts_with("functions=2;storedProcedures=1;triggers=1;"),
        "{usage}"
    );
}

#[test]
fn duplicates_absent_scripts_and_stale_etags_are_refused() {
    let client = TestClient::with_container(None);
    for (kind, _) in KINDS {
        let first = create(&client, kind, "s", "function () {}");
        assert_eq!(first.status, 201);
        create(&client, kind, "s", "function () { other(); }").assert_error(409, "Conflict");
        assert_eq!(
            client.get(&path(kind, "s"), &[]).body["body"],
            "function () {}",
            "a refused create changes nothing"
        );

        let absent = client.get(&path(kind, "nope"), &[]);
        absent.assert_error(404, "NotFound");
        assert!(
            absent.message().starts_with("Resource Not Found")
                && absent.message().contains("'nope'"),
            "{}",
            absent.message()
        );
        client
            .put(&path(kind, "nope"), &script(kind, "nope", "x"), &[])
            .assert_error(404, "NotFound");
        client
            .delete(&path(kind, "nope"), &[])
            .assert_error(404, "NotFound");
        client
            .get(&format!("/dbs/db/colls/nocoll/{kind}"), &[])
            .assert_error(404, "NotFound");
        client
            .post(
                &format!("/dbs/db/colls/nocoll/{kind}"),
                &script(kind, "s", "x"),
                &[],
            )
            .assert_error(404, "NotFound");

        let stale = [("if-match", "\"not-the-etag\"")];
        client
            .put(&path(kind, "s"), &script(kind, "s", "changed"), &stale)
            .assert_error(412, "PreconditionFailed");
        client
            .delete(&path(kind, "s"), &stale)
            .assert_error(412, "PreconditionFailed");
        assert_eq!(client.get(&path(kind, "s"), &[]).body, first.body);
        // The current etag (and *) match.
        let etag = first.body["_etag"].as_str().unwrap();
        let replaced = client.put(
            &path(kind, "s"),
            &script(kind, "s", "v2"),
            &[("if-match", etag)],
        );
        assert_eq!(replaced.status, 200);
        let current = replaced.body["_etag"].as_str().unwrap();
        client
            .delete(&path(kind, "s"), &[("if-match", etag)])
            .assert_error(412, "PreconditionFailed");
        assert_eq!(
            client
                .delete(&path(kind, "s"), &[("if-match", current)])
                .status,
            204
        );
    }
}

#[track_caller]
fn refused(reply: Reply, says: &str) {
    reply.assert_error(400, "BadRequest");
    assert!(
        reply.message().contains(says),
        "expected {says:?} in {}",
        reply.message()
    );
}

#[test]
fn invalid_bodies_are_400_in_the_services_words() {
    let client = TestClient::with_container(None);
    let post = |kind: &str, body: Value| client.post(&feed_path(kind), &body, &[]);
    let missing = "The input content is invalid because the required properties - ";
    for kind in ["sprocs", "udfs"] {
        refused(
            post(kind, json!({"id": "s"})),
            &format!("{missing}'body; ' - are missing"),
        );
        refused(
            post(kind, json!({"body": "x"})),
            &format!("{missing}'id; ' - are missing"),
        );
        refused(
            post(kind, json!({"id": "s", "body": 42})),
            "'body' must be a string",
        );
        refused(
            post(kind, json!({"id": "s", "body": {"f": 1}})),
            "'body' must be a string",
        );
        refused(
            post(kind, json!({"id": "a/b", "body": "x"})),
            "invalid character '/'",
        );
        refused(
            post(kind, json!({"id": "x".repeat(256), "body": "x"})),
            "is invalid",
        );
        assert_eq!(
            post(kind, json!({"id": "y".repeat(255), "body": "x"})).status,
            201
        );
    }
    let trigger = |fields: Value| {
        let mut body = json!({"id": "t", "body": "function () {}", "triggerType": "Pre", "triggerOperation": "All"});
        for (k, v) in fields.as_object().unwrap() {
            if v.is_null() {
                body.as_object_mut().unwrap().remove(k);
            } else {
                body[k] = v.clone();
            }
        }
        post("triggers", body)
    };
    refused(
        trigger(json!({"triggerType": null})),
        &format!("{missing}'triggerType; ' - are missing"),
    );
    refused(
        trigger(json!({"triggerOperation": null})),
        &format!("{missing}'triggerOperation; ' - are missing"),
    );
    refused(
        trigger(json!({"body": null, "triggerType": null})),
        &format!("{missing}'body; triggerType; ' - are missing"),
    );
    refused(
        trigger(json!({"triggerType": "During"})),
        "'triggerType' must be one of Pre, Post",
    );
    refused(
        trigger(json!({"triggerOperation": "Read"})),
        "'triggerOperation' must be one of All, Create, Replace, Delete, Upsert",
    );
    refused(trigger(json!({"triggerType": 1})), "'triggerType'");
    // A replace is checked the same way, and changes nothing when refused.
    assert_eq!(trigger(json!({})).status, 201);
    let replace = client.put(
        &path("triggers", "t"),
        &json!({"id": "t", "body": "x", "triggerType": "Pre"}),
        &[],
    );
    refused(replace, "'triggerOperation; '");
    assert_eq!(
        client.get(&path("triggers", "t"), &[]).body["body"],
        "function () {}"
    );
    // Not a JSON object at all.
    let reply = client.send_signed_with(
        &MasterKey::from_base64(client.emulator.key()).unwrap(),
        Method::POST,
        &feed_path("sprocs"),
        &[],
        Some(b"function () {}".to_vec()),
    );
    reply.assert_error(400, "BadRequest");
}

#[test]
fn trigger_enums_are_read_in_any_case_and_echoed_as_sent() {
    let client = TestClient::with_container(None);
    let sent = [
        // The Python and JavaScript SDKs.
        ("py", "pre", "all"),
        // .NET.
        ("net", "Post", "Create"),
        ("loud", "PRE", "uPsErT"),
        ("replace", "post", "replace"),
        ("delete", "Pre", "Delete"),
    ];
    for (id, trigger_type, operation) in sent {
        let body = json!({"id": id, "body": "function () {}", "triggerType": trigger_type, "triggerOperation": operation});
        let created = client.post(&feed_path("triggers"), &body, &[]);
        assert_eq!(created.status, 201, "{}", created.body);
        assert_eq!(created.body["triggerType"], trigger_type);
        assert_eq!(created.body["triggerOperation"], operation);
        let read = client.get(&path("triggers", id), &[]).body;
        assert_eq!(read["triggerType"], trigger_type);
        assert_eq!(read["triggerOperation"], operation);
    }
    let found = query(
        &client,
        "triggers",
        "SELECT VALUE r.id FROM root r WHERE r.triggerType = @t",
        json!([{"name": "@t", "value": "pre"}]),
    );
    assert_eq!(found.body["Triggers"], json!(["py"]));
}

#[test]
fn bodies_are_stored_and_served_verbatim() {
    let client = TestClient::with_container(None);
    let bodies = [
        // The Python SDK's encoding test: line and paragraph separators.
        "function () { var s = 'a\u{2028}b\u{2029}c'; return s; }",
        "// ☃ 雪 🐍 \u{0} \t\r\n not even JavaScript {{{",
        "",
        "function () {\n  getContext().getResponse().setBody(\"\\u00e9\");\n}",
    ];
    for (i, source) in bodies.iter().enumerate() {
        for (kind, _) in KINDS {
            let id = format!("b{i}");
            let created = create(&client, kind, &id, source);
            assert_eq!(created.status, 201, "{}", created.body);
            assert_eq!(created.body["body"], *source);
            assert_eq!(client.get(&path(kind, &id), &[]).body["body"], *source);
        }
    }
    // And as raw bytes: the escape the client chose does not matter.
    let raw = client.send_signed_with(
        &MasterKey::from_base64(client.emulator.key()).unwrap(),
        Method::POST,
        &feed_path("sprocs"),
        &[],
        Some(r#"{"id": "raw", "body": "x\u2028y"}"#.as_bytes().to_vec()),
    );
    assert_eq!(raw.status, 201, "{}", raw.body);
    assert_eq!(raw.body["body"], "x\u{2028}y");
}

#[test]
fn a_replace_with_another_id_renames_and_an_upsert_creates_or_replaces() {
    let client = TestClient::with_container(None);
    for (kind, feed) in KINDS {
        let created = create(&client, kind, "old", "function () {}");
        let renamed = client.put(
            &path(kind, "old"),
            &script(kind, "new", "function () { 1; }"),
            &[],
        );
        assert_eq!(renamed.status, 200, "{}", renamed.body);
        assert_eq!(renamed.body["id"], "new");
        assert_eq!(renamed.body["_rid"], created.body["_rid"]);
        client
            .get(&path(kind, "old"), &[])
            .assert_error(404, "NotFound");
        assert_eq!(client.get(&path(kind, "new"), &[]).body, renamed.body);
        // Onto a taken id: 409, nothing moves.
        create(&client, kind, "taken", "function () {}");
        client
            .put(&path(kind, "new"), &script(kind, "taken", "x"), &[])
            .assert_error(409, "Conflict");
        assert_eq!(
            ids(&client.get(&feed_path(kind), &[]), feed),
            ["new", "taken"]
        );

        let upsert = [("x-ms-documentdb-is-upsert", "True")];
        let first = client.post(&feed_path(kind), &script(kind, "up", "v1"), &upsert);
        assert_eq!(first.status, 201, "{}", first.body);
        let second = client.post(&feed_path(kind), &script(kind, "up", "v2"), &upsert);
        assert_eq!(second.status, 200, "{}", second.body);
        assert_eq!(second.body["body"], "v2");
        assert_eq!(second.body["_rid"], first.body["_rid"]);
        assert_ne!(second.body["_etag"], first.body["_etag"]);
    }
}

#[test]
fn rids_carry_their_kind_and_are_never_reused() {
    let client = TestClient::with_container(None);
    let mut seen = Vec::new();
    for (kind, _) in KINDS {
        let first = rid_of(&create(&client, kind, "s", "x"));
        assert_eq!(client.delete(&path(kind, "s"), &[]).status, 204);
        let again = rid_of(&create(&client, kind, "s", "x"));
        assert_ne!(
            first, again,
            "{kind}: a deleted script's RID is not handed out again"
        );
        seen.extend([first, again]);
    }
    // The service's layout: the kind in the high nibble of the last byte.
    let last: Vec<&str> = seen.iter().map(|rid| &rid[20..]).collect();
    assert_eq!(last, ["gA==", "gA==", "cA==", "cA==", "YA==", "YA=="]);
    // An item's RID in the same container is another resource's.
    let item = client.create_item(&json!({"id": "s", "pk": "p"}));
    assert!(!seen.contains(&rid_of(&item)));
}

#[test]
fn requests_signed_as_the_sdks_sign_them_are_accepted() {
    let client = TestClient::with_container(None);
    create(&client, "sprocs", "s1", "function () {}");
    let key = MasterKey::from_base64(client.emulator.key()).unwrap();
    let http = reqwest::blocking::Client::new();
    // (method, path, resource type, link) as the Python and JavaScript SDKs sign.
    let send = |method: &str, path: &str, kind: &str, link: &str, body: Option<Value>| {
        let date = httpdate::fmt_http_date(std::time::SystemTime::now());
        let auth = authorization_header(&key, &payload(method, kind, link, &date, ""));
        let mut request = http
            .request(
                method.parse().unwrap(),
                format!("{}{path}", client.endpoint()),
            )
            .header("x-ms-date", &date)
            .header("x-ms-version", "2020-07-15")
            .header("authorization", auth);
        if let Some(body) = body {
            request = request.body(body.to_string());
        }
        request.send().unwrap().status().as_u16()
    };
    let sproc = "/dbs/db/colls/c/sprocs/s1";
    assert_eq!(
        send("GET", sproc, "sprocs", "dbs/db/colls/c/sprocs/s1", None),
        200
    );
    assert_eq!(
        send(
            "GET",
            "/dbs/db/colls/c/sprocs",
            "sprocs",
            "dbs/db/colls/c",
            None
        ),
        200
    );
    let body = script("triggers", "t1", "function () {}");
    assert_eq!(
        send(
            "POST",
            "/dbs/db/colls/c/triggers",
            "triggers",
            "dbs/db/colls/c",
            Some(body)
        ),
        201
    );
    assert_eq!(
        send(
            "DELETE",
            "/dbs/db/colls/c/triggers/t1",
            "triggers",
            "dbs/db/colls/c/triggers/t1",
            None
        ),
        204
    );
    // Signed as another resource type, or another link: refused.
    assert_eq!(
        send("GET", sproc, "docs", "dbs/db/colls/c/sprocs/s1", None),
        401
    );
    assert_eq!(send("GET", sproc, "sprocs", "dbs/db/colls/c", None), 401);
}
