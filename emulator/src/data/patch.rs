//! Partial document update (PATCH with `application/json-patch+json`):
//! `{"operations": [{"op": "add"|"set"|"replace"|"remove"|"incr"|"move", "path": "/a/b", "value": ...}], "condition": "from c where ..."}`.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::protocol::error::{ApiError, ApiResult};
use std::sync::Arc;

use crate::data::query::search::Policies;
use crate::data::query::{PreparedQuery, QueryBody, Setting};
use crate::data::store::Edit;

use crate::protocol::limits::MAX_PATCH_OPERATIONS as MAX_OPERATIONS;

/// A patch request. The body is either `{"operations": [...], "condition"?: ...}`
/// or, as the JavaScript SDK sends `item.patch([...])`, the list alone.
#[derive(Debug, Deserialize)]
#[serde(from = "PatchBodyWire")]
pub struct PatchBody {
    pub operations: Vec<Operation>,
    pub condition: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum PatchBodyWire {
    List(Vec<Operation>),
    Object(PatchObject),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PatchObject {
    operations: Vec<Operation>,
    #[serde(default)]
    condition: Option<String>,
}

impl From<PatchBodyWire> for PatchBody {
    fn from(wire: PatchBodyWire) -> Self {
        match wire {
            PatchBodyWire::List(operations) => PatchBody {
                operations,
                condition: None,
            },
            PatchBodyWire::Object(PatchObject {
                operations,
                condition,
            }) => PatchBody {
                operations,
                condition,
            },
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Operation {
    pub op: String,
    pub path: String,
    /// `Some(Value::Null)` for an explicit `"value": null`, `None` when absent.
    #[serde(default, deserialize_with = "present")]
    pub value: Option<Value>,
    #[serde(default)]
    pub from: Option<String>,
}

/// Keeps an explicit JSON null as `Some(Null)` (serde would make it `None`).
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl PatchBody {
    /// This patch as an edit of the current body: its `condition` (a
    /// `FROM c WHERE ...` clause, read at `now_millis` with the container's
    /// search policies, asked of `policies` only when there is a condition)
    /// must hold, else 412, then its operations apply. Also a
    /// transactional batch's `Patch`.
    pub fn edit(
        self,
        now_millis: i64,
        policies: impl FnOnce() -> ApiResult<Arc<Policies>>,
    ) -> ApiResult<Edit> {
        let policies = match self.condition {
            Some(_) => policies()?,
            None => Arc::default(),
        };
        self.validate()?;
        let condition = self
            .condition
            .as_deref()
            .map(|c| {
                PreparedQuery::prepare_at(
                    &QueryBody {
                        query: format!("SELECT * {c}"),
                        parameters: Vec::new(),
                    },
                    now_millis,
                )
            })
            .transpose()?;
        let operations = self.operations;
        Ok(Box::new(move |doc| {
            if let Some(condition) = &condition {
                let current = Value::Object(doc.clone());
                let setting = Setting {
                    policies,
                    udfs: None,
                };
                if condition
                    .run_values_in(setting, std::iter::once(current))?
                    .is_empty()
                {
                    return Err(ApiError::precondition_failed());
                }
            }
            apply(doc, &operations)
        }))
    }

    pub fn validate(&self) -> ApiResult<()> {
        if self.operations.is_empty() || self.operations.len() > MAX_OPERATIONS {
            return Err(ApiError::bad_request(format!(
                "A patch must have between 1 and {MAX_OPERATIONS} operations, got {}.",
                self.operations.len()
            )));
        }
        Ok(())
    }
}

fn segments(path: &str) -> ApiResult<Vec<String>> {
    let rest = path.strip_prefix('/').filter(|r| !r.is_empty()).ok_or_else(|| {
        ApiError::bad_request(format!("The patch path '{path}' is invalid: it must start with '/' and name a property, e.g. '/name'."))
    })?;
    Ok(rest
        .split('/')
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn missing(path: &str) -> ApiError {
    ApiError::bad_request(format!("The patch path '{path}' does not exist in the item: 'replace', 'remove', 'move' and 'incr' on arrays need an existing target."))
}

/// The container (object or array) holding the last segment of a path.
fn parent<'a>(doc: &'a mut Value, segs: &[String], path: &str) -> ApiResult<&'a mut Value> {
    let mut node = doc;
    for seg in &segs[..segs.len() - 1] {
        node = match node {
            Value::Object(o) => o.get_mut(seg),
            Value::Array(a) => seg.parse::<usize>().ok().and_then(move |i| a.get_mut(i)),
            _ => None,
        }
        .ok_or_else(|| missing(path))?;
    }
    Ok(node)
}

fn value_of(op: &Operation) -> ApiResult<Value> {
    op.value.clone().ok_or_else(|| {
        ApiError::bad_request(format!(
            "The patch operation '{}' on '{}' needs a 'value'.",
            op.op, op.path
        ))
    })
}

fn array_index(seg: &str, len: usize, allow_end: bool, path: &str) -> ApiResult<usize> {
    if seg == "-" && allow_end {
        return Ok(len);
    }
    match seg.parse::<usize>() {
        Ok(i) if i < len || (allow_end && i == len) => Ok(i),
        _ => Err(missing(path)),
    }
}

fn apply_one(doc: &mut Value, op: &Operation) -> ApiResult<()> {
    let segs = segments(&op.path)?;
    let last = segs.last().expect("non-empty").clone();
    if segs.len() == 1 && last == "id" {
        return Err(ApiError::bad_request(
            "A patch cannot change an item's id ('/id').",
        ));
    }
    match op.op.to_ascii_lowercase().as_str() {
        "add" | "set" => {
            let value = value_of(op)?;
            match parent(doc, &segs, &op.path)? {
                Value::Object(o) => {
                    o.insert(last, value);
                }
                Value::Array(a) => {
                    let i = array_index(&last, a.len(), true, &op.path)?;
                    if op.op.eq_ignore_ascii_case("set") && i < a.len() {
                        a[i] = value;
                    } else {
                        a.insert(i, value);
                    }
                }
                _ => return Err(missing(&op.path)),
            }
        }
        "replace" => {
            let value = value_of(op)?;
            let slot = match parent(doc, &segs, &op.path)? {
                Value::Object(o) => o.get_mut(&last),
                Value::Array(a) => last.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
                _ => None,
            };
            *slot.ok_or_else(|| missing(&op.path))? = value;
        }
        "remove" => {
            take(doc, &segs, &op.path)?;
        }
        "incr" => {
            let by = value_of(op)?;
            let by_num = by.as_f64().ok_or_else(|| {
                ApiError::bad_request(format!("The patch operation 'incr' on '{}' needs a number 'value', got {by}.", op.path))
            })?;
            let Value::Object(o) = parent(doc, &segs, &op.path)? else {
                return Err(missing(&op.path));
            };
            let next = match o.get(&last) {
                None => by.clone(),
                Some(current) => {
                    let n = current.as_f64().ok_or_else(|| {
                        ApiError::bad_request(format!("The patch operation 'incr' on '{}' needs a number there, found {current}.", op.path))
                    })?;
                    // Integers add exactly while the sum fits; otherwise as doubles.
                    let exact = current.as_i64().zip(by.as_i64()).and_then(|(a, b)| a.checked_add(b));
                    match exact {
                        Some(sum) => Value::from(sum),
                        None => serde_json::Number::from_f64(n + by_num).map(Value::Number).ok_or_else(|| {
                            ApiError::bad_request(format!("The patch operation 'incr' on '{}' would overflow: {current} + {by} is not a finite number.", op.path))
                        })?,
                    }
                }
            };
            o.insert(last, next);
        }
        "move" => {
            let from = op.from.as_deref().ok_or_else(|| {
                ApiError::bad_request(format!("The patch operation 'move' to '{}' needs a 'from' path.", op.path))
            })?;
            let value = take(doc, &segments(from)?, from)?;
            let add = Operation { op: "add".into(), path: op.path.clone(), value: Some(value), from: None };
            apply_one(doc, &add)?;
        }
        other => {
            return Err(ApiError::bad_request(format!(
                "The patch operation '{other}' is not supported: use add, set, replace, remove, incr or move."
            )))
        }
    }
    Ok(())
}

fn take(doc: &mut Value, segs: &[String], path: &str) -> ApiResult<Value> {
    let last = segs.last().expect("non-empty");
    match parent(doc, segs, path)? {
        Value::Object(o) => o.shift_remove(last).ok_or_else(|| missing(path)),
        Value::Array(a) => {
            let i = array_index(last, a.len(), false, path)?;
            Ok(a.remove(i))
        }
        _ => Err(missing(path)),
    }
}

/// Applies every operation in order; any failure leaves the item unchanged.
pub fn apply(doc: Map<String, Value>, operations: &[Operation]) -> ApiResult<Map<String, Value>> {
    let mut doc = Value::Object(doc);
    for op in operations {
        apply_one(&mut doc, op)?;
    }
    match doc {
        Value::Object(o) => Ok(o),
        _ => unreachable!("patches edit inside the root object"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn op(op: &str, path: &str, value: Value) -> Operation {
        Operation {
            op: op.into(),
            path: path.into(),
            value: Some(value),
            from: None,
        }
    }

    #[test]
    fn operations_apply_in_order() {
        let doc = json!({"id": "a", "n": 1, "tags": ["x"], "o": {"k": 1}})
            .as_object()
            .unwrap()
            .clone();
        let out = apply(
            doc,
            &[
                op("set", "/ttl", json!(10)),
                op("incr", "/n", json!(2)),
                op("add", "/tags/-", json!("y")),
                op("replace", "/o/k", json!(2)),
                op("remove", "/o", Value::Null),
            ],
        )
        .unwrap();
        assert_eq!(
            Value::Object(out),
            json!({"id": "a", "n": 3, "tags": ["x", "y"], "ttl": 10})
        );
    }

    /// Integers add exactly while the sum fits, then as doubles; a sum that
    /// is not finite is refused, never stored as null or wrapped around.
    #[test]
    fn incr_never_overflows() {
        let incr = |current: Value, by: Value| {
            let doc = json!({"id": "a", "n": current})
                .as_object()
                .unwrap()
                .clone();
            apply(doc, &[op("incr", "/n", by)]).map(|d| d["n"].clone())
        };
        assert_eq!(
            incr(json!(i64::MAX - 1), json!(1)).unwrap(),
            json!(i64::MAX)
        );
        assert_eq!(
            incr(json!(i64::MAX), json!(1)).unwrap(),
            json!(9.223372036854776e18)
        );
        assert_eq!(
            incr(json!(u64::MAX), json!(1)).unwrap(),
            json!(1.8446744073709552e19)
        );
        assert_eq!(
            incr(json!(i64::MIN), json!(-1)).unwrap(),
            json!(-9.223372036854776e18)
        );
        assert_eq!(incr(json!(1.5), json!(1)).unwrap(), json!(2.5));
        let e = incr(json!(1e308), json!(1e308)).unwrap_err();
        assert!(e.message.contains("overflow"), "{}", e.message);
    }

    #[test]
    fn both_body_shapes_are_read() {
        let list: PatchBody =
            serde_json::from_value(json!([{"op": "set", "path": "/v", "value": 2}])).unwrap();
        assert_eq!((list.operations.len(), list.condition), (1, None));
        let object: PatchBody = serde_json::from_value(json!({"operations": [{"op": "remove", "path": "/v"}], "condition": "from c where c.v = 1"})).unwrap();
        assert_eq!(object.operations[0].op, "remove");
        assert_eq!(object.condition.as_deref(), Some("from c where c.v = 1"));
        for bad in [
            json!({"ops": []}),
            json!("set"),
            json!([{"op": "set"}]),
            json!([{"op": "set", "path": "/v", "valu": 1}]),
        ] {
            assert!(
                serde_json::from_value::<PatchBody>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn bad_operations_are_refused() {
        let doc = json!({"id": "a"}).as_object().unwrap().clone();
        for bad in [
            op("replace", "/nope", json!(1)),
            op("remove", "/nope", json!(1)),
            op("set", "/id", json!("b")),
            op("jump", "/x", json!(1)),
            op("set", "x", json!(1)),
            op("incr", "/id", json!(1)),
        ] {
            assert!(apply(doc.clone(), &[bad]).is_err());
        }
    }
}
