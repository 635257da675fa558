//! The spatial index against the scan: `ST_DISTANCE(path, point) < r`,
//! `ST_WITHIN` and `ST_INTERSECTS` give the same items both ways, over
//! random points (poles and the antimeridian included), other shapes,
//! invalid and missing values.

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::{prepared, results, NOW};
use crate::data::query::testing::spatial_lookups;
use crate::data::store::{Container, ContainerSettings};
use crate::protocol::item_key::ItemKey;

const POINT: &str = "{'type': 'Point', 'coordinates': [10, 50]}";

fn container() -> Container {
    let body = json!({
        "id": "c",
        "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
        "defaultTtl": -1,
        "indexingPolicy": {
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [],
            "spatialIndexes": [{"path": "/loc/*", "types": ["Point", "Polygon", "LineString"]}]
        }
    });
    let settings = ContainerSettings::parse(body.as_object().unwrap()).unwrap();
    Container::new("c".into(), "db", 1, 1, settings, 0, 3600)
}

/// What an item holds at `loc`: a point, another shape, something
/// `ST_DISTANCE` cannot measure, or nothing.
fn location(kind: u8, lon: f64, lat: f64) -> Option<Value> {
    Some(match kind % 8 {
        0 => return None,
        1 => json!({"type": "LineString", "coordinates": [[lon, lat], [lon * 0.5, lat * 0.5]]}),
        2 => json!({"type": "Point", "coordinates": [lon, 95.0]}),
        3 => json!("not a shape"),
        _ => json!({"type": "Point", "coordinates": [lon, lat]}),
    })
}

/// A coordinate near the query's or anywhere, the edges included.
fn coordinate(choice: u8, near: f64, offset: f64, anywhere: f64, edge: f64) -> f64 {
    match choice % 4 {
        0 | 1 => (near + offset).clamp(-edge, edge),
        2 => anywhere,
        _ => edge * if offset < 0.0 { -1.0 } else { 1.0 },
    }
}

/// A shape around (lon, lat) for `ST_WITHIN` and `ST_INTERSECTS`: a
/// square of a half-width from 0.01° to 60° (counter-clockwise, or now
/// and then clockwise, which stands for the rest of the earth), a line
/// through the point, or the point itself.
fn shape_around(lon: f64, lat: f64, magnitude: u8, form: u8) -> String {
    let half = [0.01, 0.1, 1.0, 5.0, 20.0, 45.0, 60.0][magnitude as usize];
    let clamp = |x: f64, edge: f64| x.clamp(-edge, edge);
    let (w, e) = (clamp(lon - half, 180.0), clamp(lon + half, 180.0));
    let (s, n) = (clamp(lat - half, 90.0), clamp(lat + half, 90.0));
    let ring = if form == 5 && magnitude % 2 == 1 {
        format!("[[{w},{s}],[{w},{n}],[{e},{n}],[{e},{s}],[{w},{s}]]")
    } else {
        format!("[[{w},{s}],[{e},{s}],[{e},{n}],[{w},{n}],[{w},{s}]]")
    };
    match (form, magnitude) {
        (6, 0) => format!("{{'type': 'Point', 'coordinates': [{lon}, {lat}]}}"),
        (7, 1) => format!("{{'type': 'LineString', 'coordinates': [[{w},{s}],[{e},{n}]]}}"),
        _ => format!("{{'type': 'Polygon', 'coordinates': [{ring}]}}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_spatial_index_answers_as_the_scan_does(
        query in (-180.0f64..180.0, -90.0f64..90.0, 0u8..7, 0u8..8, any::<bool>()),
        items in prop::collection::vec(
            (any::<u8>(), any::<u8>(), any::<u8>(), -2.0f64..2.0, -2.0f64..2.0,
             -180.0f64..180.0, -90.0f64..90.0, prop::bool::weighted(0.1)),
            0..40,
        ),
    ) {
        let (q_lon, q_lat, magnitude, form, other_filter) = query;
        let mut c = container();
        for (n, &(id, kind, choice, d_lon, d_lat, lon, lat, expired)) in items.iter().enumerate() {
            let lon = coordinate(choice, q_lon, d_lon, lon, 180.0);
            let lat = coordinate(choice >> 2, q_lat, d_lat, lat, 90.0);
            let mut body = Map::new();
            body.insert("id".into(), json!(format!("i{id:02}")));
            body.insert("pk".into(), json!("p"));
            body.insert("n".into(), json!(id % 3));
            if let Some(loc) = location(kind, lon, lat) {
                body.insert("loc".into(), loc);
            }
            let ttl = expired.then_some(crate::data::ttl::Ttl::Seconds(5));
            let key = ItemKey::new("[\"p\"]", &format!("i{id:02}"));
            c.write(key, body, ttl, n as i64 % 10).unwrap();
        }
        let r = [0.0, 1.0, 1_000.0, 100_000.0, 1_000_000.0, 5_000_000.0, 20_000_000.0][magnitude as usize];
        let point = format!("{{'type': 'Point', 'coordinates': [{q_lon}, {q_lat}]}}");
        let shape = shape_around(q_lon, q_lat, magnitude, form);
        let condition = match form {
            0 => format!("ST_DISTANCE(c.loc, {point}) < {r}"),
            1 => format!("ST_DISTANCE({point}, c.loc) <= {r}"),
            2 => format!("{r} > ST_DISTANCE(c.loc, {point})"),
            3 => format!("{r} >= ST_DISTANCE({point}, c.loc)"),
            4 | 5 => format!("ST_WITHIN(c.loc, {shape})"),
            6 => format!("ST_INTERSECTS(c.loc, {shape})"),
            _ => format!("ST_INTERSECTS({shape}, c.loc)"),
        };
        let extra = if other_filter { " AND c.n = 1" } else { "" };
        let text = format!("SELECT VALUE c.id FROM c WHERE {condition}{extra}");
        prop_assert!(form >= 4 || spatial_lookups(&prepared(&text)) > 0);
        let scan = results(&c, &text, None, false);
        let indexed = results(&c, &text, None, true);
        prop_assert_eq!(indexed, scan, "{}", text);
    }
}

#[test]
fn a_point_moves_in_and_out_of_reach() {
    let mut c = container();
    let key = ItemKey::new("[\"p\"]", "a");
    let write = |c: &mut Container, lon: f64, lat: f64| {
        let body =
            json!({"id": "a", "pk": "p", "loc": {"type": "Point", "coordinates": [lon, lat]}});
        c.write(key.clone(), body.as_object().unwrap().clone(), None, 1)
            .unwrap();
    };
    let text = format!("SELECT VALUE c.id FROM c WHERE ST_DISTANCE(c.loc, {POINT}) < 1000");
    write(&mut c, 10.0, 50.001);
    assert_eq!(results(&c, &text, None, true), ["\"a\""]);
    write(&mut c, 11.0, 50.0);
    assert!(results(&c, &text, None, true).is_empty());
    let column = c.spatial_column(&[Box::from("loc")]).unwrap();
    assert_eq!(column.len(), 1);
    c.remove(&key, NOW, false);
    assert!(c.spatial_column(&[Box::from("loc")]).unwrap().is_empty());
}
