//! Conversion functions of the string family: `StringToArray`,
//! `StringToBoolean`, `StringToNull`, `StringToNumber`, `StringToObject`
//! (the string is read as JSON, surrounding whitespace allowed, and must
//! be of the named type, otherwise undefined) and `ToString`.

use serde_json::Value;

use super::{arg, budget_ok, charge, finite, string, Args, Function};
use crate::protocol::json::{parse_bounded, JsonError};

pub const FUNCTIONS: &[(&str, Function)] = &[
    ("STRINGTOARRAY", |a| parse(a, Value::is_array)),
    ("STRINGTOBOOLEAN", |a| parse(a, Value::is_boolean)),
    ("STRINGTONULL", |a| parse(a, Value::is_null)),
    ("STRINGTONUMBER", |a| {
        // 1.000000 is the number 1 (integral values as integers).
        finite(parse(a, Value::is_number)?.as_f64()?)
    }),
    ("STRINGTOOBJECT", |a| parse(a, Value::is_object)),
    ("TOSTRING", to_string),
];

/// The JSON text of the only argument, if it is of the wanted type (and
/// within the nesting limit items have).
fn parse(args: &Args, wanted: fn(&Value) -> bool) -> Option<Value> {
    (args.len() == 1).then_some(())?;
    let text = string(args, 0)?;
    let value: Value = match parse_bounded(text.as_bytes()) {
        Ok(value) => value,
        Err(JsonError::TooDeep(_) | JsonError::Invalid(_)) => return None,
    };
    if !wanted(&value) {
        return None;
    }
    budget_ok(args.run(), &value, 0)?;
    Some(value)
}

