//! The index against the scan: what `Access` reads of queries, and a
//! property test that runs random queries from the grammar over random
//! containers both ways (index built for every path the query could use,
//! and no index at all) and wants the same results in the same order,
//! page by page.

use std::ops::Bound;

use bytes::Bytes;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::{Access, Lookup, Probe};
use crate::partition_key::KeyScope;
use crate::query::view::ScopedView;
use crate::query::{Continuation, PageLimit, PreparedQuery, QueryBody};
use crate::store::index::{IndexKey, KeyType, Number, ELEMENTS};
use crate::store::{Container, ContainerSettings, ItemKey};
use crate::ttl::Ttl;

pub(super) fn access(text: &str) -> Access {
    let query = PreparedQuery::prepare(&QueryBody {
        query: text.into(),
        parameters: vec![],
    })
    .unwrap();
    Access::of(&query.select)
}

fn path(steps: &[&str]) -> Vec<Box<str>> {
    steps.iter().map(|s| (*s).into()).collect()
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
    let probes: Vec<(Vec<Box<str>>, Probe)> = found
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
    let elements = |p: &[&str]| {
        let mut path = path(p);
        path.push(ELEMENTS.into());
        path
    };
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

pub(super) const NOW: i64 = 100;

/// Values the items hold at `a`: every type, equal numbers spelled two
/// ways, strings sharing prefixes.
fn value(choice: u8) -> Option<Value> {
    Some(match choice {
        0 => return None,
        1 => json!(null),
        2 => json!(false),
        3 => json!(true),
        4 => json!(-1),
        5 => json!(0),
        6 => json!(1),
        7 => json!(1.0),
        8 => json!(2.5),
        9 => json!(""),
        10 => json!("a"),
        11 => json!("ab"),
        12 => json!("b"),
        13 => json!([1]),
        _ => json!({"x": 1}),
    })
}

/// One item: (id, partition, a, b, tags seed, expired).
type ItemSpec = (u8, u8, u8, u8, u8, bool);

fn container() -> Container {
    let body =
        json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}, "defaultTtl": -1});
    let settings = ContainerSettings::parse(body.as_object().unwrap()).unwrap();
    Container::new("c".into(), "db", 1, 1, settings, 0, 3600)
}

/// Writes the items in their order (a later one with an id replaces the
/// earlier), then deletes some: the index follows every change.
fn fill(c: &mut Container, items: &[ItemSpec], deleted: &[u8]) {
    let key = |id: u8, pk: u8| ItemKey::new(&format!("[\"p{pk}\"]"), &format!("i{id:02}"));
    for (n, &(id, pk, a, b, tags, expired)) in items.iter().enumerate() {
        let mut body = Map::new();
        body.insert("id".into(), json!(format!("i{id:02}")));
        body.insert("pk".into(), json!(format!("p{pk}")));
        if let Some(a) = value(a) {
            body.insert("a".into(), a);
        }
        if b < 4 {
            body.insert("b".into(), json!(b));
            body.insert("n".into(), json!({"x": (b as i64) - 1}));
        }
        body.insert("flag".into(), json!(a % 3 == 0));
        body.insert(
            "tags".into(),
            json!([format!("t{}", tags % 3), format!("t{}", tags % 5)]),
        );
        let ttl = expired.then_some(Ttl::Seconds(5));
        c.write(key(id, pk), body, ttl, n as i64 % 10).unwrap();
    }
    for &id in deleted {
        if let Some(&(_, pk, ..)) = items.iter().find(|item| item.0 == id) {
            c.remove(&key(id, pk), NOW, false);
        }
    }
}

/// A constant of the grammar: the values the items hold, and a few more.
fn constant(choice: u8) -> String {
    match value(choice % 15) {
        Some(v) if choice < 15 => v.to_string().replace('"', "'"),
        _ => ["3", "'abc'", "-0.0", "0.5"][(choice % 4) as usize].to_string(),
    }
}

/// A WHERE conjunct from the grammar.
fn conjunct((kind, x, y): (u8, u8, u8)) -> String {
    let ops = ["=", "<", "<=", ">", ">="];
    match kind % 12 {
        0..=3 => format!("c.a {} {}", ops[(x % 5) as usize], constant(y)),
        4 => format!("{} {} c.a", constant(y), ops[(x % 5) as usize]),
        5 => format!("c.a BETWEEN {} AND {}", constant(x), constant(y)),
        6 => format!("c.a IN ({}, {})", constant(x), constant(y)),
        7 => format!(
            "STARTSWITH(c.a, {})",
            ["'a'", "''", "'b'", "'ab'"][(x % 4) as usize]
        ),
        8 => match x % 3 {
            0 => format!("ARRAY_CONTAINS(c.tags, 't{}')", y % 5),
            1 => format!("ARRAY_CONTAINS(c.a, {})", constant(y)),
            _ => "c.flag".into(),
        },
        9 => format!("c.b {} {}", ops[(x % 5) as usize], y % 4),
        10 => format!("(c.b = {} OR c.a = {})", x % 4, constant(y)),
        _ => format!("c.n.x >= {}", (x % 4) as i64 - 2),
    }
}

/// A query's parts: projection, conjuncts, ORDER BY, bound.
type QueryShape = (u8, Vec<(u8, u8, u8)>, u8, (u8, u8, u8));

