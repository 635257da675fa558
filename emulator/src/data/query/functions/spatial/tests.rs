//! The spatial family's tables: each documented example is a row (the page
//! above its rows), then edge rows.

// The documented coordinates, digit for digit, even past what a double holds.
#![allow(clippy::excessive_precision)]

use super::super::testing::{run, U};
use super::ellipsoid;
use rstest::rstest;
use serde_json::{json, Value};

fn point(lon: f64, lat: f64) -> Value {
    json!({"type": "Point", "coordinates": [lon, lat]})
}

fn polygon(rings: Value) -> Value {
    json!({"type": "Polygon", "coordinates": rings})
}

/// The documented box near Lake Victoria, counter-clockwise.
fn lake_box() -> Value {
    polygon(json!([[
        [31.8, -5],
        [32, -5],
        [32, -4.7],
        [31.8, -4.7],
        [31.8, -5]
    ]]))
}

/// The same box run clockwise: everything but the box.
fn lake_box_clockwise() -> Value {
    polygon(json!([[
        [31.8, -5],
        [31.8, -4.7],
        [32, -4.7],
        [32, -5],
        [31.8, -5]
    ]]))
}

/// From the documentation of ST_WITHIN: the campus.
fn campus() -> Value {
    polygon(json!([[
        [-122.13236581015025, 47.64606476313813],
        [-122.13221982500913, 47.633757091363975],
        [-122.11840598103835, 47.641749416109235],
        [-122.12061400629656, 47.64589264786028],
        [-122.13236581015025, 47.64606476313813]
    ]]))
}

/// A 10° square with a 6° square hole (run clockwise, as GeoJSON asks).
fn holed() -> Value {
    polygon(json!([
        [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]],
        [[2, 2], [2, 8], [8, 8], [8, 2], [2, 2]]
    ]))
}

/// A box across the antimeridian, counter-clockwise.
fn dateline_box() -> Value {
    polygon(json!([[
        [179, -1],
        [-179, -1],
        [-179, 1],
        [179, 1],
        [179, -1]
    ]]))
}

/// WGS-84: a degree of the equator and a quarter of a meridian (m).
const EQUATOR_DEGREE: f64 = 6_378_137.0 * std::f64::consts::PI / 180.0;
const QUARTER_MERIDIAN: f64 = 10_001_965.729_312_548;

