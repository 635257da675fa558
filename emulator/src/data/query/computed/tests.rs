//! Computed properties: validation (the documented rules, each refusal
//! naming the property) and evaluation (the documented examples and the
//! SDKs' tests, as rows).

use rstest::rstest;
use serde_json::{json, Value};

use super::*;
use crate::data::query::tests::prepared;
use crate::protocol::error::Status;

fn definitions(pairs: &[(&str, &str)]) -> Value {
    Value::Array(
        pairs
            .iter()
            .map(|(name, query)| json!({"name": name, "query": query}))
            .collect(),
    )
}

fn computed(pairs: &[(&str, &str)]) -> ComputedProperties {
    ComputedProperties::parse(Some(&definitions(pairs))).unwrap()
}

/// The message of the refusal of one computed property `name` with `query`.
fn refusal(name: &str, query: &str) -> String {
    let error = ComputedProperties::parse(Some(&definitions(&[(name, query)]))).unwrap_err();
    assert_eq!(error.status, Status::BAD_REQUEST);
    error.message
}

/// Runs `query` over `docs` in a container with `properties` and the
/// default indexing policy plus `/cp_*` paths for ORDER BY.
fn run_with(properties: &[(&str, &str)], query: &str, docs: &[Value]) -> Vec<Value> {
    let policy = json!({"includedPaths": [{"path": "/*"}, {"path": "/cp_monthUpdated/?"}, {"path": "/cp_lower/?"}]});
    let prepared = prepared(query);
    let resolved = prepared
        .resolve_computed(&computed(properties), &policy)
        .unwrap();
    resolved
        .as_ref()
        .unwrap_or(&prepared)
        .run_values(docs.iter().cloned())
        .unwrap()
}

#[test]
fn absent_or_null_is_none() {
    assert!(ComputedProperties::parse(None).unwrap().is_empty());
    assert!(ComputedProperties::parse(Some(&Value::Null))
        .unwrap()
        .is_empty());
    assert!(ComputedProperties::parse(Some(&json!([])))
        .unwrap()
        .is_empty());
}

#[rstest]
#[case::documented("SELECT VALUE LOWER(c.name) FROM c")]
#[case::root_alias("SELECT VALUE LOWER(c.name) FROM root c")]
#[case::container_alias("SELECT VALUE StringSplit(p.sku, \"-\") FROM products p")]
#[case::arithmetic("SELECT VALUE (c.price * 0.2) FROM c")]
#[case::conditional(
    "SELECT VALUE LOWER(IS_DEFINED(c.lastName) ? c.lastName : c.parents[0].familyName) FROM c"
)]
#[case::timestamp("SELECT VALUE DateTimePart('m', TimestampToDateTime(c._ts*1000)) FROM c")]
#[case::object("SELECT VALUE {\"a\": c.a, \"b\": [c.b]} FROM c")]
fn documented_queries_are_accepted(#[case] query: &str) {
    computed(&[("cp_x", query)]);
}

