//! Users, permissions and resource-token authentication over real HTTP:
//! CRUD in the service's shape, what a token allows and refuses (403),
//! tokens restricted to a partition key or an item, expiry on the manual
//! clock (401), forged tokens (401), and the master key unchanged.

use crate::common::{Reply, TestClient, COLL};
use reqwest::Method;
use serde_json::{json, Value};

const USERS: &str = "/dbs/db/users";

/// A client with `db/c` holding items `a` (pk `p1`) and `b` (pk `p2`), a
/// second container `other`, and a user `alice`.
fn setup() -> TestClient {
    let client = TestClient::with_container(None);
    assert_eq!(client.create_container("other", None).status, 201);
    for (id, pk) in [("a", "p1"), ("b", "p2")] {
        assert_eq!(client.create_item(&json!({"id": id, "pk": pk})).status, 201);
    }
    let reply = client.post(USERS, &json!({"id": "alice"}), &[]);
    assert_eq!(reply.status, 201, "{}", reply.body);
    client
}

/// Creates a permission for alice and returns its `_token`.
fn grant(client: &TestClient, id: &str, mode: &str, resource: &str, pk: Option<Value>) -> String {
    let mut body = json!({"id": id, "permissionMode": mode, "resource": resource});
    if let Some(pk) = pk {
        body["resourcePartitionKey"] = pk;
    }
    let reply = client.post(&format!("{USERS}/alice/permissions"), &body, &[]);
    assert_eq!(reply.status, 201, "{}", reply.body);
    reply.body["_token"].as_str().unwrap().to_string()
}