/// Numeric results, within `tolerance` metres (or square metres).
#[rstest]
// https://learn.microsoft.com/en-us/cosmos-db/query/st-distance (documented
// in kilometres: 3.345269817267368 and 1907.438421299902). The great ellipse
// gives 3345.26974 (0.08 mm short) and 1907438.42126 (0.04 mm short); the
// geodesic would be 3345.26974 and 1907438.34201 (79 mm short).
#[case("ST_DISTANCE", json!([point(-122.12826822304672, 47.63980239335718), point(-122.11758113953535, 47.66901087006131)]), 3345.269817267368, 1e-4)]
#[case("ST_DISTANCE", json!([point(-96.84368664765994, 46.81297794314663), point(-122.11758113953535, 47.66901087006131)]), 1907438.421299902, 1e-4)]
// https://learn.microsoft.com/en-us/cosmos-db/query/st-area: the great
// ellipse's edges give 735970283.1128 (0.06 m² over); geodesic edges would
// give 735970287.9355 (4.9 m² over).
#[case("ST_AREA", json!([lake_box()]), 735970283.0522614, 0.1)]
// Edge rows: the equator and a meridian are their own great ellipses; the
// antimeridian and the poles need no special case.
#[case("ST_DISTANCE", json!([point(179.5, 0.0), point(-179.5, 0.0)]), EQUATOR_DEGREE, 1e-6)]
#[case("ST_DISTANCE", json!([point(0.0, 0.0), point(1.0, 0.0)]), EQUATOR_DEGREE, 1e-6)]
#[case("ST_DISTANCE", json!([point(0.0, 90.0), point(0.0, 0.0)]), QUARTER_MERIDIAN, 1e-3)]
#[case("ST_DISTANCE", json!([point(-45.0, 90.0), point(135.0, 0.0)]), QUARTER_MERIDIAN, 1e-3)]
#[case("ST_DISTANCE", json!([point(0.0, -90.0), point(0.0, 90.0)]), 2.0 * QUARTER_MERIDIAN, 1e-3)]
#[case("ST_DISTANCE", json!([point(12.5, 41.9), point(12.5, 41.9)]), 0.0, 0.0)]
// A point outside a polygon or off a line: the distance to the nearest edge.
#[case("ST_DISTANCE", json!([point(0.0, 0.0), polygon(json!([[[1, -1], [2, -1], [2, 1], [1, 1], [1, -1]]]))]), EQUATOR_DEGREE, 1e-6)]
#[case("ST_DISTANCE", json!([{"type": "LineString", "coordinates": [[1, -1], [1, 1]]}, point(0.0, 0.0)]), EQUATOR_DEGREE, 1e-6)]
#[case("ST_DISTANCE", json!([point(-1.0, 0.0), {"type": "LineString", "coordinates": [[0, 0], [5, 0]]}]), EQUATOR_DEGREE, 1e-6)]
// Inside, on, or overlapping: no distance.
#[case("ST_DISTANCE", json!([point(31.9, -4.8), lake_box()]), 0.0, 0.0)]
#[case("ST_DISTANCE", json!([lake_box(), lake_box()]), 0.0, 0.0)]
#[case("ST_DISTANCE", json!([point(5.0, 5.0), holed()]), 3.0 * EQUATOR_DEGREE, 5e3)]
// Points and lines have no area; a clockwise ring holds the rest of the earth.
#[case("ST_AREA", json!([point(31.9, -4.8)]), 0.0, 0.0)]
#[case("ST_AREA", json!([{"type": "LineString", "coordinates": [[31.8, -5], [31.8, -4.7]]}]), 0.0, 0.0)]
#[case("ST_AREA", json!([lake_box_clockwise()]), ellipsoid::total_area() - 735970283.0522614, 1.0)]
fn numbers(#[case] name: &str, #[case] args: Value, #[case] expected: f64, #[case] tolerance: f64) {
    let got = run(name, args.clone()).and_then(|v| v.as_f64());
    let got = got.unwrap_or_else(|| panic!("{name}{args}: undefined"));
    assert!(
        (got - expected).abs() <= tolerance,
        "{name}{args}: {got} is not {expected} ± {tolerance}"
    );
}

/// Exact results: booleans, validity objects, undefined.
#[rstest]
// https://learn.microsoft.com/en-us/cosmos-db/query/st-within
#[case("ST_WITHIN", json!([point(-122.12824857332558, 47.6395516675712), campus()]), Some(json!(true)))]
// https://learn.microsoft.com/en-us/azure/cosmos-db/nosql/query/geospatial-query
// (the documented families and areas: a point within the box, both ways round).
#[case("ST_WITHIN", json!([point(31.9, -4.8), lake_box()]), Some(json!(true)))]
// https://learn.microsoft.com/en-us/cosmos-db/query/st-intersects
#[case("ST_INTERSECTS", json!([
    polygon(json!([[
        [-122.13693695285855, 47.64996065621003],
        [-122.1351662656516, 47.64627863318731],
        [-122.13488295569863, 47.646326350048696],
        [-122.1366182291613, 47.650016321952904],
        [-122.13693695285855, 47.64996065621003]
    ]])),
    polygon(json!([[
        [-122.14034847687708, 47.6494835188378],
        [-122.14014779899375, 47.64625477474044],
        [-122.13256925774829, 47.646207057813655],
        [-122.13254564858545, 47.64941990019193],
        [-122.14034847687708, 47.6494835188378]
    ]]))
]), Some(json!(true)))]
// https://learn.microsoft.com/en-us/cosmos-db/query/st-isvalid
#[case("ST_ISVALID", json!([point(-84.38876194345323, 33.75682784306348)]), Some(json!(true)))]
#[case("ST_ISVALID", json!([point(133.75682784306348, -184.38876194345323)]), Some(json!(false)))]
// https://learn.microsoft.com/en-us/azure/cosmos-db/nosql/query/geospatial-query
#[case("ST_ISVALID", json!([point(31.9, -132.8)]), Some(json!(false)))]
// https://learn.microsoft.com/en-us/cosmos-db/query/st-isvaliddetailed
#[case("ST_ISVALIDDETAILED", json!([point(-84.38876194345323, 33.75682784306348)]), Some(json!({"valid": true})))]
#[case("ST_ISVALIDDETAILED", json!([point(133.75682784306348, -184.38876194345323)]),
    Some(json!({"valid": false, "reason": "Latitude values must be between -90 and 90 degrees."})))]
