//! The suite's own mutation test: the whole suite against an emulator that
//! never learns of a TTL, so that nothing ever expires. A real HTTP proxy
//! on loopback stands between the suite and the in-process emulator and
//! strips `defaultTtl` from container bodies and `ttl` from item bodies
//! (single writes, a batch's operations, a stored procedure's item
//! arguments) and drops patch operations on `/ttl`: the places where the
//! suite sends TTL values (the same the wall clock scales,
//! `conformance/src/clock.rs`). Requests are signed over verb, resource
//! and date, never the body (`conformance/src/client.rs`,
//! `emulator/src/protocol/auth.rs`), so the edited requests need no new signature.
//!
//! Every case must then fail, except the ones listed in [`NOT_ABOUT_EXPIRY`],
//! each with the reason why a target that never expires anything conforms
//! to it; and those must not fail, so that the list stays exact. A case
//! that passes here would pass on an implementation without TTL (as
//! `L10.4` did on cosmium, on its upsert's 201 and one read of the new
//! value).

use crate::common::{all_cases, config};
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, Response, StatusCode, Uri};
use axum::Router;
use cosmos_conformance::report::Status;
use cosmos_emulator::{ClockMode, Config, Emulator};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The cases whose documented outcome holds whether or not anything ever
/// expires, each with why. Nothing else may pass against the proxy.
const NOT_ABOUT_EXPIRY: &[(&str, &str)] = &[
    // The example tables' and the matrix's cells where the documentation
    // says "never expires": the cell is the same on a target without TTL.
    ("E1.1", "TTL off (no defaultTtl): never expires"),
    (
        "E1.2",
        "TTL off: the item's ttl -1 is not interpreted; never expires",
    ),
    (
        "E1.3",
        "TTL off: the item's ttl 2000 is not interpreted; never expires",
    ),
    ("E2.1", "defaultTtl -1, no item ttl: never expires"),
    ("E2.2", "defaultTtl -1, ttl -1: never expires"),
    ("E3.2", "ttl -1 under defaultTtl 1000: never expires"),
    ("M1.1", "neither has TTL: never expires"),
    ("M1.1-null", "defaultTtl null is TTL off: never expires"),
    ("M1.2", "defaultTtl -1, no item ttl: never expires"),
    (
        "M2.1",
        "TTL off: the item's ttl -1 is ignored; never expires",
    ),
    (
        "M2.1-null",
        "TTL off (null): the item's ttl -1 is ignored; never expires",
    ),
    ("M2.2", "defaultTtl -1, ttl -1: never expires"),
    (
        "M3.1",
        "TTL off: the item's ttl is not interpreted; never expires",
    ),
    (
        "M3.1-null",
        "TTL off (null): the item's ttl is not interpreted; never expires",
    ),
    // Queries with TTL off, and TTL on whole items only.
    (
        "R5.ttl-off",
        "TTL off: queries return every item, whatever its ttl",
    ),
    ("R11", "a nested ttl property is data: nothing expires"),
    // Scripts and the change feed, where the case is about what does not
    // expire or has no TTL in it.
    (
        "S.written-ttl.off",
        "TTL off: a script's item with ttl 1000 never expires",
    ),
    (
        "CF.rescued-by-disable",
        "TTL turned off before anything is due: the feed records no TTL delete",
    ),
    (
        "CF.latest-version-only",
        "the latest-version feed of items written twice; nothing is due to expire",
    ),
    // Throttling (rules T1-T7) has no TTL; skipped here, where the emulator
    // does not throttle.
    ("T.refusal", "throughput: no TTL"),
    ("T.refusal.no-change", "throughput: no TTL"),
    ("T.second.refill", "throughput: no TTL"),
    ("T.partition.budget", "throughput: no TTL"),
    ("T.priority.low-first", "throughput: no TTL"),
    ("T.shared.one-busy", "throughput: no TTL"),
    ("T.shared.one-busy-of-four", "throughput: no TTL"),
];

/// The cases that fail against the proxy only on a write's status: their
/// point is a refusal, which the proxy turns into an acceptance. Every
/// other failing case must fail on a step that observes state (a read, a
/// query, the change feed, a batch's or a script's results): a write's
/// status alone is no proof of expiry (cosmium answers an upsert 201
/// whether or not the item was there).
const REFUSALS_ONLY: &[(&str, &str)] = &[(
    "R10.3",
    "the refused container write (indexing none with a defaultTtl) is the whole case",
)];

