//! Lengths and areas on the WGS-84 ellipsoid with the service's edges.
//!
//! The service's geography (that of SQL Server, after M. Kallay, "Geometric
//! algorithms on an ellipsoid earth model") joins two positions by the curve
//! of the points whose surface normals lie in the plane of the two
//! endpoints' normals. Those points all lie in one plane through the centre,
//! so the curve is the arc of the *great ellipse* through the two positions,
//! not the geodesic. The documented examples tell the two apart: the great
//! ellipse gives the documented distance 1,907,438.421299902 m to within
//! 0.04 mm and the documented area 735,970,283.0522614 m² to within 0.06 m²,
//! where the geodesic is 79 mm and 4.9 m² off (see the tests).
//!
//! An edge is therefore a great-circle arc on the unit sphere of geodetic
//! normals (longitude, geodetic latitude), mapped onto the ellipsoid. Its
//! length and the area it bounds are integrals along that arc, computed by
//! Gauss-Legendre quadrature on pieces of at most [`PIECE`] radians: a fixed
//! amount of work per edge.

use std::f64::consts::{FRAC_PI_2, PI};
use std::sync::OnceLock;

/// WGS-84 semi-major axis (m) and flattening.
const A: f64 = 6_378_137.0;
const F: f64 = 1.0 / 298.257_223_563;
/// Semi-minor axis (m) and squared eccentricity.
const B: f64 = A * (1.0 - F);
const E2: f64 = F * (2.0 - F);
/// The least radius of curvature (m): the meridian's at the equator.
pub const LEAST_RADIUS: f64 = A * (1.0 - E2);

/// The longest piece of an arc (radians of normal direction) one quadrature
/// covers.
const PIECE: f64 = 0.2;
/// Quadrature nodes per piece.
const NODES: usize = 16;

pub type V3 = [f64; 3];

pub fn dot(u: V3, v: V3) -> f64 {
    u[0] * v[0] + u[1] * v[1] + u[2] * v[2]
}

pub fn cross(u: V3, v: V3) -> V3 {
    [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ]
}

fn norm(u: V3) -> f64 {
    dot(u, u).sqrt()
}

fn scale(u: V3, k: f64) -> V3 {
    [u[0] * k, u[1] * k, u[2] * k]
}

fn sub(u: V3, v: V3) -> V3 {
    [u[0] - v[0], u[1] - v[1], u[2] - v[2]]
}

pub fn unit(u: V3) -> Option<V3> {
    let n = norm(u);
    (n > 0.0 && n.is_finite()).then(|| scale(u, 1.0 / n))
}

/// The outward unit normal of the ellipsoid at (longitude, latitude) in
/// degrees: the geodetic latitude is the normal's latitude.
pub fn normal([lon, lat]: [f64; 2]) -> V3 {
    let (lon, lat) = (lon.to_radians(), lat.to_radians());
    [lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()]
}

/// Angle between two unit vectors, accurate for small and large angles.
pub fn angle(u: V3, v: V3) -> f64 {
    norm(cross(u, v)).atan2(dot(u, v))
}

/// Gauss-Legendre nodes and weights on [-1, 1].
fn gauss() -> &'static [(f64, f64); NODES] {
    static RULE: OnceLock<[(f64, f64); NODES]> = OnceLock::new();
    RULE.get_or_init(|| {
        let n = NODES as f64;
        let mut rule = [(0.0, 0.0); NODES];
        for (i, slot) in rule.iter_mut().enumerate() {
            let mut x = (PI * (i as f64 + 0.75) / (n + 0.5)).cos();
            let mut derivative = 1.0;
            for _ in 0..100 {
                let (mut p0, mut p1) = (1.0, x);
                for k in 2..=NODES {
                    let k = k as f64;
                    let p2 = ((2.0 * k - 1.0) * x * p1 - (k - 1.0) * p0) / k;
                    p0 = p1;
                    p1 = p2;
                }
                derivative = n * (x * p1 - p0) / (x * x - 1.0);
                let step = p1 / derivative;
                x -= step;
                if step.abs() < 1e-16 {
                    break;
                }
            }
            *slot = (x, 2.0 / ((1.0 - x * x) * derivative * derivative));
        }
        rule
    })
}

/// The great circle from `u` towards `v` as (start, unit tangent, angle);
/// antipodal normals take the meridian (or any circle at a pole).
fn circle(u: V3, v: V3) -> (V3, V3, f64) {
    let theta = angle(u, v);
    let towards = unit(sub(v, scale(u, dot(u, v))))
        .or_else(|| unit(cross(cross(u, [0.0, 0.0, 1.0]), u)))
        .unwrap_or([1.0, 0.0, 0.0]);
    (u, towards, theta)
}