// The open ring of https://learn.microsoft.com/en-us/azure/cosmos-db/nosql/query/geospatial-query,
// with the reason as the ST_ISVALIDDETAILED reference page printed it
// ("of a polygon"; the query article capitalises "Polygon" throughout).
#[case("ST_ISVALIDDETAILED", json!([polygon(json!([[[31.8, -5], [31.8, -4.7], [32, -4.7], [32, -5]]]))]),
    Some(json!({"valid": false, "reason": "The Polygon input is not valid because the start and end points of the ring number 1 are not the same. Each ring of a polygon must have the same start and end points."})))]
// Edge rows: reasons the documentation does not show (worded alike).
#[case("ST_ISVALIDDETAILED", json!([point(180.5, 0.0)]),
    Some(json!({"valid": false, "reason": "Longitude values must be between -180 and 180 degrees."})))]
#[case("ST_ISVALIDDETAILED", json!([polygon(json!([[[0, 0], [1, 0], [0, 0]]]))]),
    Some(json!({"valid": false, "reason": "The Polygon input is not valid because the ring number 1 does not have enough points. Each ring of a polygon must contain at least four points."})))]
#[case("ST_ISVALIDDETAILED", json!([polygon(json!([[[0, 0], [1, 0], [1, 1], [0, 0]], [[0.1, 0.1], [0.2, 0.1], [0.2, 0.2]]]))]),
    Some(json!({"valid": false, "reason": "The Polygon input is not valid because the start and end points of the ring number 2 are not the same. Each ring of a polygon must have the same start and end points."})))]
#[case("ST_ISVALIDDETAILED", json!([{"type": "LineString", "coordinates": [[1, 2], [1, 2]]}]),
    Some(json!({"valid": false, "reason": "The LineString input is not valid because it does not have enough distinct points. A LineString must have at least two distinct points."})))]
#[case("ST_ISVALIDDETAILED", json!([{"type": "Point", "coordinates": [1]}]),
    Some(json!({"valid": false, "reason": "The Point input is not valid because its coordinates are not well formed: a position is an array of at least two numbers (longitude, then latitude)."})))]
