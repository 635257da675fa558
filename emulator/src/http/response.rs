//! Writing responses: single resources, items and feeds, with their headers.

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use bytes::{BufMut, Bytes, BytesMut};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::Value;

use super::names;
use super::owner_path::header_value;
use super::request::Body as RequestBody;
use crate::error::{ApiError, ApiResult, Status};
use crate::operations::{self, response as operation, Answer};
use crate::query::{PreparedQuery, QueryBody};
use crate::request_units::{self, Charge};
use crate::store::{Owner, Written};

/// What metadata requests cost (databases, containers, users, offers,
/// scripts' definitions): the same in both charge models. Item requests
/// are priced by `request_units` from what they did; TTL deletions are
/// never charged to a caller (R12).
pub const METADATA_READ: Charge = request_units::METADATA_READ;
pub const METADATA_WRITE: Charge = request_units::METADATA_WRITE;

/// About how many headers an item or feed response carries in the end.
pub const RESPONSE_HEADERS: usize = 20;

/// `x-ms-request-charge`: the charge as the service writes it (`1`,
/// `5.71`); the commonest, one RU, without formatting.
pub fn charge_value(charge: Charge) -> HeaderValue {
    if charge.ru() == 1.0 {
        return HeaderValue::from_static("1");
    }
    HeaderValue::from_str(&charge.to_text()).expect("a number is ascii")
}

fn json_response(status: StatusCode, body: impl Into<Body>, charge: Charge) -> Response {
    let mut response = (status, body.into()).into_response();
    let headers = response.headers_mut();
    // Room for the headers the handlers and the envelope add, in one
    // allocation instead of growing (and rehashing) on the way.
    headers.reserve(RESPONSE_HEADERS);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(names::REQUEST_CHARGE, charge_value(charge));
    response
}

/// A database or container: the JSON resource with its etag.
pub fn resource(status: StatusCode, value: &Value, charge: Charge) -> Response {
    let mut response = json_response(status, value.to_string(), charge);
    if let Some(etag) = value["_etag"]
        .as_str()
        .and_then(|e| HeaderValue::from_str(e).ok())
    {
        response.headers_mut().insert(header::ETAG, etag);
    }
    response
}

pub fn no_content(charge: Charge) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    response
        .headers_mut()
        .insert(names::REQUEST_CHARGE, charge_value(charge));
    response
}

/// A feed envelope `{"_rid": ..., "<kind>": [...], "_count": n}` built from
/// documents already serialised, with `x-ms-item-count` and `x-ms-continuation`.
pub fn feed(
    rid: &str,
    kind: &str,
    documents: &[Bytes],
    continuation: Option<String>,
    charge: Charge,
) -> Response {
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
    let mut response = json_response(StatusCode::OK, body.freeze(), charge);
    let headers = response.headers_mut();
    headers.insert("x-ms-item-count", HeaderValue::from(documents.len()));
    if let Some(token) = continuation.and_then(|t| HeaderValue::from_str(&t).ok()) {
        headers.insert("x-ms-continuation", token);
    }
    response
}

/// A feed of values (databases, containers).
pub fn value_feed(rid: &str, kind: &str, values: &[Value]) -> Response {
    let documents: Vec<Bytes> = values.iter().map(|v| Bytes::from(v.to_string())).collect();
    feed(rid, kind, &documents, None, METADATA_READ)
}

/// A query (the request `body`) over resources held as values (databases,
/// containers, offers, users, keys, scripts), at the instant `now_millis`:
/// what it selects, as the feed `kind` of the owner `rid`.
pub fn value_query(
    body: &RequestBody,
    now_millis: i64,
    rid: &str,
    kind: &str,
    values: Vec<Value>,
) -> ApiResult<Response> {
    let query = PreparedQuery::prepare_at(&body.typed::<QueryBody>("query")?, now_millis)?;
    Ok(value_feed(
        rid,
        kind,
        &query.run_values(values.into_iter())?,
    ))
}