fn with_token(
    client: &TestClient,
    token: &str,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Reply {
    client.send_with_authorization(token, method, path, headers, body)
}

fn read(client: &TestClient, token: &str, path: &str, pk: &str) -> Reply {
    with_token(
        client,
        token,
        Method::GET,
        path,
        &[("x-ms-documentdb-partitionkey", pk)],
        None,
    )
}

fn query(client: &TestClient, token: &str, headers: &[(&str, &str)]) -> Reply {
    let mut all = vec![
        ("x-ms-documentdb-isquery", "true"),
        ("content-type", "application/query+json"),
    ];
    all.extend_from_slice(headers);
    with_token(
        client,
        token,
        Method::POST,
        &format!("{COLL}/docs"),
        &all,
        Some(&json!({"query": "SELECT * FROM c", "parameters": []})),
    )
}

fn create(client: &TestClient, token: &str, coll: &str, item: &Value) -> Reply {
    let pk = json!([item["pk"]]).to_string();
    with_token(
        client,
        token,
        Method::POST,
        &format!("{coll}/docs"),
        &[("x-ms-documentdb-partitionkey", &pk)],
        Some(item),
    )
}

#[track_caller]
fn assert_forbidden(reply: &Reply) {
    reply.assert_error(403, "Forbidden");
    assert!(
        reply
            .message()
            .starts_with("Insufficient permissions provided in the authorization header"),
        "{}",
        reply.message()
    );
}

#[test]
fn users_crud_in_the_service_shape() {
    let client = setup();
    let user = client.get(&format!("{USERS}/alice"), &[]);
    assert_eq!(user.status, 200);
    let db_rid = client.get("/dbs/db", &[]).body["_rid"]
        .as_str()
        .unwrap()
        .to_string();
    let rid = user.body["_rid"].as_str().unwrap();
    assert_eq!(user.body["id"], "alice");
    assert_eq!(user.body["_permissions"], "permissions/");
    assert_eq!(user.body["_self"], format!("dbs/{db_rid}/users/{rid}/"));
    assert!(user.body["_etag"].is_string() && user.body["_ts"].is_i64());
    assert_eq!(user.header("etag"), user.body["_etag"].as_str());
    // Reachable by RID too.
    assert_eq!(
        client.get(&format!("/dbs/{db_rid}/users/{rid}"), &[]).body["id"],
        "alice"
    );

    client
        .post(USERS, &json!({"id": "alice"}), &[])
        .assert_error(409, "Conflict");
    client
        .get(&format!("{USERS}/bob"), &[])
        .assert_error(404, "NotFound");
    client
        .post(USERS, &json!({"name": "no id"}), &[])
        .assert_error(400, "BadRequest");

    assert_eq!(client.post(USERS, &json!({"id": "bob"}), &[]).status, 201);
    let feed = client.get(USERS, &[]);
    assert_eq!(feed.body["_count"], 2);
    assert_eq!(feed.body["Users"][1]["id"], "bob");
    let found = client.post(
        USERS,
        &json!({"query": "SELECT * FROM u WHERE u.id = @id", "parameters": [{"name": "@id", "value": "bob"}]}),
        &[
            ("x-ms-documentdb-isquery", "true"),
            ("content-type", "application/query+json"),
        ],
    );
    assert_eq!(found.status, 200, "{}", found.body);
    assert_eq!(found.body["Users"].as_array().unwrap().len(), 1);

    // Replace renames; a stale If-Match is refused.
    client
        .put(
            &format!("{USERS}/bob"),
            &json!({"id": "robert"}),
            &[("if-match", "\"stale\"")],
        )
        .assert_error(412, "PreconditionFailed");
    let renamed = client.put(&format!("{USERS}/bob"), &json!({"id": "robert"}), &[]);
    assert_eq!(renamed.status, 200, "{}", renamed.body);
    assert_eq!(renamed.body["id"], "robert");
    client
        .get(&format!("{USERS}/bob"), &[])
        .assert_error(404, "NotFound");

    // Upsert creates (201) then updates (200).
    let upsert = [("x-ms-documentdb-is-upsert", "true")];
    assert_eq!(
        client.post(USERS, &json!({"id": "carol"}), &upsert).status,
        201
    );
    assert_eq!(
        client.post(USERS, &json!({"id": "carol"}), &upsert).status,
        200
    );

    assert_eq!(client.delete(&format!("{USERS}/robert"), &[]).status, 204);
    client
        .delete(&format!("{USERS}/robert"), &[])
        .assert_error(404, "NotFound");

    // Deleting the database deletes its users.
    assert_eq!(client.delete("/dbs/db", &[]).status, 204);
    assert_eq!(client.post("/dbs", &json!({"id": "db"}), &[]).status, 201);
    assert_eq!(client.get(USERS, &[]).body["_count"], 0);
}

#[test]
fn permissions_crud_with_fresh_tokens() {
    let client = setup();
    let path = format!("{USERS}/alice/permissions");
    let body = json!({"id": "read-c", "permissionMode": "Read", "resource": "dbs/db/colls/c"});
    let created = client.post(&path, &body, &[]);
    assert_eq!(created.status, 201, "{}", created.body);
    let p = &created.body;
    assert_eq!(p["permissionMode"], "Read");
    assert_eq!(p["resource"], "dbs/db/colls/c");
    assert!(p["_token"]
        .as_str()
        .unwrap()
        .starts_with("type=resource&ver=1.0&sig="));
    assert!(p["_self"].as_str().unwrap().contains("/permissions/"));

    client.post(&path, &body, &[]).assert_error(409, "Conflict");
    // One permission per resource for a user.
    let same_resource =
        json!({"id": "other-id", "permissionMode": "All", "resource": "dbs/db/colls/c"});
    client
        .post(&path, &same_resource, &[])
        .assert_error(409, "Conflict");
    for bad in [
        json!({"id": "x", "permissionMode": "Write", "resource": "dbs/db/colls/c"}),
        json!({"id": "x", "permissionMode": "All"}),
        json!({"id": "x", "permissionMode": "All", "resource": "dbs/db"}),
        json!({"id": "x", "permissionMode": "All", "resource": "dbs/elsewhere/colls/c"}),
        json!({"id": "x", "permissionMode": "All", "resource": "dbs/db/colls/c", "resourcePartitionKey": "p1"}),
    ] {
        client
            .post(&path, &bad, &[])
            .assert_error(400, "BadRequest");
    }
    client
        .post(
            &path,
            &json!({"id": "x", "permissionMode": "All", "resource": "dbs/db/colls/missing"}),
            &[],
        )
        .assert_error(404, "NotFound");
    client
        .post(&format!("{USERS}/nobody/permissions"), &body, &[])
        .assert_error(404, "NotFound");

    // Each read hands out a new token; the expiry header is bounded.
    let first = client.get(&format!("{path}/read-c"), &[]);
    client.advance(1);
    let second = client.get(&format!("{path}/read-c"), &[]);
    assert_eq!(first.status, 200);
    assert_ne!(first.body["_token"], second.body["_token"]);
    for bad in ["599", "86401", "soon", "-1"] {
        client
            .get(
                &format!("{path}/read-c"),
                &[("x-ms-documentdb-expiry-seconds", bad)],
            )
            .assert_error(400, "BadRequest");
    }
    let feed = client.get(&path, &[]);
    assert_eq!(feed.body["_count"], 1);
    assert!(feed.body["Permissions"][0]["_token"].is_string());

    // Replace changes the mode; the id in the body must match.
    let replaced = client.put(
        &format!("{path}/read-c"),
        &json!({"id": "read-c", "permissionMode": "All", "resource": "dbs/db/colls/c"}),
        &[],
    );
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    assert_eq!(replaced.body["permissionMode"], "All");
    // Another id in the body renames the permission (as the SDKs'
    // test_permission_crud does), unless the new id is taken.
    let other = json!({"id": "other", "permissionMode": "Read", "resource": "dbs/db/colls/other"});
    assert_eq!(client.post(&path, &other, &[]).status, 201);
    client
        .put(
            &format!("{path}/read-c"),
            &json!({"id": "other", "permissionMode": "All", "resource": "dbs/db/colls/c"}),
            &[],
        )
        .assert_error(409, "Conflict");
    let renamed = client.put(
        &format!("{path}/read-c"),
        &json!({"id": "renamed", "permissionMode": "All", "resource": "dbs/db/colls/c"}),
        &[],
    );
    assert_eq!(renamed.status, 200, "{}", renamed.body);
    assert_eq!(renamed.body["id"], "renamed");
    assert_eq!(renamed.body["_rid"], replaced.body["_rid"]);
    client
        .get(&format!("{path}/read-c"), &[])
        .assert_error(404, "NotFound");
    assert_eq!(client.delete(&format!("{path}/renamed"), &[]).status, 204);
    client
        .get(&format!("{path}/renamed"), &[])
        .assert_error(404, "NotFound");
}

#[test]
fn a_container_read_token_reads_and_queries_its_container_only() {
    let client = setup();
    let token = grant(&client, "read-c", "Read", "dbs/db/colls/c", None);
    // The account, the container and its ranges: what the SDKs read first.
    assert_eq!(
        with_token(&client, &token, Method::GET, "/", &[], None).status,
        200
    );
    assert_eq!(
        with_token(&client, &token, Method::GET, COLL, &[], None).status,
        200
    );
    let ranges = with_token(
        &client,
        &token,
        Method::GET,
        &format!("{COLL}/pkranges"),
        &[],
        None,
    );
    assert_eq!(ranges.status, 200, "{}", ranges.body);

    let item = read(&client, &token, &format!("{COLL}/docs/a"), "[\"p1\"]");
    assert_eq!(item.status, 200, "{}", item.body);
    assert_eq!(item.body["id"], "a");
    let rows = query(
        &client,
        &token,
        &[("x-ms-documentdb-query-enablecrosspartition", "true")],
    );
    assert_eq!(rows.status, 200, "{}", rows.body);
    assert_eq!(rows.body["_count"], 2);
    let feed = with_token(
        &client,
        &token,
        Method::GET,
        &format!("{COLL}/docs"),
        &[],
        None,
    );
    assert_eq!(feed.body["_count"], 2);

    // Read: no writes.
    assert_forbidden(&create(
        &client,
        &token,
        COLL,
        &json!({"id": "n", "pk": "p1"}),
    ));
    assert_forbidden(&with_token(
        &client,
        &token,
        Method::DELETE,
        &format!("{COLL}/docs/a"),
        &[("x-ms-documentdb-partitionkey", "[\"p1\"]")],
        None,
    ));
    assert_eq!(
        client
            .get(
                &format!("{COLL}/docs/a"),
                &[("x-ms-documentdb-partitionkey", "[\"p1\"]")]
            )
            .status,
        200
    );

    // Another container, the database, and master-key-only operations.
    assert_forbidden(&read(
        &client,
        &token,
        "/dbs/db/colls/other/docs/a",
        "[\"p1\"]",
    ));
    for (method, path, body) in [
        (Method::GET, "/dbs".to_string(), None),
        (Method::GET, "/dbs/db".to_string(), None),
        (Method::POST, "/dbs".to_string(), Some(json!({"id": "x"}))),
        (Method::GET, "/dbs/db/colls".to_string(), None),
        (Method::DELETE, COLL.to_string(), None),
        (Method::GET, USERS.to_string(), None),
        (
            Method::POST,
            USERS.to_string(),
            Some(json!({"id": "mallory"})),
        ),
        (Method::GET, format!("{USERS}/alice/permissions"), None),
        (Method::GET, "/_emulator/clock".to_string(), None),
        (
            Method::POST,
            "/_emulator/clock".to_string(),
            Some(json!({"advance": 10})),
        ),
    ] {
        let reply = with_token(&client, &token, method.clone(), &path, &[], body.as_ref());
        assert_forbidden(&reply);
    }
    assert_eq!(client.get(USERS, &[]).body["_count"], 1, "nothing changed");
}

#[test]
fn an_all_token_writes_its_container_and_a_rid_based_resource_works() {
    let client = setup();
    let coll_rid = client.get(COLL, &[]).body["_self"]
        .as_str()
        .unwrap()
        .to_string();
    // The SDKs may send the container's `_self`: RID-based, with a slash.
    let token = grant(&client, "all-c", "All", &coll_rid, None);
    let created = create(&client, &token, COLL, &json!({"id": "n", "pk": "p3"}));
    assert_eq!(created.status, 201, "{}", created.body);
    let deleted = with_token(
        &client,
        &token,
        Method::DELETE,
        &format!("{COLL}/docs/a"),
        &[("x-ms-documentdb-partitionkey", "[\"p1\"]")],
        None,
    );
    assert_eq!(deleted.status, 204);
    assert_forbidden(&create(
        &client,
        &token,
        "/dbs/db/colls/other",
        &json!({"id": "n", "pk": "p3"}),
    ));
    // A container deleted and created again under its name is another container.
    assert_eq!(client.delete(COLL, &[]).status, 204);
    assert_eq!(client.create_container("c", None).status, 201);
    assert_forbidden(&create(
        &client,
        &token,
        COLL,
        &json!({"id": "m", "pk": "p3"}),
    ));
}

/// "The All mode provides read, write, and delete access to a resource":
/// All on a whole container replaces and deletes the container itself (the
/// JavaScript SDK's `authorization.spec.ts`, "Modifying container by
/// resourceTokens"); Read, or All on one partition or one item, does not.
#[test]
fn an_all_token_on_a_container_replaces_and_deletes_it() {
    let client = setup();
    let settings =
        json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}, "defaultTtl": 60});
    for (id, mode, resource, pk) in [
        ("read-c", "Read", COLL.to_string(), None),
        ("all-p1", "All", COLL.to_string(), Some(json!(["p1"]))),
        ("all-a", "All", format!("{COLL}/docs/a"), None),
    ] {
        let token = grant(&client, id, mode, &resource, pk);
        for method in [Method::PUT, Method::DELETE] {
            let body = (method == Method::PUT).then_some(&settings);
            assert_forbidden(&with_token(&client, &token, method, COLL, &[], body));
        }
        // One permission per resource and user: the next takes its place.
        let path = format!("{USERS}/alice/permissions/{id}");
        assert_eq!(client.delete(&path, &[]).status, 204);
    }
    assert_eq!(client.get(COLL, &[]).status, 200, "nothing changed");
    let token = grant(&client, "all-c", "All", COLL, None);
    let replaced = with_token(&client, &token, Method::PUT, COLL, &[], Some(&settings));
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    assert_eq!(client.get(COLL, &[]).body["defaultTtl"], 60);
    let deleted = with_token(&client, &token, Method::DELETE, COLL, &[], None);
    assert_eq!(deleted.status, 204, "{}", deleted.body);
    assert_eq!(client.get(COLL, &[]).status, 404);
}

