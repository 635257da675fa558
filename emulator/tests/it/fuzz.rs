//! Property-based fuzzing of the HTTP surface: queries generated from the
//! grammar and then mutated, patch operation lists, documents (deep, wide,
//! odd numbers and strings), ids and headers, each sent over real HTTP to
//! one in-process emulator. Whatever the input, the answer is a result or a
//! Cosmos error (status, JSON `{"code", "message"}`), never a 500 or a
//! dropped connection, and a stored item always reads back and queries.
//!
//! Seeded and bounded for `cargo xtask test` (48 cases a property, a fixed
//! seed); `cargo xtask fuzz` runs many more with a fresh seed
//! (`FUZZ_CASES`, `FUZZ_SEED` set them here).

use std::sync::OnceLock;

use crate::common::{Reply, TestClient, COLL};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use reqwest::Method;
use serde_json::{json, Map, Value};

fn config() -> Config {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    Config {
        cases: env("FUZZ_CASES").map_or(48, |n| n as u32),
        rng_seed: RngSeed::Fixed(env("FUZZ_SEED").unwrap_or(0x5eed_c05e)),
        failure_persistence: None,
        max_shrink_iters: 512,
        ..Config::default()
    }
}

/// One emulator for every case of every property: state left by one case is
/// more input for the next.
fn client() -> &'static TestClient {
    static CLIENT: OnceLock<TestClient> = OnceLock::new();
    CLIENT.get_or_init(|| {
        let c = TestClient::with_container(Some(json!(1000)));
        for i in 0..5 {
            c.create_item(&json!({"id": format!("seed{i}"), "pk": "p", "n": i, "s": "abc", "a": [1, "x", {"k": i}], "o": {"k": [i]}}));
        }
        c
    })
}

/// A Cosmos answer: a success, or an error status with the Cosmos body.
#[track_caller]
fn assert_cosmos(reply: &Reply, what: &str) {
    assert_ne!(reply.status, 500, "{what}: {}", reply.body);
    assert!(
        (200..300).contains(&reply.status) || (400..500).contains(&reply.status),
        "{what}: unexpected status {}: {}",
        reply.status,
        reply.body
    );
    if reply.status >= 400 {
        assert!(
            reply.body["code"].is_string()
                && reply.body["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty()),
            "{what}: a refusal without the Cosmos body: {}",
            reply.body
        );
    }
}

/// After a write that succeeded, the item reads back and the container queries.
#[track_caller]
fn assert_reads_back(c: &TestClient, id: &str, pk: &Value) {
    let header = json!([pk]).to_string();
    // URL parsers remove `.` and `..` segments, even percent-encoded (the
    // WHATWG URL rules): no HTTP client can address such an id by path; and
    // the service's gateway refuses a URL holding a control character once
    // decoded (400, `protocol/auth.rs`'s `check_path`): such ids are read
    // back through a query.
    if id == "." || id == ".." || id.chars().any(char::is_control) {
        let found = query(
            c,
            "SELECT VALUE c.id FROM c WHERE c.id = @p",
            json!([{"name": "@p", "value": id}]),
            &[],
        );
        let ids = found.body["Documents"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(
            ids.contains(&json!(id)),
            "the item written reads back: {}",
            found.body
        );
        return;
    }
    let path = format!("{COLL}/docs/{}", utf8_percent(id));
    let read = c.get(&path, &[("x-ms-documentdb-partitionkey", &header)]);
    assert_eq!(
        read.status, 200,
        "the item written reads back: {}",
        read.body
    );
    let query = query(c, "SELECT * FROM c", json!([]), &[]);
    assert_eq!(
        query.status, 200,
        "the container still queries: {}",
        query.body
    );
}

fn utf8_percent(id: &str) -> String {
    percent_encoding::utf8_percent_encode(id, percent_encoding::NON_ALPHANUMERIC).to_string()
}

fn query(c: &TestClient, text: &str, parameters: Value, extra: &[(&str, &str)]) -> Reply {
    let mut headers = vec![
        ("x-ms-documentdb-isquery", "True"),
        ("content-type", "application/query+json"),
        ("x-ms-documentdb-query-enablecrosspartition", "True"),
    ];
    headers.extend_from_slice(extra);
    c.post(
        &format!("{COLL}/docs"),
        &json!({"query": text, "parameters": parameters}),
        &headers,
    )
}

// ---- values -------------------------------------------------------------

/// Numbers at the edges of what JSON, doubles and integers hold.
fn odd_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        Just(json!(1e308)),
        Just(json!(-1e308)),
        Just(json!(5e-324)),
        Just(json!(-0.0)),
        Just(json!(i64::MIN)),
        Just(json!(u64::MAX)),
        Just(json!(2147483647)),
        Just(json!(2147483648_i64)),
        (-3i64..3).prop_map(Value::from),
    ]
}

