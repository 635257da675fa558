//! `ORDER BY RANK RRF(score1, score2, ... [, weights])`: reciprocal rank
//! fusion. Each component ranks the rows by its relevance (most relevant
//! first; equal scores share a rank and the next score takes the next
//! rank), and a row's fused score is `Σ |weight| / (60 + rank)`. A
//! negative weight ranks that component the other way round, least
//! relevant first; a row a component cannot score (its path is missing)
//! comes after every row it can. This is how the SDKs fuse the component
//! queries of a hybrid query plan, so one range and many give one order.

use serde_json::Value;

use super::super::ast::Expr;
use super::super::context::RunContext;
use super::super::eval;
use super::{number, relevance, Row};

/// The constant k of `1 / (k + rank)`.
pub const RRF_K: f64 = 60.0;

/// `RRF(a, b, ...[, [w1, w2, ...]])`: its scoring components and weights.
pub fn rrf_components(expr: &Expr) -> Option<(Vec<&Expr>, Option<Vec<f64>>)> {
    let Expr::Call(name, args) = expr else {
        return None;
    };
    if name != "RRF" {
        return None;
    }
    match args.split_last() {
        Some((last, components)) => match weights(last) {
            Some(weights) => Some((components.iter().collect(), Some(weights))),
            None => Some((args.iter().collect(), None)),
        },
        None => Some((Vec::new(), None)),
    }
}

/// An array of numbers that reads nothing of the item (`[1, -0.5]`, or a
/// parameter's value).
pub fn weights(expr: &Expr) -> Option<Vec<f64>> {
    if !matches!(expr, Expr::Array(_) | Expr::Literal(Value::Array(_)))
        || eval::reads_document(expr)
    {
        return None;
    }
    match eval::constant(expr)? {
        Value::Array(items) => items.iter().map(Value::as_f64).collect(),
        _ => None,
    }
}

/// Turns each row's component relevances (an array, null where a
/// component has none) into its fused score.
pub fn fuse(keys: &mut [Option<Value>], weights: Option<&[f64]>) {
    let components = keys
        .iter()
        .find_map(|k| k.as_ref()?.as_array().map(Vec::len))
        .unwrap_or(0);
    let mut fused = vec![0.0f64; keys.len()];
    for component in 0..components {
        let weight = weights
            .and_then(|w| w.get(component))
            .copied()
            .unwrap_or(1.0);
        // Relevance in the component's direction; None last whatever it is.
        let mut scored: Vec<(Option<f64>, usize)> = keys
            .iter()
            .enumerate()
            .map(|(row, key)| {
                let relevance = key
                    .as_ref()
                    .and_then(|k| k.get(component))
                    .and_then(Value::as_f64);
                (relevance.map(|r| if weight < 0.0 { -r } else { r }), row)
            })
            .collect();
        scored.sort_by(|(a, _), (b, _)| match (a, b) {
            (Some(a), Some(b)) => b.total_cmp(a),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
        let mut rank = 0u32;
        let mut previous: Option<Option<f64>> = None;
        for (score, row) in scored {
            if previous != Some(score) {
                rank += 1;
                previous = Some(score);
            }
            fused[row] += weight.abs() / (RRF_K + f64::from(rank));
        }
    }
    for (key, score) in keys.iter_mut().zip(fused) {
        *key = serde_json::Number::from_f64(score).map(Value::Number);
    }
}

/// The sort key of an ORDER BY key of kind `Similarity` or `Rank` on a
/// row: its relevance, or for `RRF` each component's (null where it has
/// none), which [`fuse`] turns into ranks once every row is in.
pub(in crate::data::query) fn sort_value(
    cx: &RunContext,
    expr: &Expr,
    row: Row<'_>,
) -> Option<Value> {
    match rrf_components(expr) {
        Some((components, _)) => Some(Value::Array(
            components
                .iter()
                .map(|c| relevance(cx, c, row).map_or(Value::Null, number))
                .collect(),
        )),
        None => relevance(cx, expr, row).map(number),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fused(keys: Value, weights: Option<&[f64]>) -> Vec<f64> {
        let mut keys: Vec<Option<Value>> = keys
            .as_array()
            .unwrap()
            .iter()
            .map(|k| Some(k.clone()))
            .collect();
        fuse(&mut keys, weights);
        keys.into_iter()
            .map(|k| k.unwrap().as_f64().unwrap())
            .collect()
    }

    #[test]
    fn ranks_are_dense_and_fused_by_reciprocals() {
        // Component 1: 0.9, 0.9, 0.1 -> ranks 1, 1, 2; component 2: 3, 2, 1 -> 1, 2, 3.
        let scores = fused(json!([[0.9, 3], [0.9, 2], [0.1, 1]]), None);
        let r = |a: f64, b: f64| 1.0 / (60.0 + a) + 1.0 / (60.0 + b);
        assert_eq!(scores, [r(1.0, 1.0), r(1.0, 2.0), r(2.0, 3.0)]);
    }

    #[test]
    fn weights_scale_and_negative_weights_reverse_a_component() {
        let scores = fused(json!([[0.9, 3], [0.1, 1]]), Some(&[2.0, -0.5]));
        // Component 2 reversed: 1 ranks first.
        assert_eq!(scores, [2.0 / 61.0 + 0.5 / 62.0, 2.0 / 62.0 + 0.5 / 61.0]);
    }

    #[test]
    fn a_row_a_component_cannot_score_comes_last_in_it() {
        let scores = fused(json!([[null], [-5.0], [null]]), Some(&[-1.0]));
        assert_eq!(scores, [1.0 / 62.0, 1.0 / 61.0, 1.0 / 62.0]);
    }

    #[test]
    fn rrf_components_and_weights_are_read_from_the_call() {
        let call = |args: Vec<Expr>| Expr::Call("RRF".into(), args);
        let score = Expr::Call("FULLTEXTSCORE".into(), vec![]);
        let plain = call(vec![score.clone(), score.clone()]);
        let (components, weights) = rrf_components(&plain).unwrap();
        assert_eq!((components.len(), weights), (2, None));
        let weights_literal = Expr::Literal(json!([1, -0.5]));
        let weighted = call(vec![score.clone(), score.clone(), weights_literal]);
        let (components, weights) = rrf_components(&weighted).unwrap();
        assert_eq!((components.len(), weights), (2, Some(vec![1.0, -0.5])));
        assert!(rrf_components(&score).is_none());
    }
}