#[case("ST_ISVALID", json!([{"type": "Point", "coordinates": ["1", 2]}]), Some(json!(false)))]
#[case("ST_ISVALID", json!([{"type": "Point"}]), Some(json!(false)))]
#[case("ST_ISVALID", json!([{"type": "Polygon", "coordinates": []}]), Some(json!(false)))]
#[case("ST_ISVALID", json!([{"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 0], [1, 1]]]]}]), Some(json!(false)))]
#[case("ST_ISVALID", json!([{"type": "MultiPolygon", "coordinates": []}]), Some(json!(true)))]
#[case("ST_ISVALID", json!([{"type": "Point", "coordinates": [1, 2, 3]}]), Some(json!(true)))]
#[case("ST_ISVALID", json!([{"type": "Point", "coordinates": [-180, -90]}]), Some(json!(true)))]
#[case("ST_ISVALID", json!([holed()]), Some(json!(true)))]
// Not GeoJSON of a supported type, or the wrong number of arguments: undefined.
#[case("ST_ISVALID", json!([{"type": "MultiPoint", "coordinates": [[0, 0]]}]), None)]
#[case("ST_ISVALID", json!(["Point"]), None)]
#[case("ST_ISVALID", json!([U]), None)]
#[case("ST_ISVALID", json!([]), None)]
#[case("ST_ISVALID", json!([point(0.0, 0.0), point(0.0, 0.0)]), None)]
#[case("ST_ISVALIDDETAILED", json!([42]), None)]
#[case("ST_AREA", json!([{"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1]]]}]), None)]
#[case("ST_AREA", json!([lake_box(), lake_box()]), None)]
#[case("ST_DISTANCE", json!([point(0.0, 0.0)]), None)]
#[case("ST_DISTANCE", json!([point(0.0, 0.0), point(0.0, 100.0)]), None)]
#[case("ST_DISTANCE", json!([point(0.0, 0.0), {"x": 1}]), None)]
#[case("ST_DISTANCE", json!([point(0.0, 0.0), U]), None)]
#[case("ST_WITHIN", json!([point(0.0, 0.0), "polygon"]), None)]
#[case("ST_INTERSECTS", json!([point(0.0, 0.0), polygon(json!([[[0, 0], [1, 0], [1, 1]]]))]), None)]
// Within and intersects: outside, on the boundary, in a hole, across the
// antimeridian, and the inverse region of a clockwise ring.
#[case("ST_WITHIN", json!([point(31.7, -4.8), lake_box()]), Some(json!(false)))]
// (On a vertex: on an edge, the last bit of rounding decides.)
#[case("ST_WITHIN", json!([point(31.8, -5.0), lake_box()]), Some(json!(false)))]
#[case("ST_INTERSECTS", json!([point(31.8, -5.0), lake_box()]), Some(json!(true)))]
#[case("ST_WITHIN", json!([point(5.0, 5.0), holed()]), Some(json!(false)))]
#[case("ST_WITHIN", json!([point(1.0, 1.0), holed()]), Some(json!(true)))]
#[case("ST_INTERSECTS", json!([point(5.0, 5.0), holed()]), Some(json!(false)))]
#[case("ST_WITHIN", json!([point(180.0, 0.0), dateline_box()]), Some(json!(true)))]
#[case("ST_WITHIN", json!([point(-179.5, 0.5), dateline_box()]), Some(json!(true)))]
#[case("ST_WITHIN", json!([point(178.5, 0.5), dateline_box()]), Some(json!(false)))]
#[case("ST_WITHIN", json!([point(0.0, 0.0), lake_box_clockwise()]), Some(json!(true)))]
#[case("ST_WITHIN", json!([point(31.9, -4.8), lake_box_clockwise()]), Some(json!(false)))]
#[case("ST_INTERSECTS", json!([lake_box_clockwise(), lake_box_clockwise()]), Some(json!(true)))]
#[case("ST_INTERSECTS", json!([lake_box(), lake_box_clockwise()]), Some(json!(false)))]
#[case("ST_WITHIN", json!([lake_box(), lake_box_clockwise()]), Some(json!(false)))]
#[case("ST_WITHIN", json!([point(0.0, 0.0), point(0.0, 0.0)]), Some(json!(true)))]
#[case("ST_WITHIN", json!([lake_box(), holed()]), Some(json!(false)))]
#[case("ST_WITHIN", json!([{"type": "LineString", "coordinates": [[31.85, -4.9], [31.95, -4.8]]}, lake_box()]), Some(json!(true)))]
#[case("ST_INTERSECTS", json!([{"type": "LineString", "coordinates": [[31.7, -4.9], [32.1, -4.8]]}, lake_box()]), Some(json!(true)))]
#[case("ST_INTERSECTS", json!([{"type": "LineString", "coordinates": [[30, -4.9], [31, -4.8]]}, lake_box()]), Some(json!(false)))]
// Edges are great ellipses, not lines of latitude: the top edge of a box
// from 10° to 80° east along 60°N bows north, to 64.7°N at 45°E.
// An edge takes the short way round: the last box runs clockwise round the
// Pacific, so it holds the rest of the earth, (0, 0) with it (no hemisphere
// holds it, so it is related on longitude and latitude).
#[case("ST_WITHIN", json!([point(45.0, 64.0), polygon(json!([[[10, 50], [80, 50], [80, 60], [10, 60], [10, 50]]]))]), Some(json!(true)))]
#[case("ST_WITHIN", json!([point(45.0, 65.5), polygon(json!([[[10, 50], [80, 50], [80, 60], [10, 60], [10, 50]]]))]), Some(json!(false)))]
#[case("ST_WITHIN", json!([point(0.0, 0.0), polygon(json!([[[-100, -10], [100, -10], [100, 10], [-100, 10], [-100, -10]]]))]), Some(json!(true)))]
// A ring round the north pole (counter-clockwise seen from above) holds the
// pole; its edges bow poleward to 82.9°N between the vertices.
#[case("ST_WITHIN", json!([point(0.0, 90.0), polygon(json!([[[0, 80], [90, 80], [180, 80], [-90, 80], [0, 80]]]))]), Some(json!(true)))]
#[case("ST_WITHIN", json!([point(45.0, 83.5), polygon(json!([[[0, 80], [90, 80], [180, 80], [-90, 80], [0, 80]]]))]), Some(json!(true)))]
#[case("ST_WITHIN", json!([point(45.0, 82.0), polygon(json!([[[0, 80], [90, 80], [180, 80], [-90, 80], [0, 80]]]))]), Some(json!(false)))]
#[case("ST_WITHIN", json!([point(10.0, -89.0), polygon(json!([[[0, -80], [-90, -80], [180, -80], [90, -80], [0, -80]]]))]), Some(json!(true)))]
// https://learn.microsoft.com/en-us/azure/cosmos-db/nosql/query/geospatial-intro
// (the documented MultiPolygon): a point in its second polygon.
#[case("ST_WITHIN", json!([point(50.5, 2.5), {"type": "MultiPolygon", "coordinates": [
    [[[52.0, 12.0], [53.0, 12.0], [53.0, 13.0], [52.0, 13.0], [52.0, 12.0]]],
    [[[50.0, 0.0], [51.0, 0.0], [51.0, 5.0], [50.0, 5.0], [50.0, 0.0]]]
]}]), Some(json!(true)))]
#[case("ST_WITHIN", json!([point(51.5, 2.5), {"type": "MultiPolygon", "coordinates": [
    [[[52.0, 12.0], [53.0, 12.0], [53.0, 13.0], [52.0, 13.0], [52.0, 12.0]]],
    [[[50.0, 0.0], [51.0, 0.0], [51.0, 5.0], [50.0, 5.0], [50.0, 0.0]]]
]}]), Some(json!(false)))]
#[case("ST_WITHIN", json!([point(0.0, 0.0), {"type": "MultiPolygon", "coordinates": []}]), Some(json!(false)))]
#[case("ST_WITHIN", json!([{"type": "MultiPolygon", "coordinates": []}, lake_box()]), Some(json!(false)))]
fn results(#[case] name: &str, #[case] args: Value, #[case] expected: Option<Value>) {
    assert_eq!(run(name, args.clone()), expected, "{name}{args}");
}

