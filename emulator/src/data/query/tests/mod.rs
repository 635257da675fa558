//! The executor's tests: clauses, FROM forms, JOIN, GROUP BY, LIKE,
//! aggregates and pages, each against documents given inline.

mod subquery;

use super::prepared::Parameter;
use super::*;
use crate::protocol::item_key::ItemKey;
use bytes::Bytes;
use serde_json::{json, Value};

/// A query without parameters, prepared (it must be valid).
pub(crate) fn prepared(q: &str) -> PreparedQuery {
    PreparedQuery::prepare(&QueryBody {
        query: q.into(),
        parameters: vec![],
    })
    .unwrap()
}

pub(crate) fn run(q: &str, docs: &[Value]) -> Vec<Value> {
    let body = QueryBody {
        query: q.into(),
        parameters: vec![Parameter {
            name: "@v".into(),
            value: json!(2),
        }],
    };
    PreparedQuery::prepare(&body)
        .unwrap()
        .run_values(docs.iter().cloned())
        .unwrap()
}

#[test]
fn aggregates_order_and_projection() {
    let docs = [
        json!({"id": "a", "n": 3}),
        json!({"id": "b", "n": 1}),
        json!({"id": "c", "n": 2}),
        json!({"id": "d"}),
    ];
    assert_eq!(run("SELECT VALUE COUNT(1) FROM c", &docs), vec![json!(4)]);
    assert_eq!(run("SELECT VALUE COUNT(1) FROM c", &[]), vec![json!(0)]);
    assert_eq!(run("SELECT VALUE COUNT(c.n) FROM c", &docs), vec![json!(3)]);
    assert_eq!(
        run("SELECT COUNT(1) AS total, MAX(c.n) AS top FROM c", &docs),
        vec![json!({"total": 4, "top": 3})]
    );
    assert_eq!(run("SELECT VALUE MIN(c.n) FROM c", &docs), vec![json!(1)]);
    assert_eq!(
        run("SELECT VALUE SUM(c.n) FROM c WHERE c.n >= @v", &docs),
        vec![json!(5)]
    );
    assert_eq!(
        run(
            "SELECT VALUE c.id FROM c WHERE IS_DEFINED(c.n) ORDER BY c.n DESC",
            &docs
        ),
        vec![json!("a"), json!("c"), json!("b")]
    );
    assert_eq!(
        run("SELECT TOP 2 c.id FROM c ORDER BY c.id", &docs),
        vec![json!({"id": "a"}), json!({"id": "b"})]
    );
    assert_eq!(
        run(
            "SELECT VALUE c.id FROM c ORDER BY c.id OFFSET 1 LIMIT 2",
            &docs
        ),
        vec![json!("b"), json!("c")]
    );
    assert_eq!(
        run(
            "SELECT DISTINCT VALUE c.n > 1 FROM c WHERE IS_DEFINED(c.n)",
            &docs
        ),
        vec![json!(true), json!(false)]
    );
}

/// Issue 10: `[NOT] LIKE ... [ESCAPE ...]` in filters and projections;
/// a value that is not a string is undefined (kept by neither form).
#[test]
fn like_filters_and_projects() {
    let docs = [
        json!({"id": "a", "name": "Touring Road 20% off"}),
        json!({"id": "b", "name": "Mountain driver"}),
        json!({"id": "c", "name": 5}),
    ];
    assert_eq!(
        run("SELECT VALUE c.id FROM c WHERE c.name LIKE '%Road%'", &docs),
        vec![json!("a")]
    );
    assert_eq!(
        run(
            "SELECT VALUE c.id FROM c WHERE c.name NOT LIKE '%Road%'",
            &docs
        ),
        vec![json!("b")]
    );
    assert_eq!(
        run(
            "SELECT VALUE c.id FROM c WHERE c.name LIKE '%20^%%' ESCAPE '^'",
            &docs
        ),
        vec![json!("a")]
    );
    assert_eq!(
        run("SELECT VALUE c.name LIKE 'M%' FROM c", &docs),
        vec![json!(false), json!(true)]
    );
    let plan = PreparedQuery::prepare(&QueryBody {
        query: "SELECT c.id FROM c WHERE c.name NOT LIKE '%^%' ESCAPE '^' ORDER BY c.id".into(),
        parameters: vec![],
    })
    .unwrap()
    .plan()
    .unwrap();
    let rewritten = plan["queryInfo"]["rewrittenQuery"].as_str().unwrap();
    assert!(
        rewritten.contains("NOT LIKE \"%^%\" ESCAPE \"^\""),
        "{rewritten}"
    );
}