/// The steps that write: their status says what the target accepted, not
/// what it holds.
const WRITES: &[&str] = &[
    "create ",
    "upsert ",
    "replace ",
    "patch ",
    "delete ",
    "create-container ",
    "replace-container ",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_that_never_learns_a_ttl_fails_every_case_about_expiry() {
    let emulator = Emulator::start(Config {
        port: 0,
        clock: ClockMode::Manual { start: None },
        ..Config::default()
    })
    .expect("the emulator starts");
    let proxy = StripTtl::start(emulator.endpoint()).await;
    let cases = all_cases();
    let report =
        crate::common::run(&config(&proxy.endpoint), &cases, Duration::from_secs(120)).await;
    assert!(
        report.target.clock.starts_with("manual"),
        "the emulator's test clock is reached through the proxy: {}",
        report.target.clock
    );

    let listed: BTreeMap<&str, &str> = NOT_ABOUT_EXPIRY.iter().copied().collect();
    for id in listed.keys() {
        assert!(cases.iter().any(|c| c.id == *id), "{id} is not a case");
    }
    let mut wrong = Vec::new();
    for case in &report.cases {
        let failed = case.status == Status::Failed;
        match listed.get(case.id.as_str()) {
            Some(reason) if failed => wrong.push(format!(
                "{} fails without TTL, but is listed ({reason}): {}",
                case.id,
                case.message.as_deref().unwrap_or("")
            )),
            None if !failed => wrong.push(format!(
                "{} {} against a target that never expires anything: {}",
                case.id,
                case.status.as_str(),
                case.observed
            )),
            _ => {}
        }
    }
    let refusals: BTreeMap<&str, &str> = REFUSALS_ONLY.iter().copied().collect();
    for case in report.cases.iter().filter(|c| c.status == Status::Failed) {
        assert!(
            !case.mismatches.is_empty(),
            "{} did not run to the end: {:?}",
            case.id,
            case.message
        );
        // `@1500 upsert a: expected 201, observed 200`: the step's label.
        let writes_only = case.mismatches.iter().all(|m| {
            let label = m.split_once(' ').map_or("", |(_, rest)| rest);
            WRITES.iter().any(|w| label.starts_with(w))
        });
        match refusals.get(case.id.as_str()) {
            None if writes_only => wrong.push(format!(
                "{} fails only on a write's status, reading nothing that shows expiry: {:?}",
                case.id, case.mismatches
            )),
            Some(reason) if !writes_only => wrong.push(format!(
                "{} fails on a read too, but is listed as a refusal only ({reason}): {:?}",
                case.id, case.mismatches
            )),
            _ => {}
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));

    // The proxy did its work: every kind of place a TTL travels was edited.
    let stripped = proxy.stripped();
    for kind in ["defaultTtl", "ttl", "patch /ttl", "batch ttl", "sproc ttl"] {
        assert!(
            stripped.get(kind).copied().unwrap_or(0) > 0,
            "nothing stripped as {kind}: {stripped:?}"
        );
    }
}

/// The proxy: forwards every request to the emulator, its body without TTL.
struct StripTtl {
    endpoint: String,
    counts: Arc<Counts>,
}

#[derive(Default)]
struct Counts {
    default_ttl: AtomicUsize,
    ttl: AtomicUsize,
    patch: AtomicUsize,
    batch: AtomicUsize,
    sproc: AtomicUsize,
}

struct Forward {
    target: String,
    client: reqwest::Client,
    counts: Arc<Counts>,
}

impl StripTtl {
    async fn start(target: &str) -> StripTtl {
        let counts = Arc::new(Counts::default());
        let state = Arc::new(Forward {
            target: target.trim_end_matches('/').to_string(),
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .expect("a client"),
            counts: Arc::clone(&counts),
        });
        let app = Router::new().fallback(forward).with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        StripTtl { endpoint, counts }
    }

    fn stripped(&self) -> BTreeMap<&'static str, usize> {
        let c = &self.counts;
        BTreeMap::from([
            ("defaultTtl", c.default_ttl.load(Ordering::Relaxed)),
            ("ttl", c.ttl.load(Ordering::Relaxed)),
            ("patch /ttl", c.patch.load(Ordering::Relaxed)),
            ("batch ttl", c.batch.load(Ordering::Relaxed)),
            ("sproc ttl", c.sproc.load(Ordering::Relaxed)),
        ])
    }
}

