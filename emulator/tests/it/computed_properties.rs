//! Computed properties over HTTP: validated on container create and
//! replace (a refusal changes nothing), read by queries in SELECT, WHERE,
//! GROUP BY and ORDER BY, never stored in items nor returned by `SELECT *`,
//! point reads or the read feed.

use crate::common::{TestClient, COLL, DB};
use rstest::rstest;
use serde_json::{json, Value};

const LOWER: &str = "SELECT VALUE LOWER(c.db_group) FROM c";
const POWER: &str = "SELECT VALUE POWER(c.val, 2) FROM c";

fn container(computed: Value, indexing: Option<Value>) -> Value {
    let mut body = json!({
        "id": "c",
        "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
        "computedProperties": computed,
    });
    if let Some(policy) = indexing {
        body["indexingPolicy"] = policy;
    }
    body
}

fn started() -> TestClient {
    let c = TestClient::start();
    assert_eq!(c.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    c
}

/// A client with container `c` holding `computed` and four items.
fn with_items(computed: Value, indexing: Option<Value>) -> TestClient {
    let c = started();
    let reply = c.post("/dbs/db/colls", &container(computed, indexing), &[]);
    assert_eq!(reply.status, 201, "{}", reply.body);
    for (id, group, val) in [
        ("a", "GroUp1", 5),
        ("b", "group1", 3),
        ("c", "GROUP2", 5),
        ("d", "Group3", 2),
    ] {
        let reply = c.create_item(&json!({"id": id, "pk": "p", "db_group": group, "val": val}));
        assert_eq!(reply.status, 201, "{}", reply.body);
    }
    c
}

fn cps() -> Value {
    json!([{"name": "cp_lower", "query": LOWER}, {"name": "cp_power", "query": POWER}])
}

#[test]
fn the_definitions_are_served_back_as_given() {
    let c = with_items(cps(), None);
    let read = c.get(COLL, &[]);
    assert_eq!(read.status, 200);
    assert_eq!(read.body["computedProperties"], cps());
}

#[test]
fn queries_read_them_in_every_clause() {
    let c = with_items(
        cps(),
        Some(json!({"includedPaths": [{"path": "/*"}, {"path": "/cp_power/?"}]})),
    );
    let ids = |q: &str| -> Vec<Value> { c.query(q, json!([])) };
    assert_eq!(
        ids("SELECT VALUE c.id FROM c WHERE c.cp_lower = 'group1'"),
        vec![json!("a"), json!("b")]
    );
    assert_eq!(
        ids("SELECT c.id, c.cp_power FROM c WHERE c.cp_power > 9"),
        vec![
            json!({"id": "a", "cp_power": 25}),
            json!({"id": "c", "cp_power": 25})
        ]
    );
    assert_eq!(
        ids("SELECT VALUE c.id FROM c ORDER BY c.cp_power"),
        vec![json!("d"), json!("b"), json!("a"), json!("c")]
    );
    let mut groups = ids("SELECT c.cp_lower, COUNT(1) AS n FROM c GROUP BY c.cp_lower");
    groups.sort_by_key(|g| g["cp_lower"].to_string());
    assert_eq!(
        groups,
        vec![
            json!({"cp_lower": "group1", "n": 2}),
            json!({"cp_lower": "group2", "n": 1}),
            json!({"cp_lower": "group3", "n": 1})
        ]
    );
    assert_eq!(
        ids("SELECT VALUE SUM(c.cp_power) FROM c WHERE c.cp_lower != 'group3'"),
        vec![json!(59)]
    );
    // Under the query's own alias, and as an indexed name.
    assert_eq!(
        ids("SELECT VALUE x['cp_lower'] FROM products x WHERE x.id = 'c'"),
        vec![json!("group2")]
    );
}

#[test]
fn items_never_hold_them() {
    let c = with_items(cps(), None);
    let all = c.query("SELECT * FROM c WHERE c.cp_power = 25", json!([]));
    assert_eq!(all.len(), 2);
    for item in &all {
        assert!(
            item.get("cp_power").is_none() && item.get("cp_lower").is_none(),
            "{item}"
        );
    }
    let read = c.read_item("a", "p");
    assert_eq!(read.status, 200);
    assert!(read.body.get("cp_lower").is_none(), "{}", read.body);
    let feed = c.get(&format!("{COLL}/docs"), &[]);
    for item in feed.body["Documents"].as_array().unwrap() {
        assert!(item.get("cp_lower").is_none(), "{item}");
    }
    let value = c.query("SELECT VALUE c FROM c WHERE c.id = 'a'", json!([]));
    assert!(value[0].get("cp_lower").is_none(), "{}", value[0]);
}

#[test]
fn ordering_by_an_unindexed_computed_property_is_refused() {
    let c = with_items(cps(), None);
    let reply = c.post(
        &format!("{COLL}/docs"),
        &json!({"query": "SELECT * FROM c ORDER BY c.cp_lower", "parameters": []}),
        &[
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
        ],
    );
    reply.assert_error(400, "BadRequest");
    assert!(
        reply
            .message()
            .contains("The index path corresponding to the specified order-by item is excluded."),
        "{}",
        reply.message()
    );
    assert!(
        reply.message().contains("/cp_lower/?"),
        "{}",
        reply.message()
    );
}

#[test]
fn replace_adds_changes_and_removes_them() {
    let c = with_items(json!([{"name": "cp_lower", "query": LOWER}]), None);
    let upper = json!([{"name": "cp_upper", "query": "SELECT VALUE UPPER(c.db_group) FROM c"}]);
    let reply = c.put(COLL, &container(upper.clone(), None), &[]);
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["computedProperties"], upper);
    assert_eq!(
        c.query(
            "SELECT VALUE c.id FROM c WHERE c.cp_upper = 'GROUP1'",
            json!([])
        ),
        vec![json!("a"), json!("b")]
    );
    assert!(c
        .query(
            "SELECT VALUE c.id FROM c WHERE c.cp_lower = 'group1'",
            json!([])
        )
        .is_empty());
    // A replace without them removes them.
    let mut body = container(Value::Null, None);
    body.as_object_mut().unwrap().remove("computedProperties");
    assert_eq!(c.put(COLL, &body, &[]).status, 200);
    assert!(c.get(COLL, &[]).body.get("computedProperties").is_none());
    assert_eq!(
        c.query("SELECT c.cp_upper FROM c WHERE c.id = 'a'", json!([])),
        vec![json!({})]
    );
}

