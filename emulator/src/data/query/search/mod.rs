//! Vector, full-text and hybrid search: the functions `VectorDistance`,
//! `FullTextContains`, `FullTextContainsAll`, `FullTextContainsAny`,
//! `FullTextScore` and `RRF`, with the internal forms the gateway's query
//! plans rewrite them into (`_VectorScore`, `_FullTextScore`,
//! `_FullTextWordCount`), `ORDER BY RANK`, and their query plans.
//!
//! These functions read the container's policies: a vector's distance
//! function and data type come from the embedding policy of its path, a
//! text's language from the full-text policy. The policies come with the
//! run's context (`context.rs`); `FullTextScore` also reads the statistics
//! of the documents in scope, which the run gathers before it ranks them
//! ([`gather_statistics`]).

use serde_json::Value;

use super::ast::Expr;
use super::RunContext;
use crate::data::index::search_policy::Comparison;
pub use crate::data::index::search_policy::Policies;
use crate::data::index::vector;
use crate::data::index::DocumentPath;

pub mod bm25;
pub mod nearest;
pub mod plan;
pub mod rank;
pub mod statistics;
pub mod text;
pub mod validate;

pub(super) use bm25::Statistics;

/// One row as a search function reads its arguments: each argument's
/// value on the row. The evaluator hands it in (it sits above this module
/// and calls it), so that the functions never call back into it.
pub(super) type Row<'r> = &'r dyn Fn(&Expr) -> Option<Value>;

/// The function names this module evaluates (upper case).
pub const FUNCTIONS: [&str; 9] = [
    "VECTORDISTANCE",
    "FULLTEXTCONTAINS",
    "FULLTEXTCONTAINSALL",
    "FULLTEXTCONTAINSANY",
    "FULLTEXTSCORE",
    "RRF",
    "_VECTORSCORE",
    "_FULLTEXTSCORE",
    "_FULLTEXTWORDCOUNT",
];

pub fn is_function(name: &str) -> bool {
    FUNCTIONS.contains(&name)
}

/// The path a document expression reads (`c.embedding` is "/embedding",
/// `c.a["b"]` "/a/b"), if it reads one from the item itself.
pub fn document_path(expr: &Expr) -> Option<String> {
    DocumentPath::of_property(expr, None).map(|path| path.to_string())
}

/// How `VectorDistance(args)` compares vectors: by the embedding policy
/// (of `policies`) of the document path among its first two arguments,
/// `options` (its fourth argument, evaluated) overriding it.
pub(super) fn comparison(
    policies: &Policies,
    args: &[Expr],
    options: Option<&Value>,
) -> Option<Comparison> {
    let path = args.iter().take(2).find_map(document_path);
    policies.comparison(path.as_deref(), options)
}

/// Evaluates a search function on a row; `None` when `name` is not one.
pub(super) fn call(
    cx: &RunContext,
    name: &str,
    args: &[Expr],
    row: Row<'_>,
) -> Option<Option<Value>> {
    if !is_function(name) {
        return None;
    }
    let value = |i: usize| args.get(i).and_then(row);
    Some(match name {
        "VECTORDISTANCE" | "_VECTORSCORE" => {
            vector_distance(cx, args, row).map(|(score, _)| number(score))
        }
        "FULLTEXTCONTAINS" | "FULLTEXTCONTAINSALL" | "FULLTEXTCONTAINSANY" => {
            let (analyzer, runs) = document_words(cx, args, row)?;
            let terms: Option<Vec<String>> = (1..args.len())
                .map(|i| value(i)?.as_str().map(str::to_string))
                .collect();
            let terms = terms.filter(|t| !t.is_empty())?;
            if name == "FULLTEXTCONTAINS" && terms.len() != 1 {
                return Some(None);
            }
            let mut found = terms
                .iter()
                .map(|t| text::occurrences(&runs, &analyzer.words(t)) > 0);
            let result = match name {
                "FULLTEXTCONTAINSANY" => found.any(|f| f),
                _ => found.all(|f| f),
            };
            Some(Value::Bool(result))
        }
        "_FULLTEXTWORDCOUNT" => {
            let (_, runs) = document_words(cx, args, row)?;
            Some(Value::from(text::word_count(&runs)))
        }
        "FULLTEXTSCORE" => {
            let (path, terms) = score_terms(args)?;
            let statistics = cx.statistics(&(path, terms.clone()));
            full_text_score(cx, args, row, &terms, &statistics.unwrap_or_default())
        }
        "_FULLTEXTSCORE" => {
            // _FullTextScore(path, [terms], documents, words, [hits])
            let terms: Vec<String> = value(1)?
                .as_array()?
                .iter()
                .map(|t| t.as_str().map(str::to_string))
                .collect::<Option<_>>()?;
            let statistics = Statistics {
                documents: value(2)?.as_u64()?,
                words: value(3)?.as_u64()?,
                hits: value(4)?
                    .as_array()?
                    .iter()
                    .map(Value::as_u64)
                    .collect::<Option<_>>()?,
            };
            full_text_score(cx, args, row, &terms, &statistics)
        }
        // Ranks exist only over all rows: `ORDER BY RANK` computes them.
        _ => None,
    })
}

