//! User-defined functions in queries, through the query engine and a
//! QuickJS sandbox (the HTTP surface is in `tests/it/scripts.rs`).

use std::time::Duration;

use serde_json::{json, Value};

use crate::data::script::udf::Udfs;
use crate::data::script::*;

fn udf_query(udfs: &[(&str, &str)], sql: &str, docs: Vec<Value>) -> ApiResult<Vec<Value>> {
    use crate::data::query::{PreparedQuery, QueryBody, Setting};
    let query = PreparedQuery::prepare(&QueryBody {
        query: sql.into(),
        parameters: Vec::new(),
    })?;
    let bodies = udfs
        .iter()
        .map(|(name, body)| (name.to_string(), body.to_string()))
        .collect();
    let limits = Limits {
        time: Duration::from_millis(300),
        ..Limits::SERVICE
    };
    let setting = Setting {
        udfs: Some(Box::new(Udfs::new(bodies, limits))),
        ..Setting::default()
    };
    query.run_values_in(setting, docs.into_iter())
}

#[test]
fn udfs_in_select_where_and_order_by() {
    let docs = vec![
        json!({"id": "a", "income": 10}),
        json!({"id": "b", "income": 30}),
        json!({"id": "c"}),
    ];
    let tax = ("tax", "function (income) { return income * 0.5; }");
    let results = udf_query(
        &[tax],
        "SELECT c.id, udf.tax(c.income) AS t FROM c WHERE udf.tax(c.income) > 1 ORDER BY udf.tax(c.income) DESC",
        docs.clone(),
    );
    // ORDER BY a UDF needs the whole result: the rows, sorted.
    assert_eq!(
        results.unwrap(),
        vec![json!({"id": "b", "t": 15}), json!({"id": "a", "t": 5})]
    );
    // An undefined argument skips the call; an undefined result is left out.
    let results = udf_query(
        &[tax],
        "SELECT c.id, udf.tax(c.income) AS t FROM c",
        docs.clone(),
    )
    .unwrap();
    assert_eq!(results[2], json!({"id": "c"}));
    let nothing = ("nothing", "function () { return undefined; }");
    let results = udf_query(
        &[nothing],
        "SELECT VALUE udf.nothing(c.id) FROM c",
        docs.clone(),
    )
    .unwrap();
    assert!(results.is_empty());
    // Inside other expressions, with null kept as null.
    let null = ("n", "function () { return null; }");
    let results = udf_query(
        &[null],
        "SELECT VALUE [udf.n(c.id), IS_NULL(udf.n(c.id))] FROM c WHERE c.id = 'a'",
        docs,
    )
    .unwrap();
    assert_eq!(results, vec![json!([null, true])]);
}

#[test]
fn a_udf_that_throws_or_loops_fails_the_query() {
    let docs = vec![json!({"id": "a"})];
    let throws = ("boom", "function () { throw new Error(32766, 'Error'); }");
    let error = udf_query(
        &[throws],
        "SELECT VALUE udf.boom(c.id) FROM c",
        docs.clone(),
    )
    .unwrap_err();
    assert_eq!((error.status.as_u16(), error.substatus), (400, Some(32766)));
    let loops = ("spin", "function () { while (true) {} }");
    let error =
        udf_query(&[loops], "SELECT VALUE udf.spin(c.id) FROM c", docs.clone()).unwrap_err();
    assert_eq!(error.status.as_u16(), 408);
    let error = udf_query(&[], "SELECT VALUE udf.missing(c.id) FROM c", docs.clone()).unwrap_err();
    assert!(
        error.message.contains("'udf.missing' does not exist"),
        "{}",
        error.message
    );
    let error = udf_query(
        &[("bad", "function ( {")],
        "SELECT VALUE udf.bad(c.id) FROM c",
        docs,
    )
    .unwrap_err();
    assert!(error.message.contains("compiling"), "{}", error.message);
}
