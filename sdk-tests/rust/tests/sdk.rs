//! The official Rust SDK, `azure_data_cosmos`, unchanged against the
//! in-process emulator: CRUD, a query, TTL through the test clock, a
//! restart on a data directory, and vector search across partition key
//! ranges; the change feed in `change_feed/`.
//!
//! The SDK sends Cosmos binary JSON by default, which only Microsoft's
//! Windows emulator and the service speak; like Microsoft's Linux emulator,
//! this one needs it turned off (the SDK's README, "Using the vNext emulator").

use azure_core::http::StatusCode;
use azure_data_cosmos::models::{
    ContainerProperties, ThroughputProperties, TimeToLive, VectorDataType, VectorDistanceFunction,
    VectorEmbedding, VectorEmbeddingPolicy,
};
use azure_data_cosmos::options::{
    BinaryEncodingOptions, CreateContainerOptions, QueryOptions, QueryPlanMode,
};
use azure_data_cosmos::{
    AccountReference, ContainerClient, CosmosClient, FeedScope, Query, RoutingStrategy,
};
use cosmos_emulator::{ClockMode, Config, Emulator};
use futures::TryStreamExt;
use serde::{Deserialize, Serialize};
use serde_json::json;

const START: i64 = 1_700_000_000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Order {
    id: String,
    customer: String,
    total: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl: Option<i64>,
}

fn order(id: &str, customer: &str, total: f64, ttl: Option<i64>) -> Order {
    Order {
        id: id.into(),
        customer: customer.into(),
        total,
        ttl,
    }
}

fn start_emulator() -> Emulator {
    Emulator::start(Config {
        clock: ClockMode::Manual { start: Some(START) },
        ..Config::for_tests()
    })
    .unwrap()
}

async fn client(emulator: &Emulator, key: &str) -> azure_data_cosmos::Result<CosmosClient> {
    let account = AccountReference::with_authentication_key(
        format!("{}/", emulator.endpoint()).parse().unwrap(),
        azure_core::credentials::Secret::from(key.to_string()),
    );
    CosmosClient::builder()
        .with_binary_encoding_options(BinaryEncodingOptions::new().with_enabled(false))
        .build(
            account,
            RoutingStrategy::ProximityTo("South Central US".into()),
        )
        .await
}

/// A signed `POST` to the emulator's control API (`/_emulator/...`).
async fn control(emulator: &Emulator, path: &str, body: serde_json::Value) {
    let key = cosmos_emulator::protocol::auth::MasterKey::from_base64(emulator.key()).unwrap();
    let date = httpdate::fmt_http_date(std::time::SystemTime::now());
    let auth = cosmos_emulator::protocol::auth::authorization_header(
        &key,
        &cosmos_emulator::protocol::auth::payload("POST", "", "", &date, ""),
    );
    let reply = reqwest::Client::new()
        .post(format!("{}/_emulator/{path}", emulator.endpoint()))
        .header("x-ms-date", date)
        .header("authorization", auth)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 200);
}

/// Moves the emulator's test clock.
async fn advance(emulator: &Emulator, seconds: i64) {
    control(emulator, "clock", json!({"advance": seconds})).await;
}

async fn container(client: &CosmosClient, default_ttl: TimeToLive) -> ContainerClient {
    client
        .create_database("shop", None)
        .await
        .expect("create database");
    let db = client.database_client("shop");
    let mut properties = ContainerProperties::new("orders", "/customer".into());
    properties.default_ttl = default_ttl;
    db.create_container(properties, None)
        .await
        .expect("create container");
    db.container_client("orders", None)
        .await
        .expect("container client")
}