pub(super) fn number(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// The language analyzer of the path a full-text function's first
/// argument reads.
fn analyzer_for(policies: &Policies, args: &[Expr]) -> &'static text::Analyzer {
    let path = args.first().and_then(document_path).unwrap_or_default();
    text::analyzer(policies.full_text.language_for(&path))
}

/// The words of the text a full-text function's first argument reads,
/// with the analyzer of its language (for the search terms).
fn document_words(
    cx: &RunContext,
    args: &[Expr],
    row: Row<'_>,
) -> Option<(&'static text::Analyzer, Vec<Vec<String>>)> {
    let value = row(args.first()?)?;
    let analyzer = analyzer_for(&cx.policies, args);
    Some((analyzer, analyzer.document(&value)?))
}

/// `FullTextScore(path, term, ...)` or `FullTextScore(path, [terms])`:
/// the path and the terms, literal strings (parameters are literals here).
pub fn score_terms(args: &[Expr]) -> Option<(String, Vec<String>)> {
    let path = document_path(args.first()?)?;
    let literal = |e: &Expr| match e {
        Expr::Literal(Value::String(s)) => Some(vec![s.clone()]),
        Expr::Literal(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect(),
        Expr::Array(items) => items
            .iter()
            .map(|e| match e {
                Expr::Literal(Value::String(s)) => Some(s.clone()),
                _ => None,
            })
            .collect(),
        _ => None,
    };
    let mut terms = Vec::new();
    for arg in &args[1..] {
        terms.extend(literal(arg)?);
    }
    (!terms.is_empty()).then_some((path, terms))
}

/// The BM25 score of the row's text for `terms`.
fn full_text_score(
    cx: &RunContext,
    args: &[Expr],
    row: Row<'_>,
    terms: &[String],
    statistics: &Statistics,
) -> Option<Value> {
    let (analyzer, runs) = document_words(cx, args, row)?;
    let occurrences: Vec<u64> = terms
        .iter()
        .map(|t| text::occurrences(&runs, &analyzer.words(t)))
        .collect();
    Some(number(
        statistics.score(&occurrences, text::word_count(&runs)),
    ))
}

/// `VectorDistance(a, b [, bruteForce [, options]])` on a row: the score
/// and how it compared.
fn vector_distance(cx: &RunContext, args: &[Expr], row: Row<'_>) -> Option<(f64, Comparison)> {
    let options = match args.get(3) {
        Some(e) => Some(row(e)?),
        None => None,
    };
    let comparison = comparison(&cx.policies, args, options.as_ref())?;
    let a = vector::read(&row(args.first()?)?)?;
    let b = vector::read(&row(args.get(1)?)?)?;
    let score = vector::score(comparison.distance, &a, &b)?;
    Some((score, comparison))
}

/// The score of a scoring function on a row, turned so that greater is
/// more relevant (a Euclidean distance negated): what `ORDER BY RANK` and
/// `ORDER BY VectorDistance` sort by, descending.
pub(super) fn relevance(cx: &RunContext, expr: &Expr, row: Row<'_>) -> Option<f64> {
    let Expr::Call(name, args) = expr else {
        return None;
    };
    match name.as_str() {
        "VECTORDISTANCE" | "_VECTORSCORE" => {
            let (score, comparison) = vector_distance(cx, args, row)?;
            Some(match vector::greater_is_closer(comparison.distance) {
                true => score,
                false => -score,
            })
        }
        _ => call(cx, name, args, row)??.as_f64(),
    }
}

#[cfg(test)]
mod tests;
