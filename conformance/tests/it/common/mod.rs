//! Helpers shared by the suite's own tests: the fixtures, a run with short
//! timeouts, and a fake target that stores items but has no TTL at all.
#![allow(dead_code)] // each test binary uses its own part

use cosmos_conformance::client::{Credentials, WELL_KNOWN_KEY};
use cosmos_conformance::clock::ClockChoice;
use cosmos_conformance::fixtures::{self, Case};
use cosmos_conformance::report::{CaseReport, Report, Status};
use cosmos_conformance::{default_fixtures_dir, RunConfig};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;
use wiremock::{Request, Respond, ResponseTemplate};

pub fn all_cases() -> Vec<Case> {
    fixtures::load_dir(&default_fixtures_dir().join("cases")).expect("the fixtures load")
}

pub fn cases(ids: &[&str]) -> Vec<Case> {
    let cases: Vec<Case> = all_cases()
        .into_iter()
        .filter(|c| ids.contains(&c.id.as_str()))
        .collect();
    assert_eq!(cases.len(), ids.len(), "every id names a case: {ids:?}");
    cases
}

pub fn config(endpoint: &str) -> RunConfig {
    RunConfig {
        credentials: Credentials {
            endpoint: endpoint.to_string(),
            key: WELL_KNOWN_KEY.to_string(),
        },
        insecure: false,
        clock: ClockChoice::Auto,
        time_scale: 0.01,
        request_timeout: Duration::from_secs(2),
        concurrency: 32,
        expectations: None,
        filter: None,
        purge_wait: std::time::Duration::from_secs(5),
        container_throughput: None,
    }
}

/// Runs with a hard limit, so that a hanging runner fails the test.
pub async fn run(config: &RunConfig, cases: &[Case], limit: Duration) -> Report {
    tokio::time::timeout(limit, cosmos_conformance::run(config, cases, |_| {}))
        .await
        .expect("the run finishes in time")
        .expect("the configuration is valid")
}

pub fn case<'a>(report: &'a Report, id: &str) -> &'a CaseReport {
    report
        .cases
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("{id} is in the report"))
}

/// Asserts a case's status and that its message contains `needle`.
pub fn assert_case(report: &Report, id: &str, status: Status, needle: &str) {
    let case = case(report, id);
    assert_eq!(case.status, status, "{id}: {case:#?}");
    let message = case.message.as_deref().unwrap_or("");
    assert!(
        message.contains(needle),
        "{id}: the message should contain {needle:?}, got {message:?}"
    );
}

/// A fake Cosmos DB endpoint with a test clock that stores databases,
/// containers and items faithfully but implements no TTL and validates
/// nothing: every item lives forever and every value is accepted.
#[derive(Default)]
pub struct NoTtl {
    /// Containers and items by their path.
    pub resources: Mutex<BTreeMap<String, Map<String, Value>>>,
    /// Whether `/_emulator/clock` answers.
    pub without_clock: bool,
}

fn error(status: u16, code: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(json!({ "code": code, "message": "fake" }))
}

impl Respond for NoTtl {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let path = request.url.path().to_string();
        let method = request.method.as_str();
        let body: Map<String, Value> = request.body_json().unwrap_or_default();
        let mut resources = self.resources.lock().unwrap();
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        if path == "/_emulator/clock" {
            return if self.without_clock {
                error(404, "NotFound")
            } else {
                ResponseTemplate::new(200).set_body_json(json!({ "now": 1_700_000_000 }))
            };
        }
        match (method, segments.as_slice()) {
            ("POST", ["dbs"]) => ResponseTemplate::new(201).set_body_json(&body),
            ("DELETE", ["dbs", _]) => ResponseTemplate::new(204),
            ("POST", ["dbs", _, "colls"]) => {
                let key = format!("{path}/{}", body["id"].as_str().unwrap_or_default());
                resources.insert(key, body.clone());
                ResponseTemplate::new(201).set_body_json(&body)
            }
            ("GET" | "PUT", ["dbs", _, "colls", _]) => match resources.get_mut(&path) {
                None => error(404, "NotFound"),
                Some(stored) => {
                    if method == "PUT" {
                        *stored = body;
                    }
                    ResponseTemplate::new(200).set_body_json(&*stored)
                }
            },
            ("POST", ["dbs", _, "colls", _, "docs"]) => {
                let prefix = format!("{path}/");
                if request.headers.contains_key("x-ms-documentdb-isquery") {
                    let rows: Vec<Value> = resources
                        .iter()
                        .filter(|(key, _)| key.starts_with(&prefix))
                        .map(|(_, item)| Value::Object(item.clone()))
                        .collect();
                    let query: Value = request.body_json().unwrap_or_default();
                    let rows = if query["query"].as_str().unwrap_or("").contains("COUNT") {
                        vec![json!(rows.len())]
                    } else {
                        rows
                    };
                    return ResponseTemplate::new(200)
                        .set_body_json(json!({ "Documents": rows, "_count": rows.len() }));
                }
                let key = format!("{prefix}{}", body["id"].as_str().unwrap_or_default());
                let upsert = request.headers.contains_key("x-ms-documentdb-is-upsert");
                let existed = resources.contains_key(&key);
                if existed && !upsert {
                    return error(409, "Conflict");
                }
                resources.insert(key, body.clone());
                ResponseTemplate::new(if existed { 200 } else { 201 }).set_body_json(&body)
            }
            (_, ["dbs", _, "colls", _, "docs", _]) => {
                let Some(stored) = resources.get_mut(&path) else {
                    return error(404, "NotFound");
                };
                match method {
                    "GET" => ResponseTemplate::new(200).set_body_json(&*stored),
                    "PUT" => {
                        *stored = body;
                        ResponseTemplate::new(200).set_body_json(&*stored)
                    }
                    "PATCH" => {
                        for op in body["operations"].as_array().into_iter().flatten() {
                            let field = op["path"].as_str().unwrap_or("/").trim_start_matches('/');
                            match op["op"].as_str() {
                                Some("remove") => {
                                    stored.remove(field);
                                }
                                _ => {
                                    stored.insert(field.to_string(), op["value"].clone());
                                }
                            }
                        }
                        ResponseTemplate::new(200).set_body_json(&*stored)
                    }
                    "DELETE" => {
                        resources.remove(&path);
                        ResponseTemplate::new(204)
                    }
                    _ => error(405, "MethodNotAllowed"),
                }
            }
            _ => error(404, "NotFound"),
        }
    }
}
