//! A path's index against the scan: random queries from the grammar
//! over random containers, run with an index built for every path the
//! query could use (before the writes or after) and with none.

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::{prepared, results, NOW};
use crate::data::store::{Container, ContainerSettings};
use crate::data::ttl::Ttl;
use crate::protocol::item_key::ItemKey;
use crate::protocol::partition_key::KeyScope;

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
        let query = prepared(&text);
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
