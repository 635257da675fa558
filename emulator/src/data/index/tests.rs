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

fn ids<'a>(items: impl Iterator<Item = (&'a IndexKey, Numbered<'a>)>) -> Vec<String> {
    items.map(|(_, (_, k))| k.id().to_string()).collect()
}

/// Stored items by number (their place in write order), as the container
/// hands them to a build or a rebuild chunk.
type Stored = std::collections::BTreeMap<u64, (ItemKey, Bytes)>;

fn numbered(stored: &Stored) -> impl Iterator<Item = (u64, &ItemKey, &Bytes)> {
    stored.iter().map(|(n, (k, b))| (*n, k, b))
}

/// Items a..g under `seq`, numbered 1..7: numbers, a string, a missing
/// value, an array.
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
    let stored: Stored = items
        .iter()
        .zip(1..)
        .map(|((id, v), n)| (n, (key("[\"p\"]", id), body(v.clone()))))
        .collect();
    let mut indexes = PathIndexes::default();
    indexes.build(path("seq"), numbered(&stored));
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
fn runs_keep_ties_in_write_order_both_ways() {
    let indexes = indexed();
    let index = indexes.get(&path("seq")).unwrap();
    let runs = |descending| -> Vec<Vec<String>> {
        index
            .runs(descending)
            .map(|run| run.iter().map(|(_, k)| k.id().to_string()).collect())
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

/// Equal values come in the items' write order (by number), not by id:
/// the order a scan meets them in, which ORDER BY's stable sort keeps.
#[test]
fn equal_values_come_in_write_order_not_by_id() {
    let stored: Stored = [(5, "z"), (6, "a"), (7, "m")]
        .into_iter()
        .map(|(n, id)| (n, (key("[\"p\"]", id), body(json!({"seq": 1})))))
        .collect();
    let mut indexes = PathIndexes::default();
    indexes.build(path("seq"), numbered(&stored));
    let index = indexes.get(&path("seq")).unwrap();
    let one = IndexKey::Number(Number::new(1.0));
    let found = index.range(
        KeyType::Number,
        Bound::Included(&one),
        Bound::Included(&one),
    );
    assert_eq!(ids(found), ["z", "a", "m"]);
    for descending in [false, true] {
        let run: Vec<u64> = index.runs(descending).flatten().map(|(n, _)| n).collect();
        assert_eq!(run, [5, 6, 7]);
    }
}

#[test]
fn writes_move_an_item_between_keys() {
    let mut indexes = indexed();
    let a = key("[\"p\"]", "a");
    indexes.put(
        1,
        &a,
        Some(&body(json!({"seq": 3}))),
        &body(json!({"seq": 9})),
    );
    let nine = IndexKey::Number(Number::new(9.0));
    let index = indexes.get(&path("seq")).unwrap();
    let found = index.range(
        KeyType::Number,
        Bound::Included(&nine),
        Bound::Included(&nine),
    );
    assert_eq!(ids(found), ["a"]);
    assert_eq!(index.len(), 7);
    indexes.remove(1, &a, &body(json!({"seq": 9})));
    let index = indexes.get(&path("seq")).unwrap();
    assert_eq!(index.len(), 6);
    let h = key("[\"p\"]", "h");
    indexes.put(8, &h, None, &body(json!({"other": 1})));
    let index = indexes.get(&path("seq")).unwrap();
    let undefined = index.range(KeyType::Undefined, Bound::Unbounded, Bound::Unbounded);
    assert_eq!(ids(undefined), ["e", "h"]);
}

/// Every (key, number, item) entry of `index`, in order.
fn pairs(index: &PathIndex) -> Vec<(IndexKey, u64, String)> {
    index
        .entries
        .iter()
        .map(|(k, n, item)| (k.clone(), *n, item.id().to_string()))
        .collect()
}

/// The stored items numbered after `cursor`, in write order, as the
/// container hands them to a rebuild chunk.
fn after(stored: &Stored, cursor: Option<u64>) -> impl Iterator<Item = (u64, &ItemKey, &Bytes)> {
    stored
        .range(cursor.map_or(0, |n| n + 1)..)
        .map(|(n, (k, b))| (*n, k, b))
}

/// A policy change rebuilds the kept paths chunk by chunk; writes between
/// chunks, before and beyond the cursor, end in the index a fresh build
/// gives; the rebuilt path serves nothing until the last chunk.
#[test]
fn a_rebuild_in_chunks_ends_as_a_fresh_build_whatever_is_written_meanwhile() {
    let mut stored: Stored = (0..10)
        .map(|i| {
            (
                i + 1,
                (
                    key("[\"p\"]", &format!("i{i}")),
                    body(json!({"seq": i, "other": i})),
                ),
            )
        })
        .collect();
    let mut indexes = PathIndexes::default();
    indexes.build(path("seq"), numbered(&stored));
    indexes.build(path("other"), numbered(&stored));
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

    let cursor = indexes.rebuild_cursor().unwrap();
    assert!(indexes.rebuild_chunk(after(&stored, cursor), 4));
    assert_eq!(indexes.progress(), 40);

    // Writes between chunks: i1 is behind the cursor (i3), i8 and i9
    // beyond, and new items come after every other (new numbers).
    let mut next = 11;
    let mut write = |indexes: &mut PathIndexes, id: &str, value: Option<serde_json::Value>| {
        let k = key("[\"p\"]", id);
        let old = stored
            .iter()
            .find(|(_, (key, _))| *key == k)
            .map(|(n, (_, b))| (*n, b.clone()));
        match value {
            Some(v) => {
                let new = body(v);
                let n = old.as_ref().map_or_else(
                    || {
                        next += 1;
                        next - 1
                    },
                    |(n, _)| *n,
                );
                indexes.put(n, &k, old.as_ref().map(|(_, b)| b), &new);
                stored.insert(n, (k, new));
            }
            None => {
                let (n, b) = old.unwrap();
                indexes.remove(n, &k, &b);
                stored.remove(&n);
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
        let cursor = indexes.rebuild_cursor().unwrap();
        let more = indexes.rebuild_chunk(after(&stored, cursor), 4);
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
    fresh.build(path("seq"), numbered(&stored));
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
    let stored: Stored = (0..5)
        .map(|i| {
            (
                i + 1,
                (key("[\"p\"]", &format!("i{i}")), body(json!({"seq": i}))),
            )
        })
        .collect();
    let mut indexes = PathIndexes::default();
    assert!(
        !indexes.start_rebuild(|_| true, 5),
        "no index in use: nothing to do"
    );
    indexes.build(path("seq"), numbered(&stored));
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
    indexes.build(tags.clone(), [(1, &a, &a1), (2, &b, &b1)].into_iter());
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
    indexes.put(1, &a, Some(&a1), &a2);
    assert_eq!(with(&indexes, "x"), Vec::<String>::new());
    assert_eq!(with(&indexes, "z"), ["a"]);
    let b2 = body(json!({"tags": "not an array"}));
    indexes.put(2, &b, Some(&b1), &b2);
    assert_eq!(with(&indexes, "y"), ["a"]);
    indexes.remove(1, &a, &a2);
    assert!(indexes.get(&tags).unwrap().is_empty());
}