fn odd_string() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{0,8}",
        "\\PC{0,12}",
        Just(String::new()),
        Just("\u{0}\u{1f}\"\\'/".to_string()),
        Just("é\u{10ffff}\u{202e}".to_string()),
        Just("x".repeat(3000)),
    ]
}

/// Any JSON value, deep or wide.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        odd_number(),
        odd_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(8, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{1,6}", inner), 0..8)
                .prop_map(|fields| Value::Object(fields.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Arrays nested around the edge of the service's 128 levels.
fn deep_value() -> impl Strategy<Value = Value> {
    (100usize..140, json_value()).prop_map(|(depth, core)| {
        let mut value = core;
        for i in 0..depth {
            value = if i % 2 == 0 {
                json!([value])
            } else {
                json!({"d": value})
            };
        }
        value
    })
}

fn id() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => "[a-zA-Z0-9_-]{1,12}".prop_map(Value::from),
        1 => odd_string().prop_map(Value::from),
        1 => Just(Value::from("a/b?c#d\\e")),
        1 => Just(Value::from("x".repeat(1024))),
        1 => odd_number(),
        1 => Just(Value::Null),
    ]
}

fn ttl() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        odd_number().prop_map(Some),
        (-2i64..5).prop_map(|n| Some(Value::from(n))),
        Just(Some(Value::from("10"))),
        Just(Some(Value::Null)),
    ]
}

fn document() -> impl Strategy<Value = Value> {
    (
        id(),
        prop_oneof![json_value(), deep_value()],
        ttl(),
        prop_oneof![Just(json!("p")), json_value()],
    )
        .prop_map(|(id, body, ttl, pk)| {
            let mut doc = match body {
                Value::Object(o) => o,
                other => Map::from_iter([("v".to_string(), other)]),
            };
            doc.insert("id".into(), id);
            doc.insert("pk".into(), pk);
            if let Some(ttl) = ttl {
                doc.insert("ttl".into(), ttl);
            }
            Value::Object(doc)
        })
}

// ---- queries --------------------------------------------------------------

