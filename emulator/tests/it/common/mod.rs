//! A signed HTTP client ([`Api`]) and an in-process emulator on a free port
//! with the manual clock ([`TestClient`]), for the integration tests.
#![allow(dead_code)]

use cosmos_emulator::protocol::auth::{authorization_header, payload, signed_resource, MasterKey};
use cosmos_emulator::{ClockMode, Config, Emulator};
use reqwest::blocking::Client;
use reqwest::header::HeaderMap;
use reqwest::Method;
use serde_json::{json, Value};

/// Where the manual clock starts in every test.
pub const START: i64 = 1_700_000_000;

/// A directory of its own under the system's temporary one, for a data
/// directory that a test restarts the emulator over.
#[allow(dead_code)] // Not every test binary restarts an emulator.
pub fn scratch_dir(name: &str) -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    std::env::temp_dir().join(format!("cosmos-{name}-{}-{nanos}", std::process::id()))
}
pub const DB: &str = "db";
pub const COLL: &str = "/dbs/db/colls/c";

/// Whether the emulator deletes expired items in the background. With `Off`
/// nothing is ever deleted by time, so a test sees the read paths alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purge {
    Background,
    Off,
}

pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The `statusCode` of each operation's result in a batch or bulk answer.
    pub fn statuses(&self) -> Vec<u64> {
        self.body
            .as_array()
            .unwrap_or_else(|| panic!("an array of results: {}", self.body))
            .iter()
            .map(|r| r["statusCode"].as_u64().expect("a statusCode"))
            .collect()
    }

    /// The ids of a feed or query page's `Documents`.
    pub fn document_ids(&self) -> Vec<String> {
        self.body["Documents"]
            .as_array()
            .expect("a page of documents")
            .iter()
            .map(|d| d["id"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }

    pub fn message(&self) -> &str {
        self.body["message"].as_str().unwrap_or("")
    }

    /// Asserts a Cosmos error: status, code, and a message that is not empty.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "{}", self.body);
        assert_eq!(self.code(), code, "{}", self.body);
        assert!(
            !self.message().is_empty(),
            "an error needs a message: {}",
            self.body
        );
        assert!(self.header("x-ms-activity-id").is_some());
    }
}

pub struct TestClient {
    pub emulator: Emulator,
    api: Api,
}

impl std::ops::Deref for TestClient {
    type Target = Api;
    fn deref(&self) -> &Api {
        &self.api
    }
}

impl TestClient {
    pub fn start() -> Self {
        Self::start_with(ClockMode::Manual { start: Some(START) }, Purge::Background)
    }

    pub fn start_with(clock: ClockMode, purge: Purge) -> Self {
        Self::start_config(Config {
            clock,
            background_purge: purge == Purge::Background,
            ..Config::for_tests()
        })
    }

    /// Starts with `config`; over HTTPS the client trusts the certificate
    /// the emulator wrote to `config.cert_out`, and nothing else.
    pub fn start_config(config: Config) -> Self {
        let cert_out = config.cert_out.clone();
        let emulator = Emulator::start(config).expect("emulator starts");
        let key = MasterKey::from_base64(emulator.key()).unwrap();
        let http = match cert_out {
            Some(path) => {
                let pem = std::fs::read(path).expect("--cert-out was written");
                Client::builder()
                    .tls_certs_only([reqwest::Certificate::from_pem(&pem).unwrap()])
                    .build()
                    .unwrap()
            }
            None => Client::new(),
        };
        let api = Api::new(emulator.endpoint().to_string(), key, http);
        TestClient { emulator, api }
    }

    /// A client with a database `db` and a container `c` partitioned on `/pk`
    /// with the given `defaultTtl` (None: property absent).
    pub fn with_container(default_ttl: Option<Value>) -> Self {
        Self::with_container_and(default_ttl, Purge::Background)
    }

    pub fn with_container_and(default_ttl: Option<Value>, purge: Purge) -> Self {
        let client = Self::start_with(ClockMode::Manual { start: Some(START) }, purge);
        assert_eq!(client.post("/dbs", &json!({"id": DB}), &[]).status, 201);
        let reply = client.create_container("c", default_ttl);
        assert_eq!(reply.status, 201, "{}", reply.body);
        client
    }
}

/// A signed client of one emulator: in process (through [`TestClient`]) or
/// a child process (the persistence tests).
#[derive(Clone)]
pub struct Api {
    http: Client,
    key: MasterKey,
    endpoint: String,
}

