//! Queries: `POST .../docs` with `x-ms-documentdb-isquery: True`.
//!
//! `parser` turns the text into a [`Select`], `eval` evaluates expressions
//! against one document, and this module runs a prepared query over a
//! container's live items, one page at a time.

mod ast;
mod eval;
mod lexer;
mod parser;

use std::collections::HashMap;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use ast::{Aggregate, Expr, Projection, Select};

use crate::error::{ApiError, ApiResult};

/// The JSON body of a query request.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryBody {
    pub query: String,
    #[serde(default)]
    pub parameters: Vec<Parameter>,
}

#[derive(Debug, Deserialize)]
pub struct Parameter {
    pub name: String,
    #[serde(default)]
    pub value: Value,
}

/// An aggregate SELECT: one row over all matching documents.
#[derive(Debug, Clone, PartialEq)]
enum AggregateShape {
    /// `SELECT VALUE COUNT(x)`
    Value(Aggregate, Expr),
    /// `SELECT COUNT(x) AS n, MAX(y) AS m`
    Fields(Vec<(String, Aggregate, Expr)>),
}

#[derive(Debug, Clone)]
pub struct PreparedQuery {
    pub select: Select,
    aggregate: Option<AggregateShape>,
}

/// Where a page of results starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Continuation {
    /// Key-ordered scans resume after the last item visited.
    After { pk: String, id: String },
    /// Whole-result queries (ORDER BY, aggregates, ...) resume at an offset.
    Offset { offset: usize },
}

impl Continuation {
    pub fn parse(token: &str) -> ApiResult<Self> {
        serde_json::from_str(token).map_err(|_| {
            ApiError::bad_request(format!(
                "The continuation token '{token}' is invalid: pass back the x-ms-continuation value of the previous page unchanged."
            ))
        })
    }

    pub fn to_token(&self) -> String {
        serde_json::to_string(self).expect("serialises")
    }
}

/// One page of results, each document already serialised.
#[derive(Debug, Default)]
pub struct Page {
    pub documents: Vec<Bytes>,
    pub continuation: Option<Continuation>,
}

/// How many results a page may hold (`x-ms-max-item-count`), and its byte budget.
#[derive(Debug, Clone, Copy)]
pub struct PageLimit {
    pub items: usize,
    pub bytes: usize,
}

impl PageLimit {
    /// The service's defaults: 100 items, or as many as fit 4 MB for `-1`.
    pub fn from_header(max_item_count: Option<&str>) -> ApiResult<Self> {
        let items = match max_item_count.map(str::trim) {
            None | Some("") => 100,
            Some(v) => match v.parse::<i64>() {
                Ok(-1) => usize::MAX,
                Ok(n) if n > 0 => n as usize,
                _ => {
                    return Err(ApiError::bad_request(format!(
                        "The x-ms-max-item-count header '{v}' is invalid: use a positive number of items, or -1 for as many as fit a page."
                    )))
                }
            },
        };
        Ok(PageLimit {
            items,
            bytes: 4 * 1024 * 1024,
        })
    }
}

impl PreparedQuery {
    pub fn prepare(body: &QueryBody) -> ApiResult<Self> {
        let parameters: HashMap<String, Value> = body
            .parameters
            .iter()
            .map(|p| (p.name.clone(), p.value.clone()))
            .collect();
        let select = parser::parse(&body.query, &parameters)?;
        let aggregate = aggregate_shape(&select.projection, &body.query)?;
        let mut expressions: Vec<&Expr> = select
            .filter
            .iter()
            .chain(select.order_by.iter().map(|k| &k.expr))
            .collect();
        match (&aggregate, &select.projection) {
            (Some(AggregateShape::Value(_, e)), _) => expressions.push(e),
            (Some(AggregateShape::Fields(fields)), _) => {
                expressions.extend(fields.iter().map(|(_, _, e)| e))
            }
            (None, Projection::Value(e)) => expressions.push(e),
            (None, Projection::Fields(fields)) => expressions.extend(fields.iter().map(|(e, _)| e)),
            (None, Projection::Star) => {}
        }
        for e in expressions {
            eval::check_functions(e)?;
        }
        Ok(PreparedQuery { select, aggregate })
    }

