//! Subqueries, bitwise operators and the executor's bounds, against
//! documents given inline. The subquery rows follow the patterns of
//! Microsoft's page "Subqueries in Azure Cosmos DB for NoSQL"
//! (https://learn.microsoft.com/azure/cosmos-db/nosql/query/subquery):
//! self-join optimisation, evaluate once, external reference data,
//! aggregate scalar subqueries, EXISTS and ARRAY.

use rstest::rstest;
use serde_json::{json, Value};

use super::{prepared, run};
use crate::data::query::{PreparedQuery, QueryBody};

fn products() -> Vec<Value> {
    vec![
        json!({"id": "p1", "name": "Jacket", "price": 100,
               "tags": [{"key": "fabric", "value": "leather"}, {"key": "season", "value": "winter"}],
               "sizes": [{"key": "s", "order": 1}, {"key": "m", "order": 2}, {"key": "l", "order": 3}],
               "colors": ["dark gray", "black"]}),
        json!({"id": "p2", "name": "Shirt", "price": 20,
               "tags": [{"key": "fabric", "value": "cotton"}],
               "sizes": [{"key": "m", "order": 2}],
               "colors": ["white"]}),
        json!({"id": "p3", "name": "Scarf", "price": 15, "tags": [], "colors": ["light gray"]}),
    ]
}

fn refused(q: &str) -> String {
    match PreparedQuery::prepare(&QueryBody {
        query: q.into(),
        parameters: vec![],
    }) {
        Err(e) => e.message,
        Ok(query) => match query.run_values(products().into_iter()) {
            Err(e) => e.message,
            Ok(rows) => panic!("{q} was not refused: {rows:?}"),
        },
    }
}

