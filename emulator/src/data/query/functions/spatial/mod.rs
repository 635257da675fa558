//! Spatial functions over GeoJSON geography (WGS-84 longitude, latitude):
//! `ST_DISTANCE`, `ST_WITHIN`, `ST_INTERSECTS`, `ST_ISVALID`,
//! `ST_ISVALIDDETAILED` and `ST_AREA`, over the four documented types
//! `Point`, `LineString`, `Polygon` and `MultiPolygon`.
//!
//! - Distances (m) and areas (m²) are measured on the WGS-84 ellipsoid with
//!   the service's edges, arcs of great ellipses ([`ellipsoid`] says why and
//!   how close this comes to the documented numbers).
//! - `ST_WITHIN` and `ST_INTERSECTS` use the `geo` crate's DE-9IM relation
//!   in a plane. When one hemisphere holds both shapes, that is their
//!   gnomonic projection, which maps every edge to a straight segment: the
//!   relation is then exactly that of the curved edges (up to rounding on
//!   a boundary). Otherwise it is longitude and latitude, unwrapped along
//!   each line and ring (edges are then approximated).
//! - A polygon whose outer ring runs clockwise stands, as documented, for the
//!   inverse of the region inside it (its area is the rest of the earth).
//! - An argument that is not a GeoJSON object of a supported type is
//!   undefined for every function. An invalid one (a latitude out of range,
//!   an open ring) is `false` for `ST_ISVALID`, a reason for
//!   `ST_ISVALIDDETAILED`, and undefined for the others.
//! - Work is bounded: a pair of shapes whose vertex counts multiply past
//!   [`MAX_VERTEX_PAIRS`] is undefined rather than compared.

mod ellipsoid;
mod reach;
#[cfg(test)]
mod tests;

use geo::relate::IntersectionMatrix;
use geo::{Coord, Geometry, LineString, Point, Polygon, Relate};
use serde_json::{Map, Value};

use super::{arg, charge, finite, Args, Function};
use ellipsoid::V3;
pub use reach::{Reach, Region};

pub const FUNCTIONS: &[(&str, Function)] = &[
    ("ST_DISTANCE", st_distance),
    ("ST_WITHIN", |a| predicate(a, within)),
    ("ST_INTERSECTS", |a| predicate(a, intersects)),
    ("ST_ISVALID", |a| {
        let valid = validity(a)?;
        Some(Value::Bool(valid.is_ok()))
    }),
    ("ST_ISVALIDDETAILED", st_isvaliddetailed),
    ("ST_AREA", st_area),
];

/// The most vertex pairs one comparison of two shapes may weigh.
pub const MAX_VERTEX_PAIRS: usize = 4_000_000;

// The documented reasons of ST_ISVALIDDETAILED.
const LATITUDE: &str = "Latitude values must be between -90 and 90 degrees.";

fn open_ring(ring: usize) -> String {
    format!(
        "The Polygon input is not valid because the start and end points of the ring number \
         {ring} are not the same. Each ring of a polygon must have the same start and end points."
    )
}

// Reasons the documentation does not show; worded as the documented ones.
const LONGITUDE: &str = "Longitude values must be between -180 and 180 degrees.";
const LINE_POINTS: &str = "The LineString input is not valid because it does not have enough \
     distinct points. A LineString must have at least two distinct points.";

fn short_ring(ring: usize) -> String {
    format!(
        "The Polygon input is not valid because the ring number {ring} does not have enough \
         points. Each ring of a polygon must contain at least four points."
    )
}

fn malformed(kind: &str) -> String {
    format!(
        "The {kind} input is not valid because its coordinates are not well formed: a position \
         is an array of at least two numbers (longitude, then latitude)."
    )
}

/// A position: longitude, latitude (degrees).
type Pos = [f64; 2];

/// A polygon's rings, the outer one first, each closed.
type Rings = Vec<Vec<Pos>>;

/// A valid GeoJSON shape.
enum Shape {
    Point(Pos),
    Line(Vec<Pos>),
    Polygon(Rings),
    Multi(Vec<Rings>),
}

