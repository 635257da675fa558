//! The change-feed area against a fake target that speaks the change feed
//! contract (docs/src/reference/protocol.md#change-feed-latest-version) with a test clock and
//! `POST /_emulator/purge`, and against variants of it that break one rule
//! each (a second TTL delete, an early one, explicit deletes without
//! `timeToLiveExpired`, a latest-version feed that shows every version), or
//! that lack the all-versions mode (a 400, or a feed that ignores `A-IM`):
//! those are skipped, not failed.

use crate::common::{assert_case, cases, config};
use cosmos_conformance::fixtures::{parse_file, Case};
use cosmos_conformance::report::{Report, Status};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const START: i64 = 1_700_000_000;

/// What the fake gets wrong, if anything.
#[derive(Default, Clone, Copy)]
struct Flaws {
    /// `A-IM: Full-Fidelity Feed` answers 400 (no continuous backup).
    no_all_versions: bool,
    /// Every `A-IM` is ignored: a plain read feed, without an etag.
    ignores_a_im: bool,
    /// Each purge logs the TTL deletes of earlier purges again.
    repeats_ttl_deletes: bool,
    /// TTL deletes carry the item's `_ts` as their `crts`.
    early_crts: bool,
    /// Explicit deletes have no `timeToLiveExpired`.
    flagless_deletes: bool,
    /// The latest-version feed shows every version of an item.
    every_version: bool,
    /// The test clock has no purge.
    no_purge: bool,
    /// `A-IM: Full-Fidelity Feed` answers like the latest-version feed
    /// (304 from now, then plain items), as @vercel/cosmosdb-server does.
    plain_all_versions: bool,
    /// No test clock: time is the system's, and items are purged in the
    /// background, two seconds after they expire.
    wall: bool,
}

#[derive(Clone)]
struct Item {
    body: Map<String, Value>,
    ts: i64,
    lsn: u64,
}

#[derive(Default)]
struct State {
    now: i64,
    lsn: u64,
    /// Container path -> its body.
    containers: BTreeMap<String, Map<String, Value>>,
    /// Item path -> item.
    items: BTreeMap<String, Item>,
    /// (container path, lsn, change)
    log: Vec<(String, u64, Value)>,
    /// (container path, lsn, item) for the every-version flaw.
    versions: Vec<(String, u64, Value)>,
    ttl_deletes: Vec<(String, Value)>,
}

struct Fake {
    flaws: Flaws,
    state: Mutex<State>,
}

fn error(status: u16, code: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(json!({ "code": code, "message": "fake" }))
}

fn header<'a>(request: &'a Request, name: &str) -> Option<&'a str> {
    request.headers.get(name).and_then(|v| v.to_str().ok())
}

impl State {
    fn container_of(item_path: &str) -> String {
        item_path
            .rsplitn(3, '/')
            .nth(2)
            .unwrap_or_default()
            .to_string()
    }

    /// When an item expires, if ever (R2-R4, docs/src/reference/ttl-rules.md#r2).
    fn expiry(&self, path: &str, item: &Item) -> Option<i64> {
        let container = self.containers.get(&State::container_of(path))?;
        let default = container.get("defaultTtl").and_then(Value::as_i64)?;
        let ttl = item
            .body
            .get("ttl")
            .and_then(Value::as_i64)
            .unwrap_or(default);
        (ttl > 0).then(|| item.ts + ttl)
    }

    fn live(&self, path: &str) -> Option<&Item> {
        let item = self.items.get(path)?;
        match self.expiry(path, item) {
            Some(at) if at <= self.now => None,
            _ => Some(item),
        }
    }

    fn image(&self, item: &Item) -> Value {
        let mut body = item.body.clone();
        body.insert("_ts".into(), json!(item.ts));
        body.insert("_lsn".into(), json!(item.lsn));
        Value::Object(body)
    }

