//! Evaluation of expressions against one document, with the dialect's
//! `undefined`: `None` here. Comparisons of different types are undefined,
//! and a WHERE clause keeps a document only when it evaluates to `true`.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::ast::{Aggregate, BinaryOp, Expr, From, Select, SubqueryKind, UnaryOp};
use super::functions;
use super::number as num;
use super::order::compare_same_type;
use super::RunContext;
use crate::protocol::error::{ApiError, ApiResult};

/// Checks, once per query, that every function called exists, and that
/// aggregates stand only where allowed (in the projection, not nested).
pub fn check_functions(expr: &Expr, aggregates_allowed: bool) -> ApiResult<()> {
    let mut result = Ok(());
    walk(expr, &mut |e| {
        if let Expr::Call(name, args) = e {
            let problem = if Aggregate::from_name(name).is_some() {
                if !aggregates_allowed {
                    Some(format!(
                        "The aggregate '{name}' can only be used in the SELECT clause."
                    ))
                } else if args.iter().any(Expr::contains_aggregate) {
                    Some(format!(
                        "The aggregate '{name}' cannot contain another aggregate."
                    ))
                } else {
                    None
                }
            } else if !functions::is_known(name)
                && !super::search::is_function(name)
                && !name.starts_with(super::udf::PREFIX)
            {
                Some(format!(
                    "The function '{name}' is not supported here. Supported functions: {}, and the aggregates COUNT, SUM, MIN, MAX, AVG, MAKELIST, MAKESET.",
                    functions::names().join(", ")
                ))
            } else {
                None
            };
            if let (Some(problem), true) = (problem, result.is_ok()) {
                result = Err(ApiError::bad_request(problem));
            }
        }
    });
    result
}

/// Whether evaluating `expr` reads the document (the FROM alias) at all;
/// a subquery is taken to.
pub fn reads_document(expr: &Expr) -> bool {
    let mut reads = false;
    walk(expr, &mut |e| {
        reads |= matches!(e, Expr::Var(_) | Expr::Subquery(..))
    });
    reads
}