#[rstest]
// EXISTS: in WHERE, negated, and projected.
#[case(
    "SELECT VALUE p.id FROM p WHERE EXISTS(SELECT VALUE t FROM t IN p.tags WHERE t.value = 'winter')",
    json!(["p1"])
)]
#[case(
    "SELECT VALUE p.id FROM p WHERE NOT EXISTS(SELECT VALUE t FROM t IN p.tags WHERE t.key = 'fabric')",
    json!(["p3"])
)]
#[case(
    "SELECT p.id, EXISTS(SELECT VALUE c FROM c IN p.colors WHERE c LIKE '%gray%') AS gray FROM p",
    json!([{"id": "p1", "gray": true}, {"id": "p2", "gray": false}, {"id": "p3", "gray": true}])
)]
// EXISTS of an undefined VALUE has no row; of an object (even empty) it has one.
#[case("SELECT VALUE EXISTS(SELECT VALUE undefined)", json!([false]))]
#[case("SELECT VALUE EXISTS(SELECT undefined)", json!([true]))]
#[case("SELECT VALUE EXISTS(SELECT VALUE null)", json!([true]))]
// ARRAY: the results as an array, empty without any.
#[case(
    "SELECT p.id, ARRAY(SELECT VALUE t.value FROM t IN p.tags) AS values FROM p",
    json!([{"id": "p1", "values": ["leather", "winter"]}, {"id": "p2", "values": ["cotton"]}, {"id": "p3", "values": []}])
)]
#[case(
    "SELECT VALUE ARRAY(SELECT s.key, s['order'] * 10 AS o FROM s IN p.sizes WHERE s['order'] > 1) FROM p WHERE p.id = 'p1'",
    json!([[{"key": "m", "o": 20}, {"key": "l", "o": 30}]])
)]
// Aggregate scalar subqueries, in SELECT and in WHERE.
#[case(
    "SELECT p.id, (SELECT VALUE COUNT(1) FROM s IN p.sizes WHERE s['order'] >= 2) AS big FROM p",
    json!([{"id": "p1", "big": 2}, {"id": "p2", "big": 1}, {"id": "p3", "big": 0}])
)]
#[case(
    "SELECT VALUE p.id FROM p WHERE (SELECT VALUE MAX(s['order']) FROM s IN p.sizes) = 3",
    json!(["p1"])
)]
// A scalar subquery without a result is undefined: the property is dropped.
#[case(
    "SELECT p.id, (SELECT VALUE s.key FROM s IN p.sizes WHERE s['order'] = 3) AS large FROM p",
    json!([{"id": "p1", "large": "l"}, {"id": "p2"}, {"id": "p3"}])
)]
// Simple expression scalar subqueries, without FROM.
#[case("SELECT (SELECT VALUE 1) AS a, (SELECT VALUE 2) AS b", json!([{"a": 1, "b": 2}]))]
#[case("SELECT VALUE (SELECT VALUE CONCAT('a', 'b'))", json!(["ab"]))]
// Self-join optimisation: the filters inside the JOINed subqueries give
// the same count as the filters after the cross product.
#[case(
    "SELECT VALUE COUNT(1) FROM p JOIN t IN p.tags JOIN s IN p.sizes JOIN c IN p.colors WHERE t.key IN ('fabric', 'material') AND s['order'] >= 2 AND c LIKE '%gray%'",
    json!([2])
)]
#[case(
    "SELECT VALUE COUNT(1) FROM p JOIN (SELECT VALUE t FROM t IN p.tags WHERE t.key IN ('fabric', 'material')) JOIN (SELECT VALUE s FROM s IN p.sizes WHERE s['order'] >= 2) JOIN (SELECT VALUE c FROM c IN p.colors WHERE c LIKE '%gray%')",
    json!([2])
)]
// Evaluate once, reference many times: a JOIN over a one-row subquery.
#[case(
    "SELECT p.id, discounted FROM p JOIN (SELECT VALUE p.price * 0.5) AS discounted WHERE discounted > 10",
    json!([{"id": "p1", "discounted": 50}])
)]
// External reference data: a JOIN over an array a subquery builds.
#[case(
    "SELECT p.id, m.band FROM p JOIN m IN (SELECT VALUE [{band: 'low', max: 50}, {band: 'high', max: 1000}]) WHERE p.price <= m.max AND (p.price > 50 OR m.band = 'low')",
    json!([{"id": "p1", "band": "high"}, {"id": "p2", "band": "low"}, {"id": "p3", "band": "low"}])
)]
// Correlated over JOIN rows, SELECT * of the subquery's own name, and a
// subquery inside a subquery.
#[case(
    "SELECT c AS color FROM p JOIN c IN p.colors WHERE EXISTS(SELECT * FROM x IN (SELECT VALUE ['black', 'white']) WHERE x = c)",
    json!([{"color": "black"}, {"color": "white"}])
)]
#[case(
    "SELECT VALUE ARRAY(SELECT VALUE t.key FROM t IN p.tags WHERE EXISTS(SELECT VALUE 1 FROM s IN p.sizes WHERE s.key = 'l')) FROM p",
    json!([["fabric", "season"], [], []])
)]
#[case(
    "SELECT VALUE (SELECT VALUE COUNT(1) FROM s IN p.sizes) FROM p ORDER BY p.price DESC",
    json!([3, 1, 0])
)]
// A filter on a value a JOIN subquery computes is not looked for in the
// item's bytes (the item holds "Jacket", the filter "JACKET").
#[case(
    "SELECT VALUE p.id FROM p JOIN (SELECT VALUE UPPER(p.name)) AS u WHERE u = 'JACKET'",
    json!(["p1"])
)]
fn subqueries(#[case] query: &str, #[case] expected: Value) {
    assert_eq!(Value::from(run(query, &products())), expected, "{query}");
}