const FUNCTIONS: &[&str] = &[
    "ABS",
    "FLOOR",
    "CEILING",
    "ROUND",
    "LOWER",
    "UPPER",
    "LENGTH",
    "CONCAT",
    "CONTAINS",
    "STARTSWITH",
    "ENDSWITH",
    "SUBSTRING",
    "TRIM",
    "LTRIM",
    "RTRIM",
    "ARRAY_LENGTH",
    "ARRAY_CONTAINS",
    "IS_DEFINED",
    "IS_NULL",
    "IS_NUMBER",
    "IS_STRING",
    "IS_ARRAY",
    "IS_OBJECT",
    "TOSTRING",
    // The system function families of data/query/functions/.
    "ARRAY_CONCAT",
    "ARRAY_CONTAINS_ANY",
    "ARRAY_CONTAINS_ALL",
    "ARRAY_SLICE",
    "SETINTERSECT",
    "SETUNION",
    "IS_BOOL",
    "IS_FINITE_NUMBER",
    "IS_INTEGER",
    "IS_PRIMITIVE",
    "IIF",
    "CHOOSE",
    "OBJECTTOARRAY",
    "INDEX_OF",
    "LEFT",
    "RIGHT",
    "REPLACE",
    "REPLICATE",
    "REVERSE",
    "STRINGEQUALS",
    "STRINGJOIN",
    "STRINGSPLIT",
    "STRINGTOARRAY",
    "STRINGTOBOOLEAN",
    "STRINGTONULL",
    "STRINGTONUMBER",
    "STRINGTOOBJECT",
    "REGEXMATCH",
    "ACOS",
    "ASIN",
    "ATAN",
    "ATN2",
    "COS",
    "COT",
    "DEGREES",
    "EXP",
    "LOG",
    "LOG10",
    "PI",
    "POWER",
    "RADIANS",
    "SIGN",
    "SIN",
    "SQRT",
    "SQUARE",
    "TAN",
    "TRUNC",
    "NUMBERBIN",
    "INTADD",
    "INTSUB",
    "INTMUL",
    "INTDIV",
    "INTMOD",
    "INTBITAND",
    "INTBITOR",
    "INTBITXOR",
    "INTBITNOT",
    "INTBITLEFTSHIFT",
    "INTBITRIGHTSHIFT",
    "GETCURRENTDATETIME",
    "GETCURRENTTIMESTAMP",
    "GETCURRENTTICKSSTATIC",
    "DATETIMEADD",
    "DATETIMEBIN",
    "DATETIMEDIFF",
    "DATETIMEFROMPARTS",
    "DATETIMEPART",
    "DATETIMETOTICKS",
    "DATETIMETOTIMESTAMP",
    "TICKSTODATETIME",
    "TIMESTAMPTODATETIME",
    "COUNT",
    "SUM",
    "MIN",
    "MAX",
    "AVG",
    "NOSUCH",
];

fn literal() -> impl Strategy<Value = String> {
    prop_oneof![
        odd_number().prop_map(|n| n.to_string()),
        Just("1e300".to_string()),
        Just("0x7fffffffffffffff".to_string()),
        Just("1e999".to_string()),
        odd_string().prop_map(|s| format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))),
        prop::sample::select(vec![
            "true",
            "false",
            "null",
            "undefined",
            "@p",
            "@q",
            "@nope"
        ])
        .prop_map(String::from),
    ]
}

fn path() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            prop::sample::select(vec![".n", ".s", ".a", ".o", ".k", ".id", ".ttl", "._ts"])
                .prop_map(String::from),
            (0usize..4).prop_map(|i| format!("[{i}]")),
            Just("[\"k\"]".to_string()),
            Just("[@p]".to_string()),
        ],
        0..4,
    )
    .prop_flat_map(|steps| {
        // `c` is the item; `t` and `u` are bound by the JOINs some queries have.
        prop::sample::select(vec!["c", "c", "t", "u"])
            .prop_map(move |root| format!("{root}{}", steps.concat()))
    })
}

/// An expression from the dialect's grammar.
fn expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![literal(), path()];
    leaf.prop_recursive(6, 48, 4, |inner| {
        let op = prop::sample::select(vec![
            "+", "-", "*", "/", "%", "||", "??", "=", "!=", "<>", "<", "<=", ">", ">=", "AND",
            "OR", "&", "|", "^", "<<", ">>", ">>>",
        ]);
        prop_oneof![
            (inner.clone(), op, inner.clone()).prop_map(|(a, op, b)| format!("{a} {op} {b}")),
            inner.clone().prop_map(|a| format!("({a})")),
            inner.clone().prop_map(|a| format!("NOT {a}")),
            inner.clone().prop_map(|a| format!("-{a}")),
            inner.clone().prop_map(|a| format!("~{a}")),
            // Subqueries, correlated over the item's array `a`.
            (
                prop::sample::select(vec!["EXISTS", "ARRAY", ""]),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(kind, v, w)| format!(
                    "{kind}(SELECT VALUE {v} FROM x IN c.a WHERE {w})"
                )),
            inner
                .clone()
                .prop_map(|w| format!("(SELECT VALUE COUNT(1) FROM x IN c.a WHERE {w})")),
            (
                prop::sample::select(FUNCTIONS.to_vec()),
                prop::collection::vec(inner.clone(), 0..4)
            )
                .prop_map(|(f, args)| format!("{f}({})", args.join(", "))),
            (
                inner.clone(),
                prop::collection::vec(inner.clone(), 1..4),
                any::<bool>()
            )
                .prop_map(|(x, list, not)| {
                    format!(
                        "{x} {}IN ({})",
                        if not { "NOT " } else { "" },
                        list.join(", ")
                    )
                }),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(x, a, b)| format!("{x} BETWEEN {a} AND {b}")),
            (inner.clone(), "[a-z%_\\[\\]^-]{0,6}", any::<bool>()).prop_map(|(x, p, not)| format!(
                "{x} {}LIKE '{p}' ESCAPE '^'",
                if not { "NOT " } else { "" }
            )),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(c, a, b)| format!("{c} ? {a} : {b}")),
            prop::collection::vec(inner.clone(), 0..4)
                .prop_map(|items| format!("[{}]", items.join(", "))),
            prop::collection::vec(("[a-z]{1,3}", inner), 0..3).prop_map(|fields| {
                let fields: Vec<String> = fields
                    .into_iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect();
                format!("{{{}}}", fields.join(", "))
            }),
        ]
    })
}