/// The evaluated argument `i`: `None` (undefined) unless it is an object
/// with a supported `type`; then the shape, or the reason it is invalid.
fn shape(args: &[Option<Value>], i: usize) -> Option<Result<Shape, String>> {
    shape_of(arg(args, i)?)
}

/// [`shape`] of a value.
fn shape_of(value: &Value) -> Option<Result<Shape, String>> {
    let object = value.as_object()?;
    let kind = object.get("type")?.as_str()?;
    if !matches!(kind, "Point" | "LineString" | "Polygon" | "MultiPolygon") {
        return None;
    }
    Some(parse(kind, object))
}

fn parse(kind: &str, object: &Map<String, Value>) -> Result<Shape, String> {
    let coordinates = object.get("coordinates").ok_or_else(|| malformed(kind))?;
    match kind {
        "Point" => Ok(Shape::Point(position(kind, coordinates)?)),
        "LineString" => {
            let line = positions(kind, coordinates)?;
            if line.iter().all(|p| *p == line[0]) {
                return Err(LINE_POINTS.into());
            }
            Ok(Shape::Line(line))
        }
        "Polygon" => Ok(Shape::Polygon(rings(kind, coordinates)?)),
        _ => {
            let polygons = coordinates.as_array().ok_or_else(|| malformed(kind))?;
            let polygons = polygons
                .iter()
                .map(|p| rings(kind, p))
                .collect::<Result<_, _>>()?;
            Ok(Shape::Multi(polygons))
        }
    }
}

fn position(kind: &str, value: &Value) -> Result<Pos, String> {
    let items = value.as_array().filter(|a| a.len() >= 2);
    let pair = items.and_then(|a| Some([a[0].as_f64()?, a[1].as_f64()?]));
    let [lon, lat] = pair.ok_or_else(|| malformed(kind))?;
    if !(-90.0..=90.0).contains(&lat) {
        return Err(LATITUDE.into());
    }
    if !(-180.0..=180.0).contains(&lon) {
        return Err(LONGITUDE.into());
    }
    Ok([lon, lat])
}

/// A non-empty array of positions.
fn positions(kind: &str, value: &Value) -> Result<Vec<Pos>, String> {
    let items = value
        .as_array()
        .filter(|a| !a.is_empty())
        .ok_or_else(|| malformed(kind))?;
    items.iter().map(|p| position(kind, p)).collect()
}

/// A polygon's rings: every position in range first, then each ring closed
/// and of at least four positions (numbered from 1, the outer ring first).
fn rings(kind: &str, value: &Value) -> Result<Rings, String> {
    let items = value
        .as_array()
        .filter(|a| !a.is_empty())
        .ok_or_else(|| malformed(kind))?;
    let rings: Rings = items
        .iter()
        .map(|r| positions(kind, r))
        .collect::<Result<_, _>>()?;
    for (i, ring) in rings.iter().enumerate() {
        if ring.first() != ring.last() {
            return Err(open_ring(i + 1));
        }
        if ring.len() < 4 {
            return Err(short_ring(i + 1));
        }
    }
    Ok(rings)
}

/// One argument, valid or not; undefined unless there is exactly one and
/// it is a GeoJSON object of a supported type.
fn validity(args: &[Option<Value>]) -> Option<Result<Shape, String>> {
    (args.len() == 1).then_some(())?;
    shape(args, 0)
}

fn st_isvaliddetailed(args: &Args) -> Option<Value> {
    let mut result = Map::new();
    match validity(args)? {
        Ok(_) => {
            result.insert("valid".into(), Value::Bool(true));
        }
        Err(reason) => {
            charge(args.run(), reason.len())?;
            result.insert("valid".into(), Value::Bool(false));
            result.insert("reason".into(), Value::String(reason));
        }
    }
    Some(Value::Object(result))
}

/// Two valid shapes, or undefined.
fn two(args: &[Option<Value>]) -> Option<(Shape, Shape)> {
    (args.len() == 2).then_some(())?;
    Some((shape(args, 0)?.ok()?, shape(args, 1)?.ok()?))
}