fn query_text((projection, conjuncts, order, (bound, n, offset)): &QueryShape) -> String {
    let projection = match projection % 10 {
        0 => "*",
        1 => "c.id, c.a",
        2 => "VALUE c.id",
        3 => "VALUE COUNT(1)",
        4 => "VALUE MIN(c.a)",
        5 => "VALUE MAX(c.a)",
        6 => "MIN(c.a) AS lo, MAX(c.a) AS hi",
        7 => "VALUE [{\"item\": {\"min\": MIN(c.a), \"count\": COUNT(c.a)}}]",
        8 => "VALUE [{\"item\": {\"max\": MAX(c.a), \"count\": COUNT(c.a)}}]",
        _ => "c.id, t",
    };
    let join = if projection == "c.id, t" {
        " JOIN t IN c.tags"
    } else {
        ""
    };
    let mut all: Vec<String> = conjuncts.iter().copied().map(conjunct).collect();
    // A condition on the JOIN's name reads the index of the tags' elements.
    if !join.is_empty() {
        match offset % 3 {
            0 => {}
            1 => all.push(format!("t = 't{}'", n % 5)),
            _ => all.push("t >= 't2'".into()),
        }
    }
    let filter = match all.is_empty() {
        true => String::new(),
        false => format!(" WHERE {}", all.join(" AND ")),
    };
    let aggregate = projection.contains('(');
    let order = match (order % 7, aggregate) {
        (_, true) | (0, _) => "",
        (1, _) => " ORDER BY c.a",
        (2, _) => " ORDER BY c.a DESC",
        (3, _) => " ORDER BY c.b",
        (4, _) => " ORDER BY c.n.x DESC",
        (5, _) => " ORDER BY c.b, c.a DESC",
        _ => " ORDER BY c.id DESC",
    };
    let (top, tail) = match (bound % 3, aggregate) {
        (_, true) | (0, _) => (String::new(), String::new()),
        (1, _) => (format!("TOP {} ", n % 12), String::new()),
        _ => (
            String::new(),
            format!(" OFFSET {} LIMIT {}", offset % 8, n % 12),
        ),
    };
    format!("SELECT {top}{projection} FROM c{join}{filter}{order}{tail}")
}

/// Every result of `text`, page by page (3 items a page where pages
/// resume after a key), with the container's index or without any.
pub(super) fn results(
    c: &Container,
    text: &str,
    scope: Option<&KeyScope>,
    indexed: bool,
) -> Vec<String> {
    let query = PreparedQuery::prepare(&QueryBody {
        query: text.into(),
        parameters: vec![],
    })
    .unwrap();
    let items = |after: Option<&ItemKey>| {
        c.live_items(scope, after, NOW)
            .map(|(key, item)| (key.pk(), key.id(), &item.body))
    };
    let view = |after: Option<ItemKey>| ScopedView {
        c,
        in_scope: move |pk: &str| scope.is_none_or(|s| s.contains(pk)),
        now: NOW,
        after,
    };
    let texts = |results: Vec<Bytes>| -> Vec<String> {
        results
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect()
    };
    if query.needs_whole_result() {
        let mut view = view(None);
        let view = indexed.then_some(&mut view as &mut dyn crate::query::view::ContainerView);
        return texts(
            query
                .run_whole(Default::default(), items(None), view)
                .unwrap()
                .0,
        );
    }
    let limit = PageLimit {
        items: 3,
        bytes: usize::MAX,
    };
    let mut all = Vec::new();
    let mut after: Option<ItemKey> = None;
    loop {
        let mut page_view = view(after.clone());
        let page_view =
            indexed.then_some(&mut page_view as &mut dyn crate::query::view::ContainerView);
        let continuation = after.as_ref().map(|key| Continuation::After {
            pk: key.pk().into(),
            id: key.id().into(),
        });
        let page = query
            .run_page(
                Default::default(),
                items(after.as_ref()),
                page_view,
                continuation.as_ref(),
                limit,
            )
            .unwrap()
            .0;
        all.extend(texts(page.documents));
        match page.continuation {
            Some(Continuation::After { pk, id }) => after = Some(ItemKey::new(&pk, &id)),
            _ => return all,
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn the_index_answers_as_the_scan_does(
        items in prop::collection::vec((0u8..40, 0u8..3, 0u8..15, 0u8..5, any::<u8>(), prop::bool::weighted(0.1)), 0..40),
        deleted in prop::collection::vec(0u8..40, 0..4),
        shape in (0u8..10, prop::collection::vec((any::<u8>(), any::<u8>(), 0u8..19), 0..3), 0u8..7, (any::<u8>(), any::<u8>(), any::<u8>())),
        partition in prop::option::of(0u8..3),
        built_before in any::<bool>(),
    ) {
        let text = query_text(&shape);
        let query = PreparedQuery::prepare(&QueryBody { query: text.clone(), parameters: vec![] }).unwrap();
        let mut c = container();
        // Built before the writes (kept by them) or after (built from them).
        if built_before {
            for path in query.index_paths() {
                c.build_index(path);
            }
        }
        fill(&mut c, &items, &deleted);
        for path in query.index_paths() {
            c.build_index(path);
        }
        let scope = partition.map(|p| KeyScope::Exact(format!("[\"p{p}\"]")));
        let scan = results(&c, &text, scope.as_ref(), false);
        let indexed = results(&c, &text, scope.as_ref(), true);
        prop_assert_eq!(indexed, scan, "{}", text);
    }
}
