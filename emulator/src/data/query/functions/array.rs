//! Array functions: `ARRAY_CONCAT`, `ARRAY_CONTAINS` (with partial match),
//! `ARRAY_CONTAINS_ANY`, `ARRAY_CONTAINS_ALL`, `ARRAY_LENGTH`,
//! `ARRAY_SLICE`, and the set functions `SetIntersect` and `SetUnion`.
//! Values are equal as the `=` operator has them (numbers by value).

use std::cmp::Ordering;
use std::collections::HashSet;

use serde_json::Value;

use super::super::order::compare_same_type;
use super::{arg, array, budget_ok, flag, integer_part, num, Args, Function};

pub const FUNCTIONS: &[(&str, Function)] = &[
    ("ARRAY_CONCAT", concat),
    ("ARRAY_CONTAINS", contains),
    ("ARRAY_CONTAINS_ANY", |a| contains_each(a, true)),
    ("ARRAY_CONTAINS_ALL", |a| contains_each(a, false)),
    ("ARRAY_LENGTH", |a| {
        (a.len() == 1).then_some(())?;
        Some(Value::from(array(a, 0)?.len()))
    }),
    ("ARRAY_SLICE", slice),
    ("SETINTERSECT", |a| set(a, false)),
    ("SETUNION", |a| set(a, true)),
];

fn equal(a: &Value, b: &Value) -> bool {
    compare_same_type(a, b) == Some(Ordering::Equal)
}

/// Two or more arrays, end to end.
fn concat(args: &Args) -> Option<Value> {
    if args.len() < 2 {
        return None;
    }
    let mut out = Vec::new();
    for i in 0..args.len() {
        let items = array(args, i)?;
        budget_ok(args.run(), arg(args, i)?, 0)?;
        out.extend(items.iter().cloned());
    }
    Some(Value::Array(out))
}

/// Whether `item` matches `needle`: equal, or with `partial` an object
/// that has every field of the object `needle`.
fn matches(item: &Value, needle: &Value, partial: bool) -> bool {
    match (item, needle) {
        (Value::Object(i), Value::Object(n)) if partial => {
            n.iter().all(|(k, v)| i.get(k).is_some_and(|x| equal(x, v)))
        }
        _ => equal(item, needle),
    }
}

fn contains(args: &Args) -> Option<Value> {
    if !(2..=3).contains(&args.len()) {
        return None;
    }
    let items = array(args, 0)?;
    let needle = arg(args, 1)?;
    let partial = flag(args, 2)?;
    Some(Value::Bool(
        items.iter().any(|item| matches(item, needle, partial)),
    ))
}

/// `ARRAY_CONTAINS_ANY` (`any`) or `_ALL`: an undefined value to look for
/// matches nothing and makes its own answer undefined, so ANY is true when
/// some defined value is found and ALL false when one is missing;
/// otherwise an undefined value leaves the result undefined.
fn contains_each(args: &[Option<Value>], any: bool) -> Option<Value> {
    let items = array(args, 0)?;
    if args.len() < 2 {
        return None;
    }
    let mut unknown = false;
    for needle in &args[1..] {
        match needle {
            None => unknown = true,
            Some(needle) => {
                let found = items.iter().any(|item| equal(item, needle));
                if found == any {
                    return Some(Value::Bool(any));
                }
            }
        }
    }
    (!unknown).then_some(Value::Bool(!any))
}

/// A sub-array from `start` (from the end when negative) of at most
/// `length` items (to the end when absent; none when negative).
fn slice(args: &Args) -> Option<Value> {
    if !(2..=3).contains(&args.len()) {
        return None;
    }
    let items = array(args, 0)?;
    let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
    let start = integer_part(num(args, 1)?);
    let start = if start < 0 {
        len.saturating_add(start).max(0)
    } else {
        start.min(len)
    };
    let end = match args.get(2) {
        None => len,
        Some(_) => start
            .saturating_add(integer_part(num(args, 2)?).max(0))
            .min(len),
    };
    let picked = Value::Array(items[start as usize..end as usize].to_vec());
    budget_ok(args.run(), &picked, 0)?;
    Some(picked)
}

/// A key under which equal values hash alike: numbers by value (`1` and
/// `1.0` alike), other values by their JSON text.
#[derive(PartialEq, Eq, Hash)]
enum Key {
    Number(u64),
    Text(String),
}

fn key(v: &Value) -> Key {
    match v.as_f64() {
        // -0.0 and 0.0 are equal: one key.
        Some(n) => Key::Number((n + 0.0).to_bits()),
        None => Key::Text(v.to_string()),
    }
}