fn st_area(args: &Args) -> Option<Value> {
    (args.len() == 1).then_some(())?;
    let area = match shape(args, 0)?.ok()? {
        // Documented: zero- and one-dimensional shapes have no area.
        Shape::Point(_) | Shape::Line(_) => 0.0,
        Shape::Polygon(rings) => polygon_area(&rings),
        Shape::Multi(polygons) => polygons.iter().map(|r| polygon_area(r)).sum(),
    };
    finite(area)
}

fn normals(ring: &[Pos]) -> Vec<V3> {
    ring.iter().map(|&p| ellipsoid::normal(p)).collect()
}

/// The outer ring's region less its holes (each hole the smaller side of
/// its ring, whichever way it runs).
fn polygon_area(rings: &[Vec<Pos>]) -> f64 {
    let total = ellipsoid::total_area();
    let outer = ellipsoid::left_area(&normals(&rings[0]));
    let holes: f64 = rings[1..]
        .iter()
        .map(|ring| {
            let left = ellipsoid::left_area(&normals(ring));
            left.min(total - left)
        })
        .sum();
    (outer - holes).max(0.0)
}

/// One connected part of a shape: a point, a line, or a polygon (with
/// `inverted` when its outer ring runs clockwise).
enum Part<'a> {
    Point(Pos),
    Line(&'a [Pos]),
    Area { rings: &'a Rings, inverted: bool },
}

/// The plane in which two shapes are related.
enum Plane {
    /// The gnomonic projection about `centre` (a unit normal), with `east`
    /// and `north` spanning its tangent plane. It maps every great circle
    /// of normals, so every edge, to a straight line: relations computed
    /// there are the service's, edges and all.
    Gnomonic { centre: V3, east: V3, north: V3 },
    /// Longitude and latitude, unwrapped along each line and ring, the
    /// first shape also tried a turn east and west: for shapes that no
    /// hemisphere holds.
    LonLat,
}

/// The farthest (as the cosine of the angle) a vertex may lie from the
/// centre of the gnomonic projection: 84°, short of the horizon where it
/// goes to infinity.
const GNOMONIC_REACH: f64 = 0.1;

/// The gnomonic plane about the mean normal of all the shapes' vertices if
/// it holds them all, else longitude and latitude.
fn plane(shapes: &[&Shape]) -> Plane {
    let mut sum = [0.0; 3];
    let each = |visit: &mut dyn FnMut(V3)| {
        for shape in shapes {
            let lines: Vec<&[Pos]> = match shape {
                Shape::Point(p) => vec![std::slice::from_ref(p)],
                Shape::Line(line) => vec![line],
                Shape::Polygon(rings) => rings.iter().map(Vec::as_slice).collect(),
                Shape::Multi(polygons) => polygons.iter().flatten().map(Vec::as_slice).collect(),
            };
            for &p in lines.into_iter().flatten() {
                visit(ellipsoid::normal(p));
            }
        }
    };
    each(&mut |n| {
        sum = [sum[0] + n[0], sum[1] + n[1], sum[2] + n[2]];
    });
    let Some(centre) = ellipsoid::unit(sum) else {
        return Plane::LonLat;
    };
    let mut held = true;
    each(&mut |n| held &= ellipsoid::dot(n, centre) > GNOMONIC_REACH);
    if held {
        Plane::gnomonic(centre)
    } else {
        Plane::LonLat
    }
}

impl Plane {
    /// The gnomonic plane about `centre`, a unit normal.
    fn gnomonic(centre: V3) -> Plane {
        // East and north at the centre (any pair at a pole).
        let east =
            ellipsoid::unit(ellipsoid::cross([0.0, 0.0, 1.0], centre)).unwrap_or([0.0, 1.0, 0.0]);
        Plane::Gnomonic {
            centre,
            east,
            north: ellipsoid::cross(centre, east),
        }
    }
}

/// A line or ring in the plane (moved by `shift` degrees of longitude in
/// the longitude-latitude plane).
fn planar(line: &[Pos], plane: &Plane, shift: f64) -> LineString<f64> {
    match plane {
        Plane::Gnomonic {
            centre,
            east,
            north,
        } => line
            .iter()
            .map(|&p| {
                let n = ellipsoid::normal(p);
                let depth = ellipsoid::dot(n, *centre);
                Coord {
                    x: ellipsoid::dot(n, *east) / depth,
                    y: ellipsoid::dot(n, *north) / depth,
                }
            })
            .collect(),
        Plane::LonLat => unwrapped(line, shift),
    }
}

/// Longitudes made continuous along a line or ring (each step under 180°),
/// then moved by `shift` degrees.
fn unwrapped(line: &[Pos], shift: f64) -> LineString<f64> {
    let mut previous: Option<f64> = None;
    line.iter()
        .map(|&[lon, lat]| {
            let mut x = lon;
            if let Some(p) = previous {
                while x - p > 180.0 {
                    x -= 360.0;
                }
                while x - p < -180.0 {
                    x += 360.0;
                }
            }
            previous = Some(x);
            Coord {
                x: x + shift,
                y: lat,
            }
        })
        .collect()
}

/// The shape's parts, each polygon's orientation read in the plane (seen
/// from outside the earth, east to the right of north in both planes).
fn parts<'a>(shape: &'a Shape, plane: &Plane) -> Vec<Part<'a>> {
    let area = |rings: &'a Rings| {
        let ring = planar(&rings[0], plane, 0.0);
        let twice: f64 = ring.lines().map(|l| l.determinant()).sum();
        Part::Area {
            rings,
            inverted: twice < 0.0,
        }
    };
    match shape {
        Shape::Point(p) => vec![Part::Point(*p)],
        Shape::Line(line) => vec![Part::Line(line)],
        Shape::Polygon(rings) => vec![area(rings)],
        Shape::Multi(polygons) => polygons.iter().map(area).collect(),
    }
}