#[rstest]
#[case::not_an_array(json!({"name": "cp", "query": LOWER}), "One of the specified inputs is invalid")]
#[case::reserved_name(json!([{"name": "id", "query": LOWER}]), "'id' is reserved")]
#[case::duplicate(json!([{"name": "cp", "query": LOWER}, {"name": "cp", "query": POWER}]), "'cp' is used more than once")]
#[case::where_clause(json!([{"name": "cp", "query": "SELECT VALUE c.a FROM c WHERE c.a > 1"}]), "cannot use WHERE")]
#[case::not_value(json!([{"name": "cp", "query": "SELECT c.a FROM c"}]), "VALUE clause")]
#[case::aggregate(json!([{"name": "cp", "query": "SELECT VALUE MAX(c.a) FROM c"}]), "aggregate function MAX")]
#[case::reads_another(json!([{"name": "cp", "query": LOWER}, {"name": "cp2", "query": "SELECT VALUE c.cp FROM c"}]), "computed property 'cp'")]
#[case::syntax(json!([{"name": "cp", "query": "SELECT VALUE FROM"}]), "not a valid query")]
fn invalid_definitions_are_refused_and_change_nothing(#[case] computed: Value, #[case] says: &str) {
    let c = started();
    let reply = c.post("/dbs/db/colls", &container(computed.clone(), None), &[]);
    reply.assert_error(400, "BadRequest");
    assert!(
        reply.message().contains(says),
        "{says}: {}",
        reply.message()
    );
    assert_eq!(
        c.get(COLL, &[]).status,
        404,
        "the container was not created"
    );

    let good = json!([{"name": "cp_lower", "query": LOWER}]);
    assert_eq!(
        c.post("/dbs/db/colls", &container(good.clone(), None), &[])
            .status,
        201
    );
    c.create_item(&json!({"id": "a", "pk": "p", "db_group": "GroUp1"}));
    let reply = c.put(COLL, &container(computed, None), &[]);
    reply.assert_error(400, "BadRequest");
    assert!(
        reply.message().contains(says),
        "{says}: {}",
        reply.message()
    );
    assert_eq!(c.get(COLL, &[]).body["computedProperties"], good);
    assert_eq!(
        c.query("SELECT VALUE c.cp_lower FROM c", json!([])),
        vec![json!("group1")]
    );
}