fn select() -> impl Strategy<Value = String> {
    let count = prop_oneof![
        (0u64..5).prop_map(|n| n.to_string()),
        Just("1e300".into()),
        Just("@p".into()),
        Just("-1".into())
    ];
    (
        any::<bool>(),
        proptest::option::of(count.clone()),
        prop_oneof![
            Just("*".to_string()),
            expr().prop_map(|e| format!("VALUE {e}")),
            prop::collection::vec(expr(), 1..3).prop_map(|es| es
                .iter()
                .enumerate()
                .map(|(i, e)| format!("{e} AS f{i}"))
                .collect::<Vec<_>>()
                .join(", ")),
        ],
        prop::sample::select(vec![
            "",
            " FROM c",
            " FROM c",
            " FROM c JOIN t IN c.a",
            " FROM c JOIN t IN c.a JOIN u IN t.k",
            " FROM t IN c.a",
            " FROM c.o t",
            " FROM (SELECT VALUE c FROM c WHERE c.n > 0) c",
            " FROM c JOIN t IN (SELECT VALUE [c.n, c.s])",
            " FROM c JOIN (SELECT VALUE x FROM x IN c.a WHERE x > 1) t",
        ]),
        proptest::option::of(expr()),
        proptest::option::of((expr(), any::<bool>())),
        proptest::option::of((count.clone(), count)),
    )
        .prop_map(|(distinct, top, projection, from, filter, order, page)| {
            let mut q = String::from("SELECT ");
            if distinct {
                q.push_str("DISTINCT ");
            }
            if let Some(n) = top {
                q.push_str(&format!("TOP {n} "));
            }
            q.push_str(&projection);
            q.push_str(from);
            if let Some(f) = filter {
                q.push_str(&format!(" WHERE {f}"));
            }
            if from.len() % 3 == 1 {
                // Some queries group (the choice follows the FROM text, so
                // that the strategy keeps its arity).
                q.push_str(" GROUP BY c.s");
            }
            if let Some((o, desc)) = order {
                q.push_str(&format!(
                    " ORDER BY {o} {}",
                    if desc { "DESC" } else { "ASC" }
                ));
            }
            if let Some((offset, limit)) = page {
                q.push_str(&format!(" OFFSET {offset} LIMIT {limit}"));
            }
            q
        })
}

/// A grammatical query, then edited at random: a cut, an insertion of a
/// token or a repetition of a slice, as a hostile or careless client would.
fn mutated_select() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "(", ")", "[", "]", "{", "}", ",", ".", ":", "?", "'", "\"", "@", "--", "SELECT", "FROM",
        "WHERE", "NOT", "AND", "IN", "BETWEEN", "ORDER BY", "VALUE", "TOP", "JOIN", "\\", "\u{0}",
        "é",
    ]);
    (
        select(),
        prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                any::<prop::sample::Index>(),
                0u8..3,
                token,
            ),
            0..4,
        ),
    )
        .prop_map(|(mut q, edits)| {
            for (at, len, kind, token) in edits {
                let chars: Vec<char> = q.chars().collect();
                let i = at.index(chars.len() + 1);
                let j = (i + len.index(8)).min(chars.len());
                let (head, tail): (String, String) =
                    (chars[..i].iter().collect(), chars[i..].iter().collect());
                q = match kind {
                    0 => format!("{head}{}", chars[j..].iter().collect::<String>()),
                    1 => format!("{head} {token} {tail}"),
                    _ => {
                        let slice: String = chars[i..j].iter().collect();
                        format!("{head}{}{tail}", slice.repeat(50))
                    }
                };
            }
            q
        })
}