/// `SetUnion` (`union`) or `SetIntersect`: without duplicates, in the order
/// of first appearance (a union the first array's, then the second's; an
/// intersection the second's).
fn set(args: &Args, union: bool) -> Option<Value> {
    if args.len() != 2 {
        return None;
    }
    let (first, second) = (array(args, 0)?, array(args, 1)?);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    if union {
        for v in first.iter().chain(second) {
            if seen.insert(key(v)) {
                out.push(v.clone());
            }
        }
    } else {
        // In the second array's order, as documented ([1, 2, "A", "B"]
        // and ["A", 1] intersect as ["A", 1]).
        let wanted: HashSet<Key> = first.iter().map(key).collect();
        for v in second {
            let k = key(v);
            if wanted.contains(&k) && seen.insert(k) {
                out.push(v.clone());
            }
        }
    }
    let out = Value::Array(out);
    budget_ok(args.run(), &out, 0)?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{run, U};
    use rstest::rstest;
    use serde_json::{json, Value};

    const NATO: [&str; 7] = [
        "Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf",
    ];

    #[rstest]
    // https://learn.microsoft.com/en-us/cosmos-db/query/array-slice
    #[case("ARRAY_SLICE", json!([NATO, 0]), Some(json!(NATO)))]
    #[case("ARRAY_SLICE", json!([NATO, 1]), Some(json!(NATO[1..])))]
    #[case("ARRAY_SLICE", json!([NATO, -1]), Some(json!(["Golf"])))]
    #[case("ARRAY_SLICE", json!([NATO, -2]), Some(json!(["Foxtrot", "Golf"])))]
    #[case("ARRAY_SLICE", json!([NATO, 0, 3]), Some(json!(["Alpha", "Bravo", "Charlie"])))]
    #[case("ARRAY_SLICE", json!([NATO, 0, 12]), Some(json!(NATO)))]
    #[case("ARRAY_SLICE", json!([NATO, 3, 5]), Some(json!(["Delta", "Echo", "Foxtrot", "Golf"])))]
    #[case("ARRAY_SLICE", json!([NATO, -2, 1]), Some(json!(["Foxtrot"])))]
    // Edge rows: bounds saturate, a negative length is empty, wrong types.
    #[case("ARRAY_SLICE", json!([NATO, -100]), Some(json!(NATO)))]
    #[case("ARRAY_SLICE", json!([NATO, 1e300, 1e300]), Some(json!([])))]
    #[case("ARRAY_SLICE", json!([NATO, -1e300, 1]), Some(json!(["Alpha"])))]
    #[case("ARRAY_SLICE", json!([NATO, 1, -1]), Some(json!([])))]
    #[case("ARRAY_SLICE", json!([NATO, 1.9, 1.9]), Some(json!(["Bravo"])))]
    #[case("ARRAY_SLICE", json!([NATO, "1"]), None)]
    #[case("ARRAY_SLICE", json!([NATO, 1, U]), None)]
    #[case("ARRAY_SLICE", json!(["abc", 1]), None)]
    #[case("ARRAY_SLICE", json!([[], 0]), Some(json!([])))]
    // https://learn.microsoft.com/en-us/cosmos-db/query/array-contains
    #[case("ARRAY_CONTAINS", json!([["coats", "jackets", "sweatshirts"], "coats"]), Some(json!(true)))]
    #[case("ARRAY_CONTAINS", json!([["coats", "jackets", "sweatshirts"], "hoodies"]), Some(json!(false)))]
    #[case("ARRAY_CONTAINS", json!([[{"category": "shirts", "color": "blue"}], {"category": "shirts", "color": "blue"}]), Some(json!(true)))]
    #[case("ARRAY_CONTAINS", json!([[{"category": "shirts", "color": "blue"}], {"category": "shirts"}]), Some(json!(false)))]
    #[case("ARRAY_CONTAINS", json!([[{"category": "shirts", "color": "blue"}], {"category": "shirts"}, true]), Some(json!(true)))]
    #[case("ARRAY_CONTAINS", json!([[{"category": "shirts", "color": "blue"}], {"category": "shorts", "color": "blue"}, true]), Some(json!(false)))]
    // Edge rows.
    #[case("ARRAY_CONTAINS", json!([[1, 2], 2.0]), Some(json!(true)))]
    #[case("ARRAY_CONTAINS", json!([[1, 2], "2"]), Some(json!(false)))]
    #[case("ARRAY_CONTAINS", json!([[1], U]), None)]
    #[case("ARRAY_CONTAINS", json!([[1], 1, "yes"]), None)]
    #[case("ARRAY_CONTAINS", json!(["abc", "a"]), None)]
    // https://learn.microsoft.com/en-us/cosmos-db/query/array-contains-any
    #[case("ARRAY_CONTAINS_ANY", json!([[1, true, "3", [1, 2, 3]], 1, true, "3", [1, 2, 3]]), Some(json!(true)))]
    #[case("ARRAY_CONTAINS_ANY", json!([[1, 2, 3, 4], 2, 3, 4, 5]), Some(json!(true)))]
    #[case("ARRAY_CONTAINS_ANY", json!([[1, 2, 3, 4], 1, U]), Some(json!(true)))]
    #[case("ARRAY_CONTAINS_ANY", json!([[1, 2, 3, 4], 5, 6, 7, 8]), Some(json!(false)))]
    #[case("ARRAY_CONTAINS_ANY", json!([[], 1, 2, 3]), Some(json!(false)))]
    #[case("ARRAY_CONTAINS_ANY", json!([[1, 2, 3, 4], 5, U]), None)]
    // https://learn.microsoft.com/en-us/cosmos-db/query/array-contains-all
    #[case("ARRAY_CONTAINS_ALL", json!([[1, true, "3", [1, 2, 3]], 1, true, "3", [1, 2, 3]]), Some(json!(true)))]
    #[case("ARRAY_CONTAINS_ALL", json!([[1, 2, 3, 4], 2, 3, 4, 5]), Some(json!(false)))]
    #[case("ARRAY_CONTAINS_ALL", json!([[1, 2, 3, 4], 1, U]), None)]
    #[case("ARRAY_CONTAINS_ALL", json!([[1, 2, 3, 4], 5, 6, 7, 8]), Some(json!(false)))]
    #[case("ARRAY_CONTAINS_ALL", json!([[], 1, 2, 3]), Some(json!(false)))]
    #[case("ARRAY_CONTAINS_ALL", json!([[1, 2, 3, 4], 5, U]), Some(json!(false)))]
    #[case("ARRAY_CONTAINS_ALL", json!([[1, 2]]), None)]
    // https://learn.microsoft.com/en-us/cosmos-db/query/setunion
    #[case("SETUNION", json!([[1, 2, 3, 4], [3, 4, 5, 6]]), Some(json!([1, 2, 3, 4, 5, 6])))]
    #[case("SETUNION", json!([[1, 2, 3, 4], []]), Some(json!([1, 2, 3, 4])))]
    #[case("SETUNION", json!([[1, 2, 3, 4], [1, 1, 1, 1]]), Some(json!([1, 2, 3, 4])))]
    #[case("SETUNION", json!([[1, 2, "A", "B"], ["A", 1]]), Some(json!([1, 2, "A", "B"])))]
    #[case(
        "SETUNION",
        json!([["Cutty Sark", "Horizon", "Russet", "Fuscous"], ["Fuscous", "Horizon", "Tacha"]]),
        Some(json!(["Cutty Sark", "Horizon", "Russet", "Fuscous", "Tacha"]))
    )]
    // Edge rows.
    #[case("SETUNION", json!([[1, 1.0, -0.0, 0], [{"a": 1}, {"a": 1}]]), Some(json!([1, -0.0, {"a": 1}])))]
    #[case("SETUNION", json!([[1], "a"]), None)]
    #[case("SETUNION", json!([[1], U]), None)]
    // https://learn.microsoft.com/en-us/cosmos-db/query/setintersect
    #[case("SETINTERSECT", json!([[1, 2, 3, 4], [3, 4, 5, 6]]), Some(json!([3, 4])))]
    #[case("SETINTERSECT", json!([[1, 2, 3, 4], []]), Some(json!([])))]
    #[case("SETINTERSECT", json!([[1, 2, 3, 4], [1, 1, 1, 1]]), Some(json!([1])))]
    #[case("SETINTERSECT", json!([[1, 2, 3, 4], ["A", "B"]]), Some(json!([])))]
    #[case("SETINTERSECT", json!([[1, 2, "A", "B"], ["A", 1]]), Some(json!(["A", 1])))]
    // Edge rows.
    #[case("SETINTERSECT", json!([[1, 1, 2, 2], [2, 1]]), Some(json!([2, 1])))]
    #[case("SETINTERSECT", json!([["A", 1, [1]], [[1], "a", 1.0]]), Some(json!([[1], 1.0])))]
    #[case("SETINTERSECT", json!([[1], 1]), None)]
    // https://learn.microsoft.com/en-us/cosmos-db/query/array-concat (at
    // least two arrays, as its syntax says).
    #[case("ARRAY_CONCAT", json!([["backpacks", "daypacks"], ["hippacks"]]), Some(json!(["backpacks", "daypacks", "hippacks"])))]
    // ARRAY_CONCAT and ARRAY_LENGTH: edge rows.
    #[case("ARRAY_CONCAT", json!([["A", "B"], [1, 2], [[true]]]), Some(json!(["A", "B", 1, 2, [true]])))]
    #[case("ARRAY_CONCAT", json!([[], []]), Some(json!([])))]
    #[case("ARRAY_CONCAT", json!([[1]]), None)]
    #[case("ARRAY_CONCAT", json!([[1], "2"]), None)]
    #[case("ARRAY_CONCAT", json!([[1], U]), None)]
    #[case("ARRAY_LENGTH", json!([[1, [2, 3]]]), Some(json!(2)))]
    #[case("ARRAY_LENGTH", json!([[]]), Some(json!(0)))]
    #[case("ARRAY_LENGTH", json!(["abc"]), None)]
    #[case("ARRAY_LENGTH", json!([U]), None)]
    fn arrays(#[case] name: &str, #[case] args: Value, #[case] expected: Option<Value>) {
        assert_eq!(run(name, args), expected);
    }
}
