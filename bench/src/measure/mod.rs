//! The measurements, one module each. Each takes a running target (or
//! starts its own) and returns a serialisable result.

pub mod batch;
pub mod change_feed;
pub mod conformance;
pub mod dataset;
pub mod direct;
pub mod isolation;
pub mod persistence;
pub mod point;
pub mod purge;
pub mod query;
pub mod ranges;
pub mod scripts;
pub mod search;
pub mod startup;

use crate::connection::{expect_success, Connection, Endpoint, Response};
use crate::cosmos::Body;
use hyper::Request;

/// Sends one request on a fresh connection and wants a 2xx answer.
pub async fn send_once(endpoint: &Endpoint, request: Request<Body>) -> Result<Response, String> {
    let mut connection = Connection::open(endpoint)
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", endpoint.url()))?;
    expect_success(connection.send(request).await)
}