/// The service takes a link of RIDs that names nothing, as the SDKs' own
/// tests do ("dbs/AQAAAA==/colls/AQAAAJ0fgTc=", "a random one"); its token
/// then opens nothing that exists. A link of names must still resolve.
#[test]
fn a_permission_on_unresolved_rids_is_kept_and_grants_nothing() {
    let client = setup();
    let path = format!("{USERS}/alice/permissions");
    // The mode is echoed as sent, in any case ("all", as the JavaScript SDK's
    // tests send it).
    for (id, resource, mode) in [
        ("random", "dbs/AQAAAA==/colls/AQAAAJ0fgTc=", "all"),
        (
            "random-item",
            "dbs/BwAAAA==/colls/BwAAAIcAAAA=/docs/x",
            "All",
        ),
    ] {
        let body = json!({"id": id, "permissionMode": mode, "resource": resource});
        let created = client.post(&path, &body, &[]);
        assert_eq!(created.status, 201, "{}", created.body);
        assert_eq!(created.body["resource"], resource);
        assert_eq!(created.body["permissionMode"], mode);
        let token = created.body["_token"].as_str().unwrap().to_string();
        assert_forbidden(&read(
            &client,
            &token,
            &format!("{COLL}/docs/a"),
            "[\"p1\"]",
        ));
        assert_forbidden(&create(
            &client,
            &token,
            COLL,
            &json!({"id": "n", "pk": "p"}),
        ));
        let read_back = client.get(&format!("{path}/{id}"), &[]);
        assert_eq!(read_back.body["resource"], resource);
        assert_eq!(read_back.body["permissionMode"], mode);
    }
    // A lower-case mode grants as its canonical form does.
    let token = grant(&client, "write-c", "all", "dbs/db/colls/c", None);
    let created = create(&client, &token, COLL, &json!({"id": "n", "pk": "p3"}));
    assert_eq!(created.status, 201, "{}", created.body);
    client
        .post(
            &path,
            &json!({"id": "x", "permissionMode": "All", "resource": "dbs/db/colls/missing"}),
            &[],
        )
        .assert_error(404, "NotFound");
}

