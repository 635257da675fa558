//! Queries: `POST .../docs` with `x-ms-documentdb-isquery: True`.
//!
//! `parser` turns the text into a [`Select`], `eval` evaluates expressions
//! against one document, and this module runs a prepared query over a
//! container's live items, one page at a time.

mod ast;
pub mod budget;
mod eval;
mod functions;
mod lexer;
mod like;
mod page;
mod parser;
mod plan;
mod rows;

use std::collections::HashMap;

use bytes::Bytes;
use serde::Deserialize;
use serde_json::{Map, Value};

pub use ast::{Expr, From, Projection, Select};
use page::page_of_values;
pub use page::{Continuation, Page, PageLimit};

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

#[derive(Debug, Clone)]
pub struct PreparedQuery {
    pub select: Select,
    /// The projection computes aggregates: one row over all matching documents.
    aggregate: bool,
    /// What a stored document's JSON must contain to possibly match the filter.
    required: Vec<Vec<u8>>,
    /// Whether any part of the query reads document contents (not so for
    /// `SELECT VALUE COUNT(1) FROM c`, which only counts).
    reads_documents: bool,
}

impl PreparedQuery {
    pub fn prepare(body: &QueryBody) -> ApiResult<Self> {
        let parameters: HashMap<String, Value> = body
            .parameters
            .iter()
            .map(|p| (p.name.clone(), p.value.clone()))
            .collect();
        let select = parser::parse(&body.query, &parameters)?;
        let projected: Vec<&Expr> = match &select.projection {
            Projection::Star => Vec::new(),
            Projection::Value(e) => vec![e],
            Projection::Fields(fields) => fields.iter().map(|(e, _)| e).collect(),
        };
        let aggregating = projected
            .iter()
            .filter(|e| eval::contains_aggregate(e))
            .count();
        if aggregating > 0 && aggregating < projected.len() {
            return Err(ApiError::bad_request(format!(
                "Aggregates cannot be mixed with other SELECT expressions without GROUP BY, which this emulator does not support yet. Query: {}",
                lexer::truncated(&body.query)
            )));
        }
        for e in &projected {
            eval::check_functions(e, true)?;
        }
        for e in select
            .filter
            .iter()
            .chain(select.order_by.iter().map(|k| &k.expr))
        {
            eval::check_functions(e, false)?;
        }
        let aggregate = aggregating > 0;
        let required = select
            .filter
            .as_ref()
            .map(eval::required_fragments)
            .unwrap_or_default();
        let reads_documents = select.filter.is_some()
            || !select.order_by.is_empty()
            || matches!(select.projection, Projection::Star)
            || projected.iter().any(|e| eval::reads_document(e))
            // JOINs and FROM paths read the item to know how many rows it makes.
            || select.from.as_ref().is_some_and(|f| !f.is_plain());
        Ok(PreparedQuery {
            select,
            aggregate,
            required,
            reads_documents,
        })
    }

    /// `SELECT VALUE CONCAT('a', 'b')`, `SELECT 1`: a query without FROM,
    /// evaluated exactly once whatever the container holds.
    fn is_from_less(&self) -> bool {
        self.select.from.is_none()
    }

    /// Whether each item is one row, itself (`FROM c`, no JOIN).
    fn is_plain_from(&self) -> bool {
        self.select.from.as_ref().is_some_and(From::is_plain)
    }