/// `JOIN f.children` without IN, the documented form: the value itself,
/// one row per item where it is defined and none where it is not
/// (`JOIN f.NonExistent` gives no row); it survives a plan's rewriting.
#[test]
fn a_join_without_in_joins_the_value_itself() {
    let families = [
        json!({"id": "AndersenFamily", "children": [{"firstName": "Henriette"}]}),
        json!({"id": "WakefieldFamily", "children": [{"givenName": "Jesse"}, {"givenName": "Lisa"}]}),
        json!({"id": "Childless"}),
    ];
    assert_eq!(
        run("SELECT f.id FROM Families f JOIN f.children", &families),
        vec![
            json!({"id": "AndersenFamily"}),
            json!({"id": "WakefieldFamily"})
        ]
    );
    assert_eq!(
        run("SELECT f.id FROM Families f JOIN f.NonExistent", &families),
        Vec::<Value>::new()
    );
    assert_eq!(
        run(
            "SELECT VALUE ARRAY_LENGTH(k) FROM f JOIN f.children AS k",
            &families
        ),
        vec![json!(1), json!(2)]
    );
    assert_eq!(
        run(
            "SELECT c.givenName FROM f JOIN f.children kids JOIN c IN kids",
            &families
        ),
        vec![
            json!({}),
            json!({"givenName": "Jesse"}),
            json!({"givenName": "Lisa"})
        ]
    );
    let plan = prepared("SELECT f.id FROM f JOIN f.children ORDER BY f.id")
        .plan()
        .unwrap();
    let rewritten = plan["queryInfo"]["rewrittenQuery"].as_str().unwrap();
    assert!(rewritten.contains(" JOIN "), "{rewritten}");
    assert!(!rewritten.contains(" IN "), "{rewritten}");
    let runnable = rewritten.replace("{documentdb-formattableorderbyquery-filter}", "true");
    let reparsed = PreparedQuery::prepare(&QueryBody {
        query: runnable,
        parameters: vec![],
    });
    assert!(reparsed.is_ok(), "{rewritten}");
}

