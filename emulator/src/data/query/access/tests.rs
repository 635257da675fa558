//! What `Access` reads of queries: the lookups, ranges, index ends,
//! ordered walks and spatial regions an index could answer, and what it
//! leaves to the scan. That the store's indexes then answer as the scan
//! does is `data/store/container/view/tests/`'s property test.

use std::ops::Bound;

use super::{Access, Lookup, Near, Probe};
use crate::data::index::DocumentPath;
use crate::data::index::{IndexKey, KeyType, Number};
use crate::data::query::{PreparedQuery, QueryBody, Region};

pub(super) fn access(text: &str) -> Access {
    let query = PreparedQuery::prepare(&QueryBody {
        query: text.into(),
        parameters: vec![],
    })
    .unwrap();
    Access::of(&query.select)
}

fn path(steps: &[&str]) -> DocumentPath {
    steps.iter().copied().collect()
}

fn number(x: f64) -> IndexKey {
    IndexKey::Number(Number::new(x))
}

#[test]
fn conjuncts_of_a_path_and_a_constant_are_lookups() {
    let found = access(
        "SELECT * FROM c WHERE c.a = 1 AND 2 < c.b.c AND (c['d'] BETWEEN 'x' AND 'y' AND c.e IN (1, 'z')) \
         AND STARTSWITH(c.f, 'pre') AND c.g AND c.h >= -3 + 1",
    );
    let probes: Vec<(DocumentPath, Probe)> = found
        .lookups
        .into_iter()
        .map(|Lookup { path, probe }| (path, probe))
        .collect();
    assert_eq!(
        probes,
        vec![
            (path(&["a"]), Probe::Keys(vec![number(1.0)])),
            (
                path(&["b", "c"]),
                Probe::Range {
                    key_type: KeyType::Number,
                    low: Bound::Excluded(number(2.0)),
                    high: Bound::Unbounded
                }
            ),
            (
                path(&["d"]),
                Probe::Range {
                    key_type: KeyType::String,
                    low: Bound::Included(IndexKey::String("x".into())),
                    high: Bound::Included(IndexKey::String("y".into()))
                }
            ),
            (
                path(&["e"]),
                Probe::Keys(vec![number(1.0), IndexKey::String("z".into())])
            ),
            (path(&["f"]), Probe::Prefix("pre".into())),
            (path(&["g"]), Probe::Keys(vec![IndexKey::Bool(true)])),
            (
                path(&["h"]),
                Probe::Range {
                    key_type: KeyType::Number,
                    low: Bound::Included(number(-2.0)),
                    high: Bound::Unbounded
                }
            ),
        ]
    );
}

#[test]
fn two_bounds_of_one_path_are_one_range() {
    let found = access(
        "SELECT * FROM c WHERE c.n >= 1 AND c.n < 9 AND c.n > 1 AND c.n <= 20 AND c.n < 'z'",
    );
    let ranges: Vec<Probe> = found.lookups.into_iter().map(|l| l.probe).collect();
    assert_eq!(
        ranges,
        vec![
            Probe::Range {
                key_type: KeyType::Number,
                low: Bound::Excluded(number(1.0)),
                high: Bound::Excluded(number(9.0))
            },
            Probe::Range {
                key_type: KeyType::String,
                low: Bound::Unbounded,
                high: Bound::Excluded(IndexKey::String("z".into()))
            },
        ]
    );
}

#[rstest::rstest]
#[case::disjunction("SELECT * FROM c WHERE c.a = 1 OR c.b = 2")]
#[case::negation("SELECT * FROM c WHERE NOT (c.a = 1)")]
#[case::two_paths("SELECT * FROM c WHERE c.a = c.b")]
#[case::not_equal("SELECT * FROM c WHERE c.a != 1")]
#[case::array_constant("SELECT * FROM c WHERE c.a = [1]")]
#[case::join_alias_property("SELECT c.id FROM c JOIN t IN c.tags WHERE t.name = 'x'")]
#[case::partial_array_contains("SELECT * FROM c WHERE ARRAY_CONTAINS(c.tags, 'x', true)")]
#[case::array_contains_an_array("SELECT * FROM c WHERE ARRAY_CONTAINS(c.tags, ['x'])")]
#[case::a_property_named_elements("SELECT * FROM c WHERE c['[]'] = 1")]
#[case::from_a_path("SELECT * FROM c IN c.children WHERE c.a = 1")]
#[case::case_insensitive("SELECT * FROM c WHERE STARTSWITH(c.a, 'x', true)")]
#[case::mixed_between("SELECT * FROM c WHERE c.a BETWEEN 1 AND 'z'")]
#[case::function("SELECT * FROM c WHERE LOWER(c.a) = 'x'")]
fn other_filters_are_not(#[case] text: &str) {
    assert_eq!(access(text).lookups, vec![]);
}

