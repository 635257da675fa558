//! The 64-bit integer helpers of the mathematical family: `IntAdd`,
//! `IntSub`, `IntMul`, `IntDiv`, `IntMod`, `IntBitAnd`, `IntBitOr`,
//! `IntBitXor`, `IntBitNot`, `IntBitLeftShift`, `IntBitRightShift`.
//!
//! The documentation: both arguments must be integers (otherwise the result
//! is undefined), the operations are on 64-bit signed integers, and
//! overflow wraps around as in C++. Here every operation is Rust's wrapping
//! one, so nothing overflows or panics; the cases C++ leaves undefined are
//! decided as x64 hardware does them: a division or remainder by zero is
//! undefined (the documented `IntDiv(10, 0)`), `i64::MIN / -1` wraps to
//! `i64::MIN`, and a shift count is taken modulo 64.

use serde_json::Value;

use super::{arg, Function};

pub const FUNCTIONS: &[(&str, Function)] = &[
    ("INTADD", |a| binary(a, i64::wrapping_add)),
    ("INTSUB", |a| binary(a, i64::wrapping_sub)),
    ("INTMUL", |a| binary(a, i64::wrapping_mul)),
    ("INTDIV", |a| {
        checked(a, i64::checked_div, i64::wrapping_div)
    }),
    ("INTMOD", |a| {
        checked(a, i64::checked_rem, i64::wrapping_rem)
    }),
    ("INTBITAND", |a| binary(a, |x, y| x & y)),
    ("INTBITOR", |a| binary(a, |x, y| x | y)),
    ("INTBITXOR", |a| binary(a, |x, y| x ^ y)),
    ("INTBITNOT", |a| {
        (a.len() == 1).then_some(())?;
        Some(Value::from(!integer(a, 0)?))
    }),
    ("INTBITLEFTSHIFT", |a| {
        binary(a, |x, n| x.wrapping_shl((n & 63) as u32))
    }),
    ("INTBITRIGHTSHIFT", |a| {
        binary(a, |x, n| x.wrapping_shr((n & 63) as u32))
    }),
];

/// An argument that is a 64-bit integer (see `IS_INTEGER`); a double
/// of 2^63 (how the query text writes `9223372036854775807`) saturates.
fn integer(args: &[Option<Value>], i: usize) -> Option<i64> {
    let v = arg(args, i)?;
    if !super::type_check::is_integer(v) {
        return None;
    }
    v.as_i64().or_else(|| v.as_f64().map(|f| f as i64))
}

fn binary(args: &[Option<Value>], f: fn(i64, i64) -> i64) -> Option<Value> {
    (args.len() == 2).then_some(())?;
    Some(Value::from(f(integer(args, 0)?, integer(args, 1)?)))
}

