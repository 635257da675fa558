//! The data the Cosmos measurements run over: one database and one
//! container partitioned on `/pk`, loaded with items of a fixed size over
//! HTTP, and the resident memory each size costs.

use std::sync::Arc;

use bytes::Bytes;

use serde::Serialize;

use crate::connection::Endpoint;
use crate::cosmos::Signer;
use crate::documents::{document, partition_header};
use crate::load::{run_count, Counted};
use crate::measure::send_once;

pub const DATABASE: &str = "bench";

/// Creates the database (if needed) and a container in it.
pub async fn create_container(
    endpoint: &Endpoint,
    signer: &Signer,
    container: &str,
    ttl_on: bool,
) -> Result<(), String> {
    if let Err(e) = send_once(endpoint, signer.create_database(DATABASE)).await {
        if !e.contains("409") {
            return Err(format!("creating the database: {e}"));
        }
    }
    send_once(
        endpoint,
        signer.create_container(DATABASE, container, ttl_on),
    )
    .await
    .map_err(|e| format!("creating the container: {e}"))?;
    Ok(())
}

/// Creates items `range` (each `item_bytes` of JSON, with `ttl` if given).
pub async fn fill(
    endpoint: &Endpoint,
    signer: &Signer,
    container: &'static str,
    range: std::ops::Range<usize>,
    item_bytes: usize,
    ttl: Option<i64>,
    concurrency: usize,
) -> Result<Counted, String> {
    let item = move |seq| document(seq, ttl, item_bytes);
    create_items(endpoint, signer, container, range, concurrency, item).await
}

/// Creates item `seq` = `item(seq)` for each `seq` of `range`, in the
/// partition of `seq`; every create must succeed.
pub async fn create_items(
    endpoint: &Endpoint,
    signer: &Signer,
    container: &'static str,
    range: std::ops::Range<usize>,
    concurrency: usize,
    item: impl Fn(usize) -> Bytes + Send + Sync + 'static,
) -> Result<Counted, String> {
    let signer = signer.clone();
    let loaded = run_count(
        endpoint,
        concurrency,
        range,
        Arc::new(move |seq| {
            signer.write_item(
                DATABASE,
                container,
                &partition_header(seq),
                item(seq),
                false,
            )
        }),
    )
    .await?;
    if loaded.errors > 0 {
        return Err(format!(
            "{} of {} creates failed, the first: {}",
            loaded.errors,
            loaded.requests,
            loaded.first_error.as_deref().unwrap_or("?")
        ));
    }
    Ok(loaded)
}

/// Resident memory with `items` stored.
#[derive(Debug, Clone, Serialize)]
pub struct Memory {
    pub items: usize,
    pub rss_bytes: u64,
    /// (RSS − RSS of the empty container) / items.
    pub bytes_per_item: f64,
    /// Loading these items (creates since the previous size).
    pub load: Counted,
}
