//! The change feed over HTTP (issue 11): the latest-version mode (bare, or
//! wrapped in the wire format 2021-09-15, issue 47) and the
//! all-versions-and-deletes mode, with TTL expirations as deletes
//! (`docs/src/reference/protocol.md#change-feed-latest-version`,
//! `docs/src/reference/protocol.md#change-feed-all-versions-and-deletes`,
//! `docs/src/reference/ttl-rules.md#the-current-page`).

use crate::common::{Purge, TestClient, COLL};
use serde_json::{json, Value};

const LATEST: (&str, &str) = ("a-im", "Incremental Feed");

/// One read of the feed; `start` is the If-None-Match value, if any.
fn read(c: &TestClient, extra: &[(&str, &str)], start: Option<&str>) -> crate::common::Reply {
    let mut headers: Vec<(&str, &str)> = extra.to_vec();
    if let Some(token) = start {
        headers.push(("if-none-match", token));
    }
    c.get(&format!("{COLL}/docs"), &headers)
}

fn all_versions(c: &TestClient, start: &str) -> crate::common::Reply {
    read(
        c,
        &[
            ("a-im", "Full-Fidelity Feed"),
            ("x-ms-cosmos-changefeed-wire-format-version", "2021-09-15"),
        ],
        Some(start),
    )
}

fn ids(reply: &crate::common::Reply) -> Vec<String> {
    reply.body["Documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect()
}

fn etag(reply: &crate::common::Reply) -> String {
    reply
        .header("etag")
        .expect("an etag on every answer")
        .to_string()
}

fn purge(c: &TestClient) -> i64 {
    let reply = c.post("/_emulator/purge", &json!({}), &[]);
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body["purged"].as_i64().unwrap()
}

#[test]
fn latest_version_from_the_beginning_then_from_the_etag() {
    let c = TestClient::with_container(None);
    for id in ["a", "b"] {
        assert_eq!(
            c.create_item(&json!({"id": id, "pk": "p", "v": 1})).status,
            201
        );
    }
    assert_eq!(
        c.upsert_item(&json!({"id": "a", "pk": "p", "v": 2})).status,
        200
    );
    let first = read(&c, &[("A-IM", "incremental feed")], None);
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(ids(&first), ["b", "a"], "in the order of the last write");
    let a = &first.body["Documents"][1];
    assert_eq!(a["v"], 2, "only the latest version");
    assert!(a["_lsn"].as_u64().unwrap() > first.body["Documents"][0]["_lsn"].as_u64().unwrap());
    // Nothing new: 304 with an empty body and an etag to keep polling with.
    let token = etag(&first);
    let nothing = read(&c, &[LATEST], Some(&token));
    assert_eq!(nothing.status, 304);
    assert_eq!(nothing.body, Value::Null);
    assert_eq!(etag(&nothing), token);
    assert_eq!(c.create_item(&json!({"id": "c", "pk": "q"})).status, 201);
    let next = read(&c, &[LATEST], Some(&token));
    assert_eq!(ids(&next), ["c"]);
}

#[test]
fn latest_version_from_now_pages_and_scopes() {
    let c = TestClient::with_container(None);
    assert_eq!(
        c.create_item(&json!({"id": "before", "pk": "p"})).status,
        201
    );
    let now = read(&c, &[LATEST], Some("*"));
    assert_eq!(now.status, 304);
    let token = etag(&now);
    for id in ["x", "y", "z"] {
        assert_eq!(c.create_item(&json!({"id": id, "pk": "p"})).status, 201);
    }
    assert_eq!(
        c.create_item(&json!({"id": "other", "pk": "q"})).status,
        201
    );
    // Pages of two, continued by etag.
    let page = read(&c, &[LATEST, ("x-ms-max-item-count", "2")], Some(&token));
    assert_eq!(ids(&page), ["x", "y"]);
    let page = read(
        &c,
        &[LATEST, ("x-ms-max-item-count", "2")],
        Some(&etag(&page)),
    );
    assert_eq!(ids(&page), ["z", "other"]);
    // Scoped to one partition key.
    let scoped = read(
        &c,
        &[LATEST, ("x-ms-documentdb-partitionkey", "[\"q\"]")],
        None,
    );
    assert_eq!(ids(&scoped), ["other"]);
    // From a point in time: only what was written at or after it.
    c.advance(100);
    assert_eq!(
        c.upsert_item(&json!({"id": "x", "pk": "p", "late": true}))
            .status,
        200
    );
    let since = httpdate::fmt_http_date(
        std::time::UNIX_EPOCH + std::time::Duration::from_secs((c.now() - 10) as u64),
    );
    let late = read(&c, &[LATEST, ("if-modified-since", &since)], None);
    assert_eq!(ids(&late), ["x"]);
    // The same instant as Go's time.RFC1123 writes it (the Go SDK's StartFrom).
    let utc = since.replace(" GMT", " UTC");
    let late = read(&c, &[LATEST, ("if-modified-since", &utc)], None);
    assert_eq!(ids(&late), ["x"]);
}

/// A feed scoped to a range of effective partition keys, as the Python SDK
/// scopes one to a partition key: the EPK of "a" is
/// 3A5381E1114EB8D3FCC90795045B49B7 (computed by the official Python SDK,
/// see `epk.rs`), of "" 32E9366E637A71B4E710384B2F4970A0.
#[test]
fn latest_version_scoped_to_an_epk_range() {
    // Version 2, as the Python SDK creates containers.
    let c = TestClient::start();
    assert_eq!(c.post("/dbs", &json!({"id": "db"}), &[]).status, 201);
    let v2 = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}});
    assert_eq!(c.post("/dbs/db/colls", &v2, &[]).status, 201);
    for pk in ["a", ""] {
        assert_eq!(
            c.create_item(&json!({"id": format!("in-{pk}"), "pk": pk}))
                .status,
            201
        );
    }
    let epk = |start: &str, end: &str| {
        ids(&read(
            &c,
            &[
                LATEST,
                ("x-ms-documentdb-partitionkeyrangeid", "0"),
                ("x-ms-start-epk", start),
                ("x-ms-end-epk", end),
            ],
            None,
        ))
    };
    // Exactly the key of "a": [epk, epk + 1).
    assert_eq!(
        epk(
            "3A5381E1114EB8D3FCC90795045B49B7",
            "3A5381E1114EB8D3FCC90795045B49B8"
        ),
        ["in-a"]
    );
    assert_eq!(epk("30", "3A"), ["in-"]);
    assert_eq!(epk("", "FF"), ["in-a", "in-"]);
}