/// Division and remainder: undefined by zero, wrapping otherwise.
fn checked(
    args: &[Option<Value>],
    check: fn(i64, i64) -> Option<i64>,
    wrap: fn(i64, i64) -> i64,
) -> Option<Value> {
    (args.len() == 2).then_some(())?;
    let (x, y) = (integer(args, 0)?, integer(args, 1)?);
    if y == 0 {
        return None;
    }
    Some(Value::from(check(x, y).unwrap_or_else(|| wrap(x, y))))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{run, U};
    use rstest::rstest;
    use serde_json::{json, Value};

    // The reference pages, e.g. https://learn.microsoft.com/en-us/cosmos-db/query/intadd,
    // .../intdiv, .../intmod, .../intbitleftshift, .../intbitrightshift;
    // the rows after "Edge rows" are not from the pages.
    #[rstest]
    #[case("INTADD", json!([20, 10]), Some(json!(30)))]
    #[case("INTADD", json!([20, 0]), Some(json!(20)))]
    #[case("INTADD", json!([20, 0.10]), None)]
    #[case("INTDIV", json!([10, 2]), Some(json!(5)))]
    #[case("INTDIV", json!([10, -2]), Some(json!(-5)))]
    #[case("INTDIV", json!([-10, -2]), Some(json!(5)))]
    #[case("INTDIV", json!([10, 10]), Some(json!(1)))]
    #[case("INTDIV", json!([10, 0]), None)]
    #[case("INTDIV", json!([10, 0.1]), None)]
    #[case("INTMOD", json!([12, 5]), Some(json!(2)))]
    #[case("INTMOD", json!([12, -5]), Some(json!(2)))]
    #[case("INTMOD", json!([-12, -5]), Some(json!(-2)))]
    #[case("INTMOD", json!([15, 5]), Some(json!(0)))]
    #[case("INTMOD", json!([12, 0]), None)]
    #[case("INTMOD", json!([12, 0.2]), None)]
    #[case("INTBITLEFTSHIFT", json!([16, 4]), Some(json!(256)))]
    #[case("INTBITLEFTSHIFT", json!([16, 0.4]), None)]
    #[case("INTBITRIGHTSHIFT", json!([16, 4]), Some(json!(1)))]
    #[case("INTBITRIGHTSHIFT", json!([16, 0.4]), None)]
    // .../intsub, .../intmul, .../intbitand, .../intbitor, .../intbitxor, .../intbitnot
    #[case("INTSUB", json!([25, 50]), Some(json!(-25)))]
    #[case("INTSUB", json!([25, 15]), Some(json!(10)))]
    #[case("INTSUB", json!([25, 25]), Some(json!(0)))]
    #[case("INTSUB", json!([25, 0]), Some(json!(25)))]
    #[case("INTSUB", json!([25, 2.5]), None)]
    #[case("INTMUL", json!([5, 2]), Some(json!(10)))]
    #[case("INTMUL", json!([5, -2]), Some(json!(-10)))]
    #[case("INTMUL", json!([-5, -2]), Some(json!(10)))]
    #[case("INTMUL", json!([5, 5]), Some(json!(25)))]
    #[case("INTMUL", json!([5, 0]), Some(json!(0)))]
    #[case("INTMUL", json!([5, 0.5]), None)]
    #[case("INTBITAND", json!([15, 25]), Some(json!(9)))]
    #[case("INTBITAND", json!([15, 0]), Some(json!(0)))]
    #[case("INTBITAND", json!([15, 15]), Some(json!(15)))]
    #[case("INTBITAND", json!([15, 1.5]), None)]
    #[case("INTBITOR", json!([56, 100]), Some(json!(124)))]
    #[case("INTBITOR", json!([56, 56]), Some(json!(56)))]
    #[case("INTBITOR", json!([56, 0]), Some(json!(56)))]
    #[case("INTBITOR", json!([56, 0.1]), None)]
    #[case("INTBITXOR", json!([56, 100]), Some(json!(92)))]
    #[case("INTBITXOR", json!([56, 56]), Some(json!(0)))]
    #[case("INTBITXOR", json!([56, 0]), Some(json!(56)))]
    #[case("INTBITXOR", json!([56, 0.1]), None)]
    #[case("INTBITNOT", json!([65]), Some(json!(-66)))]
    #[case("INTBITNOT", json!([0]), Some(json!(-1)))]
    #[case("INTBITNOT", json!([0.1]), None)]
    // Edge rows: wrap-around, the cases C++ leaves undefined, wrong types.
    #[case("INTADD", json!([i64::MAX, 1]), Some(json!(i64::MIN)))]
    #[case("INTSUB", json!([i64::MIN, 1]), Some(json!(i64::MAX)))]
    #[case("INTMUL", json!([i64::MAX, 2]), Some(json!(-2)))]
    #[case("INTDIV", json!([i64::MIN, -1]), Some(json!(i64::MIN)))]
    #[case("INTMOD", json!([i64::MIN, -1]), Some(json!(0)))]
    #[case("INTDIV", json!([9223372036854775807.0_f64, 1]), Some(json!(i64::MAX)))]
    #[case("INTADD", json!([18446744073709551615_u64, 1]), None)]
    #[case("INTADD", json!([1e300, 1]), None)]
    #[case("INTADD", json!(["1", 1]), None)]
    #[case("INTADD", json!([1, U]), None)]
    #[case("INTADD", json!([1]), None)]
    #[case("INTADD", json!([2.0, 3.0]), Some(json!(5)))]
    #[case("INTBITNOT", json!([i64::MIN]), Some(json!(i64::MAX)))]
    #[case("INTBITNOT", json!([0.5]), None)]
    #[case("INTBITNOT", json!([1, 2]), None)]
    #[case("INTBITLEFTSHIFT", json!([1, 63]), Some(json!(i64::MIN)))]
    #[case("INTBITLEFTSHIFT", json!([1, 64]), Some(json!(1)))]
    #[case("INTBITLEFTSHIFT", json!([1, -1]), Some(json!(i64::MIN)))]
    #[case("INTBITRIGHTSHIFT", json!([-16, 2]), Some(json!(-4)))]
    #[case("INTBITRIGHTSHIFT", json!([i64::MIN, i64::MAX]), Some(json!(-1)))]
    fn integers(#[case] name: &str, #[case] args: Value, #[case] expected: Option<Value>) {
        assert_eq!(run(name, args), expected);
    }
}