async fn query_ids(items: &ContainerClient, query: &str) -> Vec<String> {
    let mut ids: Vec<String> = items
        .query_items::<Order>(query, FeedScope::full_container(), None)
        .await
        .expect("query")
        .try_collect::<Vec<_>>()
        .await
        .expect("query pages")
        .into_iter()
        .map(|o| o.id)
        .collect();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crud_and_query() {
    let emulator = start_emulator();
    let client = client(&emulator, emulator.key()).await.expect("client");
    let items = container(&client, TimeToLive::Forever).await;

    let first = order("o-1", "contoso", 42.5, None);
    items
        .create_item("contoso", "o-1", &first, None)
        .await
        .expect("create");
    items
        .create_item(
            "fabrikam",
            "o-2",
            &order("o-2", "fabrikam", 7.0, None),
            None,
        )
        .await
        .expect("create");
    let read: Order = items
        .read_item("contoso", "o-1", None)
        .await
        .expect("read")
        .into_model()
        .unwrap();
    assert_eq!(read, first);

    items
        .replace_item("contoso", "o-1", &order("o-1", "contoso", 99.0, None), None)
        .await
        .expect("replace");
    items
        .upsert_item("contoso", "o-3", &order("o-3", "contoso", 1.0, None), None)
        .await
        .expect("upsert");
    let read: Order = items
        .read_item("contoso", "o-1", None)
        .await
        .unwrap()
        .into_model()
        .unwrap();
    assert_eq!(read.total, 99.0);

    assert_eq!(
        query_ids(&items, "SELECT * FROM c").await,
        vec!["o-1", "o-2", "o-3"]
    );
    let query = Query::from("SELECT * FROM c WHERE c.total > @min")
        .with_parameter("@min", 5)
        .unwrap();
    let expensive: Vec<Order> = items
        .query_items(query, FeedScope::full_container(), None)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let mut ids: Vec<_> = expensive.into_iter().map(|o| o.id).collect();
    ids.sort();
    assert_eq!(ids, vec!["o-1", "o-2"]);

    items
        .delete_item("contoso", "o-1", None)
        .await
        .expect("delete");
    let gone = items.read_item("contoso", "o-1", None).await.unwrap_err();
    assert_eq!(gone.status().status_code(), StatusCode::NotFound);
    let duplicate = items
        .create_item(
            "fabrikam",
            "o-2",
            &order("o-2", "fabrikam", 7.0, None),
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(duplicate.status().status_code(), StatusCode::Conflict);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ttl_through_the_test_clock() {
    let emulator = start_emulator();
    let client = client(&emulator, emulator.key()).await.expect("client");
    let items = container(&client, TimeToLive::Seconds(1000)).await;

    items
        .create_item("c", "inherits", &order("inherits", "c", 1.0, None), None)
        .await
        .unwrap();
    items
        .create_item("c", "pinned", &order("pinned", "c", 1.0, Some(-1)), None)
        .await
        .unwrap();
    items
        .create_item("c", "own", &order("own", "c", 1.0, Some(2000)), None)
        .await
        .unwrap();

    advance(&emulator, 999).await;
    assert_eq!(
        query_ids(&items, "SELECT * FROM c").await,
        vec!["inherits", "own", "pinned"]
    );
    advance(&emulator, 1).await;
    let expired = items.read_item("c", "inherits", None).await.unwrap_err();
    assert_eq!(expired.status().status_code(), StatusCode::NotFound);
    assert_eq!(
        query_ids(&items, "SELECT * FROM c").await,
        vec!["own", "pinned"]
    );
    advance(&emulator, 1000).await;
    assert_eq!(query_ids(&items, "SELECT * FROM c").await, vec!["pinned"]);

    let invalid = items
        .create_item("c", "bad", &order("bad", "c", 1.0, Some(0)), None)
        .await
        .unwrap_err();
    assert_eq!(invalid.status().status_code(), StatusCode::BadRequest);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_key_is_refused() {
    let emulator = start_emulator();
    let error = match client(&emulator, "d3Jvbmcga2V5").await {
        Err(error) => error,
        Ok(client) => client.create_database("x", None).await.unwrap_err(),
    };
    assert_eq!(
        error.status().status_code(),
        StatusCode::Unauthorized,
        "{error}"
    );
}

/// Waits for the purge of everything due (`POST /_emulator/purge`).
async fn purge(emulator: &Emulator) {
    control(emulator, "purge", json!({})).await;
}

/// With `--data-dir`, what the SDK wrote comes back after a restart, and
/// time to live goes on from where the test clock was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_on_the_data_directory_keeps_items_and_ttl() {
    let dir = std::env::temp_dir().join(format!("rust-sdk-persistence-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let start = || {
        Emulator::start(Config {
            clock: ClockMode::Manual { start: Some(START) },
            data_dir: Some(dir.clone()),
            ..Config::for_tests()
        })
        .unwrap()
    };
    let emulator = start();
    let sdk = client(&emulator, emulator.key()).await.expect("client");
    let items = container(&sdk, TimeToLive::Seconds(1000)).await;
    let written = [
        order("inherits", "c", 1.0, None),
        order("short", "c", 2.0, Some(10)),
        order("pinned", "d", 3.0, Some(-1)),
    ];
    for o in &written {
        items
            .create_item(&o.customer, &o.id, o, None)
            .await
            .unwrap();
    }
    advance(&emulator, 5).await;
    drop((items, sdk));
    drop(emulator);

    let emulator = start();
    let sdk = client(&emulator, emulator.key()).await.expect("client");
    let items = sdk
        .database_client("shop")
        .container_client("orders", None)
        .await
        .expect("container client");
    for o in &written {
        let read: Order = items
            .read_item(&o.customer, &o.id, None)
            .await
            .unwrap()
            .into_model()
            .unwrap();
        assert_eq!(&read, o);
    }
    // The clock resumed at START + 5: "short" (ttl 10) has 5 s left.
    advance(&emulator, 4).await;
    assert_eq!(
        query_ids(&items, "SELECT * FROM c").await,
        vec!["inherits", "pinned", "short"]
    );
    advance(&emulator, 1).await;
    assert_eq!(
        query_ids(&items, "SELECT * FROM c").await,
        vec!["inherits", "pinned"]
    );
    drop(emulator);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A document of the vector search test: `v` is missing on some items, as
/// in real data where not every item has been embedded yet.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Doc {
    id: String,
    pk: String,
    group: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    v: Option<Vec<f32>>,
}

#[derive(Debug, Deserialize)]
struct Match {
    id: String,
    score: f64,
}

/// 200 documents with 8-dimensional vectors spread over the sphere by a
/// fixed arithmetic sequence (no two of them parallel), every 25th without
/// a vector.
fn vector_docs() -> Vec<Doc> {
    (0..200u32)
        .map(|i| Doc {
            id: format!("d{i:03}"),
            pk: format!("p{}", i % 17),
            group: i % 4,
            v: (i % 25 != 7).then(|| {
                (0..8u32)
                    .map(|j| ((i * 7919 + j * 104_729 + i * j * 31) % 2001) as f32 / 1000.0 - 1.0)
                    .collect()
            }),
        })
        .collect()
}

/// The expected ranking, computed here in double precision from the
/// float32 values: cosine similarity, greatest first.
fn cosine_ranking<'d>(
    docs: &'d [Doc],
    query: &[f32],
    filter: impl Fn(&Doc) -> bool,
) -> Vec<(&'d str, f64)> {
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let mut scored: Vec<(&str, f64)> = docs
        .iter()
        .filter(|d| filter(d))
        .filter_map(|d| {
            let v = d.v.as_deref()?;
            let dot: f64 = v
                .iter()
                .zip(query)
                .map(|(a, b)| f64::from(*a) * f64::from(*b))
                .sum();
            Some((d.id.as_str(), dot / (norm(v) * norm(query))))
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored
}

async fn vector_container(
    db: &azure_data_cosmos::clients::DatabaseClient,
    name: &str,
    throughput: u64,
) -> ContainerClient {
    let policy = VectorEmbeddingPolicy::default().with_embedding(VectorEmbedding::new(
        "/v",
        VectorDataType::Float32,
        8,
        VectorDistanceFunction::Cosine,
    ));
    let properties = ContainerProperties::new(name.to_string(), "/pk".into())
        .with_vector_embedding_policy(policy);
    let options =
        CreateContainerOptions::default().with_throughput(ThroughputProperties::manual(throughput));
    db.create_container(properties, Some(options))
        .await
        .expect("create container");
    db.container_client(name, None)
        .await
        .expect("container client")
}

async fn vector_matches(
    items: &ContainerClient,
    sql: &str,
    query_vector: &[f32],
    mode: QueryPlanMode,
) -> Vec<Match> {
    let query = Query::from(sql)
        .with_parameter("@vector", query_vector)
        .unwrap();
    items
        .query_items::<Match>(
            query,
            FeedScope::full_container(),
            Some(QueryOptions::default().with_query_plan_mode(mode)),
        )
        .await
        .unwrap_or_else(|e| panic!("{sql} ({mode}): {e}"))
        .try_collect()
        .await
        .unwrap_or_else(|e| panic!("{sql} ({mode}): {e}"))
}

/// The SDK's documented vector search, across partition key ranges: the
/// SDK asks for a query plan (its own or the gateway's), sends the rewritten
/// query to every range and merges the ranges' answers by score. On five
/// ranges and on one, with the planner on either side, the result is the
/// exact top-k of a ranking computed here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vector_search_across_ranges_is_the_exact_top_k() {
    let emulator = start_emulator();
    let sdk = client(&emulator, emulator.key()).await.expect("client");
    sdk.create_database("search", None)
        .await
        .expect("create database");
    let db = sdk.database_client("search");
    let five = vector_container(&db, "five", 30_000).await;
    let one = vector_container(&db, "one", 400).await;
    assert_eq!(five.read_feed_ranges(None).await.unwrap().len(), 5);
    assert_eq!(one.read_feed_ranges(None).await.unwrap().len(), 1);

    let docs = vector_docs();
    for items in [&five, &one] {
        for d in &docs {
            items.create_item(&d.pk, &d.id, d, None).await.unwrap();
        }
    }

    let query_vector = [0.3_f32, -0.2, 0.9, 0.1, -0.5, 0.25, 0.0, 0.7];
    let all = cosine_ranking(&docs, &query_vector, |_| true);
    let group_two = cosine_ranking(&docs, &query_vector, |d| d.group == 2);
    // The ranks the test compares must not be near ties: a tie would make
    // the expected order depend on rounding rather than on the emulator.
    for ranking in [&all, &group_two] {
        for pair in ranking[..12].windows(2) {
            assert!(
                pair[0].1 - pair[1].1 > 1e-6,
                "near tie in the fixture: {pair:?}"
            );
        }
    }

    let cases: [(&str, &[(&str, f64)]); 3] = [
        (
            "SELECT TOP 5 c.id, VectorDistance(c.v, @vector) AS score \
             FROM c ORDER BY VectorDistance(c.v, @vector)",
            &all[..5],
        ),
        (
            "SELECT c.id, VectorDistance(c.v, @vector, false) AS score \
             FROM c ORDER BY VectorDistance(c.v, @vector, false) OFFSET 3 LIMIT 6",
            &all[3..9],
        ),
        (
            "SELECT TOP 4 c.id, VectorDistance(c.v, @vector) AS score \
             FROM c WHERE c.group = 2 ORDER BY VectorDistance(c.v, @vector)",
            &group_two[..4],
        ),
    ];
    for (items, ranges) in [(&five, 5), (&one, 1)] {
        for mode in [QueryPlanMode::LocalPreferred, QueryPlanMode::GatewayOnly] {
            for (sql, expected) in &cases {
                let got = vector_matches(items, sql, &query_vector, mode).await;
                let got_ids: Vec<&str> = got.iter().map(|m| m.id.as_str()).collect();
                let expected_ids: Vec<&str> = expected.iter().map(|(id, _)| *id).collect();
                assert_eq!(got_ids, expected_ids, "{sql} on {ranges} range(s), {mode}");
                for (m, (_, score)) in got.iter().zip(expected.iter()) {
                    assert!(
                        (m.score - score).abs() < 1e-5,
                        "{sql} on {ranges} range(s), {mode}: {} scored {} (expected {score})",
                        m.id,
                        m.score
                    );
                }
            }
        }
    }
}

/// The guide's Rust quick start (docs/src/quick-start/rust.md includes it),
/// run here so that the example a user copies keeps working.
// The change feed's tests (the module's own file: this one is long).
mod change_feed;

#[path = "../../../docs/snippets/rust/first_test.rs"]
mod docs_first_test;

/// The guide's Rust resilience recipe (docs/src/resilience.md includes it).
#[path = "../../../docs/snippets/rust/resilience.rs"]
mod docs_resilience;
