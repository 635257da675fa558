//! Signed HTTP to a Cosmos DB endpoint: master-key authorization, the
//! standard headers, request paths, and responses reduced to what the suite
//! observes (and to one line for messages). This is the only module that
//! talks to the target.

use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use reqwest::Method;
use serde_json::{json, Value};
use sha2::Sha256;
use std::fmt;
use std::time::{Duration, SystemTime};

/// The key of Microsoft's emulator, published in its documentation.
pub const WELL_KNOWN_KEY: &str =
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

const API_VERSION: &str = "2020-07-15";

/// Characters escaped in the authorization header (everything but
/// alphanumerics and the few marks the SDKs leave alone).
const HEADER_ESCAPE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');
/// Characters escaped in one path segment (ids).
const SEGMENT_ESCAPE: &AsciiSet = HEADER_ESCAPE;

/// Where to connect and how to sign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    pub endpoint: String,
    pub key: String,
}

impl Credentials {
    /// Parses an Azure connection string `AccountEndpoint=...;AccountKey=...;`.
    pub fn from_connection_string(text: &str) -> Result<Credentials, String> {
        let mut endpoint = None;
        let mut key = None;
        for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = part
                .split_once('=')
                .ok_or_else(|| format!("connection string part {part:?} is not NAME=VALUE"))?;
            match name.to_ascii_lowercase().as_str() {
                "accountendpoint" => endpoint = Some(value.to_string()),
                // The key is base64 and may end in '=': keep everything after the first '='.
                "accountkey" => key = Some(value.to_string()),
                _ => {}
            }
        }
        Ok(Credentials {
            endpoint: endpoint.ok_or("connection string has no AccountEndpoint")?,
            key: key.ok_or("connection string has no AccountKey")?,
        })
    }
}

/// The master-key authorization header value for one request.
pub fn authorization(
    key: &[u8],
    verb: &str,
    resource_type: &str,
    resource_link: &str,
    date: &str,
) -> String {
    let payload = format!(
        "{}\n{}\n{}\n{}\n\n",
        verb.to_lowercase(),
        resource_type.to_lowercase(),
        resource_link,
        date.to_lowercase()
    );
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(payload.as_bytes());
    let signature = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    utf8_percent_encode(
        &format!("type=master&ver=1.0&sig={signature}"),
        HEADER_ESCAPE,
    )
    .to_string()
}

/// Escapes one path segment (a database, container or item id).
pub fn segment(id: &str) -> String {
    utf8_percent_encode(id, SEGMENT_ESCAPE).to_string()
}

/// A resource link as a request path, each segment escaped.
pub fn path(link: &str) -> String {
    link.split('/').map(segment).collect::<Vec<_>>().join("/")
}

/// The `x-ms-documentdb-partitionkey` header's value for a string key.
pub fn partition_key_header(value: &str) -> String {
    json!([value]).to_string()
}

/// What a request came back with.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Response {
    pub status: u16,
    pub body: String,
    pub continuation: Option<String>,
    /// The `etag` header: the change feed's continuation.
    pub etag: Option<String>,
    /// `x-ms-request-charge`, the request units the request cost, when the
    /// target sent a number.
    pub charge: Option<f64>,
    /// `x-ms-substatus`, as sent.
    pub substatus: Option<String>,
    /// `x-ms-retry-after-ms`, as sent (a throttled request's wait).
    pub retry_after_ms: Option<String>,
}

impl Response {
    /// The body as JSON, or `None` when it is not JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_str(&self.body).ok()
    }

    /// The error's `code` and `message` when the body has Cosmos DB's error shape.
    pub fn error(&self) -> Option<(String, String)> {
        let body = self.json()?;
        let code = body.get("code")?.as_str()?.to_string();
        let message = body
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        Some((code, message))
    }
}

/// A response for messages: its status with the error's code and message,
/// or with the start of its body.
pub fn describe(response: &Response) -> String {
    match response.error() {
        Some((code, message)) => format!("{} {code}: {message}", response.status),
        None => format!("{}: {}", response.status, excerpt(&response.body)),
    }
}

/// The start of a body, for messages, on one line: a pretty-printed JSON
/// body (`{\n    "message": "Conflict"\n}`) would otherwise cut a
/// progress line, which shows a message's first line, at its `{`.
pub fn excerpt(body: &str) -> String {
    const MAX: usize = 200;
    let body = body.split_whitespace().collect::<Vec<_>>().join(" ");
    if body.is_empty() {
        return "(empty body)".to_string();
    }
    match body.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &body[..cut]),
        None => body.to_string(),
    }
}

/// A request that got no HTTP answer (refused, timed out, TLS, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportError {
    pub kind: TransportKind,
    pub message: String,
}

/// Why a request got no answer, as far as the suite can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    /// No connection: nothing listens, the host is unknown or unreachable.
    Connect,
    /// Connected, but TLS failed (certificate not trusted, not a TLS server).
    Tls,
    Timeout,
    /// Anything else: the connection broke, the answer was not HTTP, ...
    Other,
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TransportError {}