#[test]
fn twenty_are_accepted_and_twenty_one_refused() {
    let c = started();
    let many = |n: usize| -> Value {
        (0..n)
            .map(|i| json!({"name": format!("cp_{i}"), "query": format!("SELECT VALUE c.val + {i} FROM c")}))
            .collect()
    };
    let reply = c.post("/dbs/db/colls", &container(many(21), None), &[]);
    reply.assert_error(400, "BadRequest");
    assert!(
        reply.message().contains("at most 20"),
        "{}",
        reply.message()
    );
    assert_eq!(
        c.post("/dbs/db/colls", &container(many(20), None), &[])
            .status,
        201
    );
    c.create_item(&json!({"id": "a", "pk": "p", "val": 1}));
    assert_eq!(
        c.query("SELECT VALUE c.cp_19 FROM c", json!([])),
        vec![json!(20)]
    );
}

#[test]
fn several_order_by_keys_need_a_composite_index_as_for_persisted_properties() {
    let query = "SELECT VALUE c.id FROM c ORDER BY c.cp_power DESC, c.id ASC";
    let unserved = with_items(cps(), None);
    let reply = unserved.post(
        &format!("{COLL}/docs"),
        &json!({"query": query, "parameters": []}),
        &[
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
        ],
    );
    reply.assert_error(400, "BadRequest");
    let composite = json!({"compositeIndexes": [[
        {"path": "/cp_power", "order": "descending"}, {"path": "/id", "order": "ascending"}]]});
    let served = with_items(cps(), Some(composite));
    assert_eq!(
        served.query(query, json!([])),
        vec![json!("a"), json!("c"), json!("b"), json!("d")]
    );
}

/// A definition nested near the query limit, read from a query nested as
/// deep: evaluation goes twice as deep as either, and is still served.
#[test]
fn nesting_at_the_limit_in_both_the_definition_and_the_query_is_served() {
    let nested = |inner: &str| "ABS([{a: (".repeat(30) + inner + &")}][0].a)".repeat(30);
    let definition = format!("SELECT VALUE {} FROM c", nested("c.n"));
    let c = started();
    let body = container(json!([{"name": "cp_deep", "query": definition}]), None);
    assert_eq!(c.post("/dbs/db/colls", &body, &[]).status, 201);
    c.create_item(&json!({"id": "a", "pk": "p", "n": -3}));
    let query = format!("SELECT VALUE {} FROM c", nested("-c.cp_deep"));
    assert_eq!(c.query(&query, json!([])), vec![json!(3)]);
}

#[test]
fn the_change_feed_leaves_them_out() {
    let c = with_items(cps(), None);
    let feed = c.get(
        &format!("{COLL}/docs"),
        &[
            ("a-im", "Incremental feed"),
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
        ],
    );
    assert_eq!(feed.status, 200, "{}", feed.body);
    let items = feed.body["Documents"].as_array().unwrap();
    assert_eq!(items.len(), 4);
    for item in items {
        assert!(
            item.get("cp_lower").is_none() && item.get("cp_power").is_none(),
            "{item}"
        );
    }
}