/// What a stored procedure's log header escapes: all but RFC 3986's
/// unreserved characters (.NET's `Uri.EscapeDataString`, which the SDKs'
/// tests decode).
const LOG_ESCAPED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// An operation's answer on the wire: its status and body, each header it
/// carries under its HTTP name, and `Content-Location` (the request's path)
/// on an answer about a container. (The envelope adds the session token.)
pub fn from_operation(answer: Answer, uri: &Uri) -> Response {
    let operation::Response {
        status,
        headers: typed,
        body,
    } = operations::answered(answer);
    let status = StatusCode::from(status);
    let json = !body.is_empty();
    let mut response = (status, Body::from(body)).into_response();
    let headers = response.headers_mut();
    // Room for the headers below and the envelope's, in one allocation.
    headers.reserve(RESPONSE_HEADERS);
    if json {
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
    }
    if let Some(charge) = typed.charge {
        headers.insert(names::REQUEST_CHARGE, charge_value(charge));
    }
    if let Some(etag) = typed.etag {
        let mut buffer = [0; 38];
        let text = etag.encode(&mut buffer);
        headers.insert(
            header::ETAG,
            HeaderValue::from_str(text).expect("a quoted uuid is ascii"),
        );
    }
    if let Some(substatus) = typed.substatus {
        headers.insert("x-ms-substatus", HeaderValue::from(substatus));
    }
    if let Some(wait) = typed.retry_after_ms {
        headers.insert(names::RETRY_AFTER_MS, HeaderValue::from(wait));
    }
    if let Some(count) = typed.item_count {
        headers.insert("x-ms-item-count", HeaderValue::from(count));
    }
    if let Some(token) = typed
        .continuation
        .and_then(|t| HeaderValue::from_str(&t).ok())
    {
        headers.insert("x-ms-continuation", token);
    }
    if let Some(log) = typed.script_log {
        // URL-encoded, as the service sends it (the SDKs decode it).
        let encoded = utf8_percent_encode(&log, LOG_ESCAPED).to_string();
        if let Ok(value) = HeaderValue::from_str(&encoded) {
            headers.insert("x-ms-documentdb-script-log-results", value);
        }
    }
    if let Some(container) = typed.container {
        let range = typed.range.unwrap_or(0);
        write_names(headers, &container.owner, range);
        write_state(headers, container.lsn, container.item_lsn);
        if container.lsn.is_some() {
            if let Ok(location) = HeaderValue::from_str(uri.path()) {
                headers.insert(header::CONTENT_LOCATION, location);
            }
        }
    } else if let Some(range) = typed.range {
        headers.insert(names::PARTITION_KEY_RANGE_ID, HeaderValue::from(range));
    }
    response
}

/// The status line of a Cosmos status: where the layers below, which speak
/// [`Status`], meet the `http` crate.
impl From<Status> for StatusCode {
    fn from(status: Status) -> StatusCode {
        StatusCode::from_u16(status.as_u16()).expect("a Status is 100 to 999, as a StatusCode")
    }
}

/// What a write did, as a status line: 201 for a resource created, 200 for
/// one replaced.
pub fn written_status(written: Written) -> StatusCode {
    match written {
        Written::Created => StatusCode::CREATED,
        Written::Replaced => StatusCode::OK,
    }
}

/// The container an answer names, and its range: what the SDKs key their
/// session tokens by.
pub fn write_names(headers: &mut HeaderMap, owner: &Owner, range: u32) {
    headers.insert(names::CONTENT_PATH, header_value(&owner.rid));
    headers.insert(names::ALT_CONTENT_PATH, header_value(&owner.path));
    // The item's range (or the range a feed read): the Python SDK takes a
    // write naming a range it does not know for a split and refreshes its
    // routing map. The envelope names it in the session token too.
    headers.insert(names::PARTITION_KEY_RANGE_ID, HeaderValue::from(range));
}

/// The state an answer reflects: its range's LSN and its item's.
pub fn write_state(headers: &mut HeaderMap, lsn: Option<u64>, item_lsn: Option<u64>) {
    if let Some(lsn) = lsn {
        let lsn = HeaderValue::from(lsn);
        headers.insert(names::GLOBAL_COMMITTED_LSN, lsn.clone());
        headers.insert(names::LSN, lsn);
    }
    if let Some(item_lsn) = item_lsn {
        headers.insert(names::ITEM_LSN, HeaderValue::from(item_lsn));
    }
}

/// A refusal as the client reads it: its status, the JSON body of
/// `error.rs` and, where one applies, `x-ms-substatus`.
impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from(self.status);
        let mut response = (status, axum::Json(self.body())).into_response();
        if let Some(substatus) = self.substatus {
            response
                .headers_mut()
                .insert("x-ms-substatus", HeaderValue::from(substatus));
        }
        response
    }
}