    fn write(&mut self, path: &str, body: Map<String, Value>, operation: &str) -> Value {
        self.lsn += 1;
        let previous = self.items.get(path).map(|i| i.lsn);
        let item = Item {
            body,
            ts: self.now,
            lsn: self.lsn,
        };
        let image = self.image(&item);
        let mut meta = json!({"operationType": operation, "lsn": self.lsn, "crts": self.now});
        if let Some(previous) = previous {
            meta["previousImageLSN"] = json!(previous);
        }
        let container = State::container_of(path);
        self.log.push((
            container.clone(),
            self.lsn,
            json!({"current": image, "metadata": meta}),
        ));
        self.versions.push((container, self.lsn, image.clone()));
        self.items.insert(path.to_string(), item);
        image
    }

    fn delete(&mut self, path: &str, expired: Option<bool>, crts: i64) {
        let Some(item) = self.items.remove(path) else {
            return;
        };
        self.lsn += 1;
        let mut meta = json!({"operationType": "delete", "lsn": self.lsn, "crts": crts,
            "previousImageLSN": item.lsn, "id": item.body["id"], "partitionKey": {"pk": item.body["pk"]}});
        if let Some(expired) = expired {
            meta["timeToLiveExpired"] = json!(expired);
        }
        let change = json!({"current": {}, "metadata": meta, "previous": self.image(&item)});
        let container = State::container_of(path);
        if expired == Some(true) {
            self.ttl_deletes.push((container.clone(), change.clone()));
        }
        self.log.push((container, self.lsn, change));
    }
}

impl Respond for Fake {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let flaws = self.flaws;
        let path = request.url.path().to_string();
        let method = request.method.as_str();
        let body: Map<String, Value> = request.body_json().unwrap_or_default();
        let mut state = self.state.lock().unwrap();
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        if flaws.wall {
            state.now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs() as i64;
            let now = state.now;
            let due: Vec<String> = state
                .items
                .iter()
                .filter(|(p, i)| state.expiry(p, i).is_some_and(|at| at + 2 <= now))
                .map(|(p, _)| p.clone())
                .collect();
            for p in due {
                state.delete(&p, Some(true), now);
            }
            if segments.first() == Some(&"_emulator") {
                return error(404, "NotFound");
            }
        }
        match (method, segments.as_slice()) {
            ("GET", [""]) => ResponseTemplate::new(200).set_body_json(json!({"id": "fake"})),
            ("GET", ["_emulator", "clock"]) => {
                ResponseTemplate::new(200).set_body_json(json!({ "now": state.now }))
            }
            ("POST", ["_emulator", "clock"]) => {
                state.now += body["advance"].as_i64().unwrap_or(0);
                ResponseTemplate::new(200).set_body_json(json!({ "now": state.now }))
            }
            ("POST", ["_emulator", "purge"]) if !flaws.no_purge => {
                let due: Vec<(String, i64)> = state
                    .items
                    .iter()
                    .filter_map(|(p, i)| state.expiry(p, i).map(|at| (p.clone(), at)))
                    .filter(|(_, at)| *at <= state.now)
                    .collect();
                if flaws.repeats_ttl_deletes {
                    for (container, change) in state.ttl_deletes.clone() {
                        state.lsn += 1;
                        let lsn = state.lsn;
                        state.log.push((container, lsn, change));
                    }
                }
                for (p, at) in &due {
                    let crts = if flaws.early_crts {
                        state.items[p].ts
                    } else {
                        state.now
                    };
                    debug_assert!(*at <= state.now);
                    state.delete(p, Some(true), crts);
                }
                ResponseTemplate::new(200).set_body_json(json!({ "purged": due.len() }))
            }
            ("POST", ["dbs"]) => ResponseTemplate::new(201).set_body_json(&body),
            ("DELETE", ["dbs", _]) => ResponseTemplate::new(204),
            ("POST", ["dbs", _, "colls"]) => {
                let key = format!("{path}/{}", body["id"].as_str().unwrap_or_default());
                state.containers.insert(key, body.clone());
                ResponseTemplate::new(201).set_body_json(&body)
            }
            ("PUT", ["dbs", _, "colls", _]) => {
                state.containers.insert(path.clone(), body.clone());
                ResponseTemplate::new(200).set_body_json(&body)
            }
            ("GET", ["dbs", _, "colls", _, "docs"]) => {
                let container = path.trim_end_matches("/docs").to_string();
                feed(&mut state, flaws, request, &container)
            }
            ("POST", ["dbs", _, "colls", _, "docs"]) => {
                let key = format!("{path}/{}", body["id"].as_str().unwrap_or_default());
                let upsert = header(request, "x-ms-documentdb-is-upsert").is_some();
                let existed = state.live(&key).is_some();
                if existed && !upsert {
                    return error(409, "Conflict");
                }
                state.items.remove(&key);
                let operation = if existed { "replace" } else { "create" };
                let image = state.write(&key, body, operation);
                ResponseTemplate::new(if existed { 200 } else { 201 }).set_body_json(image)
            }
            (_, ["dbs", _, "colls", _, "docs", _]) => {
                if state.live(&path).is_none() {
                    return error(404, "NotFound");
                }
                match method {
                    "GET" => {
                        let image = state.image(&state.items[&path]);
                        ResponseTemplate::new(200).set_body_json(image)
                    }
                    "PUT" => {
                        let image = state.write(&path, body, "replace");
                        ResponseTemplate::new(200).set_body_json(image)
                    }
                    "DELETE" => {
                        let now = state.now;
                        let flag = (!flaws.flagless_deletes).then_some(false);
                        state.delete(&path, flag, now);
                        ResponseTemplate::new(204)
                    }
                    _ => error(405, "MethodNotAllowed"),
                }
            }
            _ => error(404, "NotFound"),
        }
    }
}