/// Deletes and expired items never appear in the latest-version feed.
#[test]
fn latest_version_never_shows_deletes_or_expired_items() {
    let c = TestClient::with_container(Some(json!(10)));
    for id in ["kept", "deleted", "expires"] {
        assert_eq!(c.create_item(&json!({"id": id, "pk": "p"})).status, 201);
    }
    assert_eq!(
        c.upsert_item(&json!({"id": "kept", "pk": "p", "ttl": -1}))
            .status,
        200
    );
    assert_eq!(c.delete_item("deleted", "p").status, 204);
    c.advance(11);
    // Expired but perhaps not purged yet: hidden; purged: gone.
    assert_eq!(ids(&read(&c, &[LATEST], None)), ["kept"]);
    purge(&c);
    assert_eq!(ids(&read(&c, &[LATEST], None)), ["kept"]);
}

/// The wire format 2021-09-15 in the latest-version mode (issue 47): each
/// item wrapped as `current` (with `_lsn`) and `metadata` (`lsn`, `crts`),
/// as the Java SDK's `handleLatestVersionChanges` and the Rust SDK read it;
/// the same items, order, pages and etags as the bare form, which a client
/// without the header still gets.
#[test]
fn latest_version_with_the_wire_format_wraps_each_item() {
    let c = TestClient::with_container(None);
    let wire = ("x-ms-cosmos-changefeed-wire-format-version", "2021-09-15");
    for id in ["a", "b"] {
        assert_eq!(
            c.create_item(&json!({"id": id, "pk": "p", "v": 1})).status,
            201
        );
    }
    c.advance(3);
    assert_eq!(
        c.upsert_item(&json!({"id": "a", "pk": "p", "v": 2})).status,
        200
    );
    let bare = read(&c, &[LATEST], None);
    let wrapped = read(&c, &[LATEST, wire], None);
    assert_eq!(wrapped.status, 200, "{}", wrapped.body);
    let bare_docs = bare.body["Documents"].as_array().unwrap();
    assert!(bare_docs
        .iter()
        .all(|d| d.get("current").is_none() && d["_lsn"].is_u64()));
    let docs = wrapped.body["Documents"].as_array().unwrap();
    assert_eq!(docs.len(), 2);
    for (doc, bare) in docs.iter().zip(bare_docs) {
        let keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["current", "metadata"], "{doc}");
        assert_eq!(
            &doc["current"], bare,
            "current is the bare item, `_lsn` included"
        );
        assert_eq!(
            doc["metadata"],
            json!({"lsn": bare["_lsn"], "crts": bare["_ts"]}),
            "no operationType or previousImageLSN in this mode"
        );
    }
    assert_eq!(docs[1]["current"]["id"], "a");
    assert_eq!(docs[1]["current"]["v"], 2, "the latest version only");
    assert_eq!(
        docs[1]["metadata"]["crts"].as_i64().unwrap(),
        docs[0]["metadata"]["crts"].as_i64().unwrap() + 3,
        "crts is the time of the item's last write"
    );
    assert_eq!(etag(&wrapped), etag(&bare), "the same continuation");
    assert_eq!(wrapped.body["_count"], 2);

    // Pages of one, continued by etag; then 304 with the etag kept.
    let page = read(&c, &[LATEST, wire, ("x-ms-max-item-count", "1")], None);
    assert_eq!(page.body["Documents"][0]["current"]["id"], "b");
    let page = read(
        &c,
        &[LATEST, wire, ("x-ms-max-item-count", "1")],
        Some(&etag(&page)),
    );
    assert_eq!(page.body["Documents"][0]["current"]["id"], "a");
    let token = etag(&page);
    let nothing = read(&c, &[LATEST, wire], Some(&token));
    assert_eq!(nothing.status, 304);
    assert_eq!(nothing.body, Value::Null);
    assert_eq!(etag(&nothing), token);

    // From now, scoped to a partition key: a later write, wrapped.
    let now = read(&c, &[LATEST, wire], Some("*"));
    assert_eq!(now.status, 304);
    assert_eq!(c.create_item(&json!({"id": "c", "pk": "q"})).status, 201);
    assert_eq!(c.create_item(&json!({"id": "d", "pk": "p"})).status, 201);
    let scoped = read(
        &c,
        &[LATEST, wire, ("x-ms-documentdb-partitionkey", "[\"q\"]")],
        Some(&etag(&now)),
    );
    let scoped = scoped.body["Documents"].as_array().unwrap().clone();
    assert_eq!(scoped.len(), 1);
    assert_eq!(scoped[0]["current"]["id"], "c");
    assert_eq!(scoped[0]["metadata"]["lsn"], scoped[0]["current"]["_lsn"]);

    // The all-versions-and-deletes mode keeps its own metadata.
    let all = all_versions(&c, &token);
    let all = all.body["Documents"].as_array().unwrap().clone();
    assert_eq!(all.len(), 2);
    assert!(all
        .iter()
        .all(|d| d["metadata"]["operationType"] == "create"));
}

