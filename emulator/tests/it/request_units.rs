//! Request charges over HTTP (`request_units.rs`, `docs/src/request-units.md`):
//! what each operation's `x-ms-request-charge` says, by the documented
//! points, under Strong consistency, for queries by what they read, for
//! failures, and the fixed charges of `--ru-charges fixed`.

use crate::common::{TestClient, COLL, DB};
use cosmos_emulator::protocol::request_units::ChargeModel;
use cosmos_emulator::{ClockMode, Config};
use serde_json::{json, Value};

fn charge(reply: &crate::common::Reply) -> f64 {
    reply
        .header("x-ms-request-charge")
        .expect("every response is charged")
        .parse()
        .unwrap()
}

fn started(charges: ChargeModel) -> TestClient {
    let client = TestClient::start_config(Config {
        charges,
        clock: ClockMode::Manual {
            start: Some(crate::common::START),
        },
        ..Config::for_tests()
    });
    assert_eq!(client.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    assert_eq!(client.create_container("c", None).status, 201);
    client
}

/// An item of about `kb` KB with one indexed property besides `pk`.
fn item_of(id: &str, kb: usize) -> Value {
    // The system properties add ~150 bytes: leave room for them.
    json!({"id": id, "pk": "p", "blob": "x".repeat(kb * 1024 - 200)})
}

#[test]
fn point_reads_cost_1_ru_a_kb_and_10_at_100_kb() {
    let client = started(ChargeModel::Documented);
    client.create_item(&item_of("small", 1));
    client.create_item(&item_of("large", 100));
    assert_eq!(charge(&client.read_item("small", "p")), 1.0);
    let large = charge(&client.read_item("large", "p"));
    assert!((9.9..=10.1).contains(&large), "100 KB read: {large}");
    // A relaxed level costs the same; Strong and Bounded Staleness double.
    let strong = client.get(
        &format!("{COLL}/docs/small"),
        &[
            ("x-ms-documentdb-partitionkey", "[\"p\"]"),
            ("x-ms-consistency-level", "Eventual"),
        ],
    );
    assert_eq!(charge(&strong), 1.0);
}

#[test]
fn strong_accounts_pay_double_for_reads() {
    let client = TestClient::start_config(Config {
        consistency: cosmos_emulator::protocol::consistency::Consistency::Strong,
        ..Config::for_tests()
    });
    assert_eq!(client.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    assert_eq!(client.create_container("c", None).status, 201);
    client.create_item(&item_of("a", 1));
    let strong = charge(&client.read_item("a", "p"));
    assert!(
        (2.0..2.05).contains(&strong),
        "a 1 KB read under Strong: {strong}"
    );
    let session = client.get(
        &format!("{COLL}/docs/a"),
        &[
            ("x-ms-documentdb-partitionkey", "[\"p\"]"),
            ("x-ms-consistency-level", "Session"),
        ],
    );
    assert_eq!(
        charge(&session),
        1.0,
        "a request relaxing to Session pays once"
    );
}

#[test]
fn writes_grow_with_size_and_indexed_values_and_a_replace_costs_twice_an_insert() {
    let client = started(ChargeModel::Documented);
    let insert = charge(&client.create_item(&item_of("a", 1)));
    // 5.5 for 1 KB, plus the two indexed values (pk, blob).
    assert!((5.5..6.5).contains(&insert), "1 KB insert: {insert}");
    let replace = charge(&client.replace_item(&item_of("a", 1)));
    assert!(
        (replace - 2.0 * insert).abs() < 0.02,
        "{replace} vs {insert}"
    );
    let larger = charge(&client.create_item(&item_of("b", 10)));
    assert!(larger > insert, "10 KB costs more: {larger}");
    let wider = json!({"id": "c", "pk": "p", "a": 1, "b": 2, "c": 3, "d": [1, 2, 3]});
    assert!(charge(&client.create_item(&wider)) > 5.5 + 0.2 * 6.0);
    // Upsert: an insert when it creates, a replace when it replaces.
    let created = charge(&client.upsert_item(&item_of("u", 1)));
    let replaced = charge(&client.upsert_item(&item_of("u", 1)));
    assert!(
        (replaced - 2.0 * created).abs() < 0.02,
        "{replaced} vs {created}"
    );
}

#[test]
fn a_container_without_indexing_charges_the_bare_insert() {
    let client = started(ChargeModel::Documented);
    let body = json!({"id": "plain", "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
        "indexingPolicy": {"indexingMode": "none", "automatic": false}});
    assert_eq!(client.post("/dbs/db/colls", &body, &[]).status, 201);
    let reply = client.post(
        "/dbs/db/colls/plain/docs",
        &item_of("a", 1),
        &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
    );
    let insert = charge(&reply);
    assert!(
        (5.5..5.56).contains(&insert),
        "a 1 KB insert without indexing is ~5.5 RU: {insert}"
    );
}

#[test]
fn a_query_costs_by_what_it_reads_and_the_same_each_time() {
    let client = started(ChargeModel::Documented);
    for i in 0..20 {
        client.create_item(&json!({"id": format!("i{i}"), "pk": "p", "n": i}));
    }
    let page = |query: &str| {
        client.post(
            &format!("{COLL}/docs"),
            &json!({"query": query}),
            &[
                ("x-ms-documentdb-isquery", "True"),
                ("content-type", "application/query+json"),
                ("x-ms-documentdb-partitionkey", "[\"p\"]"),
            ],
        )
    };
    let all = charge(&page("SELECT * FROM c"));
    let one = charge(&page("SELECT * FROM c WHERE c.id = 'i3'"));
    assert!(all > one, "returning 20 costs more than 1: {all} {one}");
    assert_eq!(
        all,
        charge(&page("SELECT * FROM c")),
        "the same query, the same charge"
    );
    assert!(one >= 2.31, "every query pays the base: {one}");
}

#[test]
fn failures_are_charged_too() {
    let client = started(ChargeModel::Documented);
    let missing = client.read_item("nobody", "p");
    assert_eq!(missing.status, 404);
    assert!(charge(&missing) > 0.0);
    client.create_item(&item_of("a", 1));
    let conflict = client.create_item(&item_of("a", 1));
    assert_eq!(conflict.status, 409);
    assert!(charge(&conflict) > 0.0);
}

#[test]
fn fixed_charges_keep_the_old_constants() {
    let client = started(ChargeModel::Fixed);
    assert_eq!(
        client
            .create_item(&item_of("a", 100))
            .header("x-ms-request-charge"),
        Some("5.71")
    );
    assert_eq!(
        client.read_item("a", "p").header("x-ms-request-charge"),
        Some("1")
    );
    let query = client.post(
        &format!("{COLL}/docs"),
        &json!({"query": "SELECT * FROM c"}),
        &[
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-partitionkey", "[\"p\"]"),
        ],
    );
    assert_eq!(query.header("x-ms-request-charge"), Some("2.89"));
}

#[test]
fn a_batch_charges_the_sum_of_its_operations() {
    let client = started(ChargeModel::Documented);
    let reply = client.batch(
        "p",
        &json!([
            {"operationType": "Create", "resourceBody": {"id": "a", "pk": "p"}},
            {"operationType": "Read", "id": "a"},
        ]),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let each: f64 = reply
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["requestCharge"].as_f64().unwrap())
        .sum();
    assert!(
        (charge(&reply) - each).abs() < 0.011,
        "{} vs {each}",
        charge(&reply)
    );
    assert!(each > 6.0, "a create and a read: {each}");
}

/// A query's charge follows the work it does, not how it is read: the
/// pages of an ORDER BY (whose whole result the emulator computes once and
/// keeps) add up to the same whether they computed it or found it kept,
/// and their documents retrieved add up to the one-page read's (the
/// JavaScript SDK's own suite compares `fetchAll` with `fetchNext` pages
/// within 10%).
#[test]
fn a_paged_query_costs_the_same_however_it_is_read() {
    let client = started(ChargeModel::Documented);
    for i in 0..20 {
        client.create_item(&json!({"id": format!("i{i}"), "pk": "p", "n": 20 - i}));
    }
    // The pages' charges, less each page's base, and their retrieved counts.
    let read = |query: &str, page_size: &str| {
        let (mut work, mut retrieved, mut pages) = (0.0, 0.0, 0);
        let mut continuation: Option<String> = None;
        loop {
            let mut headers = vec![
                ("x-ms-documentdb-isquery", "True"),
                ("content-type", "application/query+json"),
                ("x-ms-documentdb-partitionkey", "[\"p\"]"),
                ("x-ms-documentdb-populatequerymetrics", "True"),
                ("x-ms-max-item-count", page_size),
            ];
            if let Some(token) = &continuation {
                headers.push(("x-ms-continuation", token));
            }
            let reply = client.post(&format!("{COLL}/docs"), &json!({"query": query}), &headers);
            assert_eq!(reply.status, 200, "{}", reply.body);
            work += charge(&reply) - 2.31;
            retrieved += reply
                .header("x-ms-documentdb-query-metrics")
                .unwrap()
                .split(';')
                .find_map(|pair| pair.strip_prefix("retrievedDocumentCount="))
                .unwrap()
                .parse::<f64>()
                .unwrap();
            pages += 1;
            continuation = reply.header("x-ms-continuation").map(str::to_string);
            if continuation.is_none() {
                return (work, retrieved, pages);
            }
        }
    };
    for query in [
        "SELECT * FROM c ORDER BY c.n",
        "SELECT DISTINCT VALUE c.n % 3 FROM c",
        "SELECT VALUE COUNT(1) FROM c WHERE c.n > 5",
    ] {
        let first = read(query, "2");
        let again = read(query, "2");
        let whole = read(query, "100");
        assert_eq!(first.1, again.1, "{query}: retrieved, computed or kept");
        assert_eq!(first.1, whole.1, "{query}: retrieved, in pages or in one");
        assert!(
            (first.0 - again.0).abs() < 0.05 * first.2 as f64,
            "{query}: the pages' work, computed {first:?} or kept {again:?}"
        );
        assert!(
            (first.0 - whole.0).abs() < 0.05 * first.2 as f64,
            "{query}: the work in pages {first:?} or in one {whole:?}"
        );
    }
}

/// A query's charge is what the model makes of the documents and bytes its
/// query metrics report: the two agree, page by page.
#[test]
fn a_query_charge_agrees_with_its_query_metrics() {
    let client = started(ChargeModel::Documented);
    for i in 0..30 {
        client.create_item(
            &json!({"id": format!("i{i}"), "pk": "p", "n": i, "text": "y".repeat(300)}),
        );
    }
    for query in [
        "SELECT * FROM c",
        "SELECT c.id FROM c WHERE c.n > 20",
        "SELECT VALUE COUNT(1) FROM c",
    ] {
        let reply = client.post(
            &format!("{COLL}/docs"),
            &json!({"query": query}),
            &[
                ("x-ms-documentdb-isquery", "True"),
                ("content-type", "application/query+json"),
                ("x-ms-documentdb-partitionkey", "[\"p\"]"),
                ("x-ms-documentdb-populatequerymetrics", "True"),
            ],
        );
        assert_eq!(reply.status, 200, "{}", reply.body);
        let metrics: std::collections::HashMap<&str, f64> = reply
            .header("x-ms-documentdb-query-metrics")
            .unwrap()
            .split(';')
            .filter_map(|pair| pair.split_once('='))
            .map(|(k, v)| (k, v.parse().unwrap()))
            .collect();
        let expected = 2.31
            + 0.1 * metrics["retrievedDocumentCount"]
            + 0.5 * metrics["retrievedDocumentSize"] / 1024.0
            + 0.4 * metrics["outputDocumentSize"] / 1024.0;
        let charged = charge(&reply);
        assert!(
            (charged - expected).abs() < 0.011,
            "{query}: charged {charged}, the metrics make {expected}"
        );
    }
}

/// A stored procedure is charged for what it did: more for more writes,
/// the fixed 5 RU with `--ru-charges fixed`.
#[test]
fn a_stored_procedure_costs_what_it_read_and_wrote() {
    let run = |model: ChargeModel| {
        let client = started(model);
        let body = "function write(prefix, n) { var c = getContext().getCollection(); \
            for (var i = 0; i < n; i++) { c.createDocument(c.getSelfLink(), \
            {id: prefix + i, pk: 'p', text: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'}); } \
            getContext().getResponse().setBody(n); }";
        let created = client.post(
            &format!("{COLL}/sprocs"),
            &json!({"id": "write", "body": body}),
            &[],
        );
        assert_eq!(created.status, 201, "{}", created.body);
        let execute = |n: u32| {
            let reply = client.post(
                &format!("{COLL}/sprocs/write"),
                &json!([format!("w{n}-"), n]),
                &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
            );
            assert_eq!(reply.status, 200, "{}", reply.body);
            charge(&reply)
        };
        (execute(0), execute(1), execute(10))
    };
    let (none, one, ten) = run(ChargeModel::Documented);
    assert!(none < one && one < ten, "{none} {one} {ten}");
    assert!(
        ten - none > 9.0 * 5.5,
        "ten inserts cost at least ten bare inserts: {ten} vs {none}"
    );
    assert_eq!(run(ChargeModel::Fixed), (5.0, 5.0, 5.0));
}