#[rstest]
#[case("SELECT VALUE [5 & 3, 5 | 3, 5 ^ 3, ~5]", json!([[1, 7, 6, -6]]))]
#[case("SELECT VALUE [1 << 3, -16 >> 2, -16 >>> 28, 1 << 33]", json!([[8, -4, 15, 2]]))]
// Operands are 32-bit integers: truncated, wrapped.
#[case("SELECT VALUE [7.9 & 3, 4294967297 | 0, ~-1]", json!([[3, 1, 0]]))]
// Looser than arithmetic, tighter than comparison.
#[case("SELECT VALUE [1 + 2 & 3, 5 & 3 = 1, 2 | 1 ^ 3 & 6]", json!([[3, true, 3]]))]
// Not numbers: undefined.
#[case("SELECT VALUE {a: 'x' & 1, b: true | 0, c: ~'1'}", json!([{}]))]
fn bitwise_operators(#[case] query: &str, #[case] expected: Value) {
    assert_eq!(Value::from(run(query, &[])), expected, "{query}");
}

#[test]
fn what_the_service_refuses_in_a_projection_is_refused() {
    let m = refused("SELECT p.id, COUNT(1) AS n FROM p");
    assert!(
        m.contains("Property reference 'p.id' is invalid in the select list"),
        "{m}"
    );
    let m = refused("SELECT p.name, COUNT(1) AS n FROM p GROUP BY p.id");
    assert!(m.contains("'p.name'"), "{m}");
    // Grouped expressions and aggregates may be combined freely.
    assert_eq!(
        run(
            "SELECT {k: LOWER(p.name)} AS o, COUNT(1) + 1 AS n FROM p WHERE p.price > 50 GROUP BY LOWER(p.name)",
            &products()
        ),
        vec![json!({"o": {"k": "jacket"}, "n": 2})]
    );
    let m = refused("SELECT * WHERE 1 = 1");
    assert!(
        m.contains("'SELECT *' is not valid if FROM clause is omitted"),
        "{m}"
    );
    let m = refused("SELECT VALUE EXISTS(SELECT VALUE NOPE(t) FROM t IN p.tags) FROM p");
    assert!(m.contains("'NOPE'"), "a subquery is checked too: {m}");
    let m = refused("SELECT VALUE (SELECT VALUE t FROM t IN q.tags) FROM p");
    assert!(
        m.contains("'q'"),
        "a subquery reads only the names around it: {m}"
    );
}

/// What the service refuses in and around subqueries, as measured against
/// Microsoft's emulator (the service's engine): TOP, ORDER BY and OFFSET
/// LIMIT inside one; IN over anything but a path or a subquery; ORDER BY a
/// value the query computes.
#[rstest]
#[case(
    "SELECT VALUE p.id FROM p WHERE EXISTS(SELECT TOP 1 VALUE t FROM t IN p.tags)",
    "SC2203"
)]
#[case(
    "SELECT VALUE ARRAY(SELECT VALUE t FROM t IN p.colors ORDER BY t) FROM p",
    "SC2202"
)]
#[case(
    "SELECT VALUE (SELECT VALUE t FROM t IN p.colors ORDER BY t) FROM p",
    "SC2202"
)]
#[case(
    "SELECT VALUE ARRAY(SELECT VALUE t FROM t IN p.colors OFFSET 1 LIMIT 1) FROM p",
    "SC2204"
)]
#[case(
    "SELECT VALUE p.id FROM p WHERE EXISTS(SELECT VALUE t FROM t IN [1, 2])",
    "SC1001"
)]
#[case(
    "SELECT VALUE p.id FROM p WHERE EXISTS(SELECT VALUE kv FROM kv IN ObjectToArray(p.m))",
    "SC1001"
)]
#[case("SELECT VALUE p.id FROM p JOIN kv IN ObjectToArray(p.m)", "SC1001")]
#[case(
    "SELECT VALUE p.id FROM p ORDER BY UPPER(p.name)",
    "could not be mapped to a document path"
)]
#[case(
    "SELECT VALUE p.id FROM p ORDER BY p.price * 2",
    "could not be mapped to a document path"
)]
#[case(
    "SELECT VALUE p.id FROM p JOIN (SELECT VALUE p.price * 0.5) AS d ORDER BY d",
    "could not be mapped to a document path"
)]
#[case(
    "SELECT VALUE p.id FROM p ORDER BY p",
    "could not be mapped to a document path"
)]
fn the_service_refuses_these_queries(#[case] query: &str, #[case] says: &str) {
    let message = refused(query);
    assert!(message.contains(says), "{query}: {message}");
}

