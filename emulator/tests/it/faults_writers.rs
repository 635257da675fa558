//! Eight writers under fault rules and throttling at once (issue 47): each
//! writer creates, upserts, replaces, deletes and batches its own items
//! over real HTTP while rules fail some requests before their operation
//! and some after it, and `--rate-limit` refuses what the second cannot
//! pay for. Afterwards the container holds exactly the writes acknowledged
//! with a 2xx plus those a rule answered after they ran, each at the
//! version last written so; nothing refused is stored.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::common::{Api, Reply, TestClient, COLL, DB};
use cosmos_emulator::protocol::auth::MasterKey;
use cosmos_emulator::{ClockMode, Config};
use reqwest::blocking::Client;
use serde_json::{json, Value};

const WRITERS: usize = 8;
/// Operations per writer: enough for every kind of answer to occur.
const OPERATIONS: usize = 40;
/// Items per writer: a small set, so that creates conflict and replaces
/// and deletes miss.
const IDS: usize = 5;

/// What a writer believes is stored: id → version.
type Model = BTreeMap<String, u64>;

/// How an answer came, counted across writers.
#[derive(Debug, Default)]
struct Tally {
    acknowledged: usize,
    after_fault: usize,
    before_fault: usize,
    throttled: usize,
    refused: usize,
}

/// Whether the operation answered by `reply` ran and was kept.
fn took_effect(reply: &Reply, tally: &mut Tally) -> bool {
    let message = reply.message().to_string();
    let injected = message.contains("Injected fault");
    match reply.status {
        200..=206 => {
            tally.acknowledged += 1;
            true
        }
        _ if injected && message.contains("the operation ran and its changes were kept") => {
            tally.after_fault += 1;
            true
        }
        _ if injected => {
            assert!(message.contains("was not run"), "{message}");
            tally.before_fault += 1;
            false
        }
        429 => {
            assert_eq!(reply.header("x-ms-substatus"), Some("3200"));
            tally.throttled += 1;
            // Wait as told, as an SDK does, so that the writers share the
            // seconds rather than spend them all refused.
            let wait: u64 = reply
                .header("x-ms-retry-after-ms")
                .unwrap()
                .parse()
                .unwrap();
            std::thread::sleep(Duration::from_millis(wait.min(1_000)));
            false
        }
        207 | 404 | 409 => {
            tally.refused += 1;
            false
        }
        other => panic!("unexpected {other}: {}", reply.body),
    }
}

/// A small deterministic sequence (xorshift), one per writer.
struct Draws(u64);

impl Draws {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }
}

fn run_writer(api: &Api, writer: usize, tally: &mut Tally) -> Model {
    let pk = format!("w{writer}");
    let header = json!([pk]).to_string();
    let pk_header = [("x-ms-documentdb-partitionkey", header.as_str())];
    let mut model = Model::new();
    let mut draws = Draws(0x9e37_79b9 ^ ((writer as u64 + 1) * 0x1234_5678));
    for step in 0..OPERATIONS {
        let version = (writer * OPERATIONS + step) as u64;
        let id = format!("{pk}.{}", draws.next(IDS as u64));
        let body = json!({"id": id, "pk": pk, "v": version, "blob": "x".repeat(500)});
        match draws.next(5) {
            0 => {
                let reply = api.post(&format!("{COLL}/docs"), &body, &pk_header);
                if took_effect(&reply, tally) {
                    model.insert(id, version);
                }
            }
            1 => {
                let reply = api.post(
                    &format!("{COLL}/docs"),
                    &body,
                    &[pk_header[0], ("x-ms-documentdb-is-upsert", "True")],
                );
                if took_effect(&reply, tally) {
                    model.insert(id, version);
                }
            }
            2 => {
                let reply = api.put(&format!("{COLL}/docs/{id}"), &body, &pk_header);
                if took_effect(&reply, tally) {
                    model.insert(id, version);
                }
            }
            3 => {
                let reply = api.delete(&format!("{COLL}/docs/{id}"), &pk_header);
                if took_effect(&reply, tally) {
                    model.remove(&id);
                }
            }
            _ => {
                // A transactional batch: an upsert of this id and of the next.
                let other = format!("{pk}.{}", (draws.next(IDS as u64)));
                let operations: Vec<Value> = [&id, &other]
                    .iter()
                    .map(|target| {
                        json!({"operationType": "Upsert",
                               "resourceBody": {"id": target, "pk": pk, "v": version}})
                    })
                    .collect();
                let reply = api.post(
                    &format!("{COLL}/docs"),
                    &Value::Array(operations),
                    &[
                        pk_header[0],
                        ("x-ms-cosmos-is-batch-request", "True"),
                        ("x-ms-cosmos-batch-atomic", "True"),
                    ],
                );
                if took_effect(&reply, tally) {
                    model.insert(id, version);
                    model.insert(other, version);
                }
            }
        }
    }
    model
}

#[test]
fn eight_writers_under_faults_and_throttling_store_exactly_what_took_effect() {
    let client = TestClient::start_config(Config {
        rate_limit: true,
        clock: ClockMode::System,
        ..Config::for_tests()
    });
    assert_eq!(client.post("/dbs", &json!({"id": DB}), &[]).status, 201);
    assert_eq!(client.create_container("c", None).status, 201);
    for rule in [
        json!({"match": {"operation": ["create", "upsert"]}, "respond": {"status": 503},
               "probability": 0.15}),
        json!({"match": {"operation": ["create", "upsert", "replace", "delete", "batch"]},
               "respond": {"status": 408}, "when": "after", "probability": 0.25}),
        json!({"match": {"operation": ["replace", "batch"]}, "respond": {"status": 429, "subStatus": 3200},
               "probability": 0.1}),
        json!({"match": {"operation": "delete"}, "respond": {"status": 500}, "when": "after",
               "probability": 0.2}),
    ] {
        let added = client.post("/_emulator/faults", &rule, &[]);
        assert_eq!(added.status, 201, "{}", added.body);
    }
    let key = MasterKey::from_base64(client.emulator.key()).unwrap();
    let http = Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let api = Api::new(client.endpoint().to_string(), key, http);
    let started = Instant::now();
    let results: Vec<(Model, Tally)> = std::thread::scope(|scope| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|writer| {
                let api = api.clone();
                scope.spawn(move || {
                    let mut tally = Tally::default();
                    let model = run_writer(&api, writer, &mut tally);
                    (model, tally)
                })
            })
            .collect();
        writers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "bounded: {:?}",
        started.elapsed()
    );
    let mut expected = Model::new();
    let mut total = Tally::default();
    for (model, tally) in results {
        expected.extend(model);
        total.acknowledged += tally.acknowledged;
        total.after_fault += tally.after_fault;
        total.before_fault += tally.before_fault;
        total.throttled += tally.throttled;
        total.refused += tally.refused;
    }
    // Every kind of answer occurred, so the comparison means something.
    assert!(total.acknowledged > 0, "{total:?}");
    assert!(total.after_fault > 0, "{total:?}");
    assert!(total.before_fault > 0, "{total:?}");
    assert!(total.throttled > 0, "{total:?}");
    assert!(total.refused > 0, "{total:?}");
    // A second later the budget has refilled for the read back.
    std::thread::sleep(Duration::from_millis(1_100));
    let stored: Model = client
        .query("SELECT c.id, c.v FROM c", json!([]))
        .iter()
        .map(|item| {
            (
                item["id"].as_str().unwrap().to_string(),
                item["v"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(stored, expected, "{total:?}");
    eprintln!("{} items stored; answers: {total:?}", stored.len());
}