    /// Whether results come in key order one document at a time, so that a
    /// page can resume after a key instead of re-running the whole query.
    pub fn streams_in_key_order(&self) -> bool {
        let s = &self.select;
        self.aggregate.is_none()
            && s.order_by.is_empty()
            && !s.distinct
            && s.top.is_none()
            && s.offset.is_none()
    }

    /// Whether the query returns documents as stored, unfiltered (no parsing needed).
    fn is_plain_scan(&self) -> bool {
        self.streams_in_key_order()
            && self.select.filter.is_none()
            && self.select.projection == Projection::Star
    }

    fn matches(&self, doc: &Value) -> bool {
        self.select
            .filter
            .as_ref()
            .is_none_or(|f| eval::is_true(f, doc))
    }

    fn project(&self, doc: Value) -> Option<Value> {
        match &self.select.projection {
            Projection::Star => Some(doc),
            Projection::Value(e) => eval::eval(e, &doc),
            Projection::Fields(fields) => Some(Value::Object(
                fields
                    .iter()
                    .filter_map(|(e, name)| Some((name.clone(), eval::eval(e, &doc)?)))
                    .collect::<Map<_, _>>(),
            )),
        }
    }

    /// Runs the query over documents (already parsed), returning every result.
    pub fn run_values(&self, docs: impl Iterator<Item = Value>) -> Vec<Value> {
        let mut matching: Vec<Value> = docs.filter(|d| self.matches(d)).collect();
        if let Some(shape) = &self.aggregate {
            return aggregate(shape, &matching);
        }
        if !self.select.order_by.is_empty() {
            let keys = &self.select.order_by;
            let mut keyed: Vec<(Vec<Option<Value>>, Value)> = matching
                .into_iter()
                .map(|d| (keys.iter().map(|k| eval::eval(&k.expr, &d)).collect(), d))
                .collect();
            keyed.sort_by(|(a, _), (b, _)| {
                keys.iter()
                    .zip(a.iter().zip(b.iter()))
                    .map(|(k, (x, y))| {
                        let o = eval::sort_order(x, y);
                        if k.descending {
                            o.reverse()
                        } else {
                            o
                        }
                    })
                    .find(|o| o.is_ne())
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
            matching = keyed.into_iter().map(|(_, d)| d).collect();
        }
        let mut results: Vec<Value> = matching
            .into_iter()
            .filter_map(|d| self.project(d))
            .collect();
        if self.select.distinct {
            let mut seen = Vec::new();
            results.retain(|v| {
                let fresh = !seen.contains(v);
                if fresh {
                    seen.push(v.clone());
                }
                fresh
            });
        }
        let skip = self.select.offset.unwrap_or(0);
        let take = self
            .select
            .limit
            .unwrap_or(usize::MAX)
            .min(self.select.top.unwrap_or(usize::MAX));
        results.into_iter().skip(skip).take(take).collect()
    }

    /// Runs one page of the query over a container's live items, given in
    /// key order as (partition key, id, stored JSON), starting where
    /// `continuation` says (the caller started the iterator after its key).
    pub fn run_page<'a>(
        &self,
        items: impl Iterator<Item = (&'a str, &'a str, &'a Bytes)>,
        continuation: Option<&Continuation>,
        limit: PageLimit,
    ) -> Page {
        if !self.streams_in_key_order() {
            let offset = match continuation {
                Some(Continuation::Offset { offset }) => *offset,
                _ => 0,
            };
            let docs = items.map(|(_, _, body)| parse(body));
            let results = self.run_values(docs);
            return page_of_values(results, offset, limit);
        }
        let mut page = Page::default();
        let mut bytes = 0;
        let plain = self.is_plain_scan();
        let mut items = items.peekable();
        while let Some((pk, id, body)) = items.next() {
            let result = if plain {
                Some(body.clone())
            } else {
                let doc = parse(body);
                if self.matches(&doc) {
                    self.project(doc)
                        .map(|v| Bytes::from(serde_json::to_vec(&v).expect("serialises")))
                } else {
                    None
                }
            };
            if let Some(result) = result {
                bytes += result.len();
                page.documents.push(result);
            }
            if page.documents.len() >= limit.items || bytes >= limit.bytes {
                if items.peek().is_some() {
                    page.continuation = Some(Continuation::After {
                        pk: pk.to_owned(),
                        id: id.to_owned(),
                    });
                }
                break;
            }
        }
        page
    }
}

fn parse(body: &Bytes) -> Value {
    serde_json::from_slice(body).expect("stored items are valid JSON")
}

fn page_of_values(results: Vec<Value>, offset: usize, limit: PageLimit) -> Page {
    let mut page = Page::default();
    let mut bytes = 0;
    let total = results.len();
    for value in results.into_iter().skip(offset) {
        let encoded = Bytes::from(serde_json::to_vec(&value).expect("serialises"));
        bytes += encoded.len();
        page.documents.push(encoded);
        if page.documents.len() >= limit.items || bytes >= limit.bytes {
            break;
        }
    }
    let next = offset + page.documents.len();
    if next < total {
        page.continuation = Some(Continuation::Offset { offset: next });
    }
    page
}

fn aggregate_shape(projection: &Projection, text: &str) -> ApiResult<Option<AggregateShape>> {
    let as_aggregate = |e: &Expr| match e {
        Expr::Call(name, args) => Aggregate::from_name(name).map(|a| {
            (
                a,
                args.first()
                    .cloned()
                    .unwrap_or(Expr::Literal(Value::from(1))),
            )
        }),
        _ => None,
    };
    Ok(match projection {
        Projection::Value(e) => as_aggregate(e).map(|(a, arg)| AggregateShape::Value(a, arg)),
        Projection::Fields(fields) => {
            let aggregates: Vec<_> = fields
                .iter()
                .filter_map(|(e, name)| as_aggregate(e).map(|(a, arg)| (name.clone(), a, arg)))
                .collect();
            if aggregates.is_empty() {
                None
            } else if aggregates.len() == fields.len() {
                Some(AggregateShape::Fields(aggregates))
            } else {
                return Err(ApiError::bad_request(format!(
                    "Aggregates cannot be mixed with other SELECT expressions without GROUP BY, which this emulator does not support yet. Query: {text}"
                )));
            }
        }
        Projection::Star => None,
    })
}

fn aggregate(shape: &AggregateShape, docs: &[Value]) -> Vec<Value> {
    match shape {
        // An undefined result (e.g. MAX over no values) yields no row.
        AggregateShape::Value(a, e) => aggregate_one(*a, e, docs).into_iter().collect(),
        AggregateShape::Fields(fields) => vec![Value::Object(
            fields
                .iter()
                .filter_map(|(name, a, e)| Some((name.clone(), aggregate_one(*a, e, docs)?)))
                .collect::<Map<_, _>>(),
        )],
    }
}

fn aggregate_one(aggregate: Aggregate, expr: &Expr, docs: &[Value]) -> Option<Value> {
    let values: Vec<Value> = docs.iter().filter_map(|d| eval::eval(expr, d)).collect();
    match aggregate {
        Aggregate::Count => Some(Value::from(values.len())),
        Aggregate::Sum => values
            .iter()
            .map(Value::as_f64)
            .sum::<Option<f64>>()
            .map(eval::number),
        Aggregate::Avg => {
            let sum = values.iter().map(Value::as_f64).sum::<Option<f64>>()?;
            (!values.is_empty()).then(|| eval::number(sum / values.len() as f64))
        }
        Aggregate::Min | Aggregate::Max => {
            let wanted = if aggregate == Aggregate::Min {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            };
            values.into_iter().reduce(|best, v| {
                if eval::sort_order(&Some(v.clone()), &Some(best.clone())) == wanted {
                    v
                } else {
                    best
                }
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(q: &str, docs: &[Value]) -> Vec<Value> {
        let body = QueryBody {
            query: q.into(),
            parameters: vec![Parameter {
                name: "@v".into(),
                value: json!(2),
            }],
        };
        PreparedQuery::prepare(&body)
            .unwrap()
            .run_values(docs.iter().cloned())
    }

    #[test]
    fn aggregates_order_and_projection() {
        let docs = [
            json!({"id": "a", "n": 3}),
            json!({"id": "b", "n": 1}),
            json!({"id": "c", "n": 2}),
            json!({"id": "d"}),
        ];
        assert_eq!(run("SELECT VALUE COUNT(1) FROM c", &docs), vec![json!(4)]);
        assert_eq!(run("SELECT VALUE COUNT(1) FROM c", &[]), vec![json!(0)]);
        assert_eq!(run("SELECT VALUE COUNT(c.n) FROM c", &docs), vec![json!(3)]);
        assert_eq!(
            run("SELECT COUNT(1) AS total, MAX(c.n) AS top FROM c", &docs),
            vec![json!({"total": 4, "top": 3})]
        );
        assert_eq!(run("SELECT VALUE MIN(c.n) FROM c", &docs), vec![json!(1)]);
        assert_eq!(
            run("SELECT VALUE SUM(c.n) FROM c WHERE c.n >= @v", &docs),
            vec![json!(5)]
        );
        assert_eq!(
            run(
                "SELECT VALUE c.id FROM c WHERE IS_DEFINED(c.n) ORDER BY c.n DESC",
                &docs
            ),
            vec![json!("a"), json!("c"), json!("b")]
        );
        assert_eq!(
            run("SELECT TOP 2 c.id FROM c ORDER BY c.id", &docs),
            vec![json!({"id": "a"}), json!({"id": "b"})]
        );
        assert_eq!(
            run(
                "SELECT VALUE c.id FROM c ORDER BY c.id OFFSET 1 LIMIT 2",
                &docs
            ),
            vec![json!("b"), json!("c")]
        );
        assert_eq!(
            run(
                "SELECT DISTINCT VALUE c.n > 1 FROM c WHERE IS_DEFINED(c.n)",
                &docs
            ),
            vec![json!(true), json!(false)]
        );
    }

    #[test]
    fn unknown_functions_and_mixed_aggregates_are_refused() {
        for q in [
            "SELECT * FROM c WHERE FOO(c.id)",
            "SELECT c.id, COUNT(1) FROM c",
        ] {
            let body = QueryBody {
                query: q.into(),
                parameters: vec![],
            };
            assert_eq!(
                PreparedQuery::prepare(&body).unwrap_err().status.as_u16(),
                400,
                "{q}"
            );
        }
    }

    #[test]
    fn pages_resume_after_the_last_key() {
        let bodies: Vec<(String, Bytes)> = (0..5)
            .map(|i| {
                (
                    format!("{i}"),
                    Bytes::from(json!({"id": format!("{i}")}).to_string()),
                )
            })
            .collect();
        let q = PreparedQuery::prepare(&QueryBody {
            query: "SELECT * FROM c".into(),
            parameters: vec![],
        })
        .unwrap();
        let limit = PageLimit {
            items: 2,
            bytes: usize::MAX,
        };
        let page = q.run_page(
            bodies.iter().map(|(id, b)| ("[]", id.as_str(), b)),
            None,
            limit,
        );
        assert_eq!(page.documents.len(), 2);
        assert_eq!(
            page.continuation,
            Some(Continuation::After {
                pk: "[]".into(),
                id: "1".into()
            })
        );
        let last = q.run_page(
            bodies[4..].iter().map(|(id, b)| ("[]", id.as_str(), b)),
            None,
            limit,
        );
        assert_eq!((last.documents.len(), last.continuation), (1, None));
    }
}
