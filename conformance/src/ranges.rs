//! `--container-throughput`: how many physical partition key ranges a
//! container the suite created has, as the target lists them
//! (`GET .../pkranges`, the request every SDK sends before a cross-partition
//! query or change feed).

use crate::client::{describe, excerpt, path, Client, Request};
use reqwest::Method;
use serde_json::Value;
use std::collections::BTreeSet;

/// A list that still has pages after this many is refused.
const MAX_PAGES: usize = 100;

/// The number of distinct range ids of every page of `GET {collection_link}/pkranges`.
pub async fn count(client: &Client, collection_link: &str) -> Result<usize, String> {
    let link = collection_link.to_string();
    let mut ids = BTreeSet::new();
    let mut continuation: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let mut request = Request::new(
            Method::GET,
            path(&format!("{link}/pkranges")),
            "pkranges",
            link.clone(),
        );
        if let Some(token) = &continuation {
            request = request.header("x-ms-continuation", token.clone());
        }
        let response = client.send(request).await.map_err(|e| e.to_string())?;
        if response.status != 200 {
            return Err(format!(
                "reading the container's partition key ranges answered {}",
                describe(&response)
            ));
        }
        let ranges = response
            .json()
            .and_then(|v| {
                v.get("PartitionKeyRanges")
                    .and_then(Value::as_array)
                    .cloned()
            })
            .ok_or_else(|| {
                format!(
                    "GET pkranges answered without PartitionKeyRanges: {}",
                    excerpt(&response.body)
                )
            })?;
        for range in &ranges {
            ids.insert(range.get("id").map(Value::to_string).unwrap_or_default());
        }
        continuation = response.continuation;
        if continuation.is_none() {
            return Ok(ids.len());
        }
    }
    Err(format!("GET pkranges had more than {MAX_PAGES} pages"))
}