#[test]
fn array_elements_are_looked_up_for_array_contains_and_join_names() {
    let elements = |p: &[&str]| path(p).elements();
    let lookups = access(
        "SELECT c.id FROM c JOIN t IN c.tags JOIN u IN c.a.b \
         WHERE ARRAY_CONTAINS(c.tags, 'x') AND ARRAY_CONTAINS(c.n, 1, false) AND t = 'y' \
         AND u > 2",
    )
    .lookups;
    assert_eq!(
        lookups,
        vec![
            Lookup {
                path: elements(&["tags"]),
                probe: Probe::Keys(vec![IndexKey::String("x".into())])
            },
            Lookup {
                path: elements(&["n"]),
                probe: Probe::Keys(vec![number(1.0)])
            },
            Lookup {
                path: elements(&["tags"]),
                probe: Probe::Keys(vec![IndexKey::String("y".into())])
            },
            Lookup {
                path: elements(&["a", "b"]),
                probe: Probe::Range {
                    key_type: KeyType::Number,
                    low: Bound::Excluded(number(2.0)),
                    high: Bound::Unbounded
                }
            },
        ]
    );
}

#[test]
fn min_and_max_of_one_path_read_the_index_ends() {
    let ends = |text: &str| access(text).ends.map(|e| (e.path, e.low, e.high, e.count));
    assert_eq!(
        ends("SELECT VALUE MIN(c.a.b) FROM c"),
        Some((path(&["a", "b"]), true, false, false))
    );
    assert_eq!(
        ends("SELECT MAX(c.a) AS hi, MIN(c['a']) AS lo, 'x' AS tag FROM c"),
        Some((path(&["a"]), true, true, false))
    );
    assert_eq!(
        ends("SELECT VALUE {\"hi\": MAX(c.a) + 1} FROM c"),
        Some((path(&["a"]), false, true, false))
    );
    // The SDKs' cross-partition rewrite of MIN.
    assert_eq!(
        ends("SELECT VALUE [{\"item\": {\"min\": MIN(c.a), \"count\": COUNT(c.a)}}] FROM c"),
        Some((path(&["a"]), true, false, true))
    );
    for text in [
        "SELECT VALUE MIN(c.a) FROM c WHERE c.b = 1",
        "SELECT MIN(c.a) AS lo, COUNT(1) AS n FROM c",
        "SELECT MIN(c.a) AS lo, COUNT(c.b) AS n FROM c",
        "SELECT VALUE COUNT(c.a) FROM c",
        "SELECT MIN(c.a) AS lo, MAX(c.b) AS hi FROM c",
        "SELECT MIN(c.a) AS lo, c.b FROM c GROUP BY c.b",
        "SELECT VALUE MIN(c.a) FROM c JOIN t IN c.tags",
        "SELECT VALUE MIN(LOWER(c.a)) FROM c",
        "SELECT VALUE MIN(c) FROM c",
        "SELECT VALUE MIN(c.a) FROM c IN c.children",
        "SELECT VALUE {\"lo\": MIN(c.a), \"n\": COUNT(1)} FROM c",
        "SELECT c.a FROM c",
    ] {
        assert_eq!(ends(text), None, "{text}");
    }
}