/// `NaN` and `Infinity` are literals of the language: the documented
/// TOSTRING example, row for row; a result holding one is still refused.
#[test]
fn nan_and_infinity_are_literals() {
    let documented = "SELECT VALUE {
        integerToString: TOSTRING(125),
        floatToString: TOSTRING(0.1234),
        booleanToString: TOSTRING(false),
        arrayToString: TOSTRING([ 1, 2, 3 ]),
        objectToString: TOSTRING({ \"department\": \"Bicycles\" }),
        stringToString: TOSTRING(\"Hello World\"),
        undefinedToString: TOSTRING(undefined),
        notANumberToString: TOSTRING(NaN),
        infinityToString: TOSTRING(Infinity)
    }";
    assert_eq!(
        run(documented, &[]),
        vec![json!({
            "integerToString": "125",
            "floatToString": "0.1234",
            "booleanToString": "false",
            "arrayToString": "[1,2,3]",
            "objectToString": "{\"department\":\"Bicycles\"}",
            "stringToString": "Hello World",
            "notANumberToString": "NaN",
            "infinityToString": "Infinity"
        })]
    );
    assert_eq!(
        run("SELECT VALUE [IS_NUMBER(NaN), IS_FINITE_NUMBER(Infinity), -Infinity < 0, TOSTRING(-Infinity)]", &[]),
        vec![json!([true, false, true, "-Infinity"])]
    );
    // Written back as the language writes them in a rewritten query.
    let plan = prepared("SELECT VALUE COUNT(1) FROM c WHERE c.n < Infinity AND c.m != NaN")
        .plan()
        .unwrap();
    let rewritten = plan["queryInfo"]["rewrittenQuery"].as_str().unwrap();
    assert!(
        rewritten.contains("Infinity") && rewritten.contains("NaN"),
        "{rewritten}"
    );
    let refused = PreparedQuery::prepare(&QueryBody {
        query: "SELECT VALUE NaN".into(),
        parameters: vec![],
    })
    .unwrap()
    .run_values(std::iter::empty());
    assert!(refused.is_err());
}

/// `MAKELIST` and `MAKESET` (the service's list aggregates, which the
/// JavaScript SDK merges across ranges): every defined value, or each once,
/// alone or per group; undefined values are left out.
#[test]
fn makelist_and_makeset_aggregate_values_into_arrays() {
    let docs = [
        json!({"team": "a", "age": 11}),
        json!({"team": "a", "age": 13}),
        json!({"team": "a", "age": 11}),
        json!({"team": "b", "age": 15}),
        json!({"team": "b"}),
    ];
    assert_eq!(
        run("SELECT VALUE MakeList(c.age) FROM c", &docs),
        vec![json!([11, 13, 11, 15])]
    );
    assert_eq!(
        run("SELECT VALUE MAKESET(c.age) FROM c", &docs),
        vec![json!([11, 13, 15])]
    );
    assert_eq!(
        run(
            "SELECT c.team, MakeList(c.age) AS ages, MakeSet(c.age) AS distinct_ages FROM c GROUP BY c.team",
            &docs
        ),
        vec![
            json!({"team": "a", "ages": [11, 13, 11], "distinct_ages": [11, 13]}),
            json!({"team": "b", "ages": [15], "distinct_ages": [15]}),
        ]
    );
    assert_eq!(
        run("SELECT VALUE MakeList(c.age) FROM c", &[]),
        vec![json!([])]
    );
    // Each range's partial result is its own array, for the SDK to concatenate.
    let plan = prepared("SELECT VALUE MakeSet(c.age) FROM c")
        .plan()
        .unwrap();
    let info = &plan["queryInfo"];
    assert_eq!(info["aggregates"], json!(["MakeSet"]), "{plan}");
    assert!(
        info["rewrittenQuery"]
            .as_str()
            .unwrap()
            .contains("MAKESET(c.age)"),
        "{plan}"
    );
}

/// Issue 10: GROUP BY, one result per distinct tuple of the grouped
/// values, with every aggregate per group; an undefined value is a group
/// of its own (projected without the property).
#[test]
fn group_by_gives_one_result_per_group() {
    let docs = [
        json!({"cat": "a", "n": 1, "tags": ["x", "y"]}),
        json!({"cat": "a", "n": 3, "tags": ["x"]}),
        json!({"cat": "b", "n": 5.0}),
        json!({"n": 7}),
    ];
    assert_eq!(
        run("SELECT c.cat, COUNT(1) AS n FROM c GROUP BY c.cat", &docs),
        vec![
            json!({"cat": "a", "n": 2}),
            json!({"cat": "b", "n": 1}),
            json!({"n": 1})
        ]
    );
    assert_eq!(
        run("SELECT VALUE c.cat FROM c GROUP BY c.cat", &docs),
        vec![json!("a"), json!("b")]
    );
    assert_eq!(
        run("SELECT c.cat, SUM(c.n) AS total, MAX(c.n) AS top, AVG(c.n) AS mean FROM c WHERE IS_DEFINED(c.cat) GROUP BY c.cat", &docs),
        vec![json!({"cat": "a", "total": 4, "top": 3, "mean": 2}), json!({"cat": "b", "total": 5, "top": 5.0, "mean": 5})]
    );
    assert_eq!(
        run(
            "SELECT VALUE {n: c.n, k: COUNT(1)} FROM c GROUP BY c.n",
            &[json!({"n": 1}), json!({"n": 1.0}), json!({"n": 2})]
        ),
        vec![json!({"n": 1, "k": 2}), json!({"n": 2, "k": 1})],
        "1 and 1.0 are one group"
    );
    assert_eq!(
        run(
            "SELECT t, COUNT(1) AS n FROM c JOIN t IN c.tags GROUP BY t",
            &docs
        ),
        vec![json!({"t": "x", "n": 2}), json!({"t": "y", "n": 1})]
    );
    assert_eq!(
        run(
            "SELECT c.cat, c.n FROM c WHERE c.n < 5 GROUP BY c.cat, c.n",
            &docs
        )
        .len(),
        2
    );
    let err = PreparedQuery::prepare(&QueryBody {
        query: "SELECT * FROM c GROUP BY c.cat".into(),
        parameters: vec![],
    })
    .unwrap_err();
    assert!(err.message.contains("GROUP BY"), "{}", err.message);
}

/// Issue 10: without FROM, a query is evaluated once, whatever the
/// container holds (the function reference pages' examples).
#[test]
fn from_less_queries_are_evaluated_once() {
    let docs = [json!({"id": "a"}), json!({"id": "b"})];
    for docs in [&docs[..], &[]] {
        assert_eq!(
            run("SELECT VALUE CONCAT('a', 'b')", docs),
            vec![json!("ab")]
        );
        assert_eq!(run("SELECT 1 AS one", docs), vec![json!({"one": 1})]);
        assert_eq!(run("SELECT VALUE @v + 1", docs), vec![json!(3)]);
        assert_eq!(run("SELECT VALUE COUNT(1)", docs), vec![json!(1)]);
        assert!(run("SELECT VALUE undefined", docs).is_empty());
    }
    let query = PreparedQuery::prepare(&QueryBody {
        query: "SELECT VALUE 'x'".into(),
        parameters: vec![],
    })
    .unwrap();
    let bodies: Vec<Bytes> = (0..3)
        .map(|i| Bytes::from(json!({"id": i}).to_string()))
        .collect();
    let limit = PageLimit {
        items: 100,
        bytes: usize::MAX,
    };
    let key = ItemKey::new("[]", "id");
    let page = query
        .run_page(
            Default::default(),
            bodies.iter().map(|b| (1, &key, b)),
            None,
            None,
            limit,
        )
        .unwrap()
        .0;
    assert_eq!(page.documents, vec![Bytes::from_static(b"\"x\"")]);
}

/// The byte prefilter never changes a result, only skips parsing.
#[test]
fn prefilter_and_count_give_the_same_results() {
    let bodies: Vec<Bytes> = [
        json!({"id": "a", "s": "x\"y", "t": "é"}),
        json!({"id": "b", "s": "xy", "n": 5.0}),
        json!({"id": "c", "note": "the s is x\"y"}),
    ]
    .iter()
    .map(|d| Bytes::from(serde_json::to_vec(d).unwrap()))
    .collect();
    let key = ItemKey::new("[]", "id");
    let page = |q: &str| {
        let query = PreparedQuery::prepare(&QueryBody {
            query: q.into(),
            parameters: vec![],
        })
        .unwrap();
        let limit = PageLimit {
            items: 100,
            bytes: usize::MAX,
        };
        let docs = query
            .run_page(
                Default::default(),
                bodies.iter().map(|b| (1, &key, b)),
                None,
                None,
                limit,
            )
            .unwrap()
            .0
            .documents;
        docs.iter()
            .map(|d| serde_json::from_slice::<Value>(d).unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        page("SELECT VALUE c.id FROM c WHERE c.s = 'x\"y'"),
        vec![json!("a")]
    );
    assert_eq!(
        page("SELECT VALUE c.id FROM c WHERE c.t = 'é'"),
        vec![json!("a")]
    );
    assert_eq!(
        page("SELECT VALUE c.id FROM c WHERE c.n = 5"),
        vec![json!("b")]
    );
    assert_eq!(page("SELECT VALUE COUNT(1) FROM c"), vec![json!(3)]);
    assert_eq!(
        page("SELECT VALUE COUNT(1) FROM c WHERE c.s = 'xy'"),
        vec![json!(1)]
    );
    assert_eq!(page("SELECT VALUE COUNT(c.s) FROM c"), vec![json!(2)]);
}

#[test]
fn unknown_functions_and_mixed_aggregates_are_refused() {
    for q in [
        "SELECT * FROM c WHERE FOO(c.id)",
        "SELECT c.id, COUNT(1) FROM c",
    ] {
        let body = QueryBody {
            query: q.into(),
            parameters: vec![],
        };
        assert_eq!(
            PreparedQuery::prepare(&body).unwrap_err().status.as_u16(),
            400,
            "{q}"
        );
    }
}

#[test]
fn pages_resume_after_the_last_item_by_number() {
    let bodies: Vec<(u64, ItemKey, Bytes)> = (0..5)
        .map(|i| {
            (
                i + 1,
                ItemKey::new("[]", &format!("{i}")),
                Bytes::from(json!({"id": format!("{i}")}).to_string()),
            )
        })
        .collect();
    let q = PreparedQuery::prepare(&QueryBody {
        query: "SELECT * FROM c".into(),
        parameters: vec![],
    })
    .unwrap();
    let limit = PageLimit {
        items: 2,
        bytes: usize::MAX,
    };
    let page = q
        .run_page(
            Default::default(),
            bodies.iter().map(|(n, key, b)| (*n, key, b)),
            None,
            None,
            limit,
        )
        .unwrap()
        .0;
    assert_eq!(page.documents.len(), 2);
    assert_eq!(page.continuation, Some(Continuation::After { after: 2 }));
    let last = q
        .run_page(
            Default::default(),
            bodies[4..].iter().map(|(n, key, b)| (*n, key, b)),
            None,
            None,
            limit,
        )
        .unwrap()
        .0;
    assert_eq!((last.documents.len(), last.continuation), (1, None));
}

/// Issue 10: the spatial functions in filters, as the documentation's
/// proximity and containment queries use them (distances in metres).
#[test]
fn spatial_functions_filter_items() {
    let docs = [
        json!({"id": "hq", "location": {"type": "Point", "coordinates": [-122.12826822304672, 47.63980239335718]}}),
        json!({"id": "rd", "location": {"type": "Point", "coordinates": [-96.84368664765994, 46.81297794314663]}}),
        json!({"id": "lake", "location": {"type": "Point", "coordinates": [31.9, -4.8]}}),
        json!({"id": "bad", "location": {"type": "Point", "coordinates": [31.9, -132.8]}}),
        json!({"id": "none"}),
    ];
    assert_eq!(
        run(
            "SELECT c.id FROM c WHERE ST_DISTANCE(c.location, \
             {'type': 'Point', 'coordinates': [-122.11758113953535, 47.66901087006131]}) < 30000",
            &docs
        ),
        vec![json!({"id": "hq"})]
    );
    assert_eq!(
        run(
            "SELECT VALUE c.id FROM c WHERE ST_WITHIN(c.location, {'type': 'Polygon', \
             'coordinates': [[[31.8, -5], [32, -5], [32, -4.7], [31.8, -4.7], [31.8, -5]]]})",
            &docs
        ),
        vec![json!("lake")]
    );
    assert_eq!(
        run(
            "SELECT VALUE c.id FROM c WHERE IS_DEFINED(c.location) AND NOT ST_ISVALID(c.location)",
            &docs
        ),
        vec![json!("bad")]
    );
    let km = run(
        "SELECT VALUE ST_DISTANCE(c.location, {'type': 'Point', 'coordinates': \
         [-122.11758113953535, 47.66901087006131]}) / 1000 FROM c WHERE c.id = 'rd'",
        &docs,
    );
    let km = km[0].as_f64().unwrap();
    assert!((km - 1907.438421299902).abs() < 1e-6, "{km}");
}
