//! Object functions: `ObjectToArray`.

use serde_json::{Map, Value};

use super::{arg, budget_ok, string, Args, Function};

pub const FUNCTIONS: &[(&str, Function)] = &[("OBJECTTOARRAY", object_to_array)];

/// Each field of an object as `{k: name, v: value}`; the two names may be
/// given (the value's name only with the field's).
fn object_to_array(args: &Args) -> Option<Value> {
    if args.is_empty() || args.len() > 3 {
        return None;
    }
    let object = arg(args, 0)?.as_object()?;
    let key_name = if args.len() > 1 {
        string(args, 1)?
    } else {
        "k"
    };
    let value_name = if args.len() > 2 {
        string(args, 2)?
    } else {
        "v"
    };
    // The copy of every value, plus the two names once per field.
    let names = (key_name.len() + value_name.len()).saturating_mul(object.len());
    budget_ok(args.run(), arg(args, 0)?, names)?;
    Some(Value::Array(
        object
            .iter()
            .map(|(k, v)| {
                let mut pair = Map::new();
                pair.insert(key_name.to_owned(), Value::String(k.clone()));
                pair.insert(value_name.to_owned(), v.clone());
                Value::Object(pair)
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{run, U};
    use rstest::rstest;
    use serde_json::{json, Value};

    // https://learn.microsoft.com/en-us/azure/cosmos-db/nosql/query/objecttoarray
    #[rstest]
    #[case(
        json!([{"a": "12345", "b": "67890"}]),
        Some(json!([{"k": "a", "v": "12345"}, {"k": "b", "v": "67890"}]))
    )]
    #[case(
        json!([{"a": "12345", "b": "67890"}, "name"]),
        Some(json!([{"name": "a", "v": "12345"}, {"name": "b", "v": "67890"}]))
    )]
    #[case(
        json!([{"a": "12345", "b": "67890"}, "key", "value"]),
        Some(json!([{"key": "a", "value": "12345"}, {"key": "b", "value": "67890"}]))
    )]
    #[case(
        json!([{"small": 15, "medium": 24, "large": 2, "xlarge": 0}, "size", "quantity"]),
        Some(json!([
            {"size": "small", "quantity": 15},
            {"size": "medium", "quantity": 24},
            {"size": "large", "quantity": 2},
            {"size": "xlarge", "quantity": 0}
        ]))
    )]
    // Edge rows: not an object, names that are not strings, nesting kept.
    #[case(json!([[1, 2]]), None)]
    #[case(json!([U]), None)]
    #[case(json!([{"a": 1}, 1]), None)]
    #[case(json!([{"a": 1}, "k", U]), None)]
    #[case(json!([{}]), Some(json!([])))]
    #[case(json!([{"a": {"b": [1]}}]), Some(json!([{"k": "a", "v": {"b": [1]}}])))]
    fn object_to_array(#[case] args: Value, #[case] expected: Option<Value>) {
        assert_eq!(run("OBJECTTOARRAY", args), expected);
    }
}