    /// Whether results come in key order one document at a time, so that a
    /// page can resume after a key instead of re-running the whole query.
    pub fn streams_in_key_order(&self) -> bool {
        let s = &self.select;
        !self.aggregate
            && self.is_plain_from()
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

    /// Whether a stored document may match, judged from its bytes alone.
    fn may_match(&self, body: &[u8]) -> bool {
        self.required
            .iter()
            .all(|fragment| memchr::memmem::find(body, fragment).is_some())
    }

    fn matches(&self, row: &[&Value]) -> bool {
        budget::next_row();
        self.select
            .filter
            .as_ref()
            .is_none_or(|f| eval::is_true(f, row))
    }

    fn project(&self, row: &[&Value]) -> Option<Value> {
        budget::next_row();
        match &self.select.projection {
            // One name only: the parser refuses `*` with JOINs.
            Projection::Star => row.first().map(|v| (*v).clone()),
            Projection::Value(e) => eval::eval(e, row),
            Projection::Fields(fields) => Some(Value::Object(
                fields
                    .iter()
                    .filter_map(|(e, name)| Some((name.clone(), eval::eval(e, row)?)))
                    .collect::<Map<_, _>>(),
            )),
        }
    }

    fn sort_keys(&self, row: &[&Value]) -> Vec<Option<Value>> {
        budget::next_row();
        self.select
            .order_by
            .iter()
            .map(|k| eval::eval(&k.expr, row))
            .collect()
    }

    /// The projection of an item that is its own row: `*` takes it whole.
    fn project_item(&self, item: Value) -> Option<Value> {
        match self.select.projection {
            Projection::Star => Some(item),
            _ => self.project(&[&item]),
        }
    }

    /// Runs the query over documents (already parsed), returning every
    /// result; refused if evaluating one row copies too much (see `budget`).
    pub fn run_values(&self, docs: impl Iterator<Item = Value>) -> ApiResult<Vec<Value>> {
        budget::scope(|| self.values(docs))
    }

    /// Every result, in order: rows are filtered, then each kept row leaves
    /// only what the result needs (its sort keys and projection, or the
    /// values its aggregates take), so JOINs never hold their rows.
    fn values(&self, docs: impl Iterator<Item = Value>) -> Vec<Value> {
        let keys = &self.select.order_by;
        let projected: Vec<&Expr> = match &self.select.projection {
            Projection::Value(e) => vec![e],
            Projection::Fields(fields) => fields.iter().map(|(e, _)| e).collect(),
            Projection::Star => Vec::new(),
        };
        let calls: Vec<(ast::Aggregate, Expr)> = if self.aggregate {
            projected
                .iter()
                .flat_map(|e| eval::aggregate_calls(e))
                .collect()
        } else {
            Vec::new()
        };
        let mut inputs: Vec<Vec<Value>> = vec![Vec::new(); calls.len()];
        let mut results: Vec<(Vec<Option<Value>>, Value)> = Vec::new();
        // What a kept row leaves: the values its aggregates take, or its
        // sort keys and projection.
        let mut keep = |row: &[&Value]| -> Option<(Vec<Option<Value>>, Value)> {
            if self.aggregate {
                for ((_, arg), values) in calls.iter().zip(inputs.iter_mut()) {
                    budget::next_row();
                    values.extend(eval::eval(arg, row));
                }
                return None;
            }
            let sort = self.sort_keys(row);
            Some((sort, self.project(row)?))
        };
        if self.is_from_less() {
            if self.matches(&[]) {
                results.extend(keep(&[]));
            }
        } else if self.is_plain_from()
            && self.select.projection == Projection::Star
            && !self.aggregate
        {
            // `*` moves each item into the results instead of copying it.
            for item in docs {
                if self.matches(&[&item]) {
                    let sort = self.sort_keys(&[&item]);
                    results.push((sort, item));
                }
            }
        } else if self.is_plain_from() {
            for item in docs {
                if self.matches(&[&item]) {
                    results.extend(keep(&[&item]));
                }
            }
        } else {
            for item in docs {
                self.for_each_row(&item, &mut |row| {
                    if self.matches(row) {
                        results.extend(keep(row));
                    }
                });
            }
        }
        if self.aggregate {
            let mut values = calls
                .iter()
                .zip(inputs)
                .map(|((aggregate, _), values)| eval::aggregate_value(*aggregate, values));
            let mut row = |e: &Expr| eval::eval(&eval::substitute_aggregates(e, &mut values), &[]);
            let result = match &self.select.projection {
                Projection::Value(e) => row(e),
                Projection::Fields(fields) => Some(Value::Object(
                    fields
                        .iter()
                        .map(|(e, name)| (name.clone(), row(e)))
                        .filter_map(|(name, v)| Some((name, v?)))
                        .collect::<Map<_, _>>(),
                )),
                Projection::Star => None,
            };
            return result.into_iter().collect();
        }
        if !keys.is_empty() {
            results.sort_by(|(a, _), (b, _)| {
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
        }
        let mut results: Vec<Value> = results.into_iter().map(|(_, v)| v).collect();
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
    ) -> ApiResult<Page> {
        budget::scope(|| self.page(items, continuation, limit))
    }

    fn page<'a>(
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
            let candidates = items.filter(|(_, _, body)| self.may_match(body));
            let results = if self.reads_documents {
                self.values(candidates.map(|(_, _, body)| parse(body)))
            } else {
                self.values(candidates.map(|_| Value::Null))
            };
            if budget::exceeded() {
                return Page::default();
            }
            return page_of_values(results, offset, limit);
        }
        let mut page = Page::default();
        let mut bytes = 0;
        let plain = self.is_plain_scan();
        let mut items = items.peekable();
        while let Some((pk, id, body)) = items.next() {
            let result = if plain {
                Some(body.clone())
            } else if !self.may_match(body) {
                None
            } else {
                let doc = parse(body);
                if self.matches(&[&doc]) {
                    match self.project_item(doc) {
                        // Refused by the caller's scope: serialise nothing more.
                        _ if budget::exceeded() => return page,
                        projected => projected
                            .map(|v| Bytes::from(serde_json::to_vec(&v).expect("serialises"))),
                    }
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
    crate::json::parse_unguarded(body).expect("stored items are JSON within the nesting limit")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn run(q: &str, docs: &[Value]) -> Vec<Value> {
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
            .unwrap()
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

    /// Issue 10: `[NOT] LIKE ... [ESCAPE ...]` in filters and projections;
    /// a value that is not a string is undefined (kept by neither form).
    #[test]
    fn like_filters_and_projects() {
        let docs = [
            json!({"id": "a", "name": "Touring Road 20% off"}),
            json!({"id": "b", "name": "Mountain driver"}),
            json!({"id": "c", "name": 5}),
        ];
        assert_eq!(
            run("SELECT VALUE c.id FROM c WHERE c.name LIKE '%Road%'", &docs),
            vec![json!("a")]
        );
        assert_eq!(
            run(
                "SELECT VALUE c.id FROM c WHERE c.name NOT LIKE '%Road%'",
                &docs
            ),
            vec![json!("b")]
        );
        assert_eq!(
            run(
                "SELECT VALUE c.id FROM c WHERE c.name LIKE '%20^%%' ESCAPE '^'",
                &docs
            ),
            vec![json!("a")]
        );
        assert_eq!(
            run("SELECT VALUE c.name LIKE 'M%' FROM c", &docs),
            vec![json!(false), json!(true)]
        );
        let plan = PreparedQuery::prepare(&QueryBody {
            query: "SELECT c.id FROM c WHERE c.name NOT LIKE '%^%' ESCAPE '^' ORDER BY c.id".into(),
            parameters: vec![],
        })
        .unwrap()
        .plan();
        let rewritten = plan["queryInfo"]["rewrittenQuery"].as_str().unwrap();
        assert!(
            rewritten.contains("NOT LIKE \"%^%\" ESCAPE \"^\""),
            "{rewritten}"
        );
    }

    /// Issue 10: without FROM, a query is evaluated once, whatever the
    /// container holds (the function reference pages' examples).
    #[test]
    fn from_less_queries_are_evaluated_once() {
        let docs = [json!({"id": "a"}), json!({"id": "b"})];
        for docs in [&docs[..], &[]] {
            assert_eq!(
                run("SELECT VALUE CONCAT('a', 'b')", docs),
                vec![json!("ab")]
            );
            assert_eq!(run("SELECT 1 AS one", docs), vec![json!({"one": 1})]);
            assert_eq!(run("SELECT VALUE @v + 1", docs), vec![json!(3)]);
            assert_eq!(run("SELECT VALUE COUNT(1)", docs), vec![json!(1)]);
            assert!(run("SELECT VALUE undefined", docs).is_empty());
        }
        let query = PreparedQuery::prepare(&QueryBody {
            query: "SELECT VALUE 'x'".into(),
            parameters: vec![],
        })
        .unwrap();
        let bodies: Vec<Bytes> = (0..3)
            .map(|i| Bytes::from(json!({"id": i}).to_string()))
            .collect();
        let limit = PageLimit {
            items: 100,
            bytes: usize::MAX,
        };
        let page = query
            .run_page(bodies.iter().map(|b| ("[]", "id", b)), None, limit)
            .unwrap();
        assert_eq!(page.documents, vec![Bytes::from_static(b"\"x\"")]);
    }

    /// The byte prefilter never changes a result, only skips parsing.
    #[test]
    fn prefilter_and_count_give_the_same_results() {
        let bodies: Vec<Bytes> = [
            json!({"id": "a", "s": "x\"y", "t": "é"}),
            json!({"id": "b", "s": "xy", "n": 5.0}),
            json!({"id": "c", "note": "the s is x\"y"}),
        ]
        .iter()
        .map(|d| Bytes::from(serde_json::to_vec(d).unwrap()))
        .collect();
        let page = |q: &str| {
            let query = PreparedQuery::prepare(&QueryBody {
                query: q.into(),
                parameters: vec![],
            })
            .unwrap();
            let limit = PageLimit {
                items: 100,
                bytes: usize::MAX,
            };
            let docs = query
                .run_page(bodies.iter().map(|b| ("[]", "id", b)), None, limit)
                .unwrap()
                .documents;
            docs.iter()
                .map(|d| serde_json::from_slice::<Value>(d).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            page("SELECT VALUE c.id FROM c WHERE c.s = 'x\"y'"),
            vec![json!("a")]
        );
        assert_eq!(
            page("SELECT VALUE c.id FROM c WHERE c.t = 'é'"),
            vec![json!("a")]
        );
        assert_eq!(
            page("SELECT VALUE c.id FROM c WHERE c.n = 5"),
            vec![json!("b")]
        );
        assert_eq!(page("SELECT VALUE COUNT(1) FROM c"), vec![json!(3)]);
        assert_eq!(
            page("SELECT VALUE COUNT(1) FROM c WHERE c.s = 'xy'"),
            vec![json!(1)]
        );
        assert_eq!(page("SELECT VALUE COUNT(c.s) FROM c"), vec![json!(2)]);
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
        let page = q
            .run_page(
                bodies.iter().map(|(id, b)| ("[]", id.as_str(), b)),
                None,
                limit,
            )
            .unwrap();
        assert_eq!(page.documents.len(), 2);
        assert_eq!(
            page.continuation,
            Some(Continuation::After {
                pk: "[]".into(),
                id: "1".into()
            })
        );
        let last = q
            .run_page(
                bodies[4..].iter().map(|(id, b)| ("[]", id.as_str(), b)),
                None,
                limit,
            )
            .unwrap();
        assert_eq!((last.documents.len(), last.continuation), (1, None));
    }
}
