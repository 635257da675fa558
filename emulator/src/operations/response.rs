//! What an operation answers, whatever the protocol: a status, typed
//! headers, a body. Each front door writes it its own way (the HTTP
//! adapter as a status line and headers; Direct mode as tokens).

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::Value;

use crate::data::store::{ContainerContext, Etag};
use crate::protocol::error::{ApiError, Status};
use crate::protocol::request_units::Charge;

/// An operation's answer.
#[derive(Debug, Clone)]
pub struct Response {
    /// The Cosmos status: 200, 201, 204, 304, or a refusal's.
    pub status: Status,
    pub headers: ResponseHeaders,
    /// JSON, or empty.
    pub body: Bytes,
}

/// The headers an operation answers with, by meaning.
#[derive(Debug, Clone, Default)]
pub struct ResponseHeaders {
    /// What the operation cost (`x-ms-request-charge`).
    pub charge: Option<Charge>,
    /// The resource's etag.
    pub etag: Option<ResponseEtag>,
    /// The container the answer is about, and the state it reflects.
    pub container: Option<ContainerState>,
    /// The partition key range it names: an item's, or the range a feed read.
    pub range: Option<u32>,
    /// Which refusal of its status this is (`x-ms-substatus`).
    pub substatus: Option<u32>,
    /// Where a feed continues.
    pub continuation: Option<String>,
    /// How many items a feed page holds.
    pub item_count: Option<usize>,
    /// How long to wait before retrying (a 429's).
    pub retry_after_ms: Option<u64>,
    /// What a stored procedure logged, as it logged it.
    pub script_log: Option<String>,
    /// The quotas of the resource's container, in the service's
    /// `name=value;` form (`x-ms-resource-quota`).
    pub resource_quota: Option<&'static str>,
    /// What of those quotas is used, in the same form
    /// (`x-ms-resource-usage`).
    pub resource_usage: Option<String>,
    /// How far a new indexing policy's rebuild has come, in percent
    /// (`x-ms-documentdb-collection-index-transformation-progress`).
    pub index_transformation_progress: Option<u8>,
    /// The least throughput an offer may be set to
    /// (`x-ms-cosmos-min-throughput`).
    pub min_throughput: Option<u32>,
    /// A query page's metrics, the service's `name=value;` text
    /// (`x-ms-documentdb-query-metrics`).
    pub query_metrics: Option<String>,
    /// The indexes a query page used, encoded as the version asked for
    /// writes it (`x-ms-cosmos-index-utilization`: base64 or
    /// percent-encoded JSON; Direct mode carries the same value).
    pub index_utilization: Option<String>,
}

/// A resource's etag: an item's (a UUID, written without an allocation on
/// the hot path) or another resource's, as its JSON holds it (`_etag`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResponseEtag {
    Item(Etag),
    Text(String),
}

impl ResponseEtag {
    /// Its text, quoted as the service writes it (`buffer` holds an
    /// item's).
    pub fn encode<'b>(&'b self, buffer: &'b mut [u8; 38]) -> &'b str {
        match self {
            ResponseEtag::Item(etag) => etag.encode(buffer),
            ResponseEtag::Text(text) => text,
        }
    }
}

/// The container an answer is about: its RID and owner path (what the SDKs
/// key their session tokens by) and, for an answer of an operation that
/// ran, the LSN of the range the answer names after it (for a write, its
/// own) and of the item it served, if it served one. The session token is
/// written from these and the range.
#[derive(Debug, Clone)]
pub struct ContainerState {
    pub owner: crate::data::store::Owner,
    pub lsn: Option<u64>,
    pub item_lsn: Option<u64>,
}

impl Response {
    /// A JSON answer costing `charge`.
    pub fn json(status: Status, body: impl Into<Bytes>, charge: Charge) -> Self {
        Response {
            status,
            headers: ResponseHeaders {
                charge: Some(charge),
                ..ResponseHeaders::default()
            },
            body: body.into(),
        }
    }

