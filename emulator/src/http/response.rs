//! Writing an operation's answer on the wire: its status, body and typed
//! headers under their HTTP names.

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use super::names;
use super::owner_path::header_value;
use crate::data::store::Owner;
use crate::operations::{self, response as operation, Answer};
use crate::protocol::error::{ApiError, Status};
use crate::protocol::request_units::Charge;

/// About how many headers an item or feed response carries in the end.
pub const RESPONSE_HEADERS: usize = 20;

/// `x-ms-request-charge`: the charge as the service writes it (`1`,
/// `5.71`); the commonest, one RU, without formatting.
pub fn charge_value(charge: Charge) -> HeaderValue {
    if charge.ru() == 1.0 {
        return HeaderValue::from_static("1");
    }
    HeaderValue::from_str(charge.write_text(&mut [0; 24])).expect("a number is ascii")
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
    if let Some(metrics) = typed
        .query_metrics
        .and_then(|m| HeaderValue::from_str(&m).ok())
    {
        headers.insert("x-ms-documentdb-query-metrics", metrics);
    }
    if let Some(utilization) = typed
        .index_utilization
        .and_then(|u| HeaderValue::from_str(&u).ok())
    {
        headers.insert("x-ms-cosmos-index-utilization", utilization);
    }
    if let Some(log) = typed.script_log {
        // URL-encoded, as the service sends it (the SDKs decode it).
        let encoded = utf8_percent_encode(&log, LOG_ESCAPED).to_string();
        if let Ok(value) = HeaderValue::from_str(&encoded) {
            headers.insert("x-ms-documentdb-script-log-results", value);
        }
    }
    if let Some(etag) = typed.etag {
        let mut buffer = [0; 38];
        // An item's is a quoted UUID; another resource's is skipped should
        // its JSON hold what a header cannot.
        if let Ok(value) = HeaderValue::from_str(etag.encode(&mut buffer)) {
            headers.insert(header::ETAG, value);
        }
    }
    if let Some(quota) = typed.resource_quota {
        headers.insert("x-ms-resource-quota", HeaderValue::from_static(quota));
    }
    if let Some(usage) = typed
        .resource_usage
        .and_then(|u| HeaderValue::from_str(&u).ok())
    {
        headers.insert("x-ms-resource-usage", usage);
    }
    if let Some(progress) = typed.index_transformation_progress {
        headers.insert(
            "x-ms-documentdb-collection-index-transformation-progress",
            HeaderValue::from(u16::from(progress)),
        );
    }
    if let Some(minimum) = typed.min_throughput {
        headers.insert("x-ms-cosmos-min-throughput", HeaderValue::from(minimum));
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
