//! What the spatial index keeps of an item's geography (`Reach`) and
//! where a query's shape lets a point be (`Region`), so that
//! `data/query/spatial_column.rs` can rule items out without parsing them. Every rule
//! here errs on the side of keeping an item: the executor filters each one
//! the index gives exactly as the scan would.

use serde_json::Value;

use super::{ellipsoid, parts, planar, shape_of, Part, Plane, Pos, Shape, V3};

/// An item's value at a spatial path, as the index keeps it: a valid
/// point (its unit normal and position), or another valid shape. A value
/// the spatial functions cannot read is kept as nothing: no distance,
/// `ST_WITHIN` or `ST_INTERSECTS` of it holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reach {
    Point(V3, Pos),
    Other,
}

impl Reach {
    pub fn of(value: &Value) -> Option<Reach> {
        match shape_of(value)?.ok()? {
            Shape::Point(p) => Some(Reach::Point(ellipsoid::normal(p), p)),
            _ => Some(Reach::Other),
        }
    }

    /// Whether an item of this reach may be in `region`; other shapes may
    /// always.
    pub fn may_be_in(&self, region: &Region) -> bool {
        let Reach::Point(n, [lon, lat]) = *self else {
            return true;
        };
        match region {
            Region::Near { normal, distance } => {
                ellipsoid::angle(n, *normal) <= distance / ellipsoid::LEAST_RADIUS * 1.001
            }
            Region::Parts(bounds) => bounds.iter().any(|b| {
                ellipsoid::angle(n, b.centre) <= b.radius + SLACK
                    || (b.lat.0 - SLACK..=b.lat.1 + SLACK).contains(&lat)
                        && [lon, lon - 360.0, lon + 360.0]
                            .iter()
                            .any(|x| (b.lon.0 - SLACK..=b.lon.1 + SLACK).contains(x))
            }),
        }
    }
}

/// Room for rounding at a boundary (radians, or degrees).
const SLACK: f64 = 1e-9;

/// Where a query lets an item's point be.
#[derive(Debug, Clone, PartialEq)]
pub enum Region {
    /// Within `distance` metres of the point whose unit normal is `normal`:
    /// along any curve on the ellipsoid the normal turns at most 1/M per
    /// metre, M = a(1 - e²) the least radius of curvature, and
    /// `ST_DISTANCE` measures such a curve (a thousandth more covers its
    /// quadrature).
    Near { normal: V3, distance: f64 },
    /// On or inside one of these parts (`ST_WITHIN` and `ST_INTERSECTS` of
    /// a point and a shape).
    Parts(Vec<Bounds>),
}

/// What holds a part of a shape in both planes the functions relate
/// shapes in (`Plane`): the cap of normals around its vertices (in the
/// gnomonic plane a part lies inside the spherical hull of its vertices,
/// which a cap under a hemisphere holds) and the box of its unwrapped
/// longitudes and latitudes (in that plane a polygon lies inside the box of
/// its vertices, a point being tried a turn east and west too).
#[derive(Debug, Clone, PartialEq)]
pub struct Bounds {
    centre: V3,
    radius: f64,
    lon: (f64, f64),
    lat: (f64, f64),
}

impl Region {
    /// `ST_DISTANCE(point, x) < distance`: `None` unless `point` is a valid point.
    pub fn near(point: &Value, distance: f64) -> Option<Region> {
        match Reach::of(point)? {
            Reach::Point(normal, _) if distance.is_finite() => {
                Some(Region::Near { normal, distance })
            }
            _ => None,
        }
    }

    /// Where a point may be for `ST_WITHIN(point, shape)` or
    /// `ST_INTERSECTS(point, shape)` to hold. `None` (no narrowing) unless
    /// the shape is valid, no polygon of it may stand for the inverse of
    /// its ring (clockwise in either plane), and a cap under a hemisphere
    /// holds each part.
    pub fn around(value: &Value) -> Option<Region> {
        let shape = shape_of(value)?.ok()?;
        let lines: Vec<&[Pos]> = match &shape {
            Shape::Point(p) => vec![std::slice::from_ref(p)],
            Shape::Line(line) => vec![line],
            Shape::Polygon(rings) => vec![&rings[0]],
            Shape::Multi(polygons) => polygons.iter().map(|rings| rings[0].as_slice()).collect(),
        };
        let inverted = |plane: &Plane| {
            parts(&shape, plane)
                .iter()
                .any(|part| matches!(part, Part::Area { inverted: true, .. }))
        };
        if inverted(&Plane::LonLat) {
            return None;
        }
        let mut bounds = Vec::with_capacity(lines.len());
        for line in lines {
            let normals: Vec<V3> = line.iter().map(|&p| ellipsoid::normal(p)).collect();
            let sum = normals
                .iter()
                .fold([0.0; 3], |s, n| [s[0] + n[0], s[1] + n[1], s[2] + n[2]]);
            let centre = ellipsoid::unit(sum)?;
            let radius = normals
                .iter()
                .map(|&n| ellipsoid::angle(n, centre))
                .fold(0.0, f64::max);
            if radius >= FARTHEST {
                return None;
            }
            let gnomonic = Plane::gnomonic(centre);
            if matches!(shape, Shape::Polygon(_) | Shape::Multi(_)) && inverted(&gnomonic) {
                return None;
            }
            let planar = planar(line, &Plane::LonLat, 0.0);
            let (mut lon, mut lat) = ((f64::MAX, f64::MIN), (f64::MAX, f64::MIN));
            for c in planar.coords() {
                lon = (lon.0.min(c.x), lon.1.max(c.x));
                lat = (lat.0.min(c.y), lat.1.max(c.y));
            }
            bounds.push(Bounds {
                centre,
                radius,
                lon,
                lat,
            });
        }
        Some(Region::Parts(bounds))
    }
}

/// The widest cap of a part's vertices the gnomonic bound is used for:
/// 80°, short of a hemisphere.
const FARTHEST: f64 = 80.0 * std::f64::consts::PI / 180.0;
