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

use std::collections::HashMap;

use serde_json::Value;

use super::ast::{Expr, Select, SortKind};
use super::document_path::DocumentPath;
use super::eval;
use super::RunContext;
use crate::query::search::policy::{
    DistanceFunction, FullTextPolicy, VectorDataType, VectorEmbeddingPolicy,
};

pub mod bm25;
pub mod nearest;
pub mod plan;
pub mod policy;
pub mod rank;
pub mod text;
pub mod validate;
pub mod vector;

pub(super) use bm25::Statistics;
use vector::Comparison;

/// The container's policies that search functions read.
#[derive(Debug, Clone, Default)]
pub struct Policies {
    pub vectors: VectorEmbeddingPolicy,
    pub full_text: FullTextPolicy,
}

impl Policies {
    /// How `VectorDistance` compares vectors at `path` (a document path,
    /// if one of its arguments is), `options` overriding the policy.
    pub fn comparison(&self, path: Option<&str>, options: Option<&Value>) -> Option<Comparison> {
        let mut comparison =
            path.and_then(|p| self.vectors.for_path(p))
                .map_or_else(Comparison::default, |e| Comparison {
                    distance: e.distance_function,
                    data_type: e.data_type,
                });
        if let Some(options) = options {
            let options = options.as_object()?;
            for (key, value) in options {
                if key.eq_ignore_ascii_case("distanceFunction") {
                    comparison.distance = DistanceFunction::parse(value.as_str()?)?;
                } else if key.eq_ignore_ascii_case("dataType") {
                    comparison.data_type = VectorDataType::parse(value.as_str()?)?;
                }
            }
        }
        Some(comparison)
    }
}

/// A `FullTextScore`'s statistics are kept per path and terms.
pub(super) type TermsKey = (String, Vec<String>);

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
fn comparison(policies: &Policies, args: &[Expr], options: Option<&Value>) -> Option<Comparison> {
    let path = args.iter().take(2).find_map(document_path);
    policies.comparison(path.as_deref(), options)
}

/// Whether `VectorDistance(args)` counts greater scores as closer, read
/// without a row (for a plan): constant options only.
pub(super) fn greater_is_closer(policies: &Policies, args: &[Expr]) -> bool {
    let options = args.get(3).and_then(eval::constant);
    comparison(policies, args, options.as_ref())
        .is_none_or(|c| vector::greater_is_closer(c.distance))
}

/// Evaluates a search function on a row; `None` when `name` is not one.
pub(super) fn call(
    cx: &RunContext,
    name: &str,
    args: &[Expr],
    row: &[&Value],
) -> Option<Option<Value>> {
    if !is_function(name) {
        return None;
    }
    let value = |i: usize| args.get(i).and_then(|e| eval::eval(cx, e, row));
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

fn number(x: f64) -> Value {
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
    row: &[&Value],
) -> Option<(&'static text::Analyzer, Vec<Vec<String>>)> {
    let value = eval::eval(cx, args.first()?, row)?;
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
    row: &[&Value],
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
fn vector_distance(cx: &RunContext, args: &[Expr], row: &[&Value]) -> Option<(f64, Comparison)> {
    let options = match args.get(3) {
        Some(e) => Some(eval::eval(cx, e, row)?),
        None => None,
    };
    let comparison = comparison(&cx.policies, args, options.as_ref())?;
    let a = vector::read(&eval::eval(cx, args.first()?, row)?)?;
    let b = vector::read(&eval::eval(cx, args.get(1)?, row)?)?;
    let score = vector::score(comparison.distance, &a, &b)?;
    Some((score, comparison))
}

/// The score of a scoring function on a row, turned so that greater is
/// more relevant (a Euclidean distance negated): what `ORDER BY RANK` and
/// `ORDER BY VectorDistance` sort by, descending.
pub(super) fn relevance(cx: &RunContext, expr: &Expr, row: &[&Value]) -> Option<f64> {
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

/// The sort key of an ORDER BY key of kind `Similarity` or `Rank` on a
/// row: its relevance, or for `RRF` each component's (null where it has
/// none), which [`rank::fuse`] turns into ranks once every row is in.
pub(super) fn sort_value(cx: &RunContext, expr: &Expr, row: &[&Value]) -> Option<Value> {
    match rank::rrf_components(expr) {
        Some((components, _)) => Some(Value::Array(
            components
                .iter()
                .map(|c| relevance(cx, c, row).map_or(Value::Null, number))
                .collect(),
        )),
        None => relevance(cx, expr, row).map(number),
    }
}

/// Whether an ORDER BY key's values come in descending order: for
/// `VectorDistance`, whether its distance function counts greater as
/// closer (by `policies`); for a rank, always (its scores are relevances).
pub fn sorts_descending(policies: &Policies, key: &super::ast::SortKey) -> bool {
    match (key.kind, &key.expr) {
        (SortKind::Similarity, Expr::Call(_, args)) => greater_is_closer(policies, args),
        _ => key.descending,
    }
}

/// The `FullTextScore` calls of a query's ORDER BY RANK, by path and terms.
fn full_text_scores(select: &Select) -> Vec<TermsKey> {
    let mut found = Vec::new();
    for key in select.order_by.iter().filter(|k| k.kind == SortKind::Rank) {
        let components = match rank::rrf_components(&key.expr) {
            Some((components, _)) => components,
            None => vec![&key.expr],
        };
        for component in components {
            if let Expr::Call(name, args) = component {
                if name == "FULLTEXTSCORE" {
                    found.extend(score_terms(args));
                }
            }
        }
    }
    found
}

/// Whether running `select` needs the statistics of the documents in
/// scope (it ranks by `FullTextScore`).
pub(super) fn needs_statistics(select: &Select) -> bool {
    !full_text_scores(select).is_empty()
}

/// The statistics of `docs` (every document in scope, before any filter,
/// as the gateway's statistics query counts them) for each
/// `FullTextScore` of `select`, for [`RunContext::with_statistics`].
pub(super) fn gather_statistics(
    policies: &Policies,
    select: &Select,
    docs: &[Value],
) -> HashMap<TermsKey, Statistics> {
    let mut statistics = HashMap::new();
    for (path, terms) in full_text_scores(select) {
        let analyzer = text::analyzer(policies.full_text.language_for(&path));
        let phrases: Vec<Vec<String>> = terms.iter().map(|t| analyzer.words(t)).collect();
        let mut stats = Statistics {
            documents: docs.len() as u64,
            words: 0,
            hits: vec![0; terms.len()],
        };
        let steps: Vec<&str> = path[1..].split('/').collect();
        for doc in docs {
            let value = steps.iter().try_fold(doc, |v, step| v.get(step));
            let Some(runs) = value.and_then(|v| analyzer.document(v)) else {
                continue;
            };
            stats.words += text::word_count(&runs);
            for (hits, phrase) in stats.hits.iter_mut().zip(&phrases) {
                if text::occurrences(&runs, phrase) > 0 {
                    *hits += 1;
                }
            }
        }
        statistics.insert((path, terms), stats);
    }
    statistics
}
#[cfg(test)]
mod tests;