async fn forward(
    State(state): State<Arc<Forward>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response<Body> {
    let body = match serde_json::from_slice::<Value>(&body) {
        Ok(mut json) => {
            strip(&method, uri.path(), &headers, &mut json, &state.counts);
            Bytes::from(json.to_string())
        }
        Err(_) => body,
    };
    let mut sent = HeaderMap::new();
    for (name, value) in &headers {
        if !matches!(name.as_str(), "host" | "content-length" | "connection") {
            sent.append(name.clone(), value.clone());
        }
    }
    let url = format!(
        "{}{}",
        state.target,
        uri.path_and_query().map(|p| p.as_str()).unwrap_or("/")
    );
    let answer = match state
        .client
        .request(method, url)
        .headers(sent)
        .body(body)
        .send()
        .await
    {
        Ok(answer) => answer,
        Err(error) => {
            return Response::builder()
                .status(StatusCode::BAD_GATEWAY)
                .body(Body::from(format!("proxy: {error}")))
                .unwrap()
        }
    };
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        if !matches!(
            name.as_str(),
            "content-length" | "transfer-encoding" | "connection"
        ) {
            response = response.header(name, value);
        }
    }
    let bytes = answer.bytes().await.unwrap_or_default();
    response.body(Body::from(bytes)).unwrap()
}

/// Takes the TTL out of a request's JSON body, by what the request is.
fn strip(method: &Method, path: &str, headers: &HeaderMap, body: &mut Value, counts: &Counts) {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let remove = |value: &mut Value, key: &str, count: &AtomicUsize| {
        if value.as_object_mut().and_then(|o| o.remove(key)).is_some() {
            count.fetch_add(1, Ordering::Relaxed);
        }
    };
    match (method.as_str(), segments.as_slice()) {
        // A container created or replaced: no default TTL, so TTL is off.
        ("POST", ["dbs", _, "colls"]) | ("PUT", ["dbs", _, "colls", _]) => {
            remove(body, "defaultTtl", &counts.default_ttl)
        }
        ("POST", ["dbs", _, "colls", _, "docs"]) => {
            if headers.contains_key("x-ms-documentdb-isquery") {
                return;
            }
            if headers.contains_key("x-ms-cosmos-is-batch-request") {
                for operation in body.as_array_mut().into_iter().flatten() {
                    if let Some(resource) = operation.get_mut("resourceBody") {
                        remove(resource, "ttl", &counts.batch);
                        if let Some(patches) = resource.get_mut("operations") {
                            strip_patches(patches, &counts.batch);
                        }
                    }
                }
            } else {
                remove(body, "ttl", &counts.ttl);
            }
        }
        ("PUT", ["dbs", _, "colls", _, "docs", _]) => remove(body, "ttl", &counts.ttl),
        ("PATCH", ["dbs", _, "colls", _, "docs", _]) => {
            if let Some(patches) = body.get_mut("operations") {
                strip_patches(patches, &counts.patch);
            }
        }
        // A stored procedure's arguments: the objects among them are items.
        ("POST", ["dbs", _, "colls", _, "sprocs", _]) => {
            for argument in body.as_array_mut().into_iter().flatten() {
                remove(argument, "ttl", &counts.sproc);
            }
        }
        _ => {}
    }
}

/// Drops the patch operations on `/ttl`. A patch left without operations
/// (one that only set or removed the ttl) sets a plain property instead,
/// so that it still applies, as it would on a target that keeps `ttl` as
/// data and never expires anything.
fn strip_patches(patches: &mut Value, count: &AtomicUsize) {
    let Some(list) = patches.as_array_mut() else {
        return;
    };
    let before = list.len();
    list.retain(|op| op.get("path").and_then(Value::as_str) != Some("/ttl"));
    if list.len() < before {
        count.fetch_add(before - list.len(), Ordering::Relaxed);
        if list.is_empty() {
            list.push(json!({"op": "set", "path": "/ttlStripped", "value": true}));
        }
    }
}
