//! Type checking functions: `IS_ARRAY`, `IS_BOOL`, `IS_DEFINED`,
//! `IS_FINITE_NUMBER`, `IS_INTEGER`, `IS_NULL`, `IS_NUMBER`, `IS_OBJECT`,
//! `IS_PRIMITIVE`, `IS_STRING`. Each answers a boolean for any argument,
//! `false` for `undefined`. `IS_BOOLEAN` is `IS_BOOL` under the name the
//! Java SDK writes into the query it sends to resume an `ORDER BY` from a
//! continuation (the types that sort past the last value: `IS_BOOLEAN`
//! among `IS_NULL`, `IS_NUMBER`, `IS_STRING`...); the service runs that
//! query, so it knows the name.

use serde_json::Value;

use super::super::number;
use super::{arg, Function};

pub const FUNCTIONS: &[(&str, Function)] = &[
    ("IS_ARRAY", |a| is(a, Value::is_array)),
    ("IS_BOOL", |a| is(a, Value::is_boolean)),
    ("IS_BOOLEAN", |a| is(a, Value::is_boolean)),
    ("IS_DEFINED", |a| Some(Value::Bool(arg(a, 0).is_some()))),
    // A computed NaN or infinity is a number, but not a finite one.
    ("IS_FINITE_NUMBER", |a| {
        is(a, |v| number::read(v).is_some_and(f64::is_finite))
    }),
    ("IS_INTEGER", |a| is(a, is_integer)),
    ("IS_NULL", |a| is(a, Value::is_null)),
    ("IS_NUMBER", |a| is(a, number::is_number)),
    ("IS_OBJECT", |a| {
        is(a, |v| v.is_object() && !number::is_non_finite(v))
    }),
    ("IS_PRIMITIVE", |a| {
        is(a, |v| {
            !v.is_array() && (!v.is_object() || number::is_non_finite(v))
        })
    }),
    ("IS_STRING", |a| is(a, Value::is_string)),
];

fn is(args: &[Option<Value>], test: impl Fn(&Value) -> bool) -> Option<Value> {
    Some(Value::Bool(arg(args, 0).is_some_and(test)))
}

/// A 64-bit signed integer. The query text's numbers are doubles, so the
/// documented `9223372036854775807` arrives as 2^63: a double counts when
/// it is integral and within [-2^63, 2^63]; an exact integer (a parameter,
/// an item) counts when it fits `i64`.
pub fn is_integer(v: &Value) -> bool {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    match v {
        Value::Number(n) if n.is_i64() => true,
        Value::Number(n) if n.is_u64() => false,
        Value::Number(n) => n
            .as_f64()
            .is_some_and(|f| f.fract() == 0.0 && (-TWO_63..=TWO_63).contains(&f)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{run, U};
    use rstest::rstest;
    use serde_json::{json, Value};

    // https://learn.microsoft.com/en-us/cosmos-db/query/is-integer (its five
    // rows first), is-bool and is-finite-number as marked; the other rows
    // are edge rows.
    #[rstest]
    #[case("IS_INTEGER", json!([3454.123]), false)]
    #[case("IS_INTEGER", json!([5523432]), true)]
    #[case("IS_INTEGER", json!([-9223372036854775808.0_f64]), true)]
    #[case("IS_INTEGER", json!([9223372036854775807.0_f64]), true)]
    #[case("IS_INTEGER", json!([18446744073709551615.0_f64]), false)]
    #[case("IS_INTEGER", json!([18446744073709551615_u64]), false)]
    #[case("IS_INTEGER", json!([i64::MAX]), true)]
    #[case("IS_INTEGER", json!(["1"]), false)]
    #[case("IS_INTEGER", json!([U]), false)]
    #[case("IS_ARRAY", json!([[]]), true)]
    #[case("IS_ARRAY", json!([{}]), false)]
    // https://learn.microsoft.com/en-us/cosmos-db/query/is-bool
    #[case("IS_BOOL", json!([true]), true)]
    #[case("IS_BOOL", json!([65]), false)]
    #[case("IS_BOOL", json!(["AdventureWorks"]), false)]
    #[case("IS_BOOL", json!([null]), false)]
    #[case("IS_BOOL", json!([{"size": "small"}]), false)]
    #[case("IS_BOOL", json!([[25344, 82947]]), false)]
    #[case("IS_BOOL", json!([U]), false)]
    #[case("IS_BOOLEAN", json!([false]), true)]
    #[case("IS_BOOLEAN", json!([0]), false)]
    #[case("IS_BOOLEAN", json!([null]), false)]
    #[case("IS_BOOLEAN", json!([U]), false)]
    #[case("IS_DEFINED", json!([null]), true)]
    #[case("IS_DEFINED", json!([U]), false)]
    #[case("IS_DEFINED", json!([]), false)]
    // https://learn.microsoft.com/en-us/cosmos-db/query/is-finite-number:
    // 8.9 / 0.0 and SQRT(-1.0) evaluate to undefined here (JSON holds
    // neither infinity nor NaN), so their rows pass undefined.
    #[case("IS_FINITE_NUMBER", json!([1234.567]), true)]
    #[case("IS_FINITE_NUMBER", json!([U]), false)]
    #[case("IS_FINITE_NUMBER", json!([1.5]), true)]
    #[case("IS_FINITE_NUMBER", json!(["1"]), false)]
    #[case("IS_FINITE_NUMBER", json!([U]), false)]
    #[case("IS_NULL", json!([null]), true)]
    #[case("IS_NULL", json!([U]), false)]
    #[case("IS_NUMBER", json!([-0.5]), true)]
    #[case("IS_NUMBER", json!(["12"]), false)]
    #[case("IS_OBJECT", json!([{"a": 1}]), true)]
    #[case("IS_OBJECT", json!([null]), false)]
    #[case("IS_PRIMITIVE", json!(["a"]), true)]
    #[case("IS_PRIMITIVE", json!([null]), true)]
    #[case("IS_PRIMITIVE", json!([[1]]), false)]
    #[case("IS_PRIMITIVE", json!([U]), false)]
    #[case("IS_STRING", json!([""]), true)]
    #[case("IS_STRING", json!([1]), false)]
    fn type_checks(#[case] name: &str, #[case] args: Value, #[case] expected: bool) {
        assert_eq!(run(name, args), Some(Value::Bool(expected)));
    }
}