#[test]
fn a_bounded_order_by_a_path_is_an_order_walk() {
    let walk = access("SELECT * FROM c ORDER BY c.a.b DESC OFFSET 5 LIMIT 10")
        .order
        .unwrap();
    assert_eq!(
        (walk.path, walk.descending, walk.wanted),
        (path(&["a", "b"]), true, 15)
    );
    assert_eq!(
        access("SELECT TOP 3 * FROM c ORDER BY c.a, c.b")
            .order
            .unwrap()
            .wanted,
        3
    );
    for text in [
        "SELECT * FROM c ORDER BY c.a",
        "SELECT DISTINCT TOP 3 c.a FROM c ORDER BY c.a",
        "SELECT TOP 3 c.id FROM c JOIN t IN c.tags ORDER BY c.a",
        "SELECT TOP 3 * FROM c ORDER BY c.tags[0]",
    ] {
        assert_eq!(access(text).order, None, "{text}");
    }
}

fn near(text: &str) -> Vec<Near> {
    access(text).near
}

const POINT: &str = "{'type': 'Point', 'coordinates': [10, 50]}";
const SQUARE: &str =
    "{'type': 'Polygon', 'coordinates': [[[9, 49], [11, 49], [11, 51], [9, 51], [9, 49]]]}";

#[test]
fn distance_bounds_are_near_lookups() {
    for text in [
        format!("SELECT * FROM c WHERE ST_DISTANCE(c.loc, {POINT}) < 1000"),
        format!("SELECT * FROM c WHERE ST_DISTANCE({POINT}, c.loc) <= 1000"),
        format!("SELECT * FROM c WHERE 1000 > ST_DISTANCE(c.loc, {POINT}) AND c.n = 1"),
        format!("SELECT * FROM c WHERE 500 + 500 >= ST_DISTANCE(c.loc, {POINT})"),
    ] {
        let found = near(&text);
        assert_eq!(found.len(), 1, "{text}");
        assert_eq!(found[0].path, path(&["loc"]));
        assert!(
            matches!(found[0].region, Region::Near { distance, .. } if distance == 1000.0),
            "{text}"
        );
    }
    for text in [
        format!("SELECT * FROM c WHERE ST_WITHIN(c.loc, {SQUARE})"),
        format!("SELECT * FROM c WHERE ST_INTERSECTS(c.loc, {SQUARE}) AND c.n = 1"),
        format!("SELECT * FROM c WHERE ST_INTERSECTS({SQUARE}, c.loc)"),
        format!("SELECT * FROM c WHERE ST_INTERSECTS(c.loc, {POINT})"),
    ] {
        let found = near(&text);
        assert_eq!(found.len(), 1, "{text}");
        assert!(matches!(found[0].region, Region::Parts(_)), "{text}");
    }
    for text in [
        format!("SELECT * FROM c WHERE ST_DISTANCE(c.loc, {POINT}) > 1000"),
        format!("SELECT * FROM c WHERE NOT (ST_DISTANCE(c.loc, {POINT}) < 1000)"),
        format!("SELECT * FROM c WHERE ST_DISTANCE(c.loc, {POINT}) < 1000 OR c.n = 1"),
        "SELECT * FROM c WHERE ST_DISTANCE(c.loc, c.other) < 1000".into(),
        "SELECT * FROM c WHERE ST_DISTANCE(c.loc, {'type': 'Polygon', 'coordinates': [[[0,0],[1,0],[1,1],[0,0]]]}) < 1".into(),
        format!("SELECT * FROM c WHERE ST_DISTANCE(c.loc, {POINT}) < c.n"),
        format!("SELECT * FROM c WHERE ST_DISTANCE(c.loc, {POINT}) < 'far'"),
        format!("SELECT * FROM c WHERE ST_DISTANCE(c.loc, {POINT}) = 0"),
        format!("SELECT * FROM c WHERE ST_WITHIN({SQUARE}, c.loc)"),
        format!("SELECT * FROM c WHERE NOT ST_WITHIN(c.loc, {SQUARE})"),
        // Clockwise: the rest of the earth.
        "SELECT * FROM c WHERE ST_WITHIN(c.loc, {'type': 'Polygon', 'coordinates': [[[0,0],[0,1],[1,1],[1,0],[0,0]]]})".into(),
        // Wider than the bound's cap.
        "SELECT * FROM c WHERE ST_WITHIN(c.loc, {'type': 'Polygon', 'coordinates': [[[-170,-80],[170,-80],[170,80],[-170,80],[-170,-80]]]})".into(),
    ] {
        assert!(near(&text).is_empty(), "{text}");
    }
}