#[test]
fn a_partition_key_token_is_confined_to_its_partition() {
    let client = setup();
    let token = grant(&client, "p1", "All", "dbs/db/colls/c", Some(json!(["p1"])));
    let granted = client.get(&format!("{USERS}/alice/permissions/p1"), &[]);
    assert_eq!(granted.body["resourcePartitionKey"], json!(["p1"]));

    assert_eq!(
        read(&client, &token, &format!("{COLL}/docs/a"), "[\"p1\"]").status,
        200
    );
    assert_forbidden(&read(
        &client,
        &token,
        &format!("{COLL}/docs/b"),
        "[\"p2\"]",
    ));
    assert_eq!(
        create(&client, &token, COLL, &json!({"id": "n", "pk": "p1"})).status,
        201
    );
    assert_forbidden(&create(
        &client,
        &token,
        COLL,
        &json!({"id": "n", "pk": "p2"}),
    ));

    let rows = query(
        &client,
        &token,
        &[("x-ms-documentdb-partitionkey", "[\"p1\"]")],
    );
    assert_eq!(rows.status, 200, "{}", rows.body);
    assert_eq!(rows.body["_count"], 2, "a and n");
    assert_forbidden(&query(
        &client,
        &token,
        &[("x-ms-documentdb-query-enablecrosspartition", "true")],
    ));
    assert_forbidden(&query(
        &client,
        &token,
        &[("x-ms-documentdb-partitionkey", "[\"p2\"]")],
    ));
}