#[rstest]
#[case("SELECT VALUE t FROM p JOIN t IN p.colors ORDER BY t")]
#[case("SELECT VALUE s.key FROM p JOIN s IN p.sizes ORDER BY s['order'] DESC")]
#[case("SELECT VALUE x FROM x IN p.colors ORDER BY x")]
#[case("SELECT VALUE o FROM p.name o ORDER BY o")]
#[case("SELECT VALUE p.id FROM p ORDER BY ST_DISTANCE(p.location, {'type': 'Point', 'coordinates': [0, 0]})")]
fn order_by_paths_of_the_item_are_served(#[case] query: &str) {
    let body = QueryBody {
        query: query.into(),
        parameters: vec![],
    };
    assert!(PreparedQuery::prepare(&body).is_ok(), "{query}");
}

/// Within a subquery, copies count against the outer row's budget, so a
/// subquery cannot multiply an item past it.
#[test]
fn a_subquery_shares_the_row_budget() {
    let doc = json!({"big": "x".repeat(1 << 20), "a": (0..100).collect::<Vec<_>>()});
    let body = QueryBody {
        query: "SELECT VALUE ARRAY(SELECT VALUE c.big FROM x IN c.a) FROM c".into(),
        parameters: vec![],
    };
    let error = PreparedQuery::prepare(&body)
        .unwrap()
        .run_values(std::iter::once(doc))
        .unwrap_err();
    assert!(
        error.message.contains("copies more than"),
        "{}",
        error.message
    );
}

/// ORDER BY with TOP keeps only the rows that can still be among the first,
/// and gives what a full sort gives (ties in arrival order).
#[test]
fn a_bounded_order_by_gives_what_a_full_sort_gives() {
    let docs: Vec<Value> = (0..5000)
        .map(|i| json!({"id": i, "k": (i * 7919) % 1000}))
        .collect();
    let full = run("SELECT VALUE c.id FROM c ORDER BY c.k DESC", &docs);
    let top = run("SELECT TOP 25 VALUE c.id FROM c ORDER BY c.k DESC", &docs);
    assert_eq!(top, full[..25]);
    let page = run(
        "SELECT VALUE c.id FROM c ORDER BY c.k DESC OFFSET 990 LIMIT 20",
        &docs,
    );
    assert_eq!(page, full[990..1010]);
}

/// The text a subquery is written back as (in query plans) reads back to
/// the same query.
#[rstest]
#[case("SELECT p.id, ARRAY(SELECT VALUE t.value FROM t IN p.tags WHERE t.key = 'x') AS v FROM p")]
#[case("SELECT VALUE COUNT(1) FROM p JOIN (SELECT VALUE s FROM s IN p.sizes WHERE s['order'] >= 2) AS s2")]
#[case("SELECT VALUE p.id FROM p WHERE EXISTS(SELECT VALUE [x, y] FROM x IN p.colors JOIN y IN (SELECT VALUE [1, 2]) WHERE x > 'a')")]
#[case("SELECT VALUE p.id FROM p WHERE EXISTS(SELECT * FROM x IN p.colors WHERE x > 'a')")]
#[case("SELECT DISTINCT TOP 3 (SELECT VALUE 1) AS one FROM p ORDER BY p.id DESC")]
#[case("SELECT VALUE kv.k FROM c JOIN kv IN (SELECT VALUE ObjectToArray(c.m)) ORDER BY c.id")]
#[case("SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.g FROM c WHERE c.n > 1) AS x JOIN y IN x.arr")]
fn subqueries_are_written_back_as_they_read(#[case] query: &str) {
    let parse = |q: &str| crate::data::query::parser::parse(q, &Default::default()).unwrap();
    let select = parse(query);
    let text = select.to_sql(&[]);
    assert_eq!(parse(&text), select, "{query} was written as {text}");
}

