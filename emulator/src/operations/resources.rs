//! What the metadata operations share: their resources are held as JSON
//! values (databases, containers, offers, users, permissions, scripts,
//! keys), served whole, listed as feeds, and queried in memory. They cost
//! the same in both charge models (`request_units.rs`).

use bytes::Bytes;
use serde_json::Value;

use super::body;
use super::options::RequestOptions;
use super::response::{Answer, Response};
use crate::data::query::{PreparedQuery, QueryBody};
use crate::data::store::{CreateMode, Written};
use crate::protocol::error::{ApiResult, Status};
use crate::protocol::request_units::{METADATA_READ, METADATA_WRITE};

/// A resource read.
pub fn read(value: &Value) -> Response {
    Response::resource(Status::OK, value, METADATA_READ)
}

/// A resource a create or upsert wrote: 201 when it created it, 200 when
/// an upsert replaced it.
pub fn written(written: Written, value: &Value) -> Response {
    Response::resource(written.status(), value, METADATA_WRITE)
}

/// A resource a replace wrote.
pub fn replaced(value: &Value) -> Response {
    Response::resource(Status::OK, value, METADATA_WRITE)
}

/// A resource deleted: `204`, no body.
pub fn deleted() -> Answer {
    Ok(Response::empty(Status::NO_CONTENT, METADATA_WRITE))
}

/// A feed of resources held as values, whole (the feed `kind` of the
/// owner `rid`).
pub fn feed(rid: &str, kind: &str, values: &[Value]) -> Response {
    let documents: Vec<Bytes> = values.iter().map(|v| Bytes::from(v.to_string())).collect();
    Response::feed(rid, kind, &documents, None, METADATA_READ)
}

/// A query (the request's `body`) over resources held as values, at the
/// instant `now_millis`: what it selects, as the feed `kind` of the owner
/// `rid`.
pub fn query(
    body: &[u8],
    now_millis: i64,
    rid: &str,
    kind: &str,
    values: Vec<Value>,
) -> ApiResult<Response> {
    let query = PreparedQuery::prepare_at(&body::typed::<QueryBody>(body, "query")?, now_millis)?;
    Ok(feed(rid, kind, &query.run_values(values.into_iter())?))
}

/// Whether a POST that creates a user, permission or script asks for an
/// upsert.
pub fn create_mode(options: &dyn RequestOptions) -> CreateMode {
    match options.is_upsert() {
        true => CreateMode::Upsert,
        false => CreateMode::Create,
    }
}
