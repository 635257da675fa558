//! A path's index: its keys in the order `ORDER BY` sorts, kept by every
//! write, and the lookups, ranges and walks queries read of it.

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

fn path(p: &str) -> DocumentPath {
    [p].into_iter().collect()
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

/// Every (key, item) pair of `index`, in order.
fn pairs(index: &PathIndex) -> Vec<(IndexKey, String)> {
    index
        .entries
        .iter()
        .map(|(k, item)| (k.clone(), item.id().to_string()))
        .collect()
}

/// The stored items after `cursor`, in key order, as the container hands
/// them to a rebuild chunk.
fn after<'a>(
    stored: &'a std::collections::BTreeMap<ItemKey, Bytes>,
    cursor: Option<&ItemKey>,
) -> impl Iterator<Item = (&'a ItemKey, &'a Bytes)> {
    let start = cursor.map_or(Bound::Unbounded, |k| Bound::Excluded(k.clone()));
    stored.range((start, Bound::Unbounded))
}

/// A policy change rebuilds the kept paths chunk by chunk; writes between
/// chunks, before and beyond the cursor, end in the index a fresh build
/// gives; the rebuilt path serves nothing until the last chunk.
#[test]
fn a_rebuild_in_chunks_ends_as_a_fresh_build_whatever_is_written_meanwhile() {
    let mut stored: std::collections::BTreeMap<ItemKey, Bytes> = (0..10)
        .map(|i| {
            (
                key("[\"p\"]", &format!("i{i}")),
                body(json!({"seq": i, "other": i})),
            )
        })
        .collect();
    let mut indexes = PathIndexes::default();
    indexes.build(path("seq"), stored.iter());
    indexes.build(path("other"), stored.iter());
    assert_eq!(indexes.progress(), 100);

    let keep_seq = |p: &[Box<str>]| &*p[0] == "seq";
    assert!(indexes.start_rebuild(keep_seq, stored.len()));
    assert!(
        indexes.get(&path("seq")).is_none(),
        "not ready before its last chunk"
    );
    assert!(
        indexes.has(&path("seq")),
        "not built again by a query meanwhile"
    );
    assert!(
        !indexes.has(&path("other")),
        "a path the new policy drops is gone"
    );
    assert_eq!(indexes.progress(), 0);

    let cursor = indexes.rebuild_cursor().unwrap().cloned();
    assert!(indexes.rebuild_chunk(after(&stored, cursor.as_ref()), 4));
    assert_eq!(indexes.progress(), 40);

    // Writes between chunks: i1 is behind the cursor (i3), i8 and i9 beyond.
    let mut write = |indexes: &mut PathIndexes, id: &str, value: Option<serde_json::Value>| {
        let k = key("[\"p\"]", id);
        let old = stored.get(&k).cloned();
        match value {
            Some(v) => {
                let new = body(v);
                indexes.put(&k, old.as_ref(), &new);
                stored.insert(k, new);
            }
            None => {
                indexes.remove(&k, &old.unwrap());
                stored.remove(&k);
            }
        }
    };
    write(&mut indexes, "i1", Some(json!({"seq": 100})));
    write(&mut indexes, "i8", Some(json!({"seq": 200})));
    write(&mut indexes, "i9", None);
    write(&mut indexes, "i95", Some(json!({"seq": 300})));
    write(&mut indexes, "i05", Some(json!({"seq": "new"})));
    write(&mut indexes, "i2", None);

    let mut chunks = 1;
    loop {
        let cursor = indexes.rebuild_cursor().unwrap().cloned();
        let more = indexes.rebuild_chunk(after(&stored, cursor.as_ref()), 4);
        chunks += 1;
        if !more {
            break;
        }
        assert!(indexes.progress() < 100);
    }
    assert_eq!(
        chunks, 3,
        "10 items, then 10 again after the writes: 4 + 4 + 2"
    );
    assert_eq!(indexes.progress(), 100);
    assert!(indexes.rebuild_cursor().is_none());

    let mut fresh = PathIndexes::default();
    fresh.build(path("seq"), stored.iter());
    assert_eq!(
        pairs(
            indexes
                .get(&path("seq"))
                .expect("ready after the last chunk")
        ),
        pairs(fresh.get(&path("seq")).unwrap())
    );
    assert!(indexes.get(&path("other")).is_none());
}

/// A policy that keeps no path in use starts no rebuild; a second change
/// during a rebuild starts it again over the paths it still keeps.
#[test]
fn rebuilds_start_over_on_another_change() {
    let stored: std::collections::BTreeMap<ItemKey, Bytes> = (0..5)
        .map(|i| (key("[\"p\"]", &format!("i{i}")), body(json!({"seq": i}))))
        .collect();
    let mut indexes = PathIndexes::default();
    assert!(
        !indexes.start_rebuild(|_| true, 5),
        "no index in use: nothing to do"
    );
    indexes.build(path("seq"), stored.iter());
    assert!(indexes.start_rebuild(|_| true, 5));
    assert!(indexes.rebuild_chunk(after(&stored, None), 2));
    assert_eq!(indexes.progress(), 40);
    assert!(
        indexes.start_rebuild(|_| true, 5),
        "the path is kept: rebuilt again"
    );
    assert_eq!(indexes.progress(), 0, "from the first item");
    assert!(!indexes.rebuild_chunk(after(&stored, None), 10));
    assert_eq!(indexes.get(&path("seq")).unwrap().len(), 5);
    assert!(!indexes.start_rebuild(|_| false, 5));
    assert!(!indexes.has(&path("seq")));
    assert_eq!(indexes.progress(), 100);
}

/// The index of an array's elements holds each item once per distinct
/// element, and follows writes that change, keep or drop the array.
#[test]
fn element_indexes_follow_writes() {
    let tags = path("tags").elements();
    let a = key("[\"p\"]", "a");
    let b = key("[\"p\"]", "b");
    let a1 = body(json!({"tags": ["x", "y", "x"]}));
    let b1 = body(json!({"tags": ["y"]}));
    let mut indexes = PathIndexes::default();
    indexes.build(tags.clone(), [(&a, &a1), (&b, &b1)].into_iter());
    let with = |indexes: &PathIndexes, tag: &str| {
        let tag = IndexKey::String(tag.into());
        let index = indexes.get(&tags).unwrap();
        ids(index.range(
            KeyType::String,
            Bound::Included(&tag),
            Bound::Included(&tag),
        ))
    };
    assert_eq!(indexes.get(&tags).unwrap().len(), 3, "x and y of a, y of b");
    assert_eq!(with(&indexes, "y"), ["a", "b"]);

    let a2 = body(json!({"tags": ["z", "y"], "other": 1}));
    indexes.put(&a, Some(&a1), &a2);
    assert_eq!(with(&indexes, "x"), Vec::<String>::new());
    assert_eq!(with(&indexes, "z"), ["a"]);
    let b2 = body(json!({"tags": "not an array"}));
    indexes.put(&b, Some(&b1), &b2);
    assert_eq!(with(&indexes, "y"), ["a"]);
    indexes.remove(&a, &a2);
    assert!(indexes.get(&tags).unwrap().is_empty());
}