/// Byte strings that a document's stored JSON must contain for `filter` to
/// be true: for each `path = 'text'` in a conjunction, where the path reads
/// the item itself (not a value the query computes), the text as serde_json
/// writes it (the store writes documents with serde_json too). A necessary
/// condition only: a document that passes is still evaluated.
pub fn required_fragments(filter: &Expr, from: &From) -> Vec<Vec<u8>> {
    match filter {
        Expr::Chain(first, rest) if rest.iter().all(|(op, _)| *op == BinaryOp::And) => {
            let mut fragments = required_fragments(first, from);
            for (_, e) in rest {
                fragments.extend(required_fragments(e, from));
            }
            fragments
        }
        Expr::Binary(BinaryOp::Eq, a, b) => match (a.as_ref(), b.as_ref()) {
            (Expr::Literal(text @ Value::String(_)), path)
            | (path, Expr::Literal(text @ Value::String(_)))
                if super::paths::maps_to_path(path, from) =>
            {
                vec![serde_json::to_vec(text).expect("a string serialises")]
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// The aggregate calls of `expr`, in the order [`substitute_aggregates`]
/// meets them: each with the expression whose values it aggregates.
pub fn aggregate_calls(expr: &Expr) -> Vec<(Aggregate, Expr)> {
    let mut calls = Vec::new();
    walk(expr, &mut |e| {
        if let Expr::Call(name, args) = e {
            if let Some(aggregate) = Aggregate::from_name(name) {
                let arg = args
                    .first()
                    .cloned()
                    .unwrap_or(Expr::Literal(Value::from(1)));
                calls.push((aggregate, arg));
            }
        }
    });
    calls
}

/// `expr` with its aggregate calls, in [`aggregate_calls`]' order, replaced
/// by `results` (an undefined result becomes `UNDEFINED()`).
pub fn substitute_aggregates(
    expr: &Expr,
    results: &mut impl Iterator<Item = Option<Value>>,
) -> Expr {
    match expr {
        Expr::Call(name, args) => match Aggregate::from_name(name) {
            Some(_) => match results.next().flatten() {
                Some(v) => Expr::Literal(v),
                None => Expr::Call("UNDEFINED".into(), Vec::new()),
            },
            None => Expr::Call(
                name.clone(),
                args.iter()
                    .map(|e| substitute_aggregates(e, results))
                    .collect(),
            ),
        },
        Expr::Literal(_) | Expr::Var(_) | Expr::Subquery(..) => expr.clone(),
        Expr::Property(base, name) => {
            Expr::Property(Box::new(substitute_aggregates(base, results)), name.clone())
        }
        Expr::Index(a, b) => {
            let a = substitute_aggregates(a, results);
            Expr::Index(Box::new(a), Box::new(substitute_aggregates(b, results)))
        }
        Expr::Unary(op, a) => Expr::Unary(*op, Box::new(substitute_aggregates(a, results))),
        Expr::Binary(op, a, b) => {
            let a = substitute_aggregates(a, results);
            Expr::Binary(
                *op,
                Box::new(a),
                Box::new(substitute_aggregates(b, results)),
            )
        }
        Expr::Chain(first, rest) => {
            let first = substitute_aggregates(first, results);
            Expr::Chain(
                Box::new(first),
                rest.iter()
                    .map(|(op, e)| (*op, substitute_aggregates(e, results)))
                    .collect(),
            )
        }
        Expr::Between(a, b, c) | Expr::Conditional(a, b, c) => {
            let a = Box::new(substitute_aggregates(a, results));
            let b = Box::new(substitute_aggregates(b, results));
            let c = Box::new(substitute_aggregates(c, results));
            if matches!(expr, Expr::Between(..)) {
                Expr::Between(a, b, c)
            } else {
                Expr::Conditional(a, b, c)
            }
        }
        Expr::In(a, list, negated) => {
            let a = substitute_aggregates(a, results);
            Expr::In(
                Box::new(a),
                list.iter()
                    .map(|e| substitute_aggregates(e, results))
                    .collect(),
                *negated,
            )
        }
        Expr::Like(x, pattern, escape, negated) => {
            let x = substitute_aggregates(x, results);
            let pattern = substitute_aggregates(pattern, results);
            Expr::Like(
                Box::new(x),
                Box::new(pattern),
                escape
                    .as_ref()
                    .map(|e| Box::new(substitute_aggregates(e, results))),
                *negated,
            )
        }
        Expr::Array(items) => Expr::Array(
            items
                .iter()
                .map(|e| substitute_aggregates(e, results))
                .collect(),
        ),
        Expr::Object(fields) => Expr::Object(
            fields
                .iter()
                .map(|(k, e)| (k.clone(), substitute_aggregates(e, results)))
                .collect(),
        ),
    }
}

/// Calls `f` on `expr` and every expression inside it, outside subqueries.
pub(super) fn walk(expr: &Expr, f: &mut impl FnMut(&Expr)) {
    f(expr);
    for child in expr.children() {
        walk(child, f);
    }
}

/// The subqueries `expr` holds (not those nested in them).
pub fn subqueries(expr: &Expr) -> Vec<&Select> {
    let mut found = Vec::new();
    fn visit<'e>(expr: &'e Expr, found: &mut Vec<&'e Select>) {
        if let Expr::Subquery(_, select) = expr {
            found.push(select);
        }
        for child in expr.children() {
            visit(child, found);
        }
    }
    visit(expr, &mut found);
    found
}

/// Evaluates `expr` on a row: the values of the names FROM binds, in order.
pub fn eval(cx: &RunContext, expr: &Expr, root: &[&Value]) -> Option<Value> {
    match expr {
        Expr::Literal(v) => copied(cx, v),
        Expr::Var(i) => copied(cx, root.get(*i)?),
        Expr::Property(base, name) => match base.as_ref() {
            // Fast path for `c.name`: no clone of the whole document.
            Expr::Var(i) => copied(cx, root.get(*i)?.get(name)?),
            _ => eval(cx, base, root)?.get_mut(name).map(Value::take),
        },
        Expr::Index(base, index) => {
            let mut base = eval(cx, base, root)?;
            match eval(cx, index, root)? {
                Value::Number(n) => base.get_mut(n.as_u64()? as usize).map(Value::take),
                Value::String(s) => base.get_mut(&s).map(Value::take),
                _ => None,
            }
        }
        Expr::Unary(op, operand) => {
            let v = eval(cx, operand, root)?;
            match op {
                UnaryOp::Not => Some(Value::Bool(!v.as_bool()?)),
                UnaryOp::Neg => Some(number(-num::read(&v)?)),
                UnaryOp::Plus => num::is_number(&v).then_some(v),
                UnaryOp::BitNot => Some(Value::from(!to_int32(num::read(&v)?))),
            }
        }
        Expr::Binary(op, a, b) => compare(*op, &eval(cx, a, root)?, &eval(cx, b, root)?),
        Expr::Chain(first, rest) => rest.iter().fold(eval(cx, first, root), |left, (op, e)| {
            apply(cx, *op, left, e, root)
        }),
        Expr::Between(x, low, high) => {
            let x = eval(cx, x, root)?;
            let above = compare_same_type(&x, &eval(cx, low, root)?)? != Ordering::Less;
            let below = compare_same_type(&x, &eval(cx, high, root)?)? != Ordering::Greater;
            Some(Value::Bool(above && below))
        }
        Expr::In(x, list, negated) => {
            let x = eval(cx, x, root)?;
            let found = list.iter().any(|e| {
                eval(cx, e, root)
                    .is_some_and(|v| compare_same_type(&x, &v) == Some(Ordering::Equal))
            });
            Some(Value::Bool(found != *negated))
        }
        Expr::Like(x, pattern, escape, negated) => {
            let x = eval(cx, x, root)?;
            let pattern = eval(cx, pattern, root)?;
            // The escape is one character; anything else leaves the result undefined.
            let escape = match escape {
                None => None,
                Some(e) => {
                    let e = eval(cx, e, root)?;
                    let mut chars = e.as_str()?.chars();
                    let c = chars.next()?;
                    if chars.next().is_some() {
                        return None;
                    }
                    Some(c)
                }
            };
            let matched = super::like::like(x.as_str()?, pattern.as_str()?, escape);
            Some(Value::Bool(matched != *negated))
        }
        Expr::Conditional(cond, then, otherwise) => {
            if eval(cx, cond, root).and_then(|v| v.as_bool()) == Some(true) {
                eval(cx, then, root)
            } else {
                eval(cx, otherwise, root)
            }
        }
        Expr::Call(name, args) => {
            if let Some(result) = super::search::call(cx, name, args, &|e| eval(cx, e, root)) {
                return result;
            }
            let args: Vec<Option<Value>> = args.iter().map(|e| eval(cx, e, root)).collect();
            match name.strip_prefix(super::udf::PREFIX) {
                Some(udf) => cx.udfs.call(udf, &args),
                None => functions::call(cx, name, &args),
            }
        }
        // An undefined element is null: the array keeps its length (recorded
        // against the service: `SELECT VALUE [c.a, c.missing]` gives `[2, null]`).
        Expr::Array(items) => Some(Value::Array(
            items
                .iter()
                .map(|e| eval(cx, e, root).unwrap_or(Value::Null))
                .collect(),
        )),
        Expr::Object(fields) => Some(Value::Object(
            fields
                .iter()
                .filter_map(|(k, e)| Some((k.clone(), eval(cx, e, root)?)))
                .collect::<Map<_, _>>(),
        )),
        Expr::Subquery(kind, select) => {
            let results = cx.subquery(select, root)?;
            match kind {
                SubqueryKind::Exists => Some(Value::Bool(!results.is_empty())),
                SubqueryKind::Array => Some(Value::Array(results)),
                SubqueryKind::Scalar => results.into_iter().next(),
            }
        }
    }
}

/// The value of an expression that reads nothing of a row or a run (a
/// constant of a query being prepared or planned).
pub fn constant(expr: &Expr) -> Option<Value> {
    eval(&RunContext::outside_a_run(), expr, &[])
}

/// A copy of `value`, charged to the row's budget (undefined past it).
fn copied(cx: &RunContext, value: &Value) -> Option<Value> {
    cx.budget.charge(value).then(|| value.clone())
}

/// Whether a WHERE clause keeps the document.
pub fn is_true(cx: &RunContext, expr: &Expr, root: &[&Value]) -> bool {
    matches!(eval(cx, expr, root), Some(Value::Bool(true)))
}

/// A comparison; undefined across types.
fn compare(op: BinaryOp, a: &Value, b: &Value) -> Option<Value> {
    let ordering = compare_same_type(a, b)?;
    Some(Value::Bool(match op {
        BinaryOp::Eq => ordering == Ordering::Equal,
        BinaryOp::Ne => ordering != Ordering::Equal,
        BinaryOp::Lt => ordering == Ordering::Less,
        BinaryOp::Le => ordering != Ordering::Greater,
        BinaryOp::Gt => ordering == Ordering::Greater,
        BinaryOp::Ge => ordering != Ordering::Less,
        _ => return None,
    }))
}

/// One step of a chain: `left op right`, with the dialect's three-valued
/// AND and OR (false, resp. true, wins over undefined) and a lazy `??`.
/// Arithmetic is on doubles, as in JavaScript.
fn apply(
    cx: &RunContext,
    op: BinaryOp,
    left: Option<Value>,
    right: &Expr,
    root: &[&Value],
) -> Option<Value> {
    let boolean = |v: Option<Value>| v.and_then(|v| v.as_bool());
    match op {
        BinaryOp::And => match (boolean(left), boolean(eval(cx, right, root))) {
            (Some(false), _) | (_, Some(false)) => Some(Value::Bool(false)),
            (Some(true), Some(true)) => Some(Value::Bool(true)),
            _ => None,
        },
        BinaryOp::Or => match (boolean(left), boolean(eval(cx, right, root))) {
            (Some(true), _) | (_, Some(true)) => Some(Value::Bool(true)),
            (Some(false), Some(false)) => Some(Value::Bool(false)),
            _ => None,
        },
        BinaryOp::Coalesce => left.or_else(|| eval(cx, right, root)),
        BinaryOp::Concat => {
            // Appends to the left string, so a run `a || b || c` copies linearly.
            let (Value::String(mut text), Some(Value::String(tail))) =
                (left?, eval(cx, right, root))
            else {
                return None;
            };
            cx.budget.charge_bytes(tail.len()).then(|| {
                text.push_str(&tail);
                Value::String(text)
            })
        }
        BinaryOp::BitAnd
        | BinaryOp::BitOr
        | BinaryOp::BitXor
        | BinaryOp::ShiftLeft
        | BinaryOp::ShiftRight
        | BinaryOp::ShiftRightZero => {
            let a = to_int32(num::read(&left?)?);
            let b = to_int32(num::read(&eval(cx, right, root)?)?);
            // Shift counts are taken modulo 32, as JavaScript does.
            let shift = (b as u32) & 31;
            Some(match op {
                BinaryOp::BitAnd => Value::from(a & b),
                BinaryOp::BitOr => Value::from(a | b),
                BinaryOp::BitXor => Value::from(a ^ b),
                BinaryOp::ShiftLeft => Value::from(a.wrapping_shl(shift)),
                BinaryOp::ShiftRight => Value::from(a >> shift),
                _ => Value::from((a as u32) >> shift),
            })
        }
        _ => {
            let a = num::read(&left?)?;
            let b = num::read(&eval(cx, right, root)?)?;
            let n = match op {
                BinaryOp::Add => a + b,
                BinaryOp::Sub => a - b,
                BinaryOp::Mul => a * b,
                BinaryOp::Div => a / b,
                BinaryOp::Mod => a % b,
                _ => return None,
            };
            // NaN and the infinities stay numbers while the query runs; a
            // result that holds one is refused (see `number.rs`).
            Some(number(n))
        }
    }
}

/// A number as a 32-bit integer, as the bitwise operators read it
/// (JavaScript's ToInt32: truncated, then wrapped modulo 2^32; not finite is 0).
fn to_int32(n: f64) -> i32 {
    if !n.is_finite() {
        return 0;
    }
    (n.trunc().rem_euclid(4_294_967_296.0) as u64 as u32) as i32
}

/// A computed number as a value (NaN and the infinities as the engine's
/// marker, see `number.rs`).
pub fn number(n: f64) -> Value {
    super::number::to_value(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::query::parser::parse;
    use crate::protocol::error::Status;
    use serde_json::json;
    use std::collections::HashMap;

    fn filter(q: &str, doc: Value) -> bool {
        let s = parse(&format!("SELECT * FROM c WHERE {q}"), &HashMap::new()).unwrap();
        is_true(&RunContext::outside_a_run(), &s.filter.unwrap(), &[&doc])
    }

    #[test]
    fn where_semantics() {
        let doc = json!({"id": "a", "n": 5, "tags": ["x"], "o": {"k": 1}});
        assert!(filter("c.n = 5", doc.clone()));
        assert!(filter("c.n = 5.0", doc.clone()));
        assert!(!filter("c.n = '5'", doc.clone()));
        assert!(
            !filter("NOT (c.n = '5')", doc.clone()),
            "undefined stays undefined under NOT"
        );
        assert!(filter("c.missing = 1 OR c.n > 4", doc.clone()));
        assert!(filter(
            "c.n BETWEEN 1 AND 5 AND c.id IN ('a', 'b')",
            doc.clone()
        ));
        assert!(filter(
            "ARRAY_CONTAINS(c.tags, 'x') AND IS_DEFINED(c.o.k)",
            doc.clone()
        ));
        assert!(filter(
            "STARTSWITH(c.id, 'A', true) AND NOT IS_DEFINED(c.nope)",
            doc.clone()
        ));
        assert!(filter("c['o']['k'] + 1 = 2 AND c.tags[0] = 'x'", doc));
    }

    #[test]
    fn functions_of_every_family_are_called_by_any_case() {
        let doc = json!({"id": "a", "n": -5.5, "tags": ["x", "y"], "o": {"k": 1}});
        assert!(filter("StringEquals(c.id, 'A', true)", doc.clone()));
        assert!(filter("iif(c.n < 0, 'neg', 'pos') = 'neg'", doc.clone()));
        assert!(filter("Trunc(c.n) = -5 AND IntAdd(2, 3) = 5", doc.clone()));
        assert!(filter(
            "ARRAY_LENGTH(SetUnion(c.tags, ['y', 'z'])) = 3",
            doc.clone()
        ));
        assert!(filter(
            "ObjectToArray(c.o)[0].k = 'k' AND RegexMatch(c.id, '^A$', 'i')",
            doc.clone()
        ));
        assert!(!filter("IS_DEFINED(CHOOSE(3, 'a', 'b'))", doc));
    }

    #[test]
    fn an_unknown_function_is_refused_by_name() {
        let s = parse("SELECT * FROM c WHERE NoSuch(c.a)", &HashMap::new()).unwrap();
        let error = check_functions(&s.filter.unwrap(), false).unwrap_err();
        assert_eq!(error.status, Status::BAD_REQUEST);
        let text = error.message;
        assert!(text.contains("'NOSUCH'"), "{text}");
        assert!(
            text.contains("REGEXMATCH"),
            "lists what is supported: {text}"
        );
    }

    #[test]
    fn fragments_are_necessary_conditions_only() {
        let fragments = |q: &str| {
            let s = parse(&format!("SELECT * FROM c WHERE {q}"), &HashMap::new()).unwrap();
            required_fragments(&s.filter.unwrap(), s.from.as_ref().unwrap())
        };
        assert_eq!(
            fragments("c.a = 'x\"y' AND c.n > 1"),
            vec![br#""x\"y""#.to_vec()]
        );
        assert_eq!(fragments("'v' = c.o.k"), vec![br#""v""#.to_vec()]);
        // Nothing can be required from a disjunction, a number or a negation.
        assert!(fragments("c.a = 'x' OR c.b = 'y'").is_empty());
        assert!(fragments("c.n = 5").is_empty());
        assert!(fragments("NOT (c.a = 'x')").is_empty());
        assert!(fragments("UPPER(c.a) = 'X'").is_empty());
    }
}