fn parameters() -> impl Strategy<Value = Value> {
    (json_value(), json_value())
        .prop_map(|(p, q)| json!([{"name": "@p", "value": p}, {"name": "@q", "value": q}]))
}

// ---- patches and headers --------------------------------------------------

fn patch_operation() -> impl Strategy<Value = Value> {
    let op = prop::sample::select(vec![
        "add", "set", "replace", "remove", "incr", "move", "copy", "", "ADD",
    ]);
    let path = prop_oneof![
        prop::sample::select(vec![
            "/n", "/s", "/a", "/a/0", "/a/-", "/a/9", "/o/k", "/o/k/0", "/new", "/id", "/pk",
            "/ttl", "/_ts", "", "/", "n", "/a~1b", "/~0"
        ])
        .prop_map(String::from),
        prop::collection::vec("[a-z0-9-]{0,3}", 1..6)
            .prop_map(|segs| format!("/{}", segs.join("/"))),
        (1usize..200).prop_map(|n| "/d".repeat(n)),
    ];
    (
        op,
        path,
        proptest::option::of(prop_oneof![json_value(), deep_value()]),
        proptest::option::of("/[a-z]{1,3}"),
    )
        .prop_map(|(op, path, value, from)| {
            let mut o = json!({"op": op, "path": path});
            if let Some(v) = value {
                o["value"] = v;
            }
            if let Some(f) = from {
                o["from"] = json!(f);
            }
            o
        })
}

fn header_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,20}",
        Just(String::new()),
        Just("-1".into()),
        Just("0".into()),
        Just("99999999999999999999".into()),
        Just("[\"p\"]".into()),
        Just("[{}]".into()),
        Just("[]".into()),
        Just("[null, 1, [2]]".into()),
        Just("{\"offset\": 18446744073709551615}".into()),
        Just("{\"pk\": \"[\\\"p\\\"]\", \"id\": \"seed1\"}".into()),
        Just("*".into()),
        Just("True".into()),
    ]
}

fn headers() -> impl Strategy<Value = Vec<(&'static str, String)>> {
    let name = prop::sample::select(vec![
        "x-ms-max-item-count",
        "x-ms-continuation",
        "x-ms-documentdb-partitionkey",
        "if-match",
        "if-none-match",
        "x-ms-documentdb-is-upsert",
        "x-ms-documentdb-isquery",
        "x-ms-cosmos-is-query-plan-request",
        "x-ms-documentdb-query-enablecrosspartition",
        "x-ms-consistency-level",
        "a-im",
        "content-type",
        "x-ms-documentdb-partitionkeyrangeid",
    ]);
    prop::collection::vec((name, header_value()), 0..5)
}

