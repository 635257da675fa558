//! Change feed read throughput: the latest-version feed of a loaded
//! container read from the beginning to its end (304), pages of 1,000, at
//! concurrency 1. The count is checked: every item exactly once.

use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

use crate::connection::{Connection, Endpoint};
use crate::cosmos::Signer;
use crate::measure::dataset::DATABASE;

/// Items per page asked for.
const PAGE: &str = "1000";

#[derive(Debug, Clone, Serialize)]
pub struct ChangeFeedRead {
    pub items: usize,
    pub pages: usize,
    pub seconds: f64,
    pub items_per_second: f64,
    /// A wrong count or a failure, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

pub async fn measure(
    endpoint: &Endpoint,
    signer: &Signer,
    container: &str,
    items: usize,
) -> ChangeFeedRead {
    let mut result = ChangeFeedRead {
        items,
        pages: 0,
        seconds: 0.0,
        items_per_second: 0.0,
        error: None,
    };
    let mut connection = match Connection::open(endpoint).await {
        Ok(c) => c,
        Err(e) => {
            result.error = Some(format!("cannot connect: {e}"));
            return result;
        }
    };
    let started = Instant::now();
    let mut seen = 0usize;
    let mut etag: Option<String> = None;
    loop {
        let request = signer.change_feed(DATABASE, container, etag.as_deref(), PAGE);
        let response = match connection.send(request).await {
            Ok(r) => r,
            Err(e) => {
                result.error = Some(format!("request failed: {e}"));
                return result;
            }
        };
        etag = response
            .headers
            .get("etag")
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        if response.status == 304 {
            break;
        }
        if !response.status.is_success() || etag.is_none() {
            result.error = Some(format!(
                "answered {} (etag {:?}): {:.200}",
                response.status,
                etag,
                String::from_utf8_lossy(&response.body)
            ));
            return result;
        }
        let page: Value = match serde_json::from_slice(&response.body) {
            Ok(v) => v,
            Err(e) => {
                result.error = Some(format!("the answer is not JSON: {e}"));
                return result;
            }
        };
        seen += page["Documents"].as_array().map_or(0, Vec::len);
        result.pages += 1;
        if result.pages > items + 10 {
            result.error = Some("the feed does not end".into());
            return result;
        }
    }
    result.seconds = started.elapsed().as_secs_f64();
    result.items_per_second = seen as f64 / result.seconds.max(1e-9);
    if seen != items {
        result.error = Some(format!("read {seen} changes, expected {items}"));
    }
    result
}
