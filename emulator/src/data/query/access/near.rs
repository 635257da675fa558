//! `ST_DISTANCE(path, point) < r`, `ST_WITHIN(path, shape)` and
//! `ST_INTERSECTS(path, shape)`: what the spatial index narrows
//! (`data/query/spatial_column.rs`).

use crate::data::index::document_path::DocumentPath;
use crate::data::query::ast::{BinaryOp, Expr};
use crate::data::query::{eval, Region};
use serde_json::Value;

/// A condition on a path with a spatial index: where it lets the item's
/// point be.
#[derive(Debug, Clone, PartialEq)]
pub struct Near {
    pub path: DocumentPath,
    pub region: Region,
}

/// `ST_DISTANCE(path, point) < r`, `<= r`, or the same written the other
/// way round (`r > ST_DISTANCE(point, path)`), with a constant point and
/// a constant number; `ST_WITHIN(path, shape)`, `ST_INTERSECTS(path,
/// shape)` or `ST_INTERSECTS(shape, path)` with a constant shape.
pub(super) fn near(conjunct: &Expr) -> Option<Near> {
    match conjunct {
        Expr::Binary(op, a, b) => {
            let (call, distance) = match op {
                BinaryOp::Lt | BinaryOp::Le => (a, b),
                BinaryOp::Gt | BinaryOp::Ge => (b, a),
                _ => return None,
            };
            let (path, point) = spatial_call(call, "ST_DISTANCE", true)?;
            if !distance.is_constant() {
                return None;
            }
            let distance = eval::constant(distance)?.as_f64()?;
            let region = Region::near(&point, distance)?;
            Some(Near { path, region })
        }
        call => {
            let (path, shape) = spatial_call(call, "ST_WITHIN", false)
                .or_else(|| spatial_call(call, "ST_INTERSECTS", true))?;
            let region = Region::around(&shape)?;
            Some(Near { path, region })
        }
    }
}

/// `name(path, constant)` (or, `either_way`, `name(constant, path)`): the
/// item's path and the constant's value.
fn spatial_call(expr: &Expr, name: &str, either_way: bool) -> Option<(DocumentPath, Value)> {
    let Expr::Call(called, args) = expr else {
        return None;
    };
    let [x, y] = args.as_slice() else {
        return None;
    };
    if called != name {
        return None;
    }
    let (path, constant) = match (
        DocumentPath::of_property(x, None),
        DocumentPath::of_property(y, None),
    ) {
        (Some(path), None) => (path, y),
        (None, Some(path)) if either_way => (path, x),
        _ => return None,
    };
    constant.is_constant().then_some(())?;
    Some((path, eval::constant(constant)?))
}