#[rstest]
#[case::where_clause("SELECT VALUE c.a FROM c WHERE c.a > 1", "WHERE")]
#[case::group_by("SELECT VALUE c.a FROM c GROUP BY c.a", "GROUP BY")]
#[case::order_by("SELECT VALUE c.a FROM c ORDER BY c.a", "ORDER BY")]
#[case::top("SELECT TOP 1 VALUE c.a FROM c", "TOP")]
#[case::distinct("SELECT DISTINCT VALUE c.a FROM c", "DISTINCT")]
#[case::offset_limit("SELECT VALUE c.a FROM c OFFSET 0 LIMIT 1", "OFFSET LIMIT")]
#[case::join("SELECT VALUE t FROM c JOIN t IN c.tags", "JOIN")]
#[case::no_value("SELECT c.a FROM c", "VALUE clause")]
#[case::star("SELECT * FROM c", "VALUE clause")]
#[case::no_from("SELECT VALUE 1", "FROM clause")]
#[case::from_path("SELECT VALUE t FROM t IN c.tags", "root item")]
#[case::from_subpath("SELECT VALUE a.x FROM c.a a", "root item")]
#[case::scalar_subquery("SELECT VALUE (SELECT VALUE 1) FROM c", "subquery")]
#[case::exists(
    "SELECT VALUE EXISTS(SELECT VALUE t FROM t IN c.tags) FROM c",
    "subquery"
)]
#[case::array_subquery(
    "SELECT VALUE ARRAY(SELECT VALUE t FROM t IN c.tags) FROM c",
    "subquery"
)]
#[case::aggregate("SELECT VALUE COUNT(1) FROM c", "aggregate function COUNT")]
#[case::nondeterministic(
    "SELECT VALUE GetCurrentDateTime() FROM c",
    "nondeterministic function GETCURRENTDATETIME"
)]
#[case::ticks(
    "SELECT VALUE GetCurrentTicks() - c.t FROM c",
    "nondeterministic function GETCURRENTTICKS"
)]
#[case::spatial("SELECT VALUE ST_AREA(c.shape) FROM c", "spatial function ST_AREA")]
#[case::unknown_function("SELECT VALUE NoSuch(c.a) FROM c", "NOSUCH")]
#[case::syntax("SELECT VALUE FROM c", "not a valid query")]
#[case::not_a_query("LOWER(c.name)", "not a valid query")]
fn documented_limitations_are_refused_naming_property_and_rule(
    #[case] query: &str,
    #[case] rule: &str,
) {
    let message = refusal("cp_bad", query);
    assert!(message.contains("'cp_bad'"), "{message}");
    assert!(message.contains(rule), "{rule}: {message}");
}

#[rstest]
#[case::id("id")]
#[case::rid("_rid")]
#[case::ts("_ts")]
#[case::etag("_etag")]
#[case::self_link("_self")]
#[case::attachments("_attachments")]
fn system_property_names_are_refused(#[case] name: &str) {
    let message = refusal(name, "SELECT VALUE c.a FROM c");
    assert!(
        message.contains(&format!("'{name}' is reserved")),
        "{message}"
    );
}

#[test]
fn names_are_unique_non_empty_and_at_most_twenty() {
    let twice = ComputedProperties::parse(Some(&definitions(&[
        ("cp_a", "SELECT VALUE c.a FROM c"),
        ("cp_a", "SELECT VALUE c.b FROM c"),
    ])))
    .unwrap_err();
    assert!(
        twice.message.contains("'cp_a' is used more than once"),
        "{}",
        twice.message
    );
    assert!(refusal("", "SELECT VALUE c.a FROM c").contains("cannot be empty"));
    let names: Vec<String> = (0..21).map(|i| format!("cp_{i}")).collect();
    let many: Vec<(&str, &str)> = names
        .iter()
        .map(|n| (n.as_str(), "SELECT VALUE c.a FROM c"))
        .collect();
    computed(&many[..20]);
    let error = ComputedProperties::parse(Some(&definitions(&many))).unwrap_err();
    assert!(error.message.contains("at most 20"), "{}", error.message);
}

#[test]
fn a_computed_property_cannot_read_another() {
    let error = ComputedProperties::parse(Some(&definitions(&[
        ("cp_a", "SELECT VALUE LOWER(c.name) FROM c"),
        ("cp_b", "SELECT VALUE CONCAT(x[\"cp_a\"], '!') FROM x"),
    ])))
    .unwrap_err();
    assert!(error.message.contains("'cp_b'"), "{}", error.message);
    assert!(error.message.contains("'cp_a'"), "{}", error.message);
}

#[rstest]
#[case::object(json!({"name": "cp", "query": "SELECT VALUE 1 FROM c"}))]
#[case::string(json!("SELECT VALUE 1 FROM c"))]
#[case::entry_not_object(json!(["cp"]))]
#[case::name_missing(json!([{"query": "SELECT VALUE 1 FROM c"}]))]
#[case::query_not_string(json!([{"name": "cp", "query": 1}]))]
fn wrong_shapes_are_refused_as_invalid_input(#[case] value: Value) {
    let error = ComputedProperties::parse(Some(&value)).unwrap_err();
    // The words the Python SDK's test looks for.
    assert!(
        error
            .message
            .starts_with("One of the specified inputs is invalid"),
        "{}",
        error.message
    );
}

