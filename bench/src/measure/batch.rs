//! Transactional batch and bulk against single creates, on a fresh
//! emulator: items created per second by 100-operation batches against 100
//! single creates at concurrency 1 (one client, one request at a time), and
//! by bulk requests of 100 creates against single creates at concurrency 16.
//!
//! Every row writes new 1 KB items (unique ids) into a container of its own,
//! so no operation conflicts; a batch of each kind is checked first to
//! answer 200 with 100 results of 201, and the load generator counts any
//! answer but a 2xx as an error.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use serde::Serialize;
use serde_json::Value;

use crate::connection::Endpoint;
use crate::cosmos::Signer;
use crate::documents::{document, partition, partition_header, PARTITIONS};
use crate::load::{throughput, MakeRequest, Throughput, Window};
use crate::measure::dataset::{self, DATABASE};
use crate::measure::send_once;
use crate::process::ServerProcess;
use crate::targets::Target;

/// Operations per batch or bulk request (the service's limit).
pub const OPERATIONS: usize = 100;

/// How items are created in one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Way {
    /// One `POST .../docs` per item.
    Single,
    /// Transactional batches of 100 creates in one partition.
    Batch,
    /// Bulk requests of 100 creates across partitions.
    Bulk,
}

impl Way {
    pub fn describe(self) -> &'static str {
        match self {
            Way::Single => "single creates",
            Way::Batch => "transactional batches of 100 creates",
            Way::Bulk => "bulk requests of 100 creates",
        }
    }

    fn items_per_request(self) -> usize {
        match self {
            Way::Single => 1,
            Way::Batch | Way::Bulk => OPERATIONS,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct BatchRow {
    pub way: Way,
    pub items_per_second: f64,
    pub load: Throughput,
}

#[derive(Debug, Clone, Serialize)]
pub struct BatchResults {
    pub item_bytes: usize,
    pub rows: Vec<BatchRow>,
}

/// The rows measured, in order: (way, concurrency).
pub const ROWS: [(Way, usize); 4] = [
    (Way::Single, 1),
    (Way::Batch, 1),
    (Way::Single, 16),
    (Way::Bulk, 16),
];

pub async fn measure(
    target: &Target,
    key: &str,
    window: Window,
    item_bytes: usize,
) -> Result<BatchResults, String> {
    let process = ServerProcess::spawn(target.command())?;
    let endpoint = Endpoint::parse(&process.url)?;
    let signer = Signer::new(key, &endpoint.authority())?;
    let mut rows = Vec::new();
    for (index, (way, concurrency)) in ROWS.into_iter().enumerate() {
        let container: &'static str = ["single-1", "batch-1", "single-16", "bulk-16"][index];
        dataset::create_container(&endpoint, &signer, container, false).await?;
        let make = requests(&signer, container, way, item_bytes);
        if way != Way::Single {
            check(&endpoint, &make).await?;
        }
        let load = throughput(&endpoint, concurrency, window, Some(&process), make).await?;
        rows.push(BatchRow {
            way,
            items_per_second: load.per_second * way.items_per_request() as f64,
            load,
        });
    }
    Ok(BatchResults { item_bytes, rows })
}

/// One request of the row, sent once: 200 with a 201 for every operation.
async fn check(endpoint: &Endpoint, make: &Arc<MakeRequest>) -> Result<(), String> {
    let response = send_once(endpoint, make(&mut fastrand::Rng::new())).await?;
    let results: Value = serde_json::from_slice(&response.body)
        .map_err(|e| format!("a batch answer is not JSON: {e}"))?;
    let created = results
        .as_array()
        .map_or(0, |r| r.iter().filter(|r| r["statusCode"] == 201).count());
    if response.status != 200 || created != OPERATIONS {
        return Err(format!(
            "a batch answered {} with {created} of {OPERATIONS} created: {:.300}",
            response.status,
            String::from_utf8_lossy(&response.body)
        ));
    }
    Ok(())
}

/// New items, numbered by a counter: one per single create, a block of
/// 100 per batch (all in the block's partition) or bulk request (across
/// partitions, each operation with its own key).
fn requests(
    signer: &Signer,
    container: &'static str,
    way: Way,
    item_bytes: usize,
) -> Arc<MakeRequest> {
    let signer = signer.clone();
    let next = AtomicUsize::new(0);
    Arc::new(move |_rng| {
        let n = next.fetch_add(1, Ordering::Relaxed);
        match way {
            Way::Single => signer.write_item(
                DATABASE,
                container,
                &partition_header(n),
                document(n, None, item_bytes),
                false,
            ),
            Way::Batch => {
                // Block n, all in partition n mod PARTITIONS.
                let seqs =
                    (0..OPERATIONS).map(|k| (n * OPERATIONS + k) * PARTITIONS + n % PARTITIONS);
                let body = operations(seqs, item_bytes, false);
                signer.batch(DATABASE, container, Some(&partition_header(n)), body)
            }
            Way::Bulk => {
                let body = operations(n * OPERATIONS..(n + 1) * OPERATIONS, item_bytes, true);
                signer.batch(DATABASE, container, None, body)
            }
        }
    })
}

/// `[{"operationType":"Create","resourceBody":<item>}, ...]`, each with its
/// `partitionKey` for bulk.
pub(crate) fn operations(
    seqs: impl Iterator<Item = usize>,
    item_bytes: usize,
    with_keys: bool,
) -> Bytes {
    let mut body = BytesMut::with_capacity(OPERATIONS * (item_bytes + 80));
    body.put_u8(b'[');
    for (i, seq) in seqs.enumerate() {
        if i > 0 {
            body.put_u8(b',');
        }
        body.put_slice(b"{\"operationType\":\"Create\",");
        if with_keys {
            body.put_slice(
                format!("\"partitionKey\":\"[\\\"{}\\\"]\",", partition(seq)).as_bytes(),
            );
        }
        body.put_slice(b"\"resourceBody\":");
        body.put_slice(&document(seq, None, item_bytes));
        body.put_u8(b'}');
    }
    body.put_u8(b']');
    body.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_are_json_with_their_keys() {
        let body = operations(0..3, 200, true);
        let ops: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(ops.as_array().unwrap().len(), 3);
        assert_eq!(ops[1]["partitionKey"], "[\"p01\"]");
        assert_eq!(ops[2]["resourceBody"]["id"], "item-00000002");
        let batch: Value = serde_json::from_slice(&operations(
            (0..2).map(|k| (5 * OPERATIONS + k) * PARTITIONS + 5),
            200,
            false,
        ))
        .unwrap();
        assert_eq!(
            batch[0]["resourceBody"]["pk"],
            batch[1]["resourceBody"]["pk"]
        );
        assert!(batch[0].get("partitionKey").is_none());
    }
}