/// The part as a `geo` geometry (a polygon whatever its orientation).
fn geometry(part: &Part, plane: &Plane, shift: f64) -> Geometry<f64> {
    match part {
        Part::Point(p) => Geometry::Point(Point(planar(std::slice::from_ref(p), plane, shift)[0])),
        Part::Line(line) => Geometry::LineString(planar(line, plane, shift)),
        Part::Area { rings, .. } => Geometry::Polygon(Polygon::new(
            planar(&rings[0], plane, shift),
            rings[1..].iter().map(|r| planar(r, plane, shift)).collect(),
        )),
    }
}

fn vertices(part: &Part) -> usize {
    match part {
        Part::Point(_) => 1,
        Part::Line(line) => line.len(),
        Part::Area { rings, .. } => rings.iter().map(Vec::len).sum(),
    }
}

fn inverted(part: &Part) -> bool {
    matches!(part, Part::Area { inverted: true, .. })
}

/// Two shapes' parts in a common plane.
struct Pair<'a> {
    plane: Plane,
    a: Vec<Part<'a>>,
    b: Vec<Part<'a>>,
}

impl Pair<'_> {
    /// Whether `test` holds of `x` against `y` (in the longitude-latitude
    /// plane, with `x` in place or moved a turn east or west).
    fn relates(&self, x: &Part, y: &Part, test: fn(&IntersectionMatrix) -> bool) -> bool {
        let y = geometry(y, &self.plane, 0.0);
        let shifts: &[f64] = match self.plane {
            Plane::Gnomonic { .. } => &[0.0],
            Plane::LonLat => &[0.0, 360.0, -360.0],
        };
        shifts
            .iter()
            .any(|&shift| test(&geometry(x, &self.plane, shift).relate(&y)))
    }

    fn part_intersects(&self, x: &Part, y: &Part) -> bool {
        match (inverted(x), inverted(y)) {
            (false, false) => self.relates(x, y, |m| m.is_intersects()),
            // Only what lies wholly inside a polygon misses its inverse.
            (false, true) => !self.relates(x, y, |m| m.is_within()),
            (true, false) => !self.relates(y, x, |m| m.is_within()),
            // Two inverses both hold the rest of the earth.
            (true, true) => true,
        }
    }

    fn part_within(&self, x: &Part, y: &Part) -> bool {
        match (inverted(x), inverted(y)) {
            (false, false) => self.relates(x, y, |m| m.is_within()),
            (false, true) => !self.relates(x, y, |m| m.is_intersects()),
            (true, false) => false,
            // The inverse of X lies in the inverse of Y when Y lies in X.
            (true, true) => self.relates(y, x, |m| m.is_within()),
        }
    }
}