#[test]
fn an_item_token_covers_that_item_alone() {
    let client = setup();
    let token = grant(
        &client,
        "item-a",
        "Read",
        "dbs/db/colls/c/docs/a",
        Some(json!(["p1"])),
    );
    assert_eq!(
        read(&client, &token, &format!("{COLL}/docs/a"), "[\"p1\"]").status,
        200
    );
    assert_forbidden(&read(
        &client,
        &token,
        &format!("{COLL}/docs/b"),
        "[\"p2\"]",
    ));
    assert_forbidden(&query(
        &client,
        &token,
        &[("x-ms-documentdb-partitionkey", "[\"p1\"]")],
    ));
    assert_forbidden(&with_token(
        &client,
        &token,
        Method::PUT,
        &format!("{COLL}/docs/a"),
        &[("x-ms-documentdb-partitionkey", "[\"p1\"]")],
        Some(&json!({"id": "a", "pk": "p1", "changed": true})),
    ));
    // By the item's RID, as its `_self` names it.
    let item_self = client
        .get(
            &format!("{COLL}/docs/b"),
            &[("x-ms-documentdb-partitionkey", "[\"p2\"]")],
        )
        .body["_self"]
        .as_str()
        .unwrap()
        .to_string();
    let by_rid = {
        let reply = client.post(
            &format!("{USERS}/alice/permissions"),
            &json!({"id": "item-b", "permissionMode": "All", "resource": item_self}),
            &[],
        );
        assert_eq!(reply.status, 201, "{}", reply.body);
        reply.body["_token"].as_str().unwrap().to_string()
    };
    assert_eq!(
        read(&client, &by_rid, &format!("{COLL}/docs/b"), "[\"p2\"]").status,
        200
    );
    assert_forbidden(&read(
        &client,
        &by_rid,
        &format!("{COLL}/docs/a"),
        "[\"p1\"]",
    ));
}

