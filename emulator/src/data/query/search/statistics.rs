//! `FullTextScore`'s statistics: which calls of a query's ORDER BY RANK
//! need them, and their values over the documents in scope (every
//! document, before any filter, as the gateway's statistics query counts
//! them), which the run's context holds while the query runs.

use std::collections::HashMap;

use serde_json::Value;

use super::bm25::{Statistics, TermsKey};
use super::rank::rrf_components;
use super::{score_terms, text, Policies};
use crate::data::query::ast::{Expr, Select, SortKind};

/// The `FullTextScore` calls of a query's ORDER BY RANK, by path and terms.
fn full_text_scores(select: &Select) -> Vec<TermsKey> {
    let mut found = Vec::new();
    for key in select.order_by.iter().filter(|k| k.kind == SortKind::Rank) {
        let components = match rrf_components(&key.expr) {
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
pub(in crate::data::query) fn needs_statistics(select: &Select) -> bool {
    !full_text_scores(select).is_empty()
}

/// The statistics of `docs` (every document in scope, before any filter,
/// as the gateway's statistics query counts them) for each
/// `FullTextScore` of `select`, for `RunContext::with_statistics`.
pub(in crate::data::query) fn gather_statistics(
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