/// `FROM (SELECT ... FROM c) x`: the outer query ranges over the inner
/// query's results, as measured against Microsoft's emulator (rows of the
/// F# Cosmos test suite's "Subqueries without TOP, ORDER BY or OFFSET LIMIT
/// run", over its three documents).
#[rstest]
#[case("SELECT VALUE x.id FROM (SELECT VALUE c FROM c) AS x WHERE x.n > 1", json!(["b", "c"]))]
#[case("SELECT VALUE x FROM (SELECT VALUE c.n FROM c) AS x WHERE x > 1", json!([2, 3]))]
#[case("SELECT VALUE x FROM (SELECT DISTINCT VALUE c.g FROM c) AS x", json!(["x", "y"]))]
#[case("SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.g FROM c) AS x", json!([2]))]
#[case("SELECT VALUE x FROM (SELECT VALUE COUNT(1) FROM c GROUP BY c.g) AS x", json!([2, 1]))]
#[case("SELECT VALUE y FROM (SELECT VALUE x.n FROM (SELECT VALUE c FROM c) AS x) AS y WHERE y > 1", json!([2, 3]))]
#[case("SELECT TOP 2 VALUE x.id FROM (SELECT VALUE c FROM c) AS x ORDER BY x.n DESC", json!(["c", "b"]))]
#[case("SELECT VALUE (SELECT VALUE MAX(t) FROM t IN c.arr) FROM c WHERE IS_DEFINED(c.arr)", json!([3]))]
#[case("SELECT VALUE t FROM c JOIN (SELECT VALUE t FROM t IN c.arr WHERE t > 1) AS t", json!([3, 2]))]
#[case("SELECT VALUE x.g FROM (SELECT c.g AS g, COUNT(1) AS n FROM c GROUP BY c.g) AS x WHERE x.n > 1", json!(["x"]))]
#[case("SELECT VALUE COUNT(1) FROM (SELECT c.g AS g FROM c GROUP BY c.g) AS x", json!([2]))]
#[case("SELECT VALUE SUM(x.n) FROM (SELECT VALUE c FROM c WHERE c.n > 1) AS x", json!([5]))]
#[case("SELECT DISTINCT VALUE x.g FROM (SELECT VALUE c FROM c WHERE c.n > 1) AS x", json!(["x", "y"]))]
#[case("SELECT VALUE x.id FROM (SELECT VALUE c FROM c) AS x ORDER BY x.n OFFSET 1 LIMIT 1", json!(["b"]))]
// A filter on what the inner query computes is not looked for in the items' bytes.
#[case("SELECT VALUE x FROM (SELECT VALUE UPPER(c.g) FROM c) x WHERE x = 'Y'", json!(["Y"]))]
fn from_subqueries(#[case] query: &str, #[case] expected: Value) {
    let docs = [
        json!({"id": "a", "n": 1, "g": "x", "arr": [3, 1, 2]}),
        json!({"id": "b", "n": 2, "g": "x"}),
        json!({"id": "c", "n": 3, "g": "y"}),
    ];
    assert_eq!(Value::from(run(query, &docs)), expected, "{query}");
    // Through pages over stored bytes too (the prefilter and the executor).
    let bodies: Vec<bytes::Bytes> = docs
        .iter()
        .map(|d| bytes::Bytes::from(d.to_string()))
        .collect();
    let key = crate::protocol::item_key::ItemKey::new("[]", "id");
    let page = prepared(query)
        .run_page(
            Default::default(),
            bodies.iter().map(|b| (1, &key, b)),
            None,
            None,
            crate::data::query::PageLimit {
                items: 100,
                bytes: usize::MAX,
            },
        )
        .unwrap()
        .0;
    let paged: Vec<Value> = page
        .documents
        .iter()
        .map(|d| serde_json::from_slice(d).unwrap())
        .collect();
    assert_eq!(Value::from(paged), expected, "{query} in pages");
}