#[test]
fn tokens_expire_on_the_emulator_clock() {
    let client = setup();
    let path = format!("{USERS}/alice/permissions");
    let reply = client.post(
        &path,
        &json!({"id": "short", "permissionMode": "Read", "resource": "dbs/db/colls/c"}),
        &[("x-ms-documentdb-expiry-seconds", "600")],
    );
    let short = reply.body["_token"].as_str().unwrap().to_string();
    let default = client.get(&format!("{path}/short"), &[]).body["_token"]
        .as_str()
        .unwrap()
        .to_string();
    let doc = format!("{COLL}/docs/a");
    client.advance(599);
    assert_eq!(read(&client, &short, &doc, "[\"p1\"]").status, 200);
    client.advance(1);
    let expired = read(&client, &short, &doc, "[\"p1\"]");
    expired.assert_error(401, "Unauthorized");
    assert!(
        expired.message().contains("expired"),
        "{}",
        expired.message()
    );
    // The default lifetime is one hour.
    client.advance(3599 - 600);
    assert_eq!(read(&client, &default, &doc, "[\"p1\"]").status, 200);
    client.advance(1);
    read(&client, &default, &doc, "[\"p1\"]").assert_error(401, "Unauthorized");
    // Reading the permission again gives a token valid from now.
    let fresh = client.get(&format!("{path}/short"), &[]).body["_token"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(read(&client, &fresh, &doc, "[\"p1\"]").status, 200);
}

#[test]
fn forged_and_altered_tokens_are_401_and_the_master_key_is_unchanged() {
    let client = setup();
    let token = grant(&client, "read-c", "Read", "dbs/db/colls/c", None);
    let doc = format!("{COLL}/docs/a");
    // Flip one character of the claims: the MAC no longer matches.
    let sig_at = token.find("sig=").unwrap() + 4;
    let mut altered = token.clone().into_bytes();
    altered[sig_at + 3] = if altered[sig_at + 3] == b'A' {
        b'B'
    } else {
        b'A'
    };
    let altered = String::from_utf8(altered).unwrap();
    for bad in [
        altered,
        "type=resource&ver=1.0&sig=".to_string(),
        "type=resource&ver=1.0&sig=abc.def".to_string(),
        "type=resource&ver=1.0".to_string(),
    ] {
        read(&client, &bad, &doc, "[\"p1\"]").assert_error(401, "Unauthorized");
    }
    // Master-key requests work as before, including what tokens may not do.
    assert_eq!(client.get("/dbs", &[]).status, 200);
    assert_eq!(
        client
            .get(&doc, &[("x-ms-documentdb-partitionkey", "[\"p1\"]")])
            .status,
        200
    );
    assert_eq!(client.post(USERS, &json!({"id": "bob"}), &[]).status, 201);
}
