//! Resource tokens and scripts: what a container permission allows by
//! mode, and a permission on one script (`operations/authorization.rs`).

use reqwest::Method;
use serde_json::{json, Value};

use super::{create, feed_path, path, script, KINDS};
use crate::common::{Reply, TestClient, COLL};

fn token(client: &TestClient, id: &str, mode: &str, resource: &str, pk: Option<Value>) -> String {
    let mut body = json!({"id": id, "permissionMode": mode, "resource": resource});
    if let Some(pk) = pk {
        body["resourcePartitionKey"] = pk;
    }
    let reply = client.post("/dbs/db/users/u/permissions", &body, &[]);
    assert_eq!(reply.status, 201, "{}", reply.body);
    reply.body["_token"].as_str().unwrap().to_string()
}

fn with(
    client: &TestClient,
    token: &str,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> Reply {
    let query = [
        ("x-ms-documentdb-isquery", "true"),
        ("content-type", "application/query+json"),
    ];
    let is_query = body.is_some_and(|b| b.get("query").is_some());
    let headers: &[(&str, &str)] = if is_query { &query } else { &[] };
    client.send_with_authorization(token, method, path, headers, body)
}

#[track_caller]
fn forbidden(reply: Reply) {
    reply.assert_error(403, "Forbidden");
    assert!(
        reply.message().starts_with("Insufficient permissions"),
        "{}",
        reply.message()
    );
}

#[test]
fn a_container_permission_covers_its_scripts_by_mode() {
    let client = TestClient::with_container(None);
    assert_eq!(client.create_container("other", None).status, 201);
    client.post("/dbs/db/users", &json!({"id": "u"}), &[]);
    create(&client, "sprocs", "s1", "function () {}");
    client.post(
        "/dbs/db/colls/other/sprocs",
        &script("sprocs", "o1", "x"),
        &[],
    );
    let read = token(&client, "read", "Read", "dbs/db/colls/c", None);
    let sql = json!({"query": "SELECT * FROM r WHERE r.id = @id", "parameters": [{"name": "@id", "value": "s1"}]});

    // Read: read, list and query; no writes.
    assert_eq!(
        with(&client, &read, Method::GET, &path("sprocs", "s1"), None).status,
        200
    );
    let listed = with(&client, &read, Method::GET, &feed_path("sprocs"), None);
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert_eq!(listed.body["_count"], 1);
    let found = with(
        &client,
        &read,
        Method::POST,
        &feed_path("sprocs"),
        Some(&sql),
    );
    assert_eq!(found.status, 200, "{}", found.body);
    assert_eq!(found.body["_count"], 1);
    for (kind, _) in KINDS {
        let body = script(kind, "new", "function () {}");
        forbidden(with(
            &client,
            &read,
            Method::POST,
            &feed_path(kind),
            Some(&body),
        ));
    }
    forbidden(with(
        &client,
        &read,
        Method::PUT,
        &path("sprocs", "s1"),
        Some(&script("sprocs", "s1", "x")),
    ));
    forbidden(with(
        &client,
        &read,
        Method::DELETE,
        &path("sprocs", "s1"),
        None,
    ));
    // Another container's scripts are not covered.
    forbidden(with(
        &client,
        &read,
        Method::GET,
        "/dbs/db/colls/other/sprocs/o1",
        None,
    ));
    assert_eq!(
        client.get(&path("sprocs", "s1"), &[]).body["body"],
        "function () {}"
    );

    // All: writes too.
    let all = token(&client, "all", "All", "dbs/db/colls/other", None);
    let created = with(
        &client,
        &all,
        Method::POST,
        "/dbs/db/colls/other/udfs",
        Some(&script("udfs", "f", "function (x) { return x; }")),
    );
    assert_eq!(created.status, 201, "{}", created.body);
    let replaced = with(
        &client,
        &all,
        Method::PUT,
        "/dbs/db/colls/other/udfs/f",
        Some(&script("udfs", "f", "function (x) { return 2 * x; }")),
    );
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    assert_eq!(
        with(
            &client,
            &all,
            Method::DELETE,
            "/dbs/db/colls/other/udfs/f",
            None
        )
        .status,
        204
    );

    // A grant on one partition covers that partition's items, not the
    // container's scripts: read them, never write them.
    let partition = token(&client, "pk", "All", "dbs/db/colls/c", Some(json!(["p1"])));
    assert_eq!(
        with(
            &client,
            &partition,
            Method::GET,
            &path("sprocs", "s1"),
            None
        )
        .status,
        200
    );
    forbidden(with(
        &client,
        &partition,
        Method::POST,
        &feed_path("triggers"),
        Some(&script("triggers", "t", "x")),
    ));
}

#[test]
fn a_permission_on_one_script_covers_that_script_alone() {
    let client = TestClient::with_container(None);
    client.post("/dbs/db/users", &json!({"id": "u"}), &[]);
    create(&client, "sprocs", "mine", "function () {}");
    create(&client, "sprocs", "theirs", "function () {}");
    create(&client, "udfs", "mine", "function () {}");
    client.create_item(&json!({"id": "i", "pk": "p"}));
    // An unknown script cannot be granted.
    let absent = client.post(
        "/dbs/db/users/u/permissions",
        &json!({"id": "x", "permissionMode": "Read", "resource": "dbs/db/colls/c/sprocs/nope"}),
        &[],
    );
    absent.assert_error(404, "NotFound");

    let read = token(&client, "one", "Read", "dbs/db/colls/c/sprocs/mine", None);
    let reply = with(&client, &read, Method::GET, &path("sprocs", "mine"), None);
    assert_eq!(reply.status, 200, "{}", reply.body);
    forbidden(with(
        &client,
        &read,
        Method::GET,
        &path("sprocs", "theirs"),
        None,
    ));
    forbidden(with(
        &client,
        &read,
        Method::GET,
        &path("udfs", "mine"),
        None,
    ));
    forbidden(with(
        &client,
        &read,
        Method::GET,
        &feed_path("sprocs"),
        None,
    ));
    forbidden(with(
        &client,
        &read,
        Method::PUT,
        &path("sprocs", "mine"),
        Some(&script("sprocs", "mine", "x")),
    ));
    let pk = json!(["p"]).to_string();
    let item = client.send_with_authorization(
        &read,
        Method::GET,
        &format!("{COLL}/docs/i"),
        &[("x-ms-documentdb-partitionkey", &pk)],
        None,
    );
    forbidden(item);

    // All on the script: replace it, even under a new name (the grant
    // follows its RID), and delete it.
    let all = token(
        &client,
        "one-all",
        "All",
        "dbs/db/colls/c/sprocs/theirs",
        None,
    );
    let renamed = with(
        &client,
        &all,
        Method::PUT,
        &path("sprocs", "theirs"),
        Some(&script("sprocs", "renamed", "function () { 2; }")),
    );
    assert_eq!(renamed.status, 200, "{}", renamed.body);
    assert_eq!(
        with(&client, &all, Method::GET, &path("sprocs", "renamed"), None).status,
        200
    );
    assert_eq!(
        with(
            &client,
            &all,
            Method::DELETE,
            &path("sprocs", "renamed"),
            None
        )
        .status,
        204
    );
    // A script of that name created again is another one.
    create(&client, "sprocs", "renamed", "function () {}");
    forbidden(with(
        &client,
        &all,
        Method::GET,
        &path("sprocs", "renamed"),
        None,
    ));
}
