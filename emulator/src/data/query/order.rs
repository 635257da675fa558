//! How values compare: the language's comparisons of two values of one
//! type (`=`, `<`, `BETWEEN`, `IN`, `ARRAY_CONTAINS`...), undefined across
//! types, and the total order ORDER BY sorts by (undefined, null,
//! booleans, numbers, strings, arrays, objects), which the index keeps
//! too (`data/index/key.rs`). A leaf the evaluator and the functions share.

use std::cmp::Ordering;

use serde_json::Value;

use super::number as num;

/// Order of two values of the same type; `None` (undefined) across types.
pub fn compare_same_type(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Null, Value::Null) => Some(Ordering::Equal),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        (Value::Number(x), Value::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        // A computed NaN or infinity against a number.
        _ if num::is_non_finite(a) || num::is_non_finite(b) => {
            num::read(a)?.partial_cmp(&num::read(b)?)
        }
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_)) => {
            (a == b).then_some(Ordering::Equal)
        }
        _ => None,
    }
}

/// The total order ORDER BY uses: undefined, null, booleans, numbers, strings, then the rest.
pub fn sort_order(a: &Option<Value>, b: &Option<Value>) -> Ordering {
    fn rank(v: &Option<Value>) -> u8 {
        match v {
            None => 0,
            Some(Value::Null) => 1,
            Some(Value::Bool(_)) => 2,
            Some(Value::Number(_)) => 3,
            Some(Value::String(_)) => 4,
            Some(Value::Array(_)) => 5,
            Some(Value::Object(_)) => 6,
        }
    }
    rank(a).cmp(&rank(b)).then_with(|| match (a, b) {
        (Some(x), Some(y)) => compare_same_type(x, y).unwrap_or(Ordering::Equal),
        _ => Ordering::Equal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The index's order (`data/index/key.rs`) is ORDER BY's, for every pair of these values.
    #[test]
    fn the_order_is_order_by_s() {
        let values = [
            None,
            Some(json!(null)),
            Some(json!(false)),
            Some(json!(true)),
            Some(json!(-2.5)),
            Some(json!(0)),
            Some(json!(-0.0)),
            Some(json!(1)),
            Some(json!(1.0)),
            Some(json!(1e300)),
            Some(json!("")),
            Some(json!("B")),
            Some(json!("a")),
            Some(json!("é")),
            Some(json!([1])),
            Some(json!([])),
            Some(json!({"a": 1})),
            Some(json!({})),
        ];
        for a in &values {
            for b in &values {
                let by_index = crate::data::index::IndexKey::of(a.as_ref())
                    .cmp(&crate::data::index::IndexKey::of(b.as_ref()));
                assert_eq!(by_index, sort_order(a, b), "{a:?} vs {b:?}");
            }
        }
    }
}
