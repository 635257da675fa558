//! Mathematical functions on doubles: `ABS`, `ACOS`, `ASIN`, `ATAN`,
//! `ATN2`, `CEILING`, `COS`, `COT`, `DEGREES`, `EXP`, `FLOOR`, `LOG`,
//! `LOG10`, `PI`, `POWER`, `RADIANS`, `ROUND`, `SIGN`, `SIN`, `SQRT`,
//! `SQUARE`, `TAN`, `TRUNC` and `NumberBin`. The 64-bit integer helpers
//! (`IntAdd`, ...) are in `integer.rs`. A result that is not a finite
//! number (`LOG(0)`, `SQRT(-1)`, `POWER(10, 400)`) is undefined: JSON has
//! no NaN or infinity.

use serde_json::Value;

use super::{finite, num, Args, Function};

pub const FUNCTIONS: &[(&str, Function)] = &[
    ("ABS", |a| unary(a, f64::abs)),
    ("ACOS", |a| unary(a, f64::acos)),
    ("ASIN", |a| unary(a, f64::asin)),
    ("ATAN", |a| unary(a, f64::atan)),
    ("ATN2", |a| binary(a, f64::atan2)),
    ("CEILING", |a| unary(a, f64::ceil)),
    ("COS", |a| unary(a, f64::cos)),
    ("COT", |a| unary(a, |x| 1.0 / x.tan())),
    ("DEGREES", |a| unary(a, f64::to_degrees)),
    ("EXP", |a| unary(a, f64::exp)),
    ("FLOOR", |a| unary(a, f64::floor)),
    ("LOG", log),
    ("LOG10", |a| unary(a, f64::log10)),
    ("PI", |a| {
        a.is_empty().then(|| finite(std::f64::consts::PI))?
    }),
    ("POWER", |a| binary(a, f64::powf)),
    ("RADIANS", |a| unary(a, f64::to_radians)),
    // Midpoints round away from zero, as documented (and as f64::round does).
    ("ROUND", |a| unary(a, f64::round)),
    ("SIGN", |a| {
        unary(a, |x| if x == 0.0 { 0.0 } else { x.signum() })
    }),
    ("SIN", |a| unary(a, f64::sin)),
    ("SQRT", |a| unary(a, f64::sqrt)),
    ("SQUARE", |a| unary(a, |x| x * x)),
    ("TAN", |a| unary(a, f64::tan)),
    ("TRUNC", |a| unary(a, f64::trunc)),
    ("NUMBERBIN", number_bin),
];

fn unary(args: &[Option<Value>], f: fn(f64) -> f64) -> Option<Value> {
    (args.len() == 1).then_some(())?;
    finite(f(num(args, 0)?))
}

fn binary(args: &[Option<Value>], f: fn(f64, f64) -> f64) -> Option<Value> {
    (args.len() == 2).then_some(())?;
    finite(f(num(args, 0)?, num(args, 1)?))
}

/// The natural logarithm, or the logarithm in the base given second. Bases
/// 10 and 2 use the exact functions: the documented `LOG(2, 10)` is
/// 0.3010299956639812, which `ln 2 / ln 10` misses by one unit in the last
/// place.
fn log(args: &Args) -> Option<Value> {
    match args.len() {
        1 => finite(num(args, 0)?.ln()),
        2 => {
            let (x, base) = (num(args, 0)?, num(args, 1)?);
            finite(if base == 10.0 {
                x.log10()
            } else if base == 2.0 {
                x.log2()
            } else {
                x.ln() / base.ln()
            })
        }
        _ => None,
    }
}