fn with_headers<'a>(extra: &'a [(&'static str, String)]) -> Vec<(&'a str, &'a str)> {
    extra.iter().map(|(n, v)| (*n, v.as_str())).collect()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn grammatical_queries_answer_rows_or_a_cosmos_error(q in select(), params in parameters()) {
        let c = client();
        let reply = query(c, &q, params, &[]);
        assert_cosmos(&reply, &q);
        if reply.status == 200 {
            prop_assert!(reply.body["Documents"].is_array(), "{}", reply.body);
        }
    }

    #[test]
    fn mutated_queries_answer_rows_or_a_cosmos_error(q in mutated_select(), params in parameters()) {
        let c = client();
        assert_cosmos(&query(c, &q, params, &[]), &q);
    }

    #[test]
    fn query_plans_answer_a_plan_or_a_cosmos_error(q in select()) {
        let c = client();
        let reply = query(c, &q, json!([]), &[("x-ms-cosmos-is-query-plan-request", "True")]);
        assert_cosmos(&reply, &q);
    }

    #[test]
    fn documents_are_stored_and_read_back_or_refused(doc in document(), upsert in any::<bool>()) {
        let c = client();
        let reply = if upsert { c.upsert_item(&doc) } else { c.create_item(&doc) };
        assert_cosmos(&reply, "write");
        if reply.status == 200 || reply.status == 201 {
            assert_reads_back(c, doc["id"].as_str().unwrap(), &doc["pk"]);
        }
    }

    #[test]
    fn patches_apply_or_are_refused_and_the_item_still_reads_back(
        operations in prop::collection::vec(patch_operation(), 0..12),
        condition in proptest::option::of(expr()),
        base in prop_oneof![json_value(), deep_value()],
    ) {
        let c = client();
        let created = c.upsert_item(&json!({"id": "target", "pk": "p", "n": 1, "s": "abc", "a": [1, 2], "o": {"k": [1]}, "base": base}));
        assert_cosmos(&created, "base item");
        let mut body = json!({"operations": operations});
        if let Some(condition) = &condition {
            body["condition"] = json!(format!("from c where {condition}"));
        }
        let reply = c.send(
            Method::PATCH,
            &format!("{COLL}/docs/target"),
            &[("x-ms-documentdb-partitionkey", "[\"p\"]"), ("content-type", "application/json-patch+json")],
            Some(&body),
        );
        assert_cosmos(&reply, &body.to_string());
        if created.status < 300 {
            assert_reads_back(c, "target", &json!("p"));
        }
    }

    #[test]
    fn any_headers_on_any_item_request_get_a_cosmos_answer(
        extra in headers(),
        which in 0usize..5,
        id in "[a-z0-9]{1,4}",
    ) {
        let c = client();
        let headers = with_headers(&extra);
        let item = json!({"id": id, "pk": "p"});
        let reply = match which {
            0 => c.get(&format!("{COLL}/docs/{id}"), &headers),
            1 => c.get(&format!("{COLL}/docs"), &headers),
            2 => c.post(&format!("{COLL}/docs"), &item, &headers),
            3 => c.put(&format!("{COLL}/docs/{id}"), &item, &headers),
            _ => c.delete(&format!("{COLL}/docs/{id}"), &headers),
        };
        assert_cosmos(&reply, &format!("{which} {extra:?}"));
        let pkranges = c.get(&format!("{COLL}/pkranges"), &headers);
        assert_cosmos(&pkranges, &format!("pkranges {extra:?}"));
    }

    #[test]
    fn odd_ids_in_paths_get_a_cosmos_answer(id in "\\PC{1,20}", raw in "(%[0-9A-Fa-f]{2}){1,4}") {
        let c = client();
        let headers = [("x-ms-documentdb-partitionkey", "[\"p\"]")];
        assert_cosmos(&c.get(&format!("{COLL}/docs/{}", utf8_percent(&id)), &headers), &id);
        assert_cosmos(&c.get(&format!("{COLL}/docs/{raw}"), &headers), &raw);
        assert_cosmos(&c.get(&format!("/dbs/{raw}/colls/{raw}"), &[]), &raw);
    }

    #[test]
    fn container_bodies_are_stored_or_refused(
        default_ttl in ttl(),
        policy in proptest::option::of(json_value()),
        paths in prop::collection::vec("/[a-z\"/]{0,6}", 0..4),
    ) {
        let c = client();
        let mut body = json!({"id": "fuzzed", "partitionKey": {"paths": paths}});
        if let Some(t) = default_ttl {
            body["defaultTtl"] = t;
        }
        if let Some(p) = policy {
            body["indexingPolicy"] = p;
        }
        let reply = c.post("/dbs/db/colls", &body, &[]);
        assert_cosmos(&reply, &body.to_string());
        if reply.status == 201 {
            assert_eq!(c.get("/dbs/db/colls/fuzzed", &[]).status, 200);
            assert_eq!(c.delete("/dbs/db/colls/fuzzed", &[]).status, 204);
        }
    }
}