impl Api {
    pub fn new(endpoint: String, key: MasterKey, http: Client) -> Self {
        Api {
            http,
            key,
            endpoint,
        }
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    pub fn create_container(&self, id: &str, default_ttl: Option<Value>) -> Reply {
        let mut body = json!({"id": id, "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
        if let Some(ttl) = default_ttl {
            body["defaultTtl"] = ttl;
        }
        self.post("/dbs/db/colls", &body, &[])
    }

    /// Sends a request signed as the SDKs sign it, with the given key.
    pub fn send_signed_with(
        &self,
        key: &MasterKey,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
    ) -> Reply {
        self.try_send_signed_with(key, method, path, headers, body)
            .expect("request reaches the emulator")
    }

    /// As [`Self::send_signed_with`]; `Err` when no answer comes (the
    /// process is gone).
    pub fn try_send_signed_with(
        &self,
        key: &MasterKey,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
    ) -> Result<Reply, reqwest::Error> {
        let date = httpdate::fmt_http_date(std::time::SystemTime::now());
        let resource = signed_resource(path);
        let auth = authorization_header(
            key,
            &payload(
                method.as_str(),
                &resource.resource_type,
                &resource.links[0],
                &date,
                "",
            ),
        );
        let mut request = self
            .http
            .request(method, format!("{}{}", self.endpoint, path))
            .header("x-ms-date", &date)
            .header("x-ms-version", "2020-07-15")
            .header("authorization", auth);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = request.send()?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response.bytes()?;
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            // Items may nest 128 levels, one more than serde_json's default guard.
            let mut deserializer = serde_json::Deserializer::from_slice(&bytes);
            deserializer.disable_recursion_limit();
            serde::Deserialize::deserialize(&mut deserializer).unwrap_or_else(|e| {
                panic!(
                    "response is not JSON ({e}): {}",
                    String::from_utf8_lossy(&bytes)
                )
            })
        };
        Ok(Reply {
            status,
            headers,
            body,
        })
    }

    /// Sends a request with `authorization` as given (a resource token),
    /// percent-encoded as the SDKs send it.
    pub fn send_with_authorization(
        &self,
        authorization: &str,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Reply {
        let date = httpdate::fmt_http_date(std::time::SystemTime::now());
        let encoded = percent_encoding::utf8_percent_encode(
            authorization,
            percent_encoding::NON_ALPHANUMERIC,
        )
        .to_string();
        let mut request = self
            .http
            .request(method, format!("{}{}", self.endpoint, path))
            .header("x-ms-date", &date)
            .header("x-ms-version", "2020-07-15")
            .header("authorization", encoded);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.body(body.to_string());
        }
        let response = request.send().expect("request reaches the emulator");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response.bytes().unwrap();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                panic!(
                    "response is not JSON ({e}): {}",
                    String::from_utf8_lossy(&bytes)
                )
            })
        };
        Reply {
            status,
            headers,
            body,
        }
    }

    pub fn send(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Reply {
        self.send_signed_with(
            &self.key,
            method,
            path,
            headers,
            body.map(|b| b.to_string().into_bytes()),
        )
    }

    /// As [`Self::send`]; `Err` when no answer comes.
    pub fn try_send(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Result<Reply, reqwest::Error> {
        self.try_send_signed_with(
            &self.key,
            method,
            path,
            headers,
            body.map(|b| b.to_string().into_bytes()),
        )
    }

    pub fn get(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        self.send(Method::GET, path, headers, None)
    }

    pub fn post(&self, path: &str, body: &Value, headers: &[(&str, &str)]) -> Reply {
        self.send(Method::POST, path, headers, Some(body))
    }

    pub fn put(&self, path: &str, body: &Value, headers: &[(&str, &str)]) -> Reply {
        self.send(Method::PUT, path, headers, Some(body))
    }

    pub fn delete(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        self.send(Method::DELETE, path, headers, None)
    }

    // ---- items in the default container ----------------------------------

    fn pk_header(item: &Value) -> String {
        json!([item["pk"]]).to_string()
    }

    /// A transactional batch in the partition `pk` of the default
    /// container, as the Python SDK sends it.
    pub fn batch(&self, pk: &str, operations: &Value) -> Reply {
        let header = json!([pk]).to_string();
        self.post(
            &format!("{COLL}/docs"),
            operations,
            &[
                ("x-ms-cosmos-is-batch-request", "True"),
                ("x-ms-cosmos-batch-atomic", "True"),
                ("x-ms-cosmos-batch-continue-on-error", "False"),
                ("x-ms-documentdb-partitionkey", &header),
            ],
        )
    }

    pub fn create_item(&self, item: &Value) -> Reply {
        self.post(
            &format!("{COLL}/docs"),
            item,
            &[("x-ms-documentdb-partitionkey", &Self::pk_header(item))],
        )
    }

    pub fn upsert_item(&self, item: &Value) -> Reply {
        self.post(
            &format!("{COLL}/docs"),
            item,
            &[
                ("x-ms-documentdb-partitionkey", &Self::pk_header(item)),
                ("x-ms-documentdb-is-upsert", "True"),
            ],
        )
    }

    pub fn replace_item(&self, item: &Value) -> Reply {
        let id = item["id"].as_str().unwrap();
        self.put(
            &format!("{COLL}/docs/{id}"),
            item,
            &[("x-ms-documentdb-partitionkey", &Self::pk_header(item))],
        )
    }

    pub fn patch_item(&self, id: &str, pk: &str, operations: Value) -> Reply {
        let header = json!([pk]).to_string();
        self.send(
            Method::PATCH,
            &format!("{COLL}/docs/{id}"),
            &[
                ("x-ms-documentdb-partitionkey", &header),
                ("content-type", "application/json-patch+json"),
            ],
            Some(&json!({ "operations": operations })),
        )
    }

    pub fn read_item(&self, id: &str, pk: &str) -> Reply {
        let header = json!([pk]).to_string();
        self.get(
            &format!("{COLL}/docs/{id}"),
            &[("x-ms-documentdb-partitionkey", &header)],
        )
    }

    pub fn delete_item(&self, id: &str, pk: &str) -> Reply {
        let header = json!([pk]).to_string();
        self.delete(
            &format!("{COLL}/docs/{id}"),
            &[("x-ms-documentdb-partitionkey", &header)],
        )
    }

    /// One page of `query` sent across partitions without naming a range
    /// (as the gateway serves it), at most `max_items` results, from
    /// `continuation`.
    pub fn query_page_across(
        &self,
        query: &str,
        max_items: &str,
        continuation: Option<&str>,
    ) -> Reply {
        let mut headers = vec![
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-query-enablecrosspartition", "True"),
            ("x-ms-max-item-count", max_items),
        ];
        if let Some(token) = continuation {
            headers.push(("x-ms-continuation", token));
        }
        self.post(
            &format!("{COLL}/docs"),
            &json!({ "query": query }),
            &headers,
        )
    }

    /// Runs a query over every partition, following continuations; returns
    /// all results. It addresses the container's one range, `0`, as an SDK
    /// does after the plan: without it the gateway serves only queries
    /// that need no merging across ranges.
    pub fn query(&self, query: &str, parameters: Value) -> Vec<Value> {
        let mut results = Vec::new();
        let mut continuation: Option<String> = None;
        loop {
            let mut headers = vec![
                ("x-ms-documentdb-isquery", "True"),
                ("content-type", "application/query+json"),
                ("x-ms-documentdb-query-enablecrosspartition", "True"),
                ("x-ms-documentdb-partitionkeyrangeid", "0"),
            ];
            if let Some(token) = &continuation {
                headers.push(("x-ms-continuation", token));
            }
            let reply = self.post(
                &format!("{COLL}/docs"),
                &json!({"query": query, "parameters": parameters}),
                &headers,
            );
            assert_eq!(reply.status, 200, "{}", reply.body);
            results.extend(reply.body["Documents"].as_array().unwrap().iter().cloned());
            match reply.header("x-ms-continuation") {
                Some(token) => continuation = Some(token.to_string()),
                None => return results,
            }
        }
    }

    pub fn count(&self) -> i64 {
        self.query("SELECT VALUE COUNT(1) FROM c", json!([]))[0]
            .as_i64()
            .unwrap()
    }

    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .query("SELECT * FROM c", json!([]))
            .iter()
            .map(|d| d["id"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    }

    pub fn set_default_ttl(&self, default_ttl: Option<Value>) -> Reply {
        let mut body = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
        if let Some(ttl) = default_ttl {
            body["defaultTtl"] = ttl;
        }
        self.put(COLL, &body, &[])
    }

    // ---- the test clock --------------------------------------------------

    pub fn now(&self) -> i64 {
        self.get("/_emulator/clock", &[]).body["now"]
            .as_i64()
            .unwrap()
    }

    /// Moves the clock forward and returns the new time.
    pub fn advance(&self, seconds: i64) -> i64 {
        let reply = self.post("/_emulator/clock", &json!({"advance": seconds}), &[]);
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.body["now"].as_i64().unwrap()
    }

    /// Moves the clock to `START + seconds`.
    pub fn at(&self, seconds: i64) {
        let reply = self.post("/_emulator/clock", &json!({"set": START + seconds}), &[]);
        assert_eq!(reply.status, 200, "{}", reply.body);
    }

    pub fn is_visible(&self, id: &str, pk: &str) -> bool {
        match self.read_item(id, pk).status {
            200 => true,
            404 => false,
            other => panic!("unexpected status {other} reading {id}"),
        }
    }
}
