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
mod now;
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
    /// The instant `GetCurrent*` return, in epoch milliseconds (see `now.rs`).
    now_millis: Option<i64>,
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
        if aggregating > 0 && aggregating < projected.len() && select.group_by.is_empty() {
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
        // One row over everything; with GROUP BY, one per group instead.
        let aggregate = aggregating > 0 && select.group_by.is_empty();
        for e in &select.group_by {
            eval::check_functions(e, false)?;
        }
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
            || select.from.as_ref().is_some_and(|f| !f.is_plain())
            || !select.group_by.is_empty();
        Ok(PreparedQuery {
            select,
            aggregate,
            required,
            reads_documents,
            now_millis: None,
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
            && s.group_by.is_empty()
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

    /// The projection of one aggregated row (everything, or a group whose
    /// first row is `row`), its aggregates replaced by `results` in
    /// [`eval::aggregate_calls`]' order.
    fn project_aggregated(
        &self,
        row: &[&Value],
        results: impl Iterator<Item = Option<Value>>,
    ) -> Option<Value> {
        let mut results = results;
        let mut value = |e: &Expr| eval::eval(&eval::substitute_aggregates(e, &mut results), row);
        match &self.select.projection {
            Projection::Value(e) => value(e),
            Projection::Fields(fields) => Some(Value::Object(
                fields
                    .iter()
                    .map(|(e, name)| (name.clone(), value(e)))
                    .filter_map(|(name, v)| Some((name, v?)))
                    .collect::<Map<_, _>>(),
            )),
            Projection::Star => None,
        }
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
        budget::scope(|| self.at_now(|| self.values(docs)))
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
        let grouped = !self.select.group_by.is_empty();
        let calls: Vec<(ast::Aggregate, Expr)> = if self.aggregate || grouped {
            projected
                .iter()
                .flat_map(|e| eval::aggregate_calls(e))
                .collect()
        } else {
            Vec::new()
        };
        let mut results: Vec<(Vec<Option<Value>>, Value)> = Vec::new();
        // Each group's first row (owned) and its aggregates' inputs. Without
        // GROUP BY, an aggregate query is one group: every row has the empty key.
        let mut groups: Vec<(Vec<Value>, Vec<Vec<Value>>)> = Vec::new();
        let mut group_of: HashMap<String, usize> = HashMap::new();
        // What a kept row leaves: the values its aggregates take, or its
        // sort keys and projection.
        let mut keep = |row: &[&Value]| -> Option<(Vec<Option<Value>>, Value)> {
            if self.aggregate || grouped {
                budget::next_row();
                let key = group_key(self.select.group_by.iter().map(|e| eval::eval(e, row)));
                let g = *group_of.entry(key).or_insert_with(|| {
                    let first: Vec<Value> = row.iter().map(|v| (*v).clone()).collect();
                    groups.push((first, vec![Vec::new(); calls.len()]));
                    groups.len() - 1
                });
                for ((_, arg), values) in calls.iter().zip(groups[g].1.iter_mut()) {
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
            && !grouped
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
        let aggregated = |row: &[&Value], inputs: Vec<Vec<Value>>| {
            let results = calls
                .iter()
                .zip(inputs)
                .map(|((aggregate, _), values)| eval::aggregate_value(*aggregate, values));
            self.project_aggregated(row, results)
        };
        if self.aggregate {
            // One result even over no rows (COUNT is then 0); what is not
            // aggregated reads no row, as without GROUP BY nothing is grouped.
            let inputs = groups
                .pop()
                .map_or_else(|| vec![Vec::new(); calls.len()], |(_, inputs)| inputs);
            return aggregated(&[], inputs).into_iter().collect();
        }
        for (first, inputs) in groups {
            let row: Vec<&Value> = first.iter().collect();
            let sort = self.sort_keys(&row);
            if let Some(result) = aggregated(&row, inputs) {
                results.push((sort, result));
            }
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
        budget::scope(|| self.at_now(|| self.page(items, continuation, limit)))
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

/// A group's key: its values as text, numbers canonical (`1` and `1.0`
/// group together) and undefined apart from every value.
fn group_key(values: impl Iterator<Item = Option<Value>>) -> String {
    let mut key = String::new();
    for value in values {
        match value {
            None => key.push_str("\u{0}undefined"),
            Some(Value::Number(n)) => key.push_str(
                &n.as_f64()
                    .map_or_else(|| n.to_string(), |f| eval::number(f).to_string()),
            ),
            Some(other) => key.push_str(&other.to_string()),
        }
        key.push('\u{1}');
    }
    key
}

fn parse(body: &Bytes) -> Value {
    crate::json::parse_unguarded(body).expect("stored items are JSON within the nesting limit")
}

#[cfg(test)]
pub(crate) mod tests;
