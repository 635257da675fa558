//! The server's own cost of a point read: the whole router (layers,
//! authentication, handler, headers) called in process, without sockets or
//! a client, so that a profile shows only the emulator's work. The network
//! benchmark (`cargo xtask bench`) is too noisy on a shared machine to see
//! a few percent; an instruction count is not:
//!
//! ```sh
//! cargo build --release -p cosmos-emulator --example point_read_cost
//! # instructions per read: the difference of two runs cancels the setup
//! valgrind --tool=callgrind target/release/examples/point_read_cost 10000
//! valgrind --tool=callgrind target/release/examples/point_read_cost 40000
//! ```
//!
//! Run natively it prints the time per read; `perf record -g` on a build
//! with `-C force-frame-pointers=yes` gives call stacks. With `WRITES=1` it
//! upserts instead of reading; with `DATA_DIR=DIR` the store persists into
//! DIR (`--sync never`), to see what persistence adds to a request; with
//! `RULES=N`, N fault rules that never match are checked by every request.
//! With `RATE_LIMIT=1` requests are throttled (`--rate-limit`); `OFFER=N`
//! gives the container N RU/s (rate limiting needs more than the default
//! 400 to let every read through: compare both at the same `OFFER`).
//! With `QUERY='SELECT ...'` each request is that query in the partition
//! (a page of up to 100), the items holding `"n": i % 100` too: the cost
//! of a page through a path's index (`WHERE c.n = 7`, `c.n >= 50`, `ORDER
//! BY c.n` with `TOP`) or of a scan.
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::http::Request;
use cosmos_emulator::protocol::auth::{self, MasterKey};
use cosmos_emulator::{app, Account, AppState, Clock, ClockMode, EndpointState, Store};
use tower::ServiceExt;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn signed(key: &MasterKey, method: &str, path: &str, body: Option<String>) -> Request<Body> {
    let date = httpdate::fmt_http_date(std::time::SystemTime::now());
    let resource = auth::signed_resource(path);
    let payload = auth::payload(
        method,
        &resource.resource_type,
        &resource.links[0],
        &date,
        "",
    );
    let mut builder = Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", auth::authorization_header(key, &payload))
        .header("x-ms-date", date)
        .header("x-ms-version", "2020-07-15")
        .header("user-agent", "read-profile/1")
        .header("accept", "application/json");
    if path.contains("/docs") {
        builder = builder.header("x-ms-documentdb-partitionkey", "[\"p1\"]");
    }
    builder
        .body(body.map(Body::from).unwrap_or_default())
        .unwrap()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(300_000);
    let key = MasterKey::from_base64(cosmos_emulator::WELL_KNOWN_KEY).unwrap();
    let writes = std::env::var_os("WRITES").is_some();
    let query = std::env::var("QUERY").ok();
    let mut store = Store::new(Clock::new(ClockMode::Manual { start: None }));
    if let Some(dir) = std::env::var_os("DATA_DIR") {
        let _ = std::fs::remove_dir_all(&dir);
        store = store
            .open_data_dir(
                dir.as_ref(),
                cosmos_emulator::data::persist::SyncMode::Never,
            )
            .unwrap();
    }
    let mut account = Account::new(store, key.clone(), cosmos_emulator::REGION);
    account.limiter = std::env::var_os("RATE_LIMIT")
        .map(|_| cosmos_emulator::account::throttle::Limiter::new(false));
    let state = AppState::new(EndpointState {
        account: Arc::new(account),
        scheme: "http",
        certificate: None,
        local_addr: "127.0.0.1:8081".parse().unwrap(),
        explorer: true,
        advertise_host: None,
        gateway: Default::default(),
        region: cosmos_emulator::REGION.into(),
        region_index: 0,
        region_addrs: Arc::from(["127.0.0.1:8081".parse().unwrap()]),
    });
    let service = app(state);
    let send = |request: Request<Body>| {
        let service = service.clone();
        async move {
            let response = service.oneshot(request).await.unwrap();
            let status = response.status();
            let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap();
            (status, body)
        }
    };
    let (s, b) = send(signed(&key, "POST", "/dbs", Some(r#"{"id":"db"}"#.into()))).await;
    assert!(s.is_success(), "{s} {b:?}");
    let mut create = signed(
        &key,
        "POST",
        "/dbs/db/colls",
        Some(r#"{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}"#.into()),
    );
    if let Ok(offer) = std::env::var("OFFER") {
        create
            .headers_mut()
            .insert("x-ms-offer-throughput", offer.parse().unwrap());
    }
    let (s, b) = send(create).await;
    assert!(s.is_success(), "{s} {b:?}");
    let filler = "x".repeat(900);
    for i in 0..1000 {
        let body = match query {
            Some(_) => format!(
                r#"{{"id":"item{i}","pk":"p1","n":{},"filler":"{filler}"}}"#,
                i % 100
            ),
            None => format!(r#"{{"id":"item{i}","pk":"p1","filler":"{filler}"}}"#),
        };
        let (s, b) = send(signed(&key, "POST", "/dbs/db/colls/c/docs", Some(body))).await;
        assert!(s.is_success(), "{s} {b:?}");
    }
    // RULES=N: N fault rules that never match (another container), each
    // checked by every request: the cost of matching them.
    let rules: usize = std::env::var("RULES")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(0);
    for _ in 0..rules {
        let rule = r#"{"match":{"container":"other","operation":["read","upsert"]},"respond":{"status":503}}"#;
        let (s, b) = send(signed(&key, "POST", "/_emulator/faults", Some(rule.into()))).await;
        assert!(s.is_success(), "{s} {b:?}");
    }
    let requests: Vec<Request<Body>> = (0..n)
        .map(|i| {
            if let Some(query) = &query {
                let body = serde_json::json!({"query": query, "parameters": []}).to_string();
                let mut request = signed(&key, "POST", "/dbs/db/colls/c/docs", Some(body));
                let headers = request.headers_mut();
                headers.insert("x-ms-documentdb-isquery", "True".parse().unwrap());
                headers.insert("content-type", "application/query+json".parse().unwrap());
                request
            } else if writes {
                let body = format!(
                    r#"{{"id":"item{}","pk":"p1","filler":"{filler}"}}"#,
                    i % 1000
                );
                let mut request = signed(&key, "POST", "/dbs/db/colls/c/docs", Some(body));
                request
                    .headers_mut()
                    .insert("x-ms-documentdb-is-upsert", "true".parse().unwrap());
                request
            } else {
                signed(
                    &key,
                    "GET",
                    &format!("/dbs/db/colls/c/docs/item{}", i % 1000),
                    None,
                )
            }
        })
        .collect();
    let started = Instant::now();
    let mut bytes = 0;
    for request in requests {
        let (s, b) = send(request).await;
        debug_assert!(s.is_success());
        bytes += b.len();
    }
    let elapsed = started.elapsed();
    println!(
        "{n} {}: {:.3} s, {:.2} µs each ({} bytes each)",
        if query.is_some() {
            "queries"
        } else if writes {
            "upserts"
        } else {
            "reads"
        },
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e6 / n as f64,
        bytes / n
    );
}