/// A string as it is; any other value as its JSON text.
fn to_string(args: &Args) -> Option<Value> {
    (args.len() == 1).then_some(())?;
    match arg(args, 0)? {
        Value::String(s) => Some(Value::String(s.clone())),
        // A computed NaN or infinity, written as JavaScript writes it.
        other if super::super::number::is_non_finite(other) => {
            let n = super::super::number::read(other)?;
            Some(Value::from(if n.is_nan() {
                "NaN"
            } else if n > 0.0 {
                "Infinity"
            } else {
                "-Infinity"
            }))
        }
        other => {
            let text = other.to_string();
            charge(args.run(), text.len())?;
            Some(Value::String(text))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{run, U};
    use rstest::rstest;
    use serde_json::{json, Value};

    #[rstest]
    // https://learn.microsoft.com/en-us/cosmos-db/query/stringtonumber
    #[case("STRINGTONUMBER", json!(["100"]), Some(json!(100)))]
    #[case("STRINGTONUMBER", json!(["3.14"]), Some(json!(3.14)))]
    #[case("STRINGTONUMBER", json!(["   60   "]), Some(json!(60)))]
    #[case("STRINGTONUMBER", json!(["-1.79769e+308"]), Some(json!(-1.79769e308)))]
    #[case("STRINGTONUMBER", json!(["Hello"]), None)]
    #[case("STRINGTONUMBER", json!([U]), None)]
    #[case("STRINGTONUMBER", json!([null]), None)]
    // Edge rows.
    #[case("STRINGTONUMBER", json!(["1.000000"]), Some(json!(1)))]
    #[case("STRINGTONUMBER", json!(["1e400"]), None)]
    #[case("STRINGTONUMBER", json!(["0xF"]), None)]
    #[case("STRINGTONUMBER", json!(["\"99\""]), None)]
    #[case("STRINGTONUMBER", json!([""]), None)]
    #[case("STRINGTONUMBER", json!([42]), None)]
    // https://learn.microsoft.com/en-us/cosmos-db/query/stringtoboolean
    #[case("STRINGTOBOOLEAN", json!(["true"]), Some(json!(true)))]
    #[case("STRINGTOBOOLEAN", json!(["true  "]), Some(json!(true)))]
    #[case("STRINGTOBOOLEAN", json!(["  false"]), Some(json!(false)))]
    #[case("STRINGTOBOOLEAN", json!(["  false  "]), Some(json!(false)))]
    #[case("STRINGTOBOOLEAN", json!([true]), None)]
    #[case("STRINGTOBOOLEAN", json!([U]), None)]
    #[case("STRINGTOBOOLEAN", json!([null]), None)]
    // https://learn.microsoft.com/en-us/cosmos-db/query/stringtoarray
    #[case("STRINGTOARRAY", json!(["[]"]), Some(json!([])))]
    #[case("STRINGTOARRAY", json!(["[ \"coats\", \"gloves\", \"hats\" ]"]), Some(json!(["coats", "gloves", "hats"])))]
    #[case(
        "STRINGTOARRAY",
        json!(["[ { \"types\": [ \"coats\", \"gloves\" ] }, [ \"hats\" ], 76, false, null ]"]),
        Some(json!([{"types": ["coats", "gloves"]}, ["hats"], 76, false, null]))
    )]
    #[case("STRINGTOARRAY", json!(["[ [ \"coats\", \"gloves\" ], [ \"hats\" ] ]"]), Some(json!([["coats", "gloves"], ["hats"]])))]
    #[case("STRINGTOARRAY", json!(["[ 'coats', 'gloves', 'hats' ]"]), None)]
    #[case("STRINGTOARRAY", json!([U]), None)]
    #[case("STRINGTOARRAY", json!([null]), None)]
    // https://learn.microsoft.com/en-us/cosmos-db/query/stringtonull
    #[case("STRINGTONULL", json!(["null"]), Some(json!(null)))]
    #[case("STRINGTONULL", json!(["null  "]), Some(json!(null)))]
    #[case("STRINGTONULL", json!(["  null"]), Some(json!(null)))]
    #[case("STRINGTONULL", json!(["  null  "]), Some(json!(null)))]
    #[case("STRINGTONULL", json!(["NULL"]), None)]
    #[case("STRINGTONULL", json!(["Null"]), None)]
    #[case("STRINGTONULL", json!([null]), None)]
    #[case("STRINGTONULL", json!([U]), None)]
    // https://learn.microsoft.com/en-us/cosmos-db/query/stringtoobject
    #[case("STRINGTOOBJECT", json!(["{}"]), Some(json!({})))]
    #[case("STRINGTOOBJECT", json!(["{\"isAvailable\": true}"]), Some(json!({"isAvailable": true})))]
    #[case("STRINGTOOBJECT", json!(["{\"division\": {\"name\": \"Sales\"}}"]), Some(json!({"division": {"name": "Sales"}})))]
    #[case("STRINGTOOBJECT", json!(["{'price': 27.55}"]), None)]
    // StringToNull, StringToObject
    // (https://learn.microsoft.com/en-us/cosmos-db/query/stringtoarray and
    // its siblings): JSON of the named type only. Edge rows.
    #[case("STRINGTOARRAY", json!([" [1, 2, [\"a\", {\"b\": null}]] "]), Some(json!([1, 2, ["a", {"b": null}]])))]
    #[case("STRINGTOARRAY", json!(["[1,2,3"]), None)]
    #[case("STRINGTOARRAY", json!(["['a']"]), None)]
    #[case("STRINGTOARRAY", json!(["{}"]), None)]
    #[case("STRINGTOARRAY", json!([[1]]), None)]
    #[case("STRINGTOARRAY", json!(["[".repeat(200) + &"]".repeat(200)]), None)]
    #[case("STRINGTOBOOLEAN", json!(["TRUE"]), None)]
    #[case("STRINGTOBOOLEAN", json!(["\"true\""]), None)]
    #[case("STRINGTONULL", json!(["undefined"]), None)]
    #[case("STRINGTOOBJECT", json!(["{\"a\": [1, {\"b\": \"c\"}]}"]), Some(json!({"a": [1, {"b": "c"}]})))]
    #[case("STRINGTOOBJECT", json!(["{a: 1}"]), None)]
    #[case("STRINGTOOBJECT", json!(["[]"]), None)]
    // https://learn.microsoft.com/en-us/cosmos-db/query/tostring (NaN and
    // Infinity cannot be arguments here: JSON has neither).
    #[case("TOSTRING", json!([125]), Some(json!("125")))]
    #[case("TOSTRING", json!([0.1234]), Some(json!("0.1234")))]
    #[case("TOSTRING", json!([false]), Some(json!("false")))]
    #[case("TOSTRING", json!([[1, 2, 3]]), Some(json!("[1,2,3]")))]
    #[case("TOSTRING", json!([{"department": "Bicycles"}]), Some(json!("{\"department\":\"Bicycles\"}")))]
    #[case("TOSTRING", json!(["Hello World"]), Some(json!("Hello World")))]
    // Edge rows.
    #[case("TOSTRING", json!([1]), Some(json!("1")))]
    #[case("TOSTRING", json!([-3.5]), Some(json!("-3.5")))]
    #[case("TOSTRING", json!(["text"]), Some(json!("text")))]
    #[case("TOSTRING", json!([true]), Some(json!("true")))]
    #[case("TOSTRING", json!([null]), Some(json!("null")))]
    #[case("TOSTRING", json!([[1, "a"]]), Some(json!("[1,\"a\"]")))]
    #[case("TOSTRING", json!([{"a": 1}]), Some(json!("{\"a\":1}")))]
    #[case("TOSTRING", json!([U]), None)]
    #[case("TOSTRING", json!([crate::data::query::number::to_value(f64::NEG_INFINITY)]), Some(json!("-Infinity")))]
    #[case("TOSTRING", json!([crate::data::query::number::to_value(f64::NAN)]), Some(json!("NaN")))]
    #[case("TOSTRING", json!([1, 2]), None)]
    #[allow(clippy::approx_constant)] // "3.14" is the documented row, not π.
    fn conversions(#[case] name: &str, #[case] args: Value, #[case] expected: Option<Value>) {
        assert_eq!(run(name, args), expected);
    }
}
