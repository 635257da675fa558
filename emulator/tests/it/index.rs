//! The index over HTTP: queries that read it answer what the scan would,
//! through every write path, expiry, a policy change and a snapshot
//! restore; and the indexing policy's refusals, in the service's words.

use crate::common::{Purge, TestClient, COLL, DB};
use serde_json::{json, Value};

/// The ids a query returns, sorted (the order is checked where it matters).
fn ids(c: &TestClient, query: &str) -> Vec<String> {
    let mut ids: Vec<String> = c
        .query(query, json!([]))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

fn query_in(c: &TestClient, coll: &str, text: &str) -> crate::common::Reply {
    c.post(
        &format!("/dbs/{DB}/colls/{coll}/docs"),
        &json!({ "query": text }),
        &[
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-query-enablecrosspartition", "True"),
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
        ],
    )
}

const N_IS_5: &str = "SELECT VALUE c.id FROM c WHERE c.n = 5";

/// An item enters, moves within and leaves the index with every write:
/// create, replace, upsert, patch, batch, delete, and its expiry (before
/// the purge takes it).
#[test]
fn the_index_follows_every_write_path() {
    let c = TestClient::with_container_and(Some(json!(-1)), Purge::Off);
    for i in 0..10 {
        c.create_item(&json!({"id": format!("i{i}"), "pk": "p", "n": i}));
    }
    // The first query builds the index of /n.
    assert_eq!(ids(&c, N_IS_5), ["i5"]);
    c.create_item(&json!({"id": "new", "pk": "q", "n": 5}));
    assert_eq!(ids(&c, N_IS_5), ["i5", "new"]);
    c.replace_item(&json!({"id": "i5", "pk": "p", "n": 6}));
    assert_eq!(ids(&c, N_IS_5), ["new"]);
    c.upsert_item(&json!({"id": "i1", "pk": "p", "n": 5}));
    assert_eq!(ids(&c, N_IS_5), ["i1", "new"]);
    let patched = c.patch_item("i2", "p", json!([{"op": "set", "path": "/n", "value": 5}]));
    assert_eq!(patched.status, 200, "{}", patched.body);
    assert_eq!(ids(&c, N_IS_5), ["i1", "i2", "new"]);
    let batch = c.batch(
        "p",
        &json!([
            {"operationType": "Create", "resourceBody": {"id": "b", "pk": "p", "n": 5}},
            {"operationType": "Delete", "id": "i1"},
        ]),
    );
    assert_eq!(batch.status, 200, "{}", batch.body);
    assert_eq!(ids(&c, N_IS_5), ["b", "i2", "new"]);
    assert_eq!(c.delete_item("new", "q").status, 204);
    assert_eq!(ids(&c, N_IS_5), ["b", "i2"]);
    // A failed batch changes nothing, in the index either.
    let failed = c.batch(
        "p",
        &json!([
            {"operationType": "Replace", "id": "b", "resourceBody": {"id": "b", "pk": "p", "n": 7}},
            {"operationType": "Create", "resourceBody": {"id": "i3", "pk": "p", "n": 5}},
        ]),
    );
    assert_eq!(failed.status, 207, "{}", failed.body);
    assert_eq!(ids(&c, N_IS_5), ["b", "i2"]);
    // An item that expires leaves the answers at once; the purge is off.
    c.create_item(&json!({"id": "brief", "pk": "p", "n": 5, "ttl": 10}));
    assert_eq!(ids(&c, N_IS_5), ["b", "brief", "i2"]);
    c.advance(10);
    assert_eq!(ids(&c, N_IS_5), ["b", "i2"]);
    // A range, IN and STARTSWITH read the same index, or one of their own.
    assert_eq!(
        ids(&c, "SELECT VALUE c.id FROM c WHERE c.n > 6"),
        ["i7", "i8", "i9"]
    );
    assert_eq!(
        ids(&c, "SELECT VALUE c.id FROM c WHERE c.n IN (0, 6)"),
        ["i0", "i5", "i6"]
    );
    assert_eq!(
        ids(&c, "SELECT VALUE c.id FROM c WHERE STARTSWITH(c.id, 'b')"),
        ["b"]
    );
}

/// A bounded ORDER BY walks the index: the same pages as a sort of every
/// item, ties in the scan's order, whichever the direction.
#[test]
fn order_by_pages_come_from_the_index_as_from_a_sort() {
    let c = TestClient::with_container(None);
    for i in 0..30 {
        let rank = json!(i % 7);
        c.create_item(
            &json!({"id": format!("i{i:02}"), "pk": format!("p{}", i % 3), "rank": rank}),
        );
    }
    c.create_item(&json!({"id": "none", "pk": "p0"}));
    c.create_item(&json!({"id": "text", "pk": "p1", "rank": "high"}));
    let items: Vec<(Value, String, String)> = c
        .query("SELECT c.id, c.pk, c.rank FROM c", json!([]))
        .into_iter()
        .map(|v| {
            (
                v["rank"].clone(),
                v["pk"].as_str().unwrap().to_string(),
                v["id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // The sort's order: undefined, numbers, strings, reversed when
    // descending; ties in the scan's order (write order) either way.
    let rank_order = |v: &Value| match v {
        Value::Null => (0, 0.0),
        Value::Number(n) => (1, n.as_f64().unwrap()),
        _ => (2, 0.0),
    };
    let ids_in_order = |descending: bool| -> Vec<Value> {
        let mut sorted = items.clone();
        sorted.sort_by(|a, b| {
            let by_rank = rank_order(&a.0).partial_cmp(&rank_order(&b.0)).unwrap();
            if descending {
                by_rank.reverse()
            } else {
                by_rank
            }
        });
        sorted.into_iter().map(|(_, _, id)| json!(id)).collect()
    };
    let ascending = ids_in_order(false);
    for offset in [0, 10, 20, 30] {
        let text = format!("SELECT VALUE c.id FROM c ORDER BY c.rank OFFSET {offset} LIMIT 10");
        let got: Vec<Value> = c.query(&text, json!([]));
        let want: Vec<Value> = ascending.iter().skip(offset).take(10).cloned().collect();
        assert_eq!(got, want, "{text}");
    }
    // Descending: the runs reversed, each run still in write order.
    let top: Vec<Value> = c.query(
        "SELECT TOP 12 VALUE c.id FROM c ORDER BY c.rank DESC",
        json!([]),
    );
    assert_eq!(top, ids_in_order(true)[..12]);
}

/// Filters on paths the policy does not index still answer (the service
/// scans them, at a higher charge); ORDER BY on such a path is refused as
/// the service refuses it, and `id` and `_ts` are always indexed.
#[test]
fn an_unindexed_path_is_scanned_and_cannot_be_sorted_on() {
    let c = TestClient::with_container(None);
    let body = json!({
        "id": "narrow",
        "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
        "indexingPolicy": {
            "includedPaths": [{"path": "/name/?"}, {"path": "/address/*"}],
            "excludedPaths": [{"path": "/*"}]
        }
    });
    assert_eq!(c.post(&format!("/dbs/{DB}/colls"), &body, &[]).status, 201);
    for (id, name, secret) in [("a", "x", 2), ("b", "y", 1), ("c", "x", 3)] {
        let item =
            json!({"id": id, "pk": "p", "name": name, "secret": secret, "address": {"city": id}});
        let reply = c.post(
            &format!("/dbs/{DB}/colls/narrow/docs"),
            &item,
            &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
        );
        assert_eq!(reply.status, 201, "{}", reply.body);
    }
    let docs = |reply: crate::common::Reply| {
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.body["Documents"].clone()
    };
    let scanned = query_in(&c, "narrow", "SELECT VALUE c.id FROM c WHERE c.secret >= 2");
    assert_eq!(docs(scanned), json!(["a", "c"]));
    let indexed = query_in(&c, "narrow", "SELECT VALUE c.id FROM c WHERE c.name = 'x'");
    assert_eq!(docs(indexed), json!(["a", "c"]));
    for text in [
        "SELECT VALUE c.id FROM c ORDER BY c.name DESC",
        "SELECT VALUE c.id FROM c ORDER BY c.address.city",
        "SELECT VALUE c.id FROM c ORDER BY c.id DESC",
        "SELECT VALUE c.id FROM c ORDER BY c._ts",
    ] {
        assert_eq!(query_in(&c, "narrow", text).status, 200, "{text}");
    }
    for text in [
        "SELECT VALUE c.id FROM c ORDER BY c.secret",
        "SELECT TOP 1 VALUE c.id FROM c ORDER BY c.name.first",
    ] {
        let refused = query_in(&c, "narrow", text);
        refused.assert_error(400, "BadRequest");
        assert!(
            refused.message().contains(
                "The index path corresponding to the specified order-by item is excluded."
            ),
            "{text}: {}",
            refused.body
        );
    }
}

/// `indexingMode: none` keeps no index: filters scan, ORDER BY is refused.
#[test]
fn mode_none_scans_every_filter_and_refuses_order_by() {
    let c = TestClient::with_container(None);
    let body = json!({
        "id": "plain",
        "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
        "indexingPolicy": {"indexingMode": "none", "automatic": false}
    });
    assert_eq!(c.post(&format!("/dbs/{DB}/colls"), &body, &[]).status, 201);
    for i in 0..3 {
        let reply = c.post(
            &format!("/dbs/{DB}/colls/plain/docs"),
            &json!({"id": format!("i{i}"), "pk": "p", "n": i}),
            &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
        );
        assert_eq!(reply.status, 201, "{}", reply.body);
    }
    let filtered = query_in(&c, "plain", "SELECT VALUE c.id FROM c WHERE c.n >= 1");
    assert_eq!(
        filtered.body["Documents"],
        json!(["i1", "i2"]),
        "{}",
        filtered.body
    );
    let sorted = query_in(&c, "plain", "SELECT VALUE c.id FROM c ORDER BY c.n");
    sorted.assert_error(400, "BadRequest");
}

/// A new indexing policy drops the indexes; the answers stay right and
/// follow the new policy's refusals.
#[test]
fn a_policy_change_and_a_restore_keep_the_answers() {
    let c = TestClient::with_container(None);
    for i in 0..6 {
        c.create_item(&json!({"id": format!("i{i}"), "pk": "p", "n": i % 3}));
    }
    assert_eq!(
        ids(&c, "SELECT VALUE c.id FROM c WHERE c.n = 1"),
        ["i1", "i4"]
    );
    assert_eq!(
        c.put("/_emulator/snapshots/base", &json!({}), &[]).status,
        201
    );
    let excluded = json!({
        "id": "c",
        "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
        "indexingPolicy": {"excludedPaths": [{"path": "/n/?"}], "includedPaths": [{"path": "/*"}]}
    });
    let replaced = c.put(COLL, &excluded, &[]);
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    c.create_item(&json!({"id": "later", "pk": "p", "n": 1}));
    assert_eq!(
        ids(&c, "SELECT VALUE c.id FROM c WHERE c.n = 1"),
        ["i1", "i4", "later"]
    );
    query_in(&c, "c", "SELECT VALUE c.id FROM c ORDER BY c.n").assert_error(400, "BadRequest");
    // The snapshot brings back the items and the policy that indexes /n.
    let restored = c.post("/_emulator/snapshots/base/restore", &json!({}), &[]);
    assert_eq!(restored.status, 200, "{}", restored.body);
    assert_eq!(
        ids(&c, "SELECT VALUE c.id FROM c WHERE c.n = 1"),
        ["i1", "i4"]
    );
    let sorted = c.query(
        "SELECT TOP 2 VALUE c.id FROM c ORDER BY c.n DESC",
        json!([]),
    );
    assert_eq!(sorted, [json!("i2"), json!("i5")]);
}

/// How many documents a query read to answer (its metrics).
fn retrieved(c: &TestClient, text: &str) -> String {
    retrieved_in(c, COLL, text)
}

/// [`retrieved`] in the container at `coll` (`/dbs/{db}/colls/{id}`).
fn retrieved_in(c: &TestClient, coll: &str, text: &str) -> String {
    let reply = c.post(
        &format!("{coll}/docs"),
        &json!({ "query": text }),
        &[
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-query-enablecrosspartition", "True"),
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
            ("x-ms-documentdb-populatequerymetrics", "True"),
        ],
    );
    let metrics = reply.header("x-ms-documentdb-query-metrics").unwrap();
    let count = metrics
        .split(';')
        .find_map(|m| m.strip_prefix("retrievedDocumentCount="))
        .unwrap();
    count.to_string()
}

/// The index transformation's progress on a container read with quota info.
fn progress(c: &TestClient) -> u8 {
    let reply = c.get(COLL, &[("x-ms-documentdb-populatequotainfo", "true")]);
    assert_eq!(reply.status, 200, "{}", reply.body);
    let header = "x-ms-documentdb-collection-index-transformation-progress";
    reply.header(header).unwrap().parse().unwrap()
}

/// A new policy that still indexes a path in use rebuilds its index in
/// the background, chunk by chunk; the progress header climbs to 100,
/// every answer meanwhile is right (the path is scanned), and the index
/// serves again at the end.
#[test]
fn a_policy_change_rebuilds_the_indexes_in_use_with_progress() {
    let c = TestClient::with_container(None);
    let items = 5000; // more than two chunks of the rebuild
    for i in 0..items {
        c.create_item(
            &json!({"id": format!("i{i:04}"), "pk": format!("p{}", i % 7), "n": i % 100}),
        );
    }
    let expected: Vec<String> = (0..items)
        .filter(|i| i % 100 == 1)
        .map(|i| format!("i{i:04}"))
        .collect();
    assert_eq!(ids(&c, "SELECT VALUE c.id FROM c WHERE c.n = 1"), expected);
    assert_eq!(
        retrieved(&c, "SELECT VALUE c.id FROM c WHERE c.n = 1"),
        "50",
        "the index serves"
    );
    assert_eq!(progress(&c), 100, "nothing to rebuild yet");

    let narrower = json!({
        "id": "c",
        "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
        "indexingPolicy": {"includedPaths": [{"path": "/*"}], "excludedPaths": [{"path": "/other/?"}]}
    });
    let replaced = c.put(COLL, &narrower, &[]);
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    let mut seen = vec![];
    loop {
        let now = progress(&c);
        assert!(now <= 100);
        assert!(
            seen.last().is_none_or(|&last| now >= last),
            "{seen:?} then {now}"
        );
        seen.push(now);
        assert_eq!(ids(&c, "SELECT VALUE c.id FROM c WHERE c.n = 1"), expected);
        if now == 100 {
            break;
        }
        assert!(seen.len() < 10_000, "the rebuild never ended: {seen:?}");
    }
    assert_eq!(
        retrieved(&c, "SELECT VALUE c.id FROM c WHERE c.n = 1"),
        "50",
        "rebuilt"
    );
    // Ties in write order, whatever their keys (partition key, then id).
    let highest: Vec<(String, String)> = (0..items)
        .filter(|i| i % 100 == 99)
        .map(|i| (format!("p{}", i % 7), format!("i{i:04}")))
        .collect();
    let top = c.query(
        "SELECT TOP 3 VALUE c.id FROM c ORDER BY c.n DESC",
        json!([]),
    );
    assert_eq!(
        top,
        [
            json!(highest[0].1),
            json!(highest[1].1),
            json!(highest[2].1)
        ]
    );
}

/// MIN and MAX of one path read the index's ends: the few items holding
/// the extreme values, not every item; an expired extreme gives way to
/// the next, and an object value makes them undefined, as in the scan.
#[test]
fn min_and_max_come_from_the_index_ends() {
    // TTL on (`defaultTtl: -1`), the purge off: expired items stay stored.
    let c = TestClient::with_container_and(Some(json!(-1)), Purge::Off);
    for i in 0..200 {
        c.create_item(
            &json!({"id": format!("i{i:03}"), "pk": format!("p{}", i % 3), "n": i % 100}),
        );
    }
    let max = "SELECT VALUE MAX(c.n) FROM c";
    assert_eq!(c.query(max, json!([])), [json!(99)]);
    assert_eq!(retrieved(&c, max), "2", "the two items holding 99");
    let both = "SELECT MIN(c.n) AS lo, MAX(c.n) AS hi FROM c";
    assert_eq!(c.query(both, json!([])), [json!({"lo": 0, "hi": 99})]);
    assert_eq!(retrieved(&c, both), "4");
    // The SDKs' cross-partition rewrite: MAX with COUNT beside it.
    let planned = "SELECT VALUE [{\"item\": {\"max\": MAX(c.n), \"count\": COUNT(c.n)}}] FROM c";
    assert_eq!(
        c.query(planned, json!([])),
        [json!([{"item": {"max": 99, "count": 200}}])]
    );
    assert_eq!(
        retrieved(&c, planned),
        "2",
        "the rest are counted, not read"
    );

    // The two 99s expire: the next run down answers.
    for id in ["i099", "i199"] {
        let pk = if id == "i099" { "p0" } else { "p1" };
        c.upsert_item(&json!({"id": id, "pk": pk, "n": 99, "ttl": 5}));
    }
    c.advance(10);
    assert_eq!(c.query(max, json!([])), [json!(98)]);

    c.create_item(&json!({"id": "obj", "pk": "p0", "n": {"x": 1}}));
    assert_eq!(c.query(max, json!([])), Vec::<Value>::new(), "undefined");
}

/// `ARRAY_CONTAINS(c.tags, x)` and a JOIN's `t = x` read the index of the
/// tags' elements: only the items holding the tag, through every write.
#[test]
fn array_elements_serve_array_contains_and_joins() {
    let c = TestClient::with_container(None);
    for i in 0..60 {
        let tags = json!([
            format!("a{}", i % 3),
            format!("b{}", i % 5),
            format!("a{}", i % 3)
        ]);
        c.create_item(
            &json!({"id": format!("i{i:02}"), "pk": format!("p{}", i % 4), "tags": tags}),
        );
    }
    let contains = "SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(c.tags, 'b2')";
    let expected: Vec<String> = (0..60)
        .filter(|i| i % 5 == 2)
        .map(|i| format!("i{i:02}"))
        .collect();
    assert_eq!(ids(&c, contains), expected);
    assert_eq!(retrieved(&c, contains), "12");
    let join = "SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags WHERE t = 'a1'";
    // Each of the 20 items holds a1 twice: two rows each.
    assert_eq!(c.query(join, json!([])), [json!(40)]);
    assert_eq!(retrieved(&c, join), "20");

    // A replace moves an item between tags; a delete drops it.
    c.upsert_item(&json!({"id": "i02", "pk": "p2", "tags": ["c"]}));
    assert_eq!(c.delete_item("i07", "p3").status, 204);
    let expected: Vec<String> = expected
        .into_iter()
        .filter(|id| id != "i02" && id != "i07")
        .collect();
    assert_eq!(ids(&c, contains), expected);
    assert_eq!(
        ids(
            &c,
            "SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(c.tags, 'c')"
        ),
        ["i02"]
    );
}

/// `ST_DISTANCE(c.loc, point) < r` on a path with a spatial index reads
/// only the points that may be that near (and other shapes): the answer
/// is that of a container without one, through a replace and a delete.
#[test]
fn a_spatial_index_serves_distance_filters() {
    let c = TestClient::with_container(None);
    let policy = |spatial: bool| {
        let mut policy = json!({"includedPaths": [{"path": "/*"}], "excludedPaths": []});
        if spatial {
            policy["spatialIndexes"] = json!([{"path": "/loc/*", "types": ["Point"]}]);
        }
        policy
    };
    for (coll, spatial) in [("geo", true), ("scan", false)] {
        let body = json!({"id": coll, "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
                          "indexingPolicy": policy(spatial)});
        assert_eq!(c.post(&format!("/dbs/{DB}/colls"), &body, &[]).status, 201);
    }
    let put = |id: String, lon: f64, lat: f64| {
        let item =
            json!({"id": id, "pk": "p", "loc": {"type": "Point", "coordinates": [lon, lat]}});
        for coll in ["geo", "scan"] {
            let reply = c.post(
                &format!("/dbs/{DB}/colls/{coll}/docs"),
                &item,
                &[
                    ("x-ms-documentdb-partitionkey", "[\"p\"]"),
                    ("x-ms-documentdb-is-upsert", "True"),
                ],
            );
            assert!(reply.status == 201 || reply.status == 200, "{}", reply.body);
        }
    };
    // A grid of 400 points a tenth of a degree apart around (10, 50).
    for i in 0..20 {
        for j in 0..20 {
            put(
                format!("g{i:02}{j:02}"),
                9.0 + f64::from(i) * 0.1,
                49.0 + f64::from(j) * 0.1,
            );
        }
    }
    put("elsewhere".into(), 0.0, 0.0);
    let text = "SELECT VALUE c.id FROM c WHERE \
                ST_DISTANCE(c.loc, {'type': 'Point', 'coordinates': [10, 50]}) < 15000";
    let answer_to = |coll: &str, text: &str| {
        let mut ids: Vec<String> = query_in(&c, coll, text).body["Documents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    };
    let answer = |coll: &str| answer_to(coll, text);
    let near = answer("geo");
    assert_eq!(near, answer("scan"));
    let read = |coll: &str| retrieved_in(&c, &format!("/dbs/{DB}/colls/{coll}"), text);
    assert_eq!(read("scan"), "401", "every item");
    assert_eq!(read("geo"), near.len().to_string(), "only those near");
    assert!(
        near.contains(&"g1010".to_string()) && near.len() > 4 && near.len() < 40,
        "{near:?}"
    );

    let within = "SELECT VALUE c.id FROM c WHERE ST_WITHIN(c.loc, {'type': 'Polygon', \
                  'coordinates': [[[9.95, 49.95], [10.35, 49.95], [10.35, 50.25], [9.95, 50.25], [9.95, 49.95]]]})";
    let inside = answer_to("geo", within);
    assert_eq!(inside.len(), 12, "4 by 3 grid points: {inside:?}");
    let read = |coll: &str| retrieved_in(&c, &format!("/dbs/{DB}/colls/{coll}"), within);
    assert_eq!(read("scan"), "401");
    assert!(
        read("geo").parse::<usize>().unwrap() < 40,
        "{}",
        read("geo")
    );

    put("g1010".into(), 100.0, 0.0);
    put("far".into(), 10.01, 50.01);
    let moved = answer("geo");
    assert_eq!(moved, answer("scan"));
    assert!(!moved.contains(&"g1010".to_string()) && moved.contains(&"far".to_string()));
}
