//! The signed Cosmos DB requests the bench sends (docs/src/reference/protocol.md): path,
//! resource type and link, the standard headers, and a fresh master-key
//! signature on every request, as an SDK does.

use std::time::SystemTime;

use bytes::Bytes;
use cosmos_emulator::protocol::auth::{self, MasterKey};
use http_body_util::Full;
use hyper::{Method, Request};

/// Request bodies: whole, in memory.
pub type Body = Full<Bytes>;

const API_VERSION: &str = "2020-07-15";

/// Builds signed requests for one endpoint.
#[derive(Clone)]
pub struct Signer {
    key: MasterKey,
    /// The `host` header: `HOST:PORT`.
    authority: String,
}

impl Signer {
    pub fn new(key: &str, authority: &str) -> Result<Signer, String> {
        Ok(Signer {
            key: MasterKey::from_base64(key)?,
            authority: authority.to_string(),
        })
    }

    /// A request with the standard headers and its signature.
    fn signed(
        &self,
        method: Method,
        path: &str,
        resource_type: &str,
        link: &str,
        headers: &[(&str, &str)],
        body: Bytes,
    ) -> Request<Body> {
        let date = httpdate::fmt_http_date(SystemTime::now());
        let payload = auth::payload(method.as_str(), resource_type, link, &date, "");
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header("host", &self.authority)
            .header(
                "authorization",
                auth::authorization_header(&self.key, &payload),
            )
            .header("x-ms-date", date)
            .header("x-ms-version", API_VERSION)
            .header("accept", "application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request
            .body(Full::new(body))
            .expect("the bench builds valid requests")
    }

    /// `GET /`: the account, what every SDK reads first.
    pub fn read_account(&self) -> Request<Body> {
        self.signed(Method::GET, "/", "", "", &[], Bytes::new())
    }

    pub fn create_database(&self, db: &str) -> Request<Body> {
        let body = serde_json::json!({ "id": db }).to_string();
        self.signed(
            Method::POST,
            "/dbs",
            "dbs",
            "",
            &[("content-type", "application/json")],
            body.into(),
        )
    }

    /// A container partitioned on `/pk`, with TTL on (`defaultTtl: -1`)
    /// when `ttl_on`, so that items' own `ttl` apply.
    pub fn create_container(&self, db: &str, coll: &str, ttl_on: bool) -> Request<Body> {
        self.create_container_with(db, coll, ttl_on, None)
    }

    /// As [`Signer::create_container`], with `x-ms-offer-throughput` RU/s
    /// when given (the service gives one partition key range up to 10,000 RU/s,
    /// then one per 6,000).
    pub fn create_container_with(
        &self,
        db: &str,
        coll: &str,
        ttl_on: bool,
        throughput: Option<u32>,
    ) -> Request<Body> {
        let mut body = serde_json::json!({
            "id": coll,
            "partitionKey": { "paths": ["/pk"], "kind": "Hash" },
        });
        if ttl_on {
            body["defaultTtl"] = (-1).into();
        }
        let throughput = throughput.map(|t| t.to_string());
        let mut headers = vec![("content-type", "application/json")];
        if let Some(throughput) = &throughput {
            headers.push(("x-ms-offer-throughput", throughput));
        }
        self.signed(
            Method::POST,
            &format!("/dbs/{db}/colls"),
            "colls",
            &format!("dbs/{db}"),
            &headers,
            body.to_string().into(),
        )
    }

    /// Creates a container from its whole JSON resource (policies and all).
    pub fn create_container_from(&self, db: &str, body: &serde_json::Value) -> Request<Body> {
        self.signed(
            Method::POST,
            &format!("/dbs/{db}/colls"),
            "colls",
            &format!("dbs/{db}"),
            &[("content-type", "application/json")],
            body.to_string().into(),
        )
    }

    /// `GET /dbs/{db}/colls/{coll}`: the container (its `_rid`).
    pub fn read_container(&self, db: &str, coll: &str) -> Request<Body> {
        let link = format!("dbs/{db}/colls/{coll}");
        self.signed(
            Method::GET,
            &format!("/{link}"),
            "colls",
            &link,
            &[],
            Bytes::new(),
        )
    }

    /// A page of `GET .../pkranges`: the container's partition key ranges.
    pub fn partition_key_ranges(
        &self,
        db: &str,
        coll: &str,
        continuation: Option<&str>,
    ) -> Request<Body> {
        let link = format!("dbs/{db}/colls/{coll}");
        let mut headers = Vec::new();
        if let Some(token) = continuation {
            headers.push(("x-ms-continuation", token));
        }
        self.signed(
            Method::GET,
            &format!("/{link}/pkranges"),
            "pkranges",
            &link,
            &headers,
            Bytes::new(),
        )
    }

    /// The query plan of a cross-partition query, as the SDKs ask for it:
    /// `features` is what the asking client can merge
    /// (`x-ms-cosmos-supported-query-features`).
    pub fn query_plan(&self, db: &str, coll: &str, body: Bytes, features: &str) -> Request<Body> {
        let link = format!("dbs/{db}/colls/{coll}");
        self.signed(
            Method::POST,
            &format!("/{link}/docs"),
            "docs",
            &link,
            &[
                ("content-type", "application/query+json"),
                ("x-ms-documentdb-isquery", "True"),
                ("x-ms-documentdb-query-enablecrosspartition", "True"),
                ("x-ms-cosmos-is-query-plan-request", "True"),
                ("x-ms-cosmos-supported-query-features", features),
                ("x-ms-cosmos-query-version", "1.0"),
            ],
            body,
        )
    }

    /// One page of a query sent to one partition key range, as the SDKs
    /// send the plan's rewritten query to each range.
    pub fn query_range(
        &self,
        db: &str,
        coll: &str,
        body: Bytes,
        range_id: &str,
        max_item_count: &str,
        continuation: Option<&str>,
    ) -> Request<Body> {
        let scope = [
            ("x-ms-documentdb-query-enablecrosspartition", "True"),
            ("x-ms-documentdb-partitionkeyrangeid", range_id),
            ("x-ms-max-item-count", max_item_count),
        ];
        self.query_in(db, coll, &scope, body, continuation)
    }

    /// A page of the latest-version change feed, from the beginning or
    /// after `etag`.
    pub fn change_feed(
        &self,
        db: &str,
        coll: &str,
        etag: Option<&str>,
        page: &str,
    ) -> Request<Body> {
        let link = format!("dbs/{db}/colls/{coll}");
        let mut headers = vec![
            ("a-im", "Incremental Feed"),
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
            ("x-ms-max-item-count", page),
        ];
        if let Some(etag) = etag {
            headers.push(("if-none-match", etag));
        }
        self.signed(
            Method::GET,
            &format!("/{link}/docs"),
            "docs",
            &link,
            &headers,
            Bytes::new(),
        )
    }

    pub fn read_item(&self, db: &str, coll: &str, id: &str, pk_header: &str) -> Request<Body> {
        let link = format!("dbs/{db}/colls/{coll}/docs/{id}");
        self.signed(
            Method::GET,
            &format!("/{link}"),
            "docs",
            &link,
            &[("x-ms-documentdb-partitionkey", pk_header)],
            Bytes::new(),
        )
    }

    /// Create (`upsert: false`) or upsert an item.
    pub fn write_item(
        &self,
        db: &str,
        coll: &str,
        pk_header: &str,
        document: Bytes,
        upsert: bool,
    ) -> Request<Body> {
        let link = format!("dbs/{db}/colls/{coll}");
        let mut headers = vec![
            ("content-type", "application/json"),
            ("x-ms-documentdb-partitionkey", pk_header),
        ];
        if upsert {
            headers.push(("x-ms-documentdb-is-upsert", "True"));
        }
        self.signed(
            Method::POST,
            &format!("/{link}/docs"),
            "docs",
            &link,
            &headers,
            document,
        )
    }

    /// A transactional batch in the partition `pk_header` (`Some`), or a
    /// bulk request (`None`: each operation names its own partition, sent
    /// as the JavaScript SDK's bulk does); `body` is the JSON array of
    /// operations.
    pub fn batch(
        &self,
        db: &str,
        coll: &str,
        pk_header: Option<&str>,
        body: Bytes,
    ) -> Request<Body> {
        let link = format!("dbs/{db}/colls/{coll}");
        let mut headers = vec![
            ("content-type", "application/json"),
            ("x-ms-cosmos-is-batch-request", "True"),
        ];
        match pk_header {
            Some(pk) => headers.extend([
                ("x-ms-cosmos-batch-atomic", "True"),
                ("x-ms-documentdb-partitionkey", pk),
            ]),
            None => headers.extend([
                ("x-ms-cosmos-batch-atomic", "False"),
                ("x-ms-cosmos-batch-continue-on-error", "True"),
                ("x-ms-documentdb-partitionkeyrangeid", "0"),
            ]),
        }
        self.signed(
            Method::POST,
            &format!("/{link}/docs"),
            "docs",
            &link,
            &headers,
            body,
        )
    }

    /// One page of a cross-partition query; `body` is `{"query", "parameters"}`.
    pub fn query(
        &self,
        db: &str,
        coll: &str,
        body: Bytes,
        continuation: Option<&str>,
    ) -> Request<Body> {
        let scope = [
            ("x-ms-documentdb-query-enablecrosspartition", "True"),
            // The one range of a local emulator's container, as an SDK
            // addresses each range after the plan: without it the gateway
            // refuses (400/1004) what needs merging across ranges, such as
            // COUNT, TOP, DISTINCT and GROUP BY.
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
        ];
        self.query_in(db, coll, &scope, body, continuation)
    }

    /// One page of a query with the headers that scope it (`scope`).
    fn query_in(
        &self,
        db: &str,
        coll: &str,
        scope: &[(&'static str, &str)],
        body: Bytes,
        continuation: Option<&str>,
    ) -> Request<Body> {
        let link = format!("dbs/{db}/colls/{coll}");
        let mut headers = vec![
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-isquery", "True"),
        ];
        headers.extend_from_slice(scope);
        if let Some(token) = continuation {
            headers.push(("x-ms-continuation", token));
        }
        self.signed(
            Method::POST,
            &format!("/{link}/docs"),
            "docs",
            &link,
            &headers,
            body,
        )
    }

    /// Creates a stored procedure (`kind` `sprocs`) or a user-defined
    /// function (`udfs`) in a container: `{"id", "body"}`.
    pub fn create_script(
        &self,
        db: &str,
        coll: &str,
        kind: &str,
        id: &str,
        source: &str,
    ) -> Request<Body> {
        let link = format!("dbs/{db}/colls/{coll}");
        let body = serde_json::json!({ "id": id, "body": source }).to_string();
        self.signed(
            Method::POST,
            &format!("/{link}/{kind}"),
            kind,
            &link,
            &[("content-type", "application/json")],
            body.into(),
        )
    }

    /// Executes stored procedure `id` in partition `pk_header` with
    /// `arguments` (a JSON array).
    pub fn execute_sproc(
        &self,
        db: &str,
        coll: &str,
        id: &str,
        pk_header: &str,
        arguments: Bytes,
    ) -> Request<Body> {
        let link = format!("dbs/{db}/colls/{coll}/sprocs/{id}");
        self.signed(
            Method::POST,
            &format!("/{link}"),
            "sprocs",
            &link,
            &[
                ("content-type", "application/json"),
                ("x-ms-documentdb-partitionkey", pk_header),
            ],
            arguments,
        )
    }

    /// One page of a query in the logical partition `pk_header`, as many
    /// results a page as fit (`x-ms-max-item-count: -1`).
    pub fn query_partition(
        &self,
        db: &str,
        coll: &str,
        pk_header: &str,
        body: Bytes,
        continuation: Option<&str>,
    ) -> Request<Body> {
        let scope = [
            ("x-ms-documentdb-partitionkey", pk_header),
            ("x-ms-max-item-count", "-1"),
        ];
        self.query_in(db, coll, &scope, body, continuation)
    }

    /// `POST /_emulator/clock {"advance": seconds}`: the test clock.
    pub fn advance_clock(&self, seconds: i64) -> Request<Body> {
        let body = serde_json::json!({ "advance": seconds }).to_string();
        self.signed(
            Method::POST,
            "/_emulator/clock",
            "",
            "",
            &[("content-type", "application/json")],
            body.into(),
        )
    }
}

impl Signer {
    /// `POST /_emulator/purge`: returns once everything due is purged (and
    /// change log entries past their retention are dropped).
    pub fn purge(&self) -> Request<Body> {
        self.signed(Method::POST, "/_emulator/purge", "", "", &[], Bytes::new())
    }

    /// `POST /_emulator/compact`: a snapshot of the state now and a new
    /// log (with `--data-dir`).
    pub fn compact(&self) -> Request<Body> {
        self.signed(
            Method::POST,
            "/_emulator/compact",
            "",
            "",
            &[],
            Bytes::new(),
        )
    }

    /// `POST /_emulator/reset`: every database dropped.
    pub fn reset(&self) -> Request<Body> {
        self.signed(Method::POST, "/_emulator/reset", "", "", &[], Bytes::new())
    }

    /// `PUT /_emulator/snapshots/{name}`: a copy of the whole account.
    pub fn snapshot(&self, name: &str) -> Request<Body> {
        let path = format!("/_emulator/snapshots/{name}");
        self.signed(Method::PUT, &path, "", "", &[], Bytes::new())
    }

    /// `POST /_emulator/snapshots/{name}/restore`.
    pub fn restore(&self, name: &str) -> Request<Body> {
        let path = format!("/_emulator/snapshots/{name}/restore");
        self.signed(Method::POST, &path, "", "", &[], Bytes::new())
    }

    /// `GET /_emulator/stats`: stored and live items per container.
    pub fn stats(&self) -> Request<Body> {
        self.signed(Method::GET, "/_emulator/stats", "", "", &[], Bytes::new())
    }
}

/// A query body with one parameter `@v`.
pub fn query_body(query: &str, value: serde_json::Value) -> Bytes {
    serde_json::json!({
        "query": query,
        "parameters": [{ "name": "@v", "value": value }],
    })
    .to_string()
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DATE_FREE_KEY: &str = cosmos_emulator::WELL_KNOWN_KEY;

    /// The signature must be what the emulator's own verifier accepts.
    #[test]
    fn requests_carry_a_signature_the_emulator_accepts() {
        let signer = Signer::new(DATE_FREE_KEY, "127.0.0.1:1").unwrap();
        let key = MasterKey::from_base64(DATE_FREE_KEY).unwrap();
        for request in [
            signer.read_account(),
            signer.create_database("db"),
            signer.create_container("db", "c", true),
            signer.read_container("db", "c"),
            signer.read_item("db", "c", "item-1", "[\"p01\"]"),
            signer.write_item("db", "c", "[\"p01\"]", Bytes::from_static(b"{}"), true),
            signer.query("db", "c", query_body("SELECT * FROM c", 1.into()), None),
            signer.advance_clock(61),
            signer.create_script("db", "c", "sprocs", "s", "function () {}"),
            signer.create_script(
                "db",
                "c",
                "udfs",
                "double",
                "function (x) { return x * 2; }",
            ),
            signer.execute_sproc("db", "c", "s", "[\"p01\"]", Bytes::from_static(b"[]")),
            signer.query_partition(
                "db",
                "c",
                "[\"p00\"]",
                query_body("SELECT 1", 1.into()),
                None,
            ),
        ] {
            let header = |name: &str| {
                request
                    .headers()
                    .get(name)
                    .map(|v| v.to_str().unwrap().to_string())
            };
            let authorization = header("authorization");
            let date = header("x-ms-date");
            let verified = auth::verify(
                &key,
                &auth::SignedRequest {
                    verb: request.method().as_str(),
                    path: request.uri().path(),
                    authorization: authorization.as_deref(),
                    x_ms_date: date.as_deref(),
                    date: None,
                },
                std::time::SystemTime::now(),
            );
            assert!(verified.is_ok(), "{} {}", request.method(), request.uri());
        }
    }
}