fn feed(state: &mut State, flaws: Flaws, request: &Request, container: &str) -> ResponseTemplate {
    let a_im = header(request, "a-im").map(str::to_ascii_lowercase);
    let full = match a_im.as_deref() {
        _ if flaws.ignores_a_im => None,
        Some("incremental feed") => Some(false),
        Some("full-fidelity feed") => Some(true),
        _ => None,
    };
    let Some(full) = full else {
        // A plain read feed: every live item, no etag.
        let items: Vec<Value> = state
            .items
            .iter()
            .filter(|(p, _)| p.starts_with(&format!("{container}/docs/")))
            .filter(|(p, _)| state.live(p).is_some())
            .map(|(_, i)| Value::Object(i.body.clone()))
            .collect();
        return ResponseTemplate::new(200)
            .set_body_json(json!({"_rid": "x", "Documents": items, "_count": items.len()}));
    };
    if full && flaws.no_all_versions {
        return error(400, "BadRequest");
    }
    if full && header(request, "x-ms-cosmos-changefeed-wire-format-version") != Some("2021-09-15") {
        return error(400, "BadRequest");
    }
    let etag = |lsn: u64| format!("\"{lsn}\"");
    let from = match header(request, "if-none-match") {
        None if full => return error(400, "BadRequest"),
        None => 0,
        Some("*") => {
            return ResponseTemplate::new(304).insert_header("etag", etag(state.lsn).as_str())
        }
        Some(tag) => match tag.trim_matches('"').parse::<u64>() {
            Ok(lsn) => lsn,
            Err(_) => return error(400, "BadRequest"),
        },
    };
    let limit: usize = header(request, "x-ms-max-item-count")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let full = full && !flaws.plain_all_versions;
    let mut entries: Vec<(u64, Value)> = if full {
        state
            .log
            .iter()
            .filter(|(c, lsn, _)| c == container && *lsn > from)
            .map(|(_, lsn, change)| (*lsn, change.clone()))
            .collect()
    } else if flaws.every_version {
        state
            .versions
            .iter()
            .filter(|(c, lsn, _)| c == container && *lsn > from)
            .map(|(_, lsn, image)| (*lsn, image.clone()))
            .collect()
    } else {
        state
            .items
            .iter()
            .filter(|(p, i)| p.starts_with(&format!("{container}/docs/")) && i.lsn > from)
            .filter(|(p, _)| state.live(p).is_some())
            .map(|(_, i)| (i.lsn, state.image(i)))
            .collect()
    };
    entries.sort_by_key(|(lsn, _)| *lsn);
    entries.truncate(limit);
    let Some(last) = entries.last().map(|(lsn, _)| *lsn) else {
        return ResponseTemplate::new(304).insert_header("etag", etag(from).as_str());
    };
    let documents: Vec<Value> = entries.into_iter().map(|(_, d)| d).collect();
    ResponseTemplate::new(200)
        .insert_header("etag", etag(last).as_str())
        .set_body_json(json!({"_rid": "x", "Documents": documents, "_count": documents.len()}))
}

