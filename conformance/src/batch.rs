//! The `batch` step: a transactional batch in the case's partition
//! (`POST .../docs` with `x-ms-cosmos-is-batch-request`, `docs/src/reference/protocol.md#transactional-batch`),
//! to check that TTL holds inside a batch: an invalid `ttl` fails its
//! operation and rolls the batch back (R9), an expired item is absent to
//! every operation and its id free to create (R5, L10).
//!
//! ```toml
//! { at = 0, batch = '[{"operationType": "Create", "resourceBody": {"id": "a", "ttl": 0}}]', expect = "207 [400]" }
//! ```
//!
//! The operations are the service's JSON (`operationType` `Create`,
//! `Upsert`, `Read`, `Replace`, `Delete`, `Patch`, with `id` and
//! `resourceBody`); item bodies get the case's partition key and, on the
//! wall clock, scaled TTL values, as single writes do. The token is the
//! answer's HTTP status and each operation's `statusCode` in order,
//! `200 [201, 200]` or `207 [424, 400]`; a refusal of the whole request is
//! a write's token (`400 BadRequest`). The results decide the step; the HTTP
//! status (200, or 207 Multi-Status when an operation failed) is protocol
//! (the expectation grammar, `fixtures/grammar.rs`, reads and decides both).

use serde_json::{json, Map, Value};

use crate::client::{excerpt, Response};
use crate::clock::WallClock;
use crate::outcome::{observe_error, Observed};

/// The operation types a batch may hold.
const OPERATION_TYPES: [&str; 6] = ["Create", "Upsert", "Read", "Replace", "Delete", "Patch"];

/// The most operations the service takes in one batch.
const MAX_OPERATIONS: usize = 100;

/// Reads a step's `batch`: a JSON array of 1 to 100 operations, each with
/// a known `operationType`, an `id` where it addresses an item and a
/// `resourceBody` object where it writes one.
pub fn parse(text: &str) -> Result<Vec<Map<String, Value>>, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("`batch` is not JSON: {e}"))?;
    let Value::Array(values) = value else {
        return Err("`batch` is a JSON array of operations".to_string());
    };
    if values.is_empty() || values.len() > MAX_OPERATIONS {
        return Err(format!(
            "`batch` holds 1 to {MAX_OPERATIONS} operations, not {}",
            values.len()
        ));
    }
    values
        .into_iter()
        .enumerate()
        .map(|(index, value)| {
            operation(value).map_err(|e| format!("`batch` operation {index}: {e}"))
        })
        .collect()
}

fn operation(value: Value) -> Result<Map<String, Value>, String> {
    let Value::Object(op) = value else {
        return Err("an operation is a JSON object".to_string());
    };
    let kind = op
        .get("operationType")
        .and_then(Value::as_str)
        .filter(|k| OPERATION_TYPES.contains(k))
        .ok_or_else(|| format!("`operationType` is one of {OPERATION_TYPES:?}"))?;
    let needs_id = !matches!(kind, "Create" | "Upsert");
    if needs_id && !op.get("id").is_some_and(Value::is_string) {
        return Err(format!("a {kind} names its item in `id`"));
    }
    let needs_body = kind != "Read" && kind != "Delete";
    if needs_body != op.get("resourceBody").is_some_and(Value::is_object) {
        return Err(match needs_body {
            true => format!("a {kind} carries a `resourceBody` object"),
            false => format!("a {kind} has no `resourceBody`"),
        });
    }
    if kind == "Patch" && !op["resourceBody"]["operations"].is_array() {
        return Err("a Patch's `resourceBody` has `operations`".to_string());
    }
    Ok(op)
}

/// The item bodies and patch operations of a batch (for the TTL values a
/// case uses and for writes).
pub fn written_ttls(operations: &[Map<String, Value>]) -> Vec<&Value> {
    let mut values = Vec::new();
    for op in operations {
        let Some(body) = op.get("resourceBody") else {
            continue;
        };
        if op["operationType"] == "Patch" {
            for patch in body["operations"].as_array().into_iter().flatten() {
                if patch.get("path").and_then(Value::as_str) == Some("/ttl") {
                    values.extend(patch.get("value"));
                }
            }
        } else {
            values.extend(body.get("ttl"));
        }
    }
    values
}

/// The batch body as sent: each item with the partition key `pk` (unless
/// it has one), TTL values scaled on the wall clock.
pub fn body(operations: &[Map<String, Value>], pk: &str, wall: Option<&WallClock>) -> Value {
    let sent = operations.iter().map(|op| {
        let mut op = op.clone();
        let kind = op["operationType"].as_str().unwrap_or_default().to_string();
        if let Some(Value::Object(body)) = op.get_mut("resourceBody") {
            if kind == "Patch" {
                if let (Some(wall), Some(Value::Array(patches))) = (wall, body.get("operations")) {
                    let scaled = wall.operations(patches);
                    body.insert("operations".to_string(), Value::Array(scaled));
                }
            } else {
                if let Some(wall) = wall {
                    *body = wall.body(body);
                }
                body.entry("pk").or_insert_with(|| json!(pk));
            }
        }
        Value::Object(op)
    });
    Value::Array(sent.collect())
}

/// The token of a batch answer: `200 [201, 200]`, `207 [424, 400]`, or the
/// error of a refused request.
pub fn observe(response: &Response) -> Observed {
    if !(200..300).contains(&response.status) {
        return observe_error(response);
    }
    let results = response.json().and_then(|body| match body {
        Value::Array(results) => results
            .iter()
            .map(|r| r.get("statusCode").and_then(Value::as_u64))
            .collect::<Option<Vec<u64>>>()
            .map(|codes| (codes, results)),
        _ => None,
    });
    let Some((codes, results)) = results else {
        return Observed {
            token: format!("{} (not an array of results)", response.status),
            detail: Some(format!("body: {}", excerpt(&response.body))),
        };
    };
    let messages: Vec<String> = results
        .iter()
        .enumerate()
        .filter_map(|(index, r)| {
            r.get("message")
                .and_then(Value::as_str)
                .map(|m| format!("operation {index}: {m}"))
        })
        .collect();
    let codes: Vec<String> = codes.iter().map(u64::to_string).collect();
    Observed {
        token: format!("{} [{}]", response.status, codes.join(", ")),
        detail: (!messages.is_empty()).then(|| messages.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_are_checked_and_labelled() {
        let ops = parse(
            r#"[{"operationType": "Create", "resourceBody": {"id": "a", "ttl": 0}},
                {"operationType": "Patch", "id": "b", "resourceBody": {"operations": [{"op": "set", "path": "/ttl", "value": 5}]}},
                {"operationType": "Read", "id": "c"}]"#,
        )
        .unwrap();
        assert_eq!(
            crate::fixtures::Action::Batch(ops.clone()).label(),
            "batch [create a, patch b, read c]"
        );
        assert_eq!(written_ttls(&ops), [&json!(0), &json!(5)]);
        let sent = body(&ops, "p", None);
        assert_eq!(sent[0]["resourceBody"]["pk"], "p");
        assert!(sent[1]["resourceBody"].get("pk").is_none());
        for bad in [
            "[]",
            "{}",
            r#"[{"operationType": "Merge"}]"#,
            r#"[{"operationType": "Read"}]"#,
            r#"[{"operationType": "Create"}]"#,
            r#"[{"operationType": "Delete", "id": "a", "resourceBody": {}}]"#,
            r#"[{"operationType": "Patch", "id": "a", "resourceBody": {}}]"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
