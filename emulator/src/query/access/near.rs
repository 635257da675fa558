//! `ST_DISTANCE(path, point) < r`: what the spatial index narrows
//! (`store/spatial.rs`).

use super::{is_constant, property_path};
use crate::query::ast::{BinaryOp, Expr};
use crate::query::{eval, Reach};
use crate::store::index::IndexPath;

/// `ST_DISTANCE(path, point) < distance` (or `<=`): what the spatial
/// index of `path` can narrow.
#[derive(Debug, Clone, PartialEq)]
pub struct Near {
    pub path: IndexPath,
    /// The point's unit normal.
    pub normal: [f64; 3],
    /// Metres.
    pub distance: f64,
}

/// `ST_DISTANCE(path, point) < r`, `<= r`, or the same written the other
/// way round (`r > ST_DISTANCE(point, path)`), with a constant point and
/// a constant number: what the spatial index of the item's `path` narrows.
pub(super) fn near(conjunct: &Expr) -> Option<Near> {
    let Expr::Binary(op, a, b) = conjunct else {
        return None;
    };
    let (call, distance) = match op {
        BinaryOp::Lt | BinaryOp::Le => (a, b),
        BinaryOp::Gt | BinaryOp::Ge => (b, a),
        _ => return None,
    };
    let Expr::Call(name, args) = call.as_ref() else {
        return None;
    };
    let [x, y] = args.as_slice() else {
        return None;
    };
    if name != "ST_DISTANCE" || !is_constant(distance) {
        return None;
    }
    let distance = eval::eval(distance, &[])?.as_f64()?;
    let (path, point) = match (property_path(x), property_path(y)) {
        (Some(path), None) => (path, y),
        (None, Some(path)) => (path, x),
        _ => return None,
    };
    if !is_constant(point) {
        return None;
    }
    let Reach::Point(normal) = Reach::of(&eval::eval(point, &[])?)? else {
        return None;
    };
    (distance.is_finite()).then_some(Near {
        path,
        normal,
        distance,
    })
}