/// The value rounded down to a multiple of the bin size (1 by default);
/// undefined for a bin size of 0.
fn number_bin(args: &Args) -> Option<Value> {
    if args.is_empty() || args.len() > 2 {
        return None;
    }
    let x = num(args, 0)?;
    let bin = if args.len() == 2 { num(args, 1)? } else { 1.0 };
    if bin == 0.0 {
        return None;
    }
    let bins = (x / bin).floor();
    // 377 * 0.1 is 37.7 but 3775 * 0.01 is 37.75000000000001 in doubles:
    // divide by the bin's reciprocal when it is integral, as a decimal bin
    // size means.
    let inverse = 1.0 / bin;
    let binned = if inverse.abs() > 1.0 && inverse.round() == inverse {
        bins / inverse
    } else {
        bins * bin
    };
    finite(binned)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{run, U};
    use rstest::rstest;
    use serde_json::{json, Value};
    use std::f64::consts::PI;

    /// Numbers are compared as doubles (`1` and `1.0` alike; NaN as NaN).
    fn check(name: &str, args: Value, expected: Option<f64>) {
        let got = run(name, args.clone())
            .map(|v| crate::data::query::number::read(&v).expect("a number"));
        let same = match (got, expected) {
            (Some(g), Some(e)) if g.is_nan() && e.is_nan() => true,
            _ => got == expected,
        };
        assert!(same, "{name}{args}: got {got:?}, expected {expected:?}");
    }

    // Rows from the documented examples of
    // https://learn.microsoft.com/en-us/cosmos-db/query/<name> for ABS, ACOS,
    // ATAN, ATN2 (ATN2(y, x)), CEILING, COS, COT, DEGREES, EXP, FLOOR, LOG,
    // LOG10, POWER, RADIANS, ROUND (with the midpoints of its remarks), SIGN,
    // SQRT, SQUARE, TAN, TRUNC and NUMBERBIN (.../numberbin); the ASIN page's
    // example calls ACOS, so ASIN has edge rows only. The rows after "Edge
    // rows", and those of PI, SIN and ASIN, are computed from each
    // function's definition.
    #[rstest]
    #[case("ABS", json!([-1]), Some(1.0))]
    #[case("ABS", json!([0]), Some(0.0))]
    #[case("ABS", json!([1]), Some(1.0))]
    #[case("ACOS", json!([-1]), Some(PI))]
    #[case("ASIN", json!([-1]), Some(-PI / 2.0))]
    #[case("ATAN", json!([-45.01]), Some(-1.5485826962062663))]
    #[case("ATN2", json!([35.175643, 129.44]), Some(0.265344532064832))]
    #[case("CEILING", json!([123.45]), Some(124.0))]
    #[case("CEILING", json!([-45.72]), Some(-45.0))]
    #[case("CEILING", json!([0]), Some(0.0))]
    #[case("DEGREES", json!([1.5707963267948966]), Some(90.0))]
    #[case("DEGREES", json!([3.141592653589793]), Some(180.0))]
    #[case("DEGREES", json!([4.71238898038469]), Some(270.0))]
    #[case("DEGREES", json!([6.283185307179586]), Some(360.0))]
    #[case("RADIANS", json!([90]), Some(1.5707963267948966))]
    #[case("RADIANS", json!([180]), Some(3.141592653589793))]
    #[case("RADIANS", json!([270]), Some(4.71238898038469))]
    #[case("RADIANS", json!([360]), Some(6.283185307179586))]
    #[case("COS", json!([14.78]), Some(-0.5994654261946543))]
    #[case("COT", json!([124.1332]), Some(-0.040311998371148884))]
    #[case("TAN", json!([124.1332]), Some(-24.80651023035602))]
    #[case("TAN", json!([PI / 2.0]), Some(16331239353195370.0))]
    #[case("SQRT", json!([0]), Some(0.0))]
    #[case("SQRT", json!([4]), Some(2.0))]
    #[case("SQRT", json!([17]), Some(4.123105625617661))]
    #[case("SQRT", json!([25]), Some(5.0))]
    #[case("SIGN", json!([-1]), Some(-1.0))]
    #[case("SIGN", json!([1]), Some(1.0))]
    #[case("FLOOR", json!([62.6]), Some(62.0))]
    #[case("FLOOR", json!([-145.12]), Some(-146.0))]
    #[case("FLOOR", json!([0.2989]), Some(0.0))]
    #[case("FLOOR", json!([0.0]), Some(0.0))]
    #[case("FLOOR", json!([null]), None)]
    #[case("LOG10", json!([5]), Some(0.6989700043360189))]
    #[case("LOG10", json!([2]), Some(0.3010299956639812))]
    #[case("LOG10", json!([100]), Some(2.0))]
    #[case("LOG", json!([5]), Some(1.6094379124341003))]
    #[case("LOG", json!([2, 10]), Some(0.3010299956639812))]
    #[case("LOG", json!([8, 2]), Some(3.0))]
    #[case("LOG", json!([81, 3]), Some(81f64.ln() / 3f64.ln()))]
    #[case("EXP", json!([0]), Some(1.0))]
    #[case("EXP", json!([10]), Some(22026.465794806718))]
    #[case("EXP", json!([20]), Some(485165195.4097903))]
    #[case("PI", json!([]), Some(PI))]
    #[case("POWER", json!([1, 1]), Some(1.0))]
    #[case("POWER", json!([2, 2]), Some(4.0))]
    #[case("POWER", json!([3, 3]), Some(27.0))]
    #[case("POWER", json!([4, 4]), Some(256.0))]
    #[case("POWER", json!([5, 5]), Some(3125.0))]
    #[case("POWER", json!([0, 2]), Some(0.0))]
    #[case("POWER", json!([null, 3]), None)]
    #[case("POWER", json!([2, null]), None)]
    #[case("POWER", json!([2, 3]), Some(8.0))]
    #[case("POWER", json!([2.5, 3]), Some(15.625))]
    #[case("ROUND", json!([2.4]), Some(2.0))]
    #[case("ROUND", json!([2.6]), Some(3.0))]
    #[case("ROUND", json!([2.5]), Some(3.0))]
    #[case("ROUND", json!([-2.4]), Some(-2.0))]
    #[case("ROUND", json!([-6.5]), Some(-7.0))]
    #[case("ROUND", json!([-0.5]), Some(-1.0))]
    #[case("ROUND", json!([0.5]), Some(1.0))]
    #[case("ROUND", json!([6.5]), Some(7.0))]
    #[case("ROUND", json!([-2.6]), Some(-3.0))]
    #[case("SIGN", json!([-2]), Some(-1.0))]
    #[case("SIGN", json!([0]), Some(0.0))]
    #[case("SIGN", json!([2]), Some(1.0))]
    #[case("SQRT", json!([1]), Some(1.0))]
    #[case("SQRT", json!([2.0]), Some(2f64.sqrt()))]
    #[case("SQUARE", json!([0]), Some(0.0))]
    #[case("SQUARE", json!([1]), Some(1.0))]
    #[case("SQUARE", json!([2]), Some(4.0))]
    #[case("SQUARE", json!([3]), Some(9.0))]
    #[case("SQUARE", json!([null]), None)]
    #[case("TRUNC", json!([2.37]), Some(2.0))]
    #[case("TRUNC", json!([-2.78]), Some(-2.0))]
    #[case("TRUNC", json!([2]), Some(2.0))]
    #[case("TRUNC", json!([0.0000714]), Some(0.0))]
    #[case("TRUNC", json!([PI]), Some(3.0))]
    #[case("NUMBERBIN", json!([37.752, -100]), Some(100.0))]
    #[case("NUMBERBIN", json!([37.752, 10]), Some(30.0))]
    #[case("NUMBERBIN", json!([37.752, 1]), Some(37.0))]
    #[case("NUMBERBIN", json!([37.752, 0]), None)]
    #[case("NUMBERBIN", json!([37.752, 0.1]), Some(37.7))]
    #[case("NUMBERBIN", json!([37.752, 0.01]), Some(37.75))]
    #[case("NUMBERBIN", json!([155.23478, 0.01]), Some(155.23))]
    // Edge rows: results that are not finite, wrong types and counts.
    #[case("NUMBERBIN", json!([37.752]), Some(37.0))]
    #[case("NUMBERBIN", json!([-0.5]), Some(-1.0))]
    #[case("NUMBERBIN", json!(["1", 1]), None)]
    // Out of the domain, or past the doubles: NaN or an infinity, which
    // IS_FINITE_NUMBER tells and a query may not return (see number.rs).
    #[case("LOG", json!([0]), Some(f64::NEG_INFINITY))]
    #[case("LOG", json!([-1]), Some(f64::NAN))]
    #[case("LOG", json!([8, 1]), Some(f64::INFINITY))]
    #[case("SQRT", json!([-1]), Some(f64::NAN))]
    #[case("ACOS", json!([2]), Some(f64::NAN))]
    #[case("POWER", json!([10, 400]), Some(f64::INFINITY))]
    #[case("EXP", json!([1000]), Some(f64::INFINITY))]
    #[case("COT", json!([0]), Some(f64::INFINITY))]
    #[case("ABS", json!(["-1"]), None)]
    #[case("ABS", json!([U]), None)]
    #[case("ABS", json!([-1, 2]), None)]
    #[case("ABS", json!([-1e308]), Some(1e308))]
    #[case("ROUND", json!([1e300]), Some(1e300))]
    #[case("PI", json!([1]), None)]
    #[case("POWER", json!([2]), None)]
    #[case("SQUARE", json!([1e200]), Some(f64::INFINITY))]
    #[allow(clippy::approx_constant)] // the documented rows write π and π/2 as decimals
    fn math(#[case] name: &str, #[case] args: Value, #[case] expected: Option<f64>) {
        check(name, args, expected);
    }

    #[test]
    fn integral_results_are_integers() {
        assert_eq!(run("CEILING", json!([1.2])), Some(json!(2)));
        assert_eq!(run("SQUARE", json!([3])), Some(json!(9)));
    }
}