#[test]
fn a_hole_takes_its_area_from_the_polygon() {
    let area = |v: Value| run("ST_AREA", json!([v])).unwrap().as_f64().unwrap();
    let outer = area(polygon(json!([[
        [0, 0],
        [10, 0],
        [10, 10],
        [0, 10],
        [0, 0]
    ]])));
    let hole = area(polygon(json!([[[2, 2], [8, 2], [8, 8], [2, 8], [2, 2]]])));
    let both = area(holed());
    assert!(
        (both - (outer - hole)).abs() < 1.0,
        "{both} vs {outer} - {hole}"
    );
    // A MultiPolygon's area is its polygons' sum.
    let multi = area(json!({"type": "MultiPolygon", "coordinates": [
        [[[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]],
        [[[20, 0], [30, 0], [30, 10], [20, 10], [20, 0]]]
    ]}));
    assert!((multi - 2.0 * outer).abs() < 1.0, "{multi} vs 2 × {outer}");
    // Across the antimeridian as anywhere else.
    let dateline = area(dateline_box());
    let greenwich = area(polygon(json!([[
        [-1, -1],
        [1, -1],
        [1, 1],
        [-1, 1],
        [-1, -1]
    ]])));
    assert!(
        (dateline - greenwich).abs() < 1.0,
        "{dateline} vs {greenwich}"
    );
    // A 10° box on the equator: 1.2279 million km² (its top edge bows
    // poleward of the parallel).
    assert!((outer / 1e12 - 1.22786).abs() < 1e-5, "{outer}");
}

#[test]
fn a_ring_round_a_pole_bounds_the_cap() {
    let area = |v: Value| run("ST_AREA", json!([v])).unwrap().as_f64().unwrap();
    // Eastward along 80°N: the cap to the north, counter-clockwise seen from above.
    let north = area(polygon(json!([[
        [0, 80],
        [90, 80],
        [180, 80],
        [-90, 80],
        [0, 80]
    ]])));
    let south = area(polygon(json!([[
        [0, -80],
        [-90, -80],
        [180, -80],
        [90, -80],
        [0, -80]
    ]])));
    assert!((north - south).abs() < 1e-3 * north, "{north} vs {south}");
    // 2.51 million km², where the cap north of 80° has 3.9: the edges bow
    // poleward, up to 82.9° between the vertices.
    assert!((north / 1e12 - 2.50744).abs() < 1e-5, "{north}");
    let total = ellipsoid::total_area();
    assert!((total / 1e12 - 510.0656).abs() < 1e-3, "{total}");
}

#[test]
fn huge_shapes_stay_bounded() {
    // A ring of 2,001 vertices against a line of 2,001: past the bound,
    // undefined rather than four million comparisons.
    let mut ring: Vec<Value> = (0..2000)
        .map(|i| {
            let t = i as f64 / 2000.0 * std::f64::consts::TAU;
            json!([t.cos(), t.sin()])
        })
        .collect();
    ring.push(ring[0].clone());
    let line: Vec<Value> = (0..=2000)
        .map(|i| json!([10.0 + i as f64 * 1e-3, 0]))
        .collect();
    let shapes = json!([
        {"type": "LineString", "coordinates": line},
        polygon(json!([ring])),
    ]);
    assert_eq!(run("ST_DISTANCE", shapes.clone()), None);
    assert_eq!(run("ST_INTERSECTS", shapes), None);
    // One point against the same ring is measured.
    let near = json!([point(3.0, 0.0), polygon(json!([ring]))]);
    let d = run("ST_DISTANCE", near).unwrap().as_f64().unwrap();
    assert!((d - 2.0 * EQUATOR_DEGREE).abs() < 10.0, "{d}");
}

#[test]
fn a_small_clockwise_ring_is_still_the_rest_of_the_earth() {
    let area = |v: Value| run("ST_AREA", json!([v])).unwrap().as_f64().unwrap();
    let ccw = area(polygon(json!([[
        [0, 0],
        [0.001, 0],
        [0.001, 0.001],
        [0, 0.001],
        [0, 0]
    ]])));
    let cw = area(polygon(json!([[
        [0, 0],
        [0, 0.001],
        [0.001, 0.001],
        [0.001, 0],
        [0, 0]
    ]])));
    assert!((ccw - 12_309.07).abs() < 0.01, "{ccw}");
    assert!((cw - (ellipsoid::total_area() - ccw)).abs() < 1.0, "{cw}");
    // A ring that encloses nothing (here along the equator, a great
    // ellipse) has no area either way round.
    let flat = polygon(json!([[[0, 0], [1, 0], [2, 0], [0, 0]]]));
    assert_eq!(run("ST_AREA", json!([flat])), Some(json!(0)));
    let one = polygon(json!([[[3, 4], [3, 4], [3, 4], [3, 4]]]));
    assert_eq!(run("ST_AREA", json!([one])), Some(json!(0)));
}

/// Degenerate and random shapes (collinear rings, repeated points, bow
/// ties, poles, the antimeridian) through every function: no panic, and
/// every number finite and non-negative.
#[test]
fn every_function_is_total_over_odd_shapes() {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    // Coordinates from a coarse grid, so that points repeat and edges meet.
    let grid = [
        -180.0, -179.0, -90.0, -1.0, 0.0, 0.5, 1.0, 90.0, 179.0, 180.0,
    ];
    let mut coordinate = |axis_max: f64| loop {
        let g: f64 = grid[next(grid.len() as u64) as usize];
        if g.abs() <= axis_max {
            break g;
        }
    };
    let mut shapes = vec![];
    for _ in 0..40 {
        let mut positions = |count: usize| -> Vec<Value> {
            (0..count)
                .map(|_| json!([coordinate(180.0), coordinate(90.0)]))
                .collect()
        };
        let line = positions(2 + shapes.len() % 3);
        let mut ring = positions(3 + shapes.len() % 4);
        ring.push(ring[0].clone());
        let mut hole = positions(3);
        hole.push(hole[0].clone());
        shapes.push(json!({"type": "Point", "coordinates": line[0]}));
        shapes.push(json!({"type": "LineString", "coordinates": line}));
        shapes.push(polygon(json!([ring.clone()])));
        shapes.push(polygon(json!([ring.clone(), hole])));
        shapes.push(json!({"type": "MultiPolygon", "coordinates": [[ring]]}));
    }
    shapes.push(holed());
    shapes.push(dateline_box());
    shapes.push(lake_box_clockwise());
    for (i, a) in shapes.iter().enumerate() {
        for name in ["ST_AREA", "ST_ISVALID", "ST_ISVALIDDETAILED"] {
            let _ = run(name, json!([a]));
        }
        if let Some(area) = run("ST_AREA", json!([a])) {
            let area = area.as_f64().unwrap();
            assert!(area.is_finite() && area >= 0.0, "{a}: {area}");
        }
        // Each shape against a sample of the others (every 7th).
        for b in shapes.iter().skip(i % 7).step_by(7) {
            for name in ["ST_WITHIN", "ST_INTERSECTS"] {
                let _ = run(name, json!([a, b]));
            }
            if let Some(d) = run("ST_DISTANCE", json!([a, b])) {
                let d = d.as_f64().unwrap();
                assert!(d.is_finite() && (0.0..=2.1e7).contains(&d), "{a} {b}: {d}");
            }
        }
    }
}

/// Rows measured against Microsoft's emulator, which runs the service's
/// engine (the F# Cosmos test suite's "Spatial functions measure GeoJSON on
/// the WGS-84 ellipsoid"): a point at the origin, one a degree north, one
/// off the globe, and a square of one degree around the origin.
#[rstest]
#[case("ROUND(ST_DISTANCE(@origin, @north))", json!(110574))]
#[case("ROUND(ST_AREA(@square) / 1000000)", json!(12309))]
#[case("[ST_INTERSECTS(@square, @origin), ST_INTERSECTS(@square, @north)]", json!([true, false]))]
#[case("[ST_WITHIN(@origin, @square), ST_WITHIN(@north, @square)]", json!([true, false]))]
#[case("[ST_ISVALID(@north), ST_ISVALID(@offTheGlobe)]", json!([true, false]))]
#[case(
    "ST_ISVALIDDETAILED(@offTheGlobe)",
    json!({"valid": false, "reason": "Latitude values must be between -90 and 90 degrees."})
)]
fn measured_against_the_service_engine(#[case] expression: &str, #[case] expected: Value) {
    use crate::data::query::prepared::Parameter;
    use crate::data::query::{PreparedQuery, QueryBody};
    let parameter = |name: &str, value: Value| Parameter {
        name: name.into(),
        value,
    };
    let body = QueryBody {
        query: format!("SELECT VALUE {expression}"),
        parameters: vec![
            parameter(
                "@origin",
                json!({"type": "Point", "coordinates": [0.0, 0.0]}),
            ),
            parameter(
                "@north",
                json!({"type": "Point", "coordinates": [0.0, 1.0]}),
            ),
            parameter(
                "@offTheGlobe",
                json!({"type": "Point", "coordinates": [0.0, 100.0]}),
            ),
            parameter(
                "@square",
                json!({"type": "Polygon", "coordinates": [[[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5], [-0.5, -0.5]]]}),
            ),
        ],
    };
    let rows = PreparedQuery::prepare(&body)
        .unwrap()
        .run_values(std::iter::empty())
        .unwrap();
    assert_eq!(rows, vec![expected], "{expression}");
}
