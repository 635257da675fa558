//! What the service refuses in a search query, before reading any item:
//! `FullTextScore` outside `ORDER BY RANK` (or an `RRF` in it), `RRF`
//! anywhere else, a rank that is not a score, weights that do not match
//! the components, and `VectorDistance` options it does not know.

use serde_json::Value;

use super::super::ast::{Expr, Select, SortKind};
use super::super::eval;
use super::rank::rrf_components;
use super::score_terms;
use crate::data::index::search_policy::{DistanceFunction, VectorDataType};
use crate::protocol::error::{ApiError, ApiResult};

/// The scores `ORDER BY RANK` and `RRF` rank by (the internal
/// `_FullTextScore` and `_VectorScore` sort plain ORDER BYs of plans only).
const SCORES: [&str; 2] = ["FULLTEXTSCORE", "VECTORDISTANCE"];

fn refuse(message: impl Into<String>) -> ApiError {
    ApiError::bad_request(message)
}

/// Refuses what the service refuses in `select`'s search functions.
pub fn validate(select: &Select) -> ApiResult<()> {
    let mut allowed: Vec<&Expr> = Vec::new();
    for key in &select.order_by {
        match key.kind {
            SortKind::Rank => {
                rank_key(&key.expr)?;
                allowed.push(&key.expr);
                if let Some((components, _)) = rrf_components(&key.expr) {
                    allowed.extend(components);
                }
            }
            SortKind::Similarity | SortKind::Value => {}
        }
    }
    let expressions = select
        .projection
        .expressions()
        .into_iter()
        .chain(select.clause_expressions());
    for expr in expressions {
        let mut problem = Ok(());
        eval::walk(expr, &mut |call| {
            let (Expr::Call(name, args), true) = (call, problem.is_ok()) else {
                return;
            };
            let placed = allowed.iter().any(|a| std::ptr::eq(*a, call));
            problem = match name.as_str() {
                "FULLTEXTSCORE" if !placed => Err(refuse(
                    "The FullTextScore function is only allowed in an ORDER BY RANK clause, alone or \
                     as an argument of RRF: it cannot be projected or filtered on.",
                )),
                "RRF" if !placed => Err(refuse(
                    "The RRF function is only allowed in an ORDER BY RANK clause.",
                )),
                "FULLTEXTSCORE" => score_terms(args).map(|_| ()).ok_or_else(|| {
                    refuse(
                        "FullTextScore takes a document path then one or more string literals (or an array \
                         of them), e.g. FullTextScore(c.text, 'keyword1', 'keyword2').",
                    )
                }),
                "VECTORDISTANCE" | "_VECTORSCORE" => vector_distance(args),
                "FULLTEXTCONTAINS" | "FULLTEXTCONTAINSALL" | "FULLTEXTCONTAINSANY"
                    if args.len() < 2 =>
                {
                    Err(refuse(format!(
                        "{name} takes a document path and at least one search term, e.g. {name}(c.text, 'keyword')."
                    )))
                }
                _ => Ok(()),
            };
        });
        problem?;
    }
    Ok(())
}

/// An `ORDER BY RANK` key: one score, or `RRF` of scores with as many
/// weights as scores.
fn rank_key(expr: &Expr) -> ApiResult<()> {
    let is_score = |e: &Expr| matches!(e, Expr::Call(name, _) if SCORES.contains(&name.as_str()));
    if is_score(expr) {
        return Ok(());
    }
    let Some((components, given_weights)) = rrf_components(expr) else {
        return Err(refuse(
            "ORDER BY RANK takes a scoring function: FullTextScore, VectorDistance, or RRF of them.",
        ));
    };
    if let Expr::Call(_, args) = expr {
        // A last argument that is neither a score nor weights.
        if given_weights.is_none()
            && args
                .last()
                .is_some_and(|a| matches!(a, Expr::Array(_) | Expr::Literal(Value::Array(_))))
        {
            return Err(refuse(
                "The weights of RRF must be an array of numbers, one per scoring function.",
            ));
        }
    }
    if components.is_empty() || !components.iter().all(|c| is_score(c)) {
        return Err(refuse(
            "RRF takes scoring functions (FullTextScore, VectorDistance) and, last, an optional array \
             of weights.",
        ));
    }
    if let Some(weights) = given_weights {
        if weights.len() != components.len() {
            return Err(refuse(format!(
                "RRF has {} scoring functions but {} weights: give one weight per scoring function.",
                components.len(),
                weights.len()
            )));
        }
    }
    Ok(())
}

/// `VectorDistance(a, b [, bruteForce [, options]])`: two to four
/// arguments, a boolean flag, and options the service knows.
fn vector_distance(args: &[Expr]) -> ApiResult<()> {
    if !(2..=4).contains(&args.len()) {
        return Err(refuse(format!(
            "VectorDistance takes 2 to 4 arguments (vector, vector, bruteForce, options); {} given.",
            args.len()
        )));
    }
    if let Some(Expr::Literal(flag)) = args.get(2) {
        if !flag.is_boolean() {
            return Err(refuse(format!(
                "The third argument of VectorDistance (bruteForce) must be true or false, got {flag}."
            )));
        }
    }
    let options = match args.get(3) {
        Some(Expr::Literal(Value::Object(o))) => o.clone(),
        Some(Expr::Object(fields)) => fields
            .iter()
            .filter_map(|(k, e)| match e {
                Expr::Literal(v) => Some((k.clone(), v.clone())),
                _ => None,
            })
            .collect(),
        Some(Expr::Literal(other)) => {
            return Err(refuse(format!(
                "The fourth argument of VectorDistance must be an object such as \
                 {{'distanceFunction': 'cosine', 'dataType': 'float32'}}, got {other}."
            )))
        }
        _ => return Ok(()),
    };
    for (key, value) in &options {
        let text = value.as_str().unwrap_or_default();
        if key.eq_ignore_ascii_case("distanceFunction") && DistanceFunction::parse(text).is_none() {
            return Err(refuse(format!(
                "Invalid distanceFunction {value} in VectorDistance: use 'cosine', 'dotproduct' or 'euclidean'."
            )));
        }
        if key.eq_ignore_ascii_case("dataType") && VectorDataType::parse(text).is_none() {
            return Err(refuse(format!(
                "Invalid dataType {value} in VectorDistance: use 'float32', 'float16', 'int8' or 'uint8'."
            )));
        }
    }
    Ok(())
}