async fn run_against(flaws: Flaws) -> Report {
    run_at_scale(flaws, 0.01).await
}

async fn run_at_scale(flaws: Flaws, time_scale: f64) -> Report {
    let cases = cases(&[
        "CF.ttl-delete",
        "CF.never-expires",
        "CF.rescued-by-write",
        "CF.rescued-by-pin",
        "CF.rescued-by-disable",
        "CF.explicit-delete",
        "CF.latest-after-purge",
        "CF.latest-version-only",
    ]);
    run_cases(flaws, time_scale, &cases).await
}

async fn run_cases(flaws: Flaws, time_scale: f64, cases: &[Case]) -> Report {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(Fake {
            flaws,
            state: Mutex::new(State {
                now: START,
                ..State::default()
            }),
        })
        .mount(&server)
        .await;
    let mut config = config(&server.uri());
    config.time_scale = time_scale;
    config.purge_wait = Duration::from_secs(10);
    crate::common::run(&config, cases, Duration::from_secs(60)).await
}

fn summary(report: &Report) -> Vec<(String, Status)> {
    report
        .cases
        .iter()
        .map(|c| (c.id.clone(), c.status))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_that_keeps_the_contract_passes_every_case() {
    let report = run_against(Flaws::default()).await;
    for case in &report.cases {
        assert_eq!(case.status, Status::Passed, "{case:#?}");
    }
    assert!(!report.failed());
}

/// A case's feed times count from the case's start, also when its first
/// change feed read comes after the test clock moved: the TTL delete of an
/// item written at 0 with `ttl` 1000 is due at 1000 (a feed first read at
/// 500 must not count from there).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_read_after_the_clock_moved_counts_from_the_case_start() {
    const LATE: &str = r#"
schema-version = 1
area = "change-feed"
title = "t"

[[case]]
id = "CF.late"
title = "the first read at 500"
source = { cites = ["R1"], seeds = ["000"] }
container = '{"defaultTtl": -1}'
steps = [
  { at = 0, create = '{"id": "a", "ttl": 1000}', expect = "201" },
  { at = 500, changes = "all-versions", from = "now", expect = "[]" },
  { at = 1000, changes = "all-versions", purge = true, expect = "[ttl-delete a @>=1000]" },
]
"#;
    let late = parse_file(Path::new("late.toml"), LATE).expect("the case loads");
    let report = run_cases(Flaws::default(), 0.01, &late).await;
    assert_case(&report, "CF.late", Status::Passed, "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_all_versions_mode_its_cases_are_skipped_with_the_reason() {
    let report = run_against(Flaws {
        no_all_versions: true,
        ..Flaws::default()
    })
    .await;
    assert_case(
        &report,
        "CF.ttl-delete",
        Status::Skipped,
        "the target has no all-versions-and-deletes change feed: GET docs with A-IM: Full-Fidelity Feed from now answered 400 BadRequest",
    );
    assert_case(
        &report,
        "CF.latest-after-purge",
        Status::Skipped,
        "400 BadRequest",
    );
    // The latest-version case needs only that mode.
    assert_case(&report, "CF.latest-version-only", Status::Passed, "");
    assert!(!report.failed(), "{:?}", summary(&report));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_that_ignores_a_im_skips_every_case() {
    let report = run_against(Flaws {
        ignores_a_im: true,
        ..Flaws::default()
    })
    .await;
    for case in &report.cases {
        assert_eq!(case.status, Status::Skipped, "{case:#?}");
    }
    assert_case(
        &report,
        "CF.latest-version-only",
        Status::Skipped,
        "the target has no latest-version change feed: GET docs with A-IM: Incremental Feed from the beginning answered 200 without an etag header",
    );
    assert!(!report.failed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_all_versions_feed_of_plain_items_is_skipped_whichever_read_shows_it() {
    let report = run_against(Flaws {
        plain_all_versions: true,
        ..Flaws::default()
    })
    .await;
    assert_case(
        &report,
        "CF.ttl-delete",
        Status::Skipped,
        "GET docs with A-IM: Full-Fidelity Feed from a continuation answered 200 (items that are not changes (no metadata.operationType): a feed that ignores A-IM)",
    );
    assert_case(&report, "CF.latest-version-only", Status::Passed, "");
    // A 304 has no shape to tell: where the feed should hold changes and
    // holds nothing (the purged item b is not live any more), it fails.
    assert_case(
        &report,
        "CF.explicit-delete",
        Status::Failed,
        "expected [create a, create b, delete a, ttl-delete b @>=1000], observed []",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_clock_without_purge_skips_the_cases_that_wait_for_it() {
    let report = run_against(Flaws {
        no_purge: true,
        ..Flaws::default()
    })
    .await;
    assert_case(
        &report,
        "CF.ttl-delete",
        Status::Skipped,
        "POST /_emulator/purge answered 404",
    );
    assert_case(&report, "CF.latest-version-only", Status::Passed, "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_ttl_delete_fails() {
    let report = run_against(Flaws {
        repeats_ttl_deletes: true,
        ..Flaws::default()
    })
    .await;
    assert_case(
        &report,
        "CF.ttl-delete",
        Status::Failed,
        "@4000 changes all-versions after purge: expected [create d, ttl-delete d @>=3500], observed [create d, ttl-delete a, ttl-delete b, ttl-delete d @>=3500]",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ttl_delete_before_the_expiry_instant_fails() {
    let report = run_against(Flaws {
        early_crts: true,
        ..Flaws::default()
    })
    .await;
    assert_case(
        &report,
        "CF.ttl-delete",
        Status::Failed,
        "observed [create a, create b, create c, ttl-delete a @0, ttl-delete b @0]",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_explicit_delete_without_time_to_live_expired_fails() {
    let report = run_against(Flaws {
        flagless_deletes: true,
        ..Flaws::default()
    })
    .await;
    assert_case(
        &report,
        "CF.explicit-delete",
        Status::Failed,
        "observed [create a, create b, delete a (no timeToLiveExpired), ttl-delete b @>=1000]",
    );
    assert_case(&report, "CF.ttl-delete", Status::Passed, "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_latest_version_feed_with_every_version_fails() {
    let report = run_against(Flaws {
        every_version: true,
        ..Flaws::default()
    })
    .await;
    assert_case(
        &report,
        "CF.latest-version-only",
        Status::Failed,
        "expected [a v=2, b v=1], observed [a v=1, a v=2, b v=1]",
    );
    // Every version includes the expired item's, after its purge too.
    assert_case(
        &report,
        "CF.latest-after-purge",
        Status::Failed,
        "expected [b], observed [a, b]",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_wall_clock_a_purge_step_polls_until_its_ttl_deletes_arrive() {
    // 0.004 s a fixture second: CF.ttl-delete lasts 16 s. Steps closer than
    // 1.5 s to an expiry instant make some cases unobservable (skipped).
    let report = run_at_scale(
        Flaws {
            wall: true,
            ..Flaws::default()
        },
        0.004,
    )
    .await;
    assert!(
        report.target.clock.starts_with("wall"),
        "{}",
        report.target.clock
    );
    for id in [
        "CF.ttl-delete",
        "CF.never-expires",
        "CF.latest-after-purge",
        "CF.latest-version-only",
    ] {
        assert_case(&report, id, Status::Passed, "");
    }
    let waits = crate::common::case(&report, "CF.ttl-delete")
        .waits
        .join("\n");
    assert!(
        waits.contains("@2500 changes all-versions after purge: waited")
            && waits.contains("for the TTL deletes of a, b (bound 10 s)"),
        "{waits}"
    );
    assert_case(
        &report,
        "CF.rescued-by-disable",
        Status::Skipped,
        "on the wall clock",
    );
    assert!(!report.failed(), "{:?}", summary(&report));
}