    /// An answer with no body costing `charge`.
    pub fn empty(status: Status, charge: Charge) -> Self {
        Response::json(status, Bytes::new(), charge)
    }

    /// `304`: the client holds the current version (a metadata read
    /// answers it with no charge).
    pub fn not_modified() -> Self {
        Response {
            status: Status::NOT_MODIFIED,
            headers: ResponseHeaders::default(),
            body: Bytes::new(),
        }
    }

    /// A resource held as JSON (a database, container, user...), with the
    /// etag its `_etag` holds.
    pub fn resource(status: Status, value: &Value, charge: Charge) -> Self {
        let mut response = Response::json(status, value.to_string(), charge);
        response.headers.etag = value["_etag"]
            .as_str()
            .map(|etag| ResponseEtag::Text(etag.to_owned()));
        response
    }

    /// A feed page `{"_rid": ..., "<kind>": [...], "_count": n}` of the
    /// owner `rid`, built from documents already serialised, with its item
    /// count and where it continues.
    pub fn feed(
        rid: &str,
        kind: &str,
        documents: &[Bytes],
        continuation: Option<String>,
        charge: Charge,
    ) -> Self {
        let mut response = Response::json(Status::OK, feed_body(rid, kind, documents), charge);
        response.headers.item_count = Some(documents.len());
        response.headers.continuation = continuation;
        response
    }

    /// Names the container of `context`, its range, and the state the
    /// answer reflects: the range's LSN `lsn`, the item's `item_lsn`.
    pub fn about(self, context: &ContainerContext, lsn: u64, item_lsn: Option<u64>) -> Self {
        self.with_container(context, Some(lsn), item_lsn)
    }

    /// Names the container of `context` and its range alone (a refusal:
    /// no operation ran, no LSN).
    pub fn naming(self, context: &ContainerContext) -> Self {
        self.with_container(context, None, None)
    }

    fn with_container(
        mut self,
        context: &ContainerContext,
        lsn: Option<u64>,
        item_lsn: Option<u64>,
    ) -> Self {
        self.headers.range = Some(context.range);
        self.headers.container = Some(ContainerState {
            owner: context.owner.clone(),
            lsn,
            item_lsn,
        });
        self
    }
}

/// The feed envelope `{"_rid": ..., "<kind>": [...], "_count": n}` around
/// documents already serialised.
fn feed_body(rid: &str, kind: &str, documents: &[Bytes]) -> Bytes {
    let size: usize = documents.iter().map(|d| d.len() + 1).sum();
    let mut body = BytesMut::with_capacity(size + 64);
    body.put_slice(format!("{{\"_rid\":{},\"{kind}\":[", Value::from(rid)).as_bytes());
    for (i, doc) in documents.iter().enumerate() {
        if i > 0 {
            body.put_u8(b',');
        }
        body.put_slice(doc);
    }
    body.put_slice(format!("],\"_count\":{}}}", documents.len()).as_bytes());
    body.freeze()
}

/// A refusal, as every protocol sends it: the status, the substatus, and
/// the `{"code", "message"}` body.
impl From<ApiError> for Response {
    fn from(error: ApiError) -> Self {
        Response {
            status: error.status,
            headers: ResponseHeaders {
                substatus: error.substatus,
                ..ResponseHeaders::default()
            },
            body: Bytes::from(error.body().to_string()),
        }
    }
}

/// An operation's refusal: an [`ApiError`], or an answer carrying headers
/// of its own (a `404/1002` names its container, so that the SDK clears
/// that container's session).
#[derive(Debug)]
pub struct Refusal(pub Box<Response>);

impl From<ApiError> for Refusal {
    fn from(error: ApiError) -> Self {
        Refusal(Box::new(error.into()))
    }
}

/// What an operation answers: its response, or its refusal.
pub type Answer = Result<Response, Refusal>;

/// Either way, the answer to send.
pub fn answered(answer: Answer) -> Response {
    answer.unwrap_or_else(|refusal| *refusal.0)
}