/// The documentation's example item (the quickstart products dataset).
fn product() -> Value {
    json!({
        "id": "08225A9E-F2B3-4FA3-AB08-8C70ADD6C3C2",
        "categoryId": "75BF1ACB-168D-469C-9AA3-1FD26BB4EA4C",
        "categoryName": "Bikes, Touring Bikes",
        "sku": "BK-T79U-50",
        "name": "Touring-1000 Blue, 50",
        "price": 2384.07,
        "_ts": 1683094347
    })
}

#[rstest]
#[case::lower_name(("cp_lowerName", "SELECT VALUE LOWER(c.name) FROM c"), json!("touring-1000 blue, 50"))]
#[case::split_sku(("cp_splitSku", "SELECT VALUE StringSplit(p.sku, \"-\") FROM products p"), json!(["BK", "T79U", "50"]))]
#[case::primary_category(("cp_primaryCategory", "SELECT VALUE SUBSTRING(c.categoryName, 0, INDEX_OF(c.categoryName, ',')) FROM c"), json!("Bikes"))]
#[case::month_updated(("cp_monthUpdated", "SELECT VALUE DateTimePart('m', TimestampToDateTime(c._ts*1000)) FROM c"), json!(5))]
#[case::discount(("cp_20PercentDiscount", "SELECT VALUE (c.price * 0.2) FROM c"), json!(2384.07 * 0.2))]
fn documented_definitions_evaluate_per_item(
    #[case] definition: (&str, &str),
    #[case] value: Value,
) {
    let (name, _) = definition;
    let rows = run_with(
        &[definition],
        &format!("SELECT VALUE c.{name} FROM c"),
        &[product()],
    );
    assert_eq!(rows, vec![value]);
}

#[test]
fn documented_projection_and_where() {
    let mut cheap = product();
    cheap["id"] = json!("cheap");
    cheap["name"] = json!("Bell");
    cheap["price"] = json!(100.0);
    let docs = [product(), cheap];
    let cps = [
        ("cp_lowerName", "SELECT VALUE LOWER(c.name) FROM c"),
        (
            "cp_20PercentDiscount",
            "SELECT VALUE (c.price * 0.2) FROM c",
        ),
    ];
    assert_eq!(
        run_with(&cps, "SELECT c.cp_lowerName FROM c", &docs),
        vec![
            json!({"cp_lowerName": "touring-1000 blue, 50"}),
            json!({"cp_lowerName": "bell"})
        ]
    );
    assert_eq!(
        run_with(
            &cps,
            "SELECT c.price - c.cp_20PercentDiscount as discountedPrice, c.name FROM c WHERE c.cp_20PercentDiscount < 50.00",
            &docs
        ),
        vec![json!({"discountedPrice": 80, "name": "Bell"})]
    );
}

#[test]
fn documented_group_by_and_order_by() {
    let docs: Vec<Value> = [
        ("a", "Bikes, Touring Bikes", 1683094347),
        ("b", "Bikes, Road Bikes", 1675000000),
        ("c", "Clothing, Caps", 1690000000),
    ]
    .iter()
    .map(|(id, category, ts)| json!({"id": id, "categoryName": category, "_ts": ts}))
    .collect();
    let primary = (
        "cp_primaryCategory",
        "SELECT VALUE SUBSTRING(c.categoryName, 0, INDEX_OF(c.categoryName, ',')) FROM c",
    );
    let mut groups = run_with(
        &[primary],
        "SELECT COUNT(1) AS n, c.cp_primaryCategory FROM c GROUP BY c.cp_primaryCategory",
        &docs,
    );
    groups.sort_by_key(|g| g["cp_primaryCategory"].to_string());
    assert_eq!(
        groups,
        vec![
            json!({"n": 2, "cp_primaryCategory": "Bikes"}),
            json!({"n": 1, "cp_primaryCategory": "Clothing"})
        ]
    );
    let month = (
        "cp_monthUpdated",
        "SELECT VALUE DateTimePart('m', TimestampToDateTime(c._ts*1000)) FROM c",
    );
    // January (b), May (a), July (c); SELECT * gives the items as stored.
    assert_eq!(
        run_with(
            &[month],
            "SELECT * FROM c ORDER BY c.cp_monthUpdated",
            &docs
        ),
        vec![docs[1].clone(), docs[0].clone(), docs[2].clone()]
    );
}