#[test]
fn all_versions_and_deletes_with_ttl_deletes_once() {
    let c = TestClient::with_container_and(Some(json!(10)), Purge::Off);
    let start = all_versions(&c, "*");
    assert_eq!(start.status, 304);
    let token = etag(&start);
    let t0 = c.now();
    assert_eq!(c.create_item(&json!({"id": "a", "pk": "p"})).status, 201);
    assert_eq!(
        c.upsert_item(&json!({"id": "a", "pk": "p", "v": 2})).status,
        200
    );
    assert_eq!(
        c.create_item(&json!({"id": "gone", "pk": "p", "ttl": -1}))
            .status,
        201
    );
    assert_eq!(c.delete_item("gone", "p").status, 204);
    assert_eq!(
        c.create_item(&json!({"id": "rescued", "pk": "p"})).status,
        201
    );
    c.advance(5);
    // Pinned before its expiry instant: no TTL delete, only its replace (R8).
    assert_eq!(
        c.upsert_item(&json!({"id": "rescued", "pk": "p", "ttl": -1}))
            .status,
        200
    );
    c.advance(20);
    assert_eq!(purge(&c), 1, "only `a` is due");
    assert_eq!(purge(&c), 0);
    let changes = all_versions(&c, &token);
    assert_eq!(changes.status, 200, "{}", changes.body);
    let docs = changes.body["Documents"].as_array().unwrap().clone();
    let summary: Vec<(String, String, bool)> = docs
        .iter()
        .map(|d| {
            let m = &d["metadata"];
            let id = d["current"]["id"]
                .as_str()
                .or_else(|| m["id"].as_str())
                .unwrap()
                .to_string();
            (
                m["operationType"].as_str().unwrap().to_string(),
                id,
                m["timeToLiveExpired"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    let expected: Vec<(String, String, bool)> = [
        ("create", "a", false),
        ("replace", "a", false),
        ("create", "gone", false),
        ("delete", "gone", false),
        ("create", "rescued", false),
        ("replace", "rescued", false),
        ("delete", "a", true),
    ]
    .iter()
    .map(|(op, id, ttl)| (op.to_string(), id.to_string(), *ttl))
    .collect();
    assert_eq!(summary, expected);
    // LSNs ascend; each replace and delete names the version it followed.
    let lsns: Vec<u64> = docs
        .iter()
        .map(|d| d["metadata"]["lsn"].as_u64().unwrap())
        .collect();
    assert!(lsns.windows(2).all(|w| w[0] < w[1]), "{lsns:?}");
    assert_eq!(
        docs[1]["metadata"]["previousImageLSN"],
        docs[0]["metadata"]["lsn"]
    );
    let ttl_delete = &docs[6];
    assert_eq!(
        ttl_delete["metadata"]["previousImageLSN"],
        docs[1]["metadata"]["lsn"]
    );
    assert_eq!(ttl_delete["metadata"]["partitionKey"], json!({"pk": "p"}));
    assert!(ttl_delete.get("previous").is_none(), "no image is kept");
    // Its crts is the purge instant, never before the expiry instant.
    let crts = ttl_delete["metadata"]["crts"].as_i64().unwrap();
    assert_eq!(crts, c.now());
    assert!(crts >= t0 + 10);
    assert_eq!(docs[3]["metadata"]["timeToLiveExpired"], false);
    assert_eq!(docs[0]["current"]["_lsn"], docs[0]["metadata"]["lsn"]);
    // Read again from the end: nothing new, whatever the purge does now.
    let end = etag(&changes);
    c.advance(100);
    purge(&c);
    assert_eq!(all_versions(&c, &end).status, 304);
}

#[test]
fn an_expired_item_whose_id_is_taken_gets_its_ttl_delete_then_a_create() {
    let c = TestClient::with_container_and(Some(json!(10)), Purge::Off);
    let token = etag(&all_versions(&c, "*"));
    assert_eq!(c.create_item(&json!({"id": "a", "pk": "p"})).status, 201);
    c.advance(11);
    // The write finds the item expired (L10): its TTL delete, then the create.
    assert_eq!(
        c.create_item(&json!({"id": "a", "pk": "p", "again": true}))
            .status,
        201
    );
    let docs = all_versions(&c, &token).body["Documents"].clone();
    let ops: Vec<(&str, bool)> = docs
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["metadata"]["operationType"].as_str().unwrap(),
                d["metadata"]["timeToLiveExpired"]
                    .as_bool()
                    .unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        ops,
        [("create", false), ("delete", true), ("create", false)]
    );
    assert_eq!(purge(&c), 0, "no second TTL delete");
}

#[test]
fn what_the_feed_refuses() {
    let c = TestClient::with_container(None);
    // All versions and deletes starts from now or a continuation only.
    let full = [
        ("a-im", "Full-Fidelity Feed"),
        ("x-ms-cosmos-changefeed-wire-format-version", "2021-09-15"),
    ];
    let from_beginning = read(&c, &full, None);
    from_beginning.assert_error(400, "BadRequest");
    // The service's words, which the JavaScript SDK's tests look for.
    assert!(from_beginning
        .message()
        .contains("You must read the change feed from within the retention period."));
    read(&c, &[("a-im", "Full-Fidelity Feed")], Some("*")).assert_error(400, "BadRequest");
    read(&c, &[("a-im", "Everything")], None).assert_error(400, "BadRequest");
    // A wire format it does not know, in either mode: refused, not served
    // in a shape the client cannot read.
    for mode in [LATEST, ("a-im", "Full-Fidelity Feed")] {
        read(
            &c,
            &[
                mode,
                ("x-ms-cosmos-changefeed-wire-format-version", "2030-01-01"),
            ],
            Some("*"),
        )
        .assert_error(400, "BadRequest");
    }
    read(&c, &[LATEST], Some("\"not a token\"")).assert_error(400, "BadRequest");
    read(
        &c,
        &[LATEST, ("x-ms-documentdb-partitionkeyrangeid", "7")],
        None,
    )
    .assert_error(410, "Gone");
}

/// The log keeps an hour of emulator-clock time by default; a continuation
/// from before what it retains is refused, not silently short.
#[test]
fn reading_before_the_retained_start_is_refused() {
    let c = TestClient::with_container(None);
    let token = etag(&all_versions(&c, "*"));
    assert_eq!(c.create_item(&json!({"id": "old", "pk": "p"})).status, 201);
    c.advance(3601);
    assert_eq!(c.create_item(&json!({"id": "new", "pk": "p"})).status, 201);
    let refused = all_versions(&c, &token);
    refused.assert_error(400, "BadRequest");
    assert!(refused.message().contains("retention"), "{}", refused.body);
    // The latest-version feed reads the live items, whatever their age.
    assert_eq!(ids(&read(&c, &[LATEST], None)), ["old", "new"]);
}

/// A container's `changeFeedPolicy.retentionDuration` (minutes, as the SDKs
/// send it) sets its log's retention instead of `--change-feed-retention`,
/// on create and on replace; the policy is served back as given.
#[test]
fn a_change_feed_policy_sets_the_container_retention() {
    let c = TestClient::with_container(None);
    let body = json!({
        "id": "c",
        "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
        "changeFeedPolicy": {"retentionDuration": 2},
    });
    let replaced = c.put(COLL, &body, &[]);
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    assert_eq!(
        replaced.body["changeFeedPolicy"],
        json!({"retentionDuration": 2})
    );

    let token = etag(&all_versions(&c, "*"));
    assert_eq!(c.create_item(&json!({"id": "a", "pk": "p"})).status, 201);
    c.advance(119);
    assert_eq!(c.create_item(&json!({"id": "b", "pk": "p"})).status, 201);
    let kept = all_versions(&c, &token);
    assert_eq!(kept.status, 200, "two minutes keep both: {}", kept.body);
    assert_eq!(kept.body["Documents"].as_array().unwrap().len(), 2);
    c.advance(2);
    assert_eq!(
        purge(&c),
        0,
        "the purge pass drops the log past its retention"
    );
    all_versions(&c, &token).assert_error(400, "BadRequest");

    // Without the policy, the default hour again.
    let mut default = body.clone();
    default.as_object_mut().unwrap().remove("changeFeedPolicy");
    assert_eq!(c.put(COLL, &default, &[]).status, 200);
    let token = etag(&all_versions(&c, "*"));
    assert_eq!(c.create_item(&json!({"id": "c", "pk": "p"})).status, 201);
    c.advance(600);
    assert_eq!(purge(&c), 0);
    assert_eq!(all_versions(&c, &token).status, 200);

    for invalid in [
        json!({"retentionDuration": -1}),
        json!({"retentionDuration": 1.5}),
        json!(10),
    ] {
        let mut bad = body.clone();
        bad["changeFeedPolicy"] = invalid;
        let refused = c.put(COLL, &bad, &[]);
        refused.assert_error(400, "BadRequest");
        assert!(
            refused.message().contains("changeFeedPolicy"),
            "{}",
            refused.body
        );
    }
}

/// A change feed read is checked and answered like any read of the
/// container: the headers the SDKs key their sessions by on 200 and 304, a
/// stale container RID refused with 400/1024, and a session token from a
/// state the emulator has not reached refused with 404/1002.
#[test]
fn change_feed_answers_name_their_container_and_check_the_request() {
    let c = TestClient::with_container(None);
    assert_eq!(c.create_item(&json!({"id": "a", "pk": "p"})).status, 201);
    let container = c.get(COLL, &[]).body;
    let rid = container["_rid"].as_str().unwrap().to_string();

    let first = read(&c, &[LATEST], None);
    assert_eq!(first.status, 200, "{}", first.body);
    let nothing = read(&c, &[LATEST], Some(&etag(&first)));
    assert_eq!(nothing.status, 304);
    for reply in [&first, &nothing] {
        assert_eq!(reply.header("x-ms-content-path"), Some(rid.as_str()));
        assert_eq!(
            reply.header("x-ms-alt-content-path"),
            Some("dbs/db/colls/c")
        );
        assert!(reply
            .header("lsn")
            .is_some_and(|l| l.parse::<u64>().is_ok()));
        assert_eq!(
            reply.header("x-ms-documentdb-partitionkeyrangeid"),
            Some("0")
        );
    }

    let stale = read(
        &c,
        &[
            LATEST,
            ("x-ms-cosmos-intended-collection-rid", "AAAAAAAAAAA="),
        ],
        None,
    );
    stale.assert_error(400, "BadRequest");
    assert_eq!(stale.header("x-ms-substatus"), Some("1024"));

    let ahead = read(&c, &[LATEST, ("x-ms-session-token", "0:-1#999999")], None);
    ahead.assert_error(404, "NotFound");
    assert_eq!(ahead.header("x-ms-substatus"), Some("1002"));
    let seen = first.header("x-ms-session-token").unwrap().to_string();
    let again = read(&c, &[LATEST, ("x-ms-session-token", &seen)], None);
    assert_eq!(again.status, 200, "{}", again.body);
}