/// One request to send.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub method: Method,
    /// The URL path without the leading slash, e.g. `dbs/x/colls/c/docs`.
    pub path: String,
    pub resource_type: &'a str,
    pub resource_link: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Option<(&'static str, String)>,
}

impl<'a> Request<'a> {
    pub fn new(
        method: Method,
        path: String,
        resource_type: &'a str,
        resource_link: String,
    ) -> Self {
        Request {
            method,
            path,
            resource_type,
            resource_link,
            headers: Vec::new(),
            body: None,
        }
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    pub fn json(mut self, body: &Value) -> Self {
        self.body = Some(("application/json", body.to_string()));
        self
    }

    pub fn body(mut self, content_type: &'static str, body: &Value) -> Self {
        self.body = Some((content_type, body.to_string()));
        self
    }
}

/// A client for one endpoint and key.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    endpoint: String,
    key: Vec<u8>,
}

impl Client {
    /// `insecure` accepts any TLS certificate (self-signed emulators).
    pub fn new(
        credentials: &Credentials,
        insecure: bool,
        timeout: Duration,
    ) -> Result<Client, String> {
        let endpoint = credentials.endpoint.trim_end_matches('/').to_string();
        let url = reqwest::Url::parse(&endpoint)
            .map_err(|e| format!("endpoint {endpoint:?} is not a URL: {e}"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("endpoint {endpoint:?} is neither http nor https"));
        }
        let key = base64::engine::general_purpose::STANDARD
            .decode(credentials.key.trim())
            .map_err(|e| format!("the key is not base64: {e}"))?;
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .danger_accept_invalid_certs(insecure)
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Client {
            http,
            endpoint,
            key,
        })
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Sends a signed request and reads the whole answer.
    pub async fn send(&self, request: Request<'_>) -> Result<Response, TransportError> {
        let date = httpdate::fmt_http_date(SystemTime::now());
        let auth = authorization(
            &self.key,
            request.method.as_str(),
            request.resource_type,
            &request.resource_link,
            &date,
        );
        let url = format!("{}/{}", self.endpoint, request.path);
        let mut builder = self
            .http
            .request(request.method.clone(), &url)
            .header("authorization", auth)
            .header("x-ms-date", &date)
            .header("x-ms-version", API_VERSION)
            .header("accept", "application/json");
        for (name, value) in &request.headers {
            builder = builder.header(*name, value);
        }
        if let Some((content_type, body)) = request.body {
            builder = builder.header("content-type", content_type).body(body);
        }
        let what = format!("{} /{}", request.method, request.path);
        let https = self.endpoint.starts_with("https:");
        let response = builder
            .send()
            .await
            .map_err(|e| transport_error(&what, &e, https))?;
        let status = response.status().as_u16();
        let continuation = response
            .headers()
            .get("x-ms-continuation")
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty())
            .map(str::to_string);
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let etag = header("etag");
        let charge = header("x-ms-request-charge").and_then(|v| v.trim().parse::<f64>().ok());
        let substatus = header("x-ms-substatus");
        let retry_after_ms = header("x-ms-retry-after-ms");
        let body = response.text().await.map_err(|e| TransportError {
            kind: TransportKind::Other,
            message: format!("{what}: reading the body: {}", describe_failure(&e)),
        })?;
        Ok(Response {
            status,
            body,
            continuation,
            etag,
            charge,
            substatus,
            retry_after_ms,
        })
    }
}

fn transport_error(what: &str, error: &reqwest::Error, https: bool) -> TransportError {
    use std::error::Error as _;
    let text = describe_failure(error);
    let mut io_kinds = Vec::new();
    let mut source = error.source();
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            io_kinds.push(io.kind());
        }
        source = cause.source();
    }
    // A connection error over https after the TCP connection was made (no
    // refusal, no unreachable network, no DNS failure) is the TLS handshake:
    // an untrusted certificate, or a server that does not speak TLS.
    use std::io::ErrorKind::{
        AddrNotAvailable, ConnectionRefused, HostUnreachable, NetworkUnreachable,
    };
    let no_connection = io_kinds.iter().any(|k| {
        matches!(
            k,
            ConnectionRefused | HostUnreachable | NetworkUnreachable | AddrNotAvailable
        )
    }) || text.contains("dns error");
    let tls = https && error.is_connect() && !no_connection;
    let kind = if error.is_timeout() {
        TransportKind::Timeout
    } else if tls {
        TransportKind::Tls
    } else if error.is_connect() {
        TransportKind::Connect
    } else {
        TransportKind::Other
    };
    TransportError {
        kind,
        message: format!("{what}: {text}"),
    }
}

fn describe_failure(error: &reqwest::Error) -> String {
    use std::error::Error as _;
    let mut text = if error.is_timeout() {
        "timed out".to_string()
    } else if error.is_connect() {
        "cannot connect".to_string()
    } else {
        "request failed".to_string()
    };
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
