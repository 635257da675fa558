//! Writing responses: single resources, items and feeds, with their headers.

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::{BufMut, Bytes, BytesMut};
use serde_json::Value;

use super::names;
use super::request::Body as RequestBody;
use crate::error::{ApiError, ApiResult, Status};
use crate::query::{PreparedQuery, QueryBody};
use crate::request_units::{self, Charge};
use crate::store::{Item, Written};

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

/// An item, served as stored.
pub fn item(status: StatusCode, item: &Item, charge: Charge) -> Response {
    let mut response = json_response(status, item.body.clone(), charge);
    response.headers_mut().insert(header::ETAG, etag(item));
    response
}

/// An item a write stored: served whole, or with `minimal` (the client sent
/// `Prefer: return=minimal`) as the service does, the same status and
/// headers with an empty body.
pub fn item_written(status: StatusCode, stored: &Item, charge: Charge, minimal: bool) -> Response {
    if !minimal {
        return item(status, stored, charge);
    }
    let mut response = status.into_response();
    let headers = response.headers_mut();
    headers.insert(names::REQUEST_CHARGE, charge_value(charge));
    headers.insert(header::ETAG, etag(stored));
    response
}

fn etag(item: &Item) -> HeaderValue {
    HeaderValue::from_str(item.etag.encode(&mut [0; 38])).expect("a quoted uuid is ascii")
}

/// What a write did, as a status line: 201 for a resource created, 200 for
/// one replaced ([`Written::status`]).
pub fn written_status(written: Written) -> StatusCode {
    match written {
        Written::Created => StatusCode::CREATED,
        Written::Replaced => StatusCode::OK,
    }
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

/// The status line of a Cosmos status: where the layers below, which speak
/// [`Status`], meet the `http` crate.
impl From<Status> for StatusCode {
    fn from(status: Status) -> StatusCode {
        StatusCode::from_u16(status.as_u16()).expect("a Status is 100 to 999, as a StatusCode")
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