/// The JavaScript SDK's test items and properties, with its expected rows.
#[test]
fn the_javascript_sdks_rows() {
    let andersen = json!({"id": "AndersenFamily", "lastName": "Andersen",
        "parents": [{"firstName": "Thomas"}, {"firstName": "Mary Kay"}]});
    let wakefield = json!({"id": "WakefieldFamily", "parents": [
        {"familyName": "Wakefield", "givenName": "Robin"}, {"familyName": "Miller", "givenName": "Ben"}]});
    let cps = [
        ("lowerLastName", "SELECT VALUE LOWER(IS_DEFINED(c.lastName) ? c.lastName : c.parents[0].familyName) FROM c"),
        ("parentsFullName", "SELECT VALUE CONCAT(CONCAT(c.parents[0].firstName, ' ', c.lastName), ' & ', CONCAT(c.parents[1].firstName, ' ', c.lastName)) FROM c"),
    ];
    let query = "SELECT c.lowerLastName, c.parentsFullName FROM c";
    let docs = [andersen, wakefield];
    assert_eq!(
        run_with(&cps, query, &docs),
        vec![
            json!({"lowerLastName": "andersen", "parentsFullName": "Thomas Andersen & Mary Kay Andersen"}),
            json!({"lowerLastName": "wakefield"})
        ]
    );
    assert_eq!(run_with(&[], query, &docs), vec![json!({}), json!({})]);
}

#[test]
fn a_computed_property_shadows_a_persisted_one_except_in_wildcards() {
    let doc = json!({"id": "a", "name": "Ann", "cp_lower": "stored"});
    let cps = [("cp_lower", "SELECT VALUE LOWER(c.name) FROM c")];
    assert_eq!(
        run_with(
            &cps,
            "SELECT VALUE c.cp_lower FROM c",
            std::slice::from_ref(&doc)
        ),
        vec![json!("ann")]
    );
    assert_eq!(
        run_with(
            &cps,
            "SELECT VALUE x['cp_lower'] FROM x",
            std::slice::from_ref(&doc)
        ),
        vec![json!("ann")]
    );
    assert_eq!(
        run_with(
            &cps,
            "SELECT * FROM c WHERE c.cp_lower = 'ann'",
            std::slice::from_ref(&doc)
        ),
        vec![doc.clone()]
    );
    assert!(run_with(
        &cps,
        "SELECT * FROM c WHERE c.cp_lower = 'stored'",
        std::slice::from_ref(&doc)
    )
    .is_empty());
    assert_eq!(
        run_with(&cps, "SELECT VALUE c FROM c", std::slice::from_ref(&doc)),
        vec![doc]
    );
}

