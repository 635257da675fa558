use std::ops::Bound;

use bytes::Bytes;
use serde_json::json;

use super::*;

fn key(pk: &str, id: &str) -> ItemKey {
    ItemKey::new(pk, id)
}

fn body(v: serde_json::Value) -> Bytes {
    Bytes::from(serde_json::to_vec(&v).unwrap())
}

fn path(p: &str) -> IndexPath {
    vec![p.into()]
}

fn ids<'a>(items: impl Iterator<Item = (&'a IndexKey, &'a ItemKey)>) -> Vec<String> {
    items.map(|(_, k)| k.id().to_string()).collect()
}

/// Items a..f under `seq`: numbers, a string, a missing value, an array.
fn indexed() -> PathIndexes {
    let items = [
        ("a", json!({"seq": 3})),
        ("b", json!({"seq": 1})),
        ("c", json!({"seq": 3.0})),
        ("d", json!({"seq": "3"})),
        ("e", json!({})),
        ("f", json!({"seq": [3]})),
        ("g", json!({"seq": 2})),
    ];
    let stored: Vec<(ItemKey, Bytes)> = items
        .iter()
        .map(|(id, v)| (key("[\"p\"]", id), body(v.clone())))
        .collect();
    let mut indexes = PathIndexes::default();
    indexes.build(path("seq"), stored.iter().map(|(k, b)| (k, b)));
    indexes
}

#[test]
fn ranges_stay_within_their_type() {
    let indexes = indexed();
    let index = indexes.get(&path("seq")).unwrap();
    let three = IndexKey::Number(Number::new(3.0));
    let one = IndexKey::Number(Number::new(1.0));
    let eq = index.range(
        KeyType::Number,
        Bound::Included(&three),
        Bound::Included(&three),
    );
    assert_eq!(ids(eq), ["a", "c"]);
    let above_one = index.range(KeyType::Number, Bound::Excluded(&one), Bound::Unbounded);
    assert_eq!(ids(above_one), ["g", "a", "c"]);
    let up_to_three = index.range(KeyType::Number, Bound::Unbounded, Bound::Excluded(&three));
    assert_eq!(ids(up_to_three), ["b", "g"]);
    let strings = index.range(KeyType::String, Bound::Unbounded, Bound::Unbounded);
    assert_eq!(ids(strings), ["d"]);
    assert_eq!(ids(index.with_prefix("3")), ["d"]);
    assert_eq!(ids(index.with_prefix("4")), Vec::<String>::new());
}

#[test]
fn runs_keep_ties_in_key_order_both_ways() {
    let indexes = indexed();
    let index = indexes.get(&path("seq")).unwrap();
    let runs = |descending| -> Vec<Vec<String>> {
        index
            .runs(descending)
            .map(|run| run.iter().map(|k| k.id().to_string()).collect())
            .collect()
    };
    let ascending = runs(false);
    assert_eq!(
        ascending,
        [
            vec!["e"],
            vec!["b"],
            vec!["g"],
            vec!["a", "c"],
            vec!["d"],
            vec!["f"]
        ]
    );
    let mut descending = runs(true);
    descending.reverse();
    assert_eq!(descending, ascending);
}

#[test]
fn writes_move_an_item_between_keys() {
    let mut indexes = indexed();
    let a = key("[\"p\"]", "a");
    indexes.put(&a, Some(&body(json!({"seq": 3}))), &body(json!({"seq": 9})));
    let nine = IndexKey::Number(Number::new(9.0));
    let index = indexes.get(&path("seq")).unwrap();
    let found = index.range(
        KeyType::Number,
        Bound::Included(&nine),
        Bound::Included(&nine),
    );
    assert_eq!(ids(found), ["a"]);
    assert_eq!(index.len(), 7);
    indexes.remove(&a, &body(json!({"seq": 9})));
    let index = indexes.get(&path("seq")).unwrap();
    assert_eq!(index.len(), 6);
    let h = key("[\"p\"]", "h");
    indexes.put(&h, None, &body(json!({"other": 1})));
    let index = indexes.get(&path("seq")).unwrap();
    let undefined = index.range(KeyType::Undefined, Bound::Unbounded, Bound::Unbounded);
    assert_eq!(ids(undefined), ["e", "h"]);
}
