//! The vector column against the scan for `ORDER BY VectorDistance`:
//! random containers (ties, zero vectors, items without a vector or with
//! a malformed one, expired and deleted items) and random queries
//! (filters, projections, TOP, OFFSET LIMIT, options, either argument
//! order, one partition or all), the same results in the same order.

use bytes::Bytes;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::super::ScopedView;
use super::{prepared, NOW};
use crate::data::query::search::Policies;
use crate::data::query::testing::vector_column_answers;
use crate::data::query::Setting;
use crate::data::store::{Container, ContainerSettings};
use crate::data::ttl::Ttl;
use crate::protocol::item_key::ItemKey;
use crate::protocol::partition_key::KeyScope;
const DISTANCES: [&str; 3] = ["cosine", "dotproduct", "euclidean"];

fn container(distance: &str) -> Container {
    let body = json!({
        "id": "c",
        "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
        "defaultTtl": -1,
        "vectorEmbeddingPolicy": {"vectorEmbeddings": [
            {"path": "/v", "dataType": "float32", "dimensions": 3, "distanceFunction": distance}
        ]}
    });
    let settings = ContainerSettings::parse(body.as_object().unwrap()).unwrap();
    Container::new("c".into(), "db", 1, 1, settings, 0, 3600)
}

fn policies(c: &Container) -> Policies {
    Policies {
        vectors: c.settings.vector_embeddings.clone(),
        full_text: c.settings.full_text.clone(),
    }
}

/// One item: (id, partition, group, vector kind, expired), written at 0..10.
type ItemSpec = (u8, u8, u8, u8, bool);

/// The item's `v`: mostly a small-integer vector (many ties), else one of
/// the values that have no score.
fn vector_value(kind: u8, seed: u8) -> Option<Value> {
    let small = |i: u8| json!(i64::from((seed >> (2 * i)) & 3) - 1);
    match kind {
        0..=5 => Some(json!([small(0), small(1), small(2)])),
        6 => Some(json!([0, 0, 0])),
        7 => Some(json!([1, 2])),
        8 => Some(json!(["1", 2, 3])),
        _ => None,
    }
}

fn fill(c: &mut Container, items: &[ItemSpec], deleted: &[u8]) {
    for (n, &(id, pk, grp, kind, expired)) in items.iter().enumerate() {
        let mut body = Map::new();
        body.insert("id".into(), json!(format!("i{id}")));
        body.insert("pk".into(), json!(format!("p{pk}")));
        body.insert("grp".into(), json!(grp));
        if let Some(v) = vector_value(kind, id.wrapping_mul(37).wrapping_add(grp)) {
            body.insert("v".into(), v);
        }
        let key = ItemKey::new(&format!("[\"p{pk}\"]"), &format!("i{id}"));
        let ttl = expired.then_some(Ttl::Seconds(5));
        c.write(key, body, ttl, n as i64 % 10).unwrap();
    }
    for id in deleted {
        if let Some((_, pk, ..)) = items.iter().find(|item| item.0 == *id) {
            let key = ItemKey::new(&format!("[\"p{pk}\"]"), &format!("i{id}"));
            c.remove(&key, NOW, false);
        }
    }
}

/// A query's parts: projection (0..4), filter group, (TOP or LIMIT,
/// OFFSET, whether TOP), whether the document comes first, options'
/// distance function.
type Shape = (u8, Option<u8>, (u8, u8, bool), bool, Option<u8>);

/// A query of the fast path's shape, from its parts.
fn query_text((projection, filter, bound, document_first, options): Shape, q: [i8; 3]) -> String {
    let q = format!("[{}, {}, {}]", q[0], q[1], q[2]);
    let options = options.map_or(String::new(), |d| {
        format!(
            ", false, {{'distanceFunction': '{}'}}",
            DISTANCES[d as usize]
        )
    });
    let distance = match document_first {
        true => format!("VectorDistance(c.v, {q}{options})"),
        false => format!("VectorDistance({q}, c.v{options})"),
    };
    let projection = match projection {
        0 => "*".to_string(),
        1 => "c.id".to_string(),
        2 => "VALUE c.id".to_string(),
        _ => format!("c.id, {distance} AS s"),
    };
    let filter = filter.map_or(String::new(), |g| format!(" WHERE c.grp = {g}"));
    let (top, offset, use_top) = bound;
    match use_top {
        true => format!("SELECT TOP {top} {projection} FROM c{filter} ORDER BY {distance}"),
        false => format!(
            "SELECT {projection} FROM c{filter} ORDER BY {distance} OFFSET {offset} LIMIT {top}"
        ),
    }
}

fn run(c: &Container, text: &str, scope: Option<&KeyScope>, fast: bool) -> Vec<Bytes> {
    let query = prepared(text);
    let items = c
        .live_items(scope, None, NOW)
        .map(|(number, key, item)| (number, key, &item.body));
    let setting = Setting {
        policies: policies(c).into(),
        udfs: None,
    };
    if fast {
        let mut view = ScopedView {
            c,
            in_scope: |pk: &str| scope.is_none_or(|s| s.contains(pk)),
            now: NOW,
            after: None,
        };
        assert!(
            vector_column_answers(&query, &setting.policies, &view),
            "a column answers {text}"
        );
        query.run_whole(setting, items, Some(&mut view)).unwrap().0
    } else {
        query.run_whole(setting, items, None).unwrap().0
    }
}

fn texts(results: &[Bytes]) -> Vec<String> {
    results
        .iter()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_column_answers_as_the_scan_does(
        distance in 0usize..3,
        items in prop::collection::vec((0u8..60, 0u8..3, 0u8..3, 0u8..10, prop::bool::weighted(0.1)), 0..50),
        deleted in prop::collection::vec(0u8..60, 0..5),
        shape in (0u8..4, prop::option::of(0u8..3), (1u8..25, 0u8..10, any::<bool>()), any::<bool>(), prop::option::of(0u8..3)),
        q in prop::array::uniform3(-1i8..3),
        partition in prop::option::of(0u8..3),
    ) {
        let mut c = container(DISTANCES[distance]);
        fill(&mut c, &items, &deleted);
        let text = query_text(shape, q);
        let scope = partition.map(|p| KeyScope::Exact(format!("[\"p{p}\"]")));
        let scan = run(&c, &text, scope.as_ref(), false);
        let fast = run(&c, &text, scope.as_ref(), true);
        prop_assert_eq!(texts(&fast), texts(&scan), "{}", text);
    }
}

#[test]
fn ties_and_items_without_a_score_come_in_write_order() {
    let mut c = container("cosine");
    // b and d tie with a; c has a zero vector (no cosine); e has none.
    // Written d, a, c, e, b: ties and the unscored come in that order.
    let items: [(&str, Value); 5] = [
        ("d", json!([2, 0, 0])),
        ("a", json!([1, 0, 0])),
        ("c", json!([0, 0, 0])),
        ("e", Value::Null),
        ("b", json!([3, 0, 0])),
    ];
    for (id, v) in items {
        let mut body = Map::new();
        body.insert("id".into(), json!(id));
        if !v.is_null() {
            body.insert("v".into(), v);
        }
        c.write(ItemKey::new("[\"p\"]", id), body, None, 1).unwrap();
    }
    let text = "SELECT TOP 10 VALUE c.id FROM c ORDER BY VectorDistance(c.v, [1, 0, 0])";
    let fast = run(&c, text, None, true);
    assert_eq!(texts(&fast), ["\"d\"", "\"a\"", "\"b\"", "\"c\"", "\"e\""]);
    assert_eq!(fast, run(&c, text, None, false));
}