#[rstest]
#[case("SELECT VALUE x.id FROM (SELECT TOP 2 VALUE c FROM c) AS x", "SC2203")]
#[case(
    "SELECT VALUE x.id FROM (SELECT VALUE c FROM c ORDER BY c.id) AS x",
    "SC2202"
)]
#[case(
    "SELECT VALUE x.id FROM (SELECT VALUE c FROM c OFFSET 1 LIMIT 2) AS x",
    "SC2204"
)]
#[case(
    "SELECT VALUE x.g FROM (SELECT c.g AS g, COUNT(1) AS n FROM c GROUP BY c.g) AS x ORDER BY x.n",
    "could not be mapped to a document path"
)]
#[case(
    "SELECT VALUE x.id FROM (SELECT c.id AS id, c.n * 2 AS m FROM c) AS x ORDER BY x.m",
    "could not be mapped to a document path"
)]
fn from_subqueries_refuse_what_the_service_refuses(#[case] query: &str, #[case] says: &str) {
    let message = refused(query);
    assert!(message.contains(says), "{query}: {message}");
}

/// NaN and the infinities: numbers while the query runs (documented:
/// `IS_FINITE_NUMBER(8.9 / 0.0)` and `IS_FINITE_NUMBER(SQRT(-1.0))` are
/// false), comparable (measured: `7 / 0 > 1000000` is true in a filter),
/// and a query whose result holds one is refused with 400/4001 ("cannot be
/// represented in JSON"), as the service's engine refuses it.
#[rstest]
#[case(
    "SELECT VALUE {finiteValue: IS_FINITE_NUMBER(1234.567), infiniteValue: IS_FINITE_NUMBER(8.9 / 0.0), nanValue: IS_FINITE_NUMBER(SQRT(-1.0))}",
    json!([{"finiteValue": true, "infiniteValue": false, "nanValue": false}])
)]
#[case("SELECT VALUE p.id FROM p WHERE 7 / 0 > 1000000 AND p.price > 50", json!(["p1"]))]
#[case("SELECT VALUE p.id FROM p WHERE -1 / 0 < p.price AND p.price < 16", json!(["p3"]))]
#[case("SELECT VALUE [IS_NUMBER(1 / 0), IS_OBJECT(1 / 0), IS_PRIMITIVE(0 / 0), 0 / 0 = 0 / 0]", json!([[true, false, true, null]]))]
#[case("SELECT VALUE EXISTS(SELECT VALUE 1 / 0)", json!([true]))]
#[case("SELECT VALUE p.id FROM p WHERE IS_FINITE_NUMBER(LOG(p.price - 15)) = false", json!(["p3"]))]
fn non_finite_numbers_compute_and_compare(#[case] query: &str, #[case] expected: Value) {
    assert_eq!(Value::from(run(query, &products())), expected, "{query}");
}

#[rstest]
#[case("SELECT VALUE 7 / 0")]
#[case("SELECT {quotient: 7 / 0} AS r")]
#[case("SELECT VALUE [1, SQRT(-1)]")]
#[case("SELECT p.id, LOG(p.price - 15) AS l FROM p")]
#[case("SELECT VALUE ARRAY(SELECT VALUE 1 / 0)")]
fn a_result_holding_nan_or_an_infinity_is_refused(#[case] query: &str) {
    let error = prepared(query)
        .run_values(products().into_iter())
        .unwrap_err();
    assert_eq!(
        (error.status.as_u16(), error.substatus),
        (400, Some(4001)),
        "{query}"
    );
    assert!(
        error.message.contains("cannot be represented in JSON"),
        "{query}"
    );
}