/// Both shapes' parts, if comparing them stays within bounds.
fn pair<'a>(a: &'a Shape, b: &'a Shape) -> Option<Pair<'a>> {
    let plane = plane(&[a, b]);
    let (pa, pb) = (parts(a, &plane), parts(b, &plane));
    let count = |ps: &[Part]| ps.iter().map(vertices).sum::<usize>();
    count(&pa)
        .checked_mul(count(&pb))
        .filter(|&n| n <= MAX_VERTEX_PAIRS)?;
    Some(Pair {
        plane,
        a: pa,
        b: pb,
    })
}

/// Some part of `a` meets some part of `b`.
fn intersects(a: &Shape, b: &Shape) -> Option<bool> {
    let p = pair(a, b)?;
    Some(
        p.a.iter()
            .any(|x| p.b.iter().any(|y| p.part_intersects(x, y))),
    )
}

/// Every part of `a` lies within a part of `b` (and `a` has a part).
fn within(a: &Shape, b: &Shape) -> Option<bool> {
    let p = pair(a, b)?;
    Some(!p.a.is_empty() && p.a.iter().all(|x| p.b.iter().any(|y| p.part_within(x, y))))
}

fn predicate(args: &[Option<Value>], test: fn(&Shape, &Shape) -> Option<bool>) -> Option<Value> {
    let (a, b) = two(args)?;
    test(&a, &b).map(Value::Bool)
}

/// Positions and edges (as normals) of a part's points, line or rings.
fn skeleton(part: &Part) -> (Vec<V3>, Vec<[V3; 2]>) {
    let lines: Vec<&[Pos]> = match part {
        Part::Point(p) => return (vec![ellipsoid::normal(*p)], Vec::new()),
        Part::Line(line) => vec![line],
        Part::Area { rings, .. } => rings.iter().map(Vec::as_slice).collect(),
    };
    let mut points = Vec::new();
    let mut edges = Vec::new();
    for line in lines {
        let ns = normals(line);
        edges.extend(ns.windows(2).map(|w| [w[0], w[1]]));
        points.extend(ns);
    }
    (points, edges)
}

/// The vertices and edges of all the parts.
fn skeletons(parts: &[Part]) -> (Vec<V3>, Vec<[V3; 2]>) {
    let (mut points, mut edges) = (Vec::new(), Vec::new());
    for part in parts {
        let (p, e) = skeleton(part);
        points.extend(p);
        edges.extend(e);
    }
    (points, edges)
}

fn st_distance(args: &Args) -> Option<Value> {
    let (a, b) = two(args)?;
    if let (Shape::Point(p), Shape::Point(q)) = (&a, &b) {
        let d = ellipsoid::arc_length(ellipsoid::normal(*p), ellipsoid::normal(*q));
        return finite(d);
    }
    if intersects(&a, &b)? {
        return finite(0.0);
    }
    let p = pair(&a, &b)?;
    let (points_a, edges_a) = skeletons(&p.a);
    let (points_b, edges_b) = skeletons(&p.b);
    // Apart, the nearest points of two shapes include a vertex of one: the
    // candidates are each vertex against the other's vertices and edges.
    // They are ranked by angle on the sphere of normals, and the few that
    // could be nearest (the two measures differ by well under 1%) measured
    // on the ellipsoid, in two passes that store nothing.
    let each = |visit: &mut dyn FnMut(V3, V3)| {
        for (points, others, edges) in [
            (&points_a, &points_b, &edges_b),
            (&points_b, &points_a, &edges_a),
        ] {
            for &p in points {
                for &q in others {
                    visit(p, q);
                }
                for &[u, v] in edges {
                    visit(p, ellipsoid::foot(p, u, v));
                }
            }
        }
    };
    let mut least = f64::INFINITY;
    each(&mut |p, q| least = least.min(ellipsoid::angle(p, q)));
    let mut distance = f64::INFINITY;
    each(&mut |p, q| {
        if ellipsoid::angle(p, q) <= least * 1.01 {
            distance = distance.min(ellipsoid::arc_length(p, q));
        }
    });
    finite(distance)
}