/// Integrates `f(normal, d normal / d angle)` along the arc from `u` to `v`.
fn integrate(u: V3, v: V3, f: impl Fn(V3, V3) -> f64) -> f64 {
    let (start, tangent, theta) = circle(u, v);
    if theta <= 0.0 || !theta.is_finite() {
        return 0.0;
    }
    let pieces = (theta / PIECE).ceil().max(1.0);
    let width = theta / pieces;
    let mut total = 0.0;
    for piece in 0..pieces as usize {
        let middle = (piece as f64 + 0.5) * width;
        for &(x, w) in gauss() {
            let t = middle + 0.5 * width * x;
            let (s, c) = t.sin_cos();
            let n = [
                c * start[0] + s * tangent[0],
                c * start[1] + s * tangent[1],
                c * start[2] + s * tangent[2],
            ];
            let dn = [
                c * tangent[0] - s * start[0],
                c * tangent[1] - s * start[1],
                c * tangent[2] - s * start[2],
            ];
            total += 0.5 * width * w * f(n, dn);
        }
    }
    total
}

/// Length in metres of the edge between the positions whose normals are `u`
/// and `v`: the arc of the great ellipse through them.
pub fn arc_length(u: V3, v: V3) -> f64 {
    integrate(u, v, |n, dn| {
        // The point with outward normal n is A n / D, A = diag(a², a², b²),
        // D = sqrt(n · A n); its speed as n turns is |A n' / D - A n (n · A n') / D³|.
        let an = [A * A * n[0], A * A * n[1], B * B * n[2]];
        let adn = [A * A * dn[0], A * A * dn[1], B * B * dn[2]];
        let d = dot(n, an).sqrt();
        let k = dot(n, adn) / (d * d * d);
        norm(sub(scale(adn, 1.0 / d), scale(an, k)))
    })
}

/// ∫ M N cos φ dφ from the equator to φ: the area of the band between them
/// per radian of longitude (M, N the ellipsoid's radii of curvature).
fn band(sin_lat: f64) -> f64 {
    let e = E2.sqrt();
    B * B / 2.0 * (sin_lat / (1.0 - E2 * sin_lat * sin_lat) + (e * sin_lat).atanh() / e)
}

/// The area of the whole ellipsoid (m²).
pub fn total_area() -> f64 {
    4.0 * PI * band(1.0)
}

/// The area (m²) of the region to the left of a closed ring of normals,
/// in [0, total area): a counter-clockwise ring bounds its inside, a
/// clockwise one everything else (the documented "inverse of the region").
/// By Green's theorem the area is -∮ (S(φ) - S(π/2)) dλ, S the band area
/// above; the constant makes the integrand vanish at the north pole, so that
/// rings around a pole or across the antimeridian need no special case.
pub fn left_area(ring: &[V3]) -> f64 {
    let pole = band(1.0);
    let mut sum = 0.0;
    for pair in ring.windows(2) {
        sum += integrate(pair[0], pair[1], |n, dn| {
            let horizontal = n[0] * n[0] + n[1] * n[1];
            if horizontal < 1e-24 {
                return 0.0;
            }
            let dlon = (n[0] * dn[1] - n[1] * dn[0]) / horizontal;
            let lat = n[2].clamp(-1.0, 1.0).asin().min(FRAC_PI_2);
            (band(lat.sin()) - pole) * dlon
        });
    }
    // A ring that encloses nothing (a sliver, or all one point) has no
    // area on either side: rounding must not make it the whole earth.
    if sum.abs() < 1e-2 {
        return 0.0;
    }
    (-sum).rem_euclid(total_area())
}

/// The normal of the point of the edge from `u` to `v` nearest to the
/// position with normal `p`, found on the sphere of normals: the foot of the
/// perpendicular on the edge's great circle, or the nearer end. (On the
/// ellipsoid the nearest point differs from it by second-order terms.)
pub fn foot(p: V3, u: V3, v: V3) -> V3 {
    let Some(k) = unit(cross(u, v)) else {
        return u;
    };
    let Some(c) = unit(sub(p, scale(k, dot(p, k)))) else {
        return u;
    };
    if dot(cross(u, c), k) >= 0.0 && dot(cross(c, v), k) >= 0.0 {
        c
    } else if angle(p, u) <= angle(p, v) {
        u
    } else {
        v
    }
}
