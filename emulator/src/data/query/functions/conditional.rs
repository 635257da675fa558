//! Conditional functions: `IIF` and `CHOOSE`. The arguments arrive
//! evaluated; the documentation describes no laziness, and evaluation has
//! no side effects, so evaluating every branch changes no result.

use serde_json::Value;

use super::{arg, Args, Function};

pub const FUNCTIONS: &[(&str, Function)] = &[("IIF", iif), ("CHOOSE", choose)];

/// The second argument when the first is `true`, else the third (a
/// condition that is not a boolean, or undefined, counts as not true).
fn iif(args: &Args) -> Option<Value> {
    if args.len() != 3 {
        return None;
    }
    let chosen = if arg(args, 0) == Some(&Value::Bool(true)) {
        1
    } else {
        2
    };
    arg(args, chosen).cloned()
}

/// The expression at a 1-based index; undefined out of bounds or for an
/// index that is not an integral number.
fn choose(args: &Args) -> Option<Value> {
    let index = arg(args, 0)?.as_f64()?;
    if index.fract() != 0.0 || index < 1.0 || index >= args.len() as f64 {
        return None;
    }
    arg(args, index as usize).cloned()
}

#[cfg(test)]
mod tests {
    use super::super::testing::{run, U};
    use rstest::rstest;
    use serde_json::{json, Value};

    // https://learn.microsoft.com/en-us/cosmos-db/query/iif
    #[rstest]
    #[case(json!([true, 123, 456]), Some(json!(123)))]
    #[case(json!([false, 123, 456]), Some(json!(456)))]
    #[case(json!([123, 123, 456]), Some(json!(456)))]
    #[case(json!(["ABC", 123, 456]), Some(json!(456)))]
    #[case(json!([[1, 2, 3], 123, 456]), Some(json!(456)))]
    #[case(json!([{"name": "Alice", "age": 20}, 123, 456]), Some(json!(456)))]
    // Edge rows: an undefined condition is not true; an undefined branch.
    #[case(json!([U, 1, 2]), Some(json!(2)))]
    #[case(json!([true, U, 2]), None)]
    #[case(json!([true, 1]), None)]
    fn iif(#[case] args: Value, #[case] expected: Option<Value>) {
        assert_eq!(run("IIF", args), expected);
    }

    // https://learn.microsoft.com/en-us/cosmos-db/query/choose
    #[rstest]
    #[case(json!([1, "Vimero", "Hydration", "Pack"]), Some(json!("Vimero")))]
    #[case(json!([0, "Mt.", "Hood", "Hydration", "Pack"]), None)]
    #[case(json!([1, "Mt.", "Hood", "Hydration", "Pack"]), Some(json!("Mt.")))]
    #[case(json!([2, "Mt.", "Hood", "Hydration", "Pack"]), Some(json!("Hood")))]
    #[case(json!([3, "Mt.", "Hood", "Hydration", "Pack"]), Some(json!("Hydration")))]
    #[case(json!([4, "Mt.", "Hood", "Hydration", "Pack"]), Some(json!("Pack")))]
    #[case(json!([5, "Mt.", "Hood", "Hydration", "Pack"]), None)]
    #[case(json!([3, "gear", "Vimero Hydration Pack", "69500"]), Some(json!("69500")))]
    // Edge rows.
    #[case(json!([-1, "a"]), None)]
    #[case(json!([1.5, "a", "b"]), None)]
    #[case(json!(["1", "a"]), None)]
    #[case(json!([1e300, "a"]), None)]
    #[case(json!([U, "a"]), None)]
    #[case(json!([2, "a", U]), None)]
    fn choose(#[case] args: Value, #[case] expected: Option<Value>) {
        assert_eq!(run("CHOOSE", args), expected);
    }
}