#[test]
fn references_resolve_through_joins_subqueries_and_derived_queries() {
    let doc = json!({"id": "a", "name": "Ann", "tags": ["x", "y"]});
    let cps = [("cp_lower", "SELECT VALUE LOWER(c.name) FROM c")];
    assert_eq!(
        run_with(
            &cps,
            "SELECT VALUE [t, c.cp_lower] FROM c JOIN t IN c.tags",
            std::slice::from_ref(&doc)
        ),
        vec![json!(["x", "ann"]), json!(["y", "ann"])]
    );
    assert_eq!(
        run_with(
            &cps,
            "SELECT VALUE ARRAY(SELECT VALUE CONCAT(t, r.cp_lower) FROM t IN r.tags) FROM r",
            std::slice::from_ref(&doc)
        ),
        vec![json!(["xann", "yann"])]
    );
    assert_eq!(
        run_with(
            &cps,
            "SELECT VALUE d.l FROM (SELECT c.cp_lower AS l FROM c) d",
            std::slice::from_ref(&doc)
        ),
        vec![json!("ann")]
    );
    // In `FROM t IN c.tags` the name is an element, not the item.
    assert!(run_with(&cps, "SELECT VALUE t.cp_lower FROM t IN c.tags", &[doc]).is_empty());
}

#[test]
fn a_query_that_reads_no_computed_property_runs_as_prepared() {
    let cps = computed(&[("cp_lower", "SELECT VALUE LOWER(c.name) FROM c")]);
    let policy = json!({});
    for q in [
        "SELECT * FROM c",
        "SELECT c.name FROM c WHERE c.n > 1",
        "SELECT VALUE c FROM c",
    ] {
        assert!(
            prepared(q)
                .resolve_computed(&cps, &policy)
                .unwrap()
                .is_none(),
            "{q}"
        );
    }
    let resolved = prepared("SELECT * FROM c WHERE c.cp_lower = 'ann'")
        .resolve_computed(&cps, &policy)
        .unwrap()
        .unwrap();
    // A computed value is not in the stored bytes: no byte pre-filter.
    assert!(resolved.required.is_empty());
}

#[rstest]
#[case::wildcard_only(json!({"includedPaths": [{"path": "/*"}]}), false)]
#[case::scalar_path(json!({"includedPaths": [{"path": "/*"}, {"path": "/cp_lower/?"}]}), true)]
#[case::subtree(json!({"includedPaths": [{"path": "/cp_lower/*"}], "excludedPaths": [{"path": "/*"}]}), true)]
#[case::other_property(json!({"includedPaths": [{"path": "/cp_lowerX/?"}]}), false)]
fn ordering_by_a_computed_property_needs_its_index(#[case] policy: Value, #[case] served: bool) {
    let cps = computed(&[("cp_lower", "SELECT VALUE LOWER(c.name) FROM c")]);
    let result =
        prepared("SELECT * FROM c ORDER BY c.cp_lower DESC").resolve_computed(&cps, &policy);
    match result {
        Ok(resolved) => assert!(served && resolved.is_some()),
        Err(e) => {
            assert!(!served);
            assert!(e.message.starts_with(
                "The index path corresponding to the specified order-by item is excluded."
            ));
            assert!(e.message.contains("/cp_lower/?"), "{}", e.message);
        }
    }
    // Persisted properties are not concerned.
    assert!(prepared("SELECT * FROM c ORDER BY c.name")
        .resolve_computed(&cps, &json!({}))
        .is_ok());
}

#[test]
fn references_that_copy_too_much_are_refused_not_expanded() {
    // A 100 KB definition read 200 times would copy 20 MB of expressions.
    let long = format!("SELECT VALUE CONCAT(c.a, '{}') FROM c", "x".repeat(100_000));
    let cps = computed(&[("cp_long", &long)]);
    let reads = vec!["c.cp_long"; 200].join(", ");
    let error = prepared(&format!("SELECT VALUE [{reads}] FROM c"))
        .resolve_computed(&cps, &json!({}))
        .unwrap_err();
    assert!(
        error.message.contains("copy more than"),
        "{}",
        error.message
    );
    let few = vec!["c.cp_long"; 100].join(", ");
    let rows = prepared(&format!("SELECT VALUE ARRAY_LENGTH([{few}]) FROM c"))
        .resolve_computed(&cps, &json!({}))
        .unwrap()
        .unwrap()
        .run_values(std::iter::once(json!({"a": "b"})))
        .unwrap();
    assert_eq!(rows, vec![json!(100)]);
}
