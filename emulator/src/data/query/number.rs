//! Numbers as the query engine computes them: doubles, where a division by
//! zero or `SQRT(-1)` gives an infinity or NaN. JSON holds neither, so the
//! engine carries them in a marker value while it evaluates: they compare
//! and compute as numbers (`7 / 0 > 1000000` is true,
//! `IS_FINITE_NUMBER(8.9 / 0.0)` false, as documented), and a query whose
//! result would hold one is refused with 400 (substatus 4001), as the
//! service's engine refuses it (measured against Microsoft's emulator:
//! "cannot be represented in JSON").
//!
//! The marker is an object with one property whose name no JSON a client
//! sends is expected to use; the store never holds one, because results
//! that would carry it are refused.

use serde_json::{Map, Value};

/// The one property of the marker; its value names the number.
const MARKER: &str = "\u{0}cosmos-emulator:non-finite-number";

/// A computed number as a value: JSON's for finite ones (integral values as
/// integers), the marker for NaN and the infinities.
pub fn to_value(n: f64) -> Value {
    if n.is_finite() {
        if n.fract() == 0.0 && n.abs() < 9.0e15 {
            return Value::from(n as i64);
        }
        if let Some(number) = serde_json::Number::from_f64(n) {
            return Value::Number(number);
        }
    }
    let name = if n.is_nan() {
        "NaN"
    } else if n > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    };
    let mut marker = Map::new();
    marker.insert(MARKER.to_string(), Value::from(name));
    Value::Object(marker)
}

/// The number a value holds: a JSON number or a marked non-finite one.
pub fn read(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::Object(map) if map.len() == 1 => match map.get(MARKER)?.as_str()? {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `value` is a number, finite or not.
pub fn is_number(value: &Value) -> bool {
    read(value).is_some()
}

/// Whether `value` is a marked non-finite number.
pub fn is_non_finite(value: &Value) -> bool {
    value.is_object() && read(value).is_some()
}

/// Whether `value` holds a non-finite number anywhere, so cannot be written
/// as JSON. Walks arrays and objects without recursion.
pub fn holds_non_finite(value: &Value) -> bool {
    let mut pending = vec![value];
    while let Some(v) = pending.pop() {
        match v {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => {
                if is_non_finite(v) {
                    return true;
                }
                pending.extend(map.values());
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn non_finite_numbers_read_back_and_are_found_anywhere() {
        for n in [f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(read(&to_value(n)), Some(n));
        }
        assert!(read(&to_value(f64::NAN)).unwrap().is_nan());
        assert_eq!(to_value(2.0), json!(2));
        assert_eq!(to_value(2.5), json!(2.5));
        assert!(!is_non_finite(&json!({"a": 1})));
        assert!(!holds_non_finite(&json!({"a": [1, {"b": "Infinity"}]})));
        assert!(holds_non_finite(
            &json!({"a": [1, {"b": to_value(f64::NAN)}]})
        ));
        assert!(is_number(&to_value(f64::INFINITY)) && is_number(&json!(1)));
    }
}
