//! What a container holds and uses: its live bytes (`x-ms-resource-usage`),
//! per-range statistics (`populatePartitionKeyRangeStatistics`) and the
//! items physically stored (`GET /_emulator/stats`). Each takes a pass over
//! the items, so only when a client asks.

use serde_json::{json, Value};

use super::Store;
use crate::protocol::error::ApiResult;

/// One container's item counts, for `GET /_emulator/stats`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStats {
    pub database: String,
    pub container: String,
    pub stored_items: usize,
}

/// One partition key range's size and count, in the service's shape
/// (`statistics` of a container read with
/// `x-ms-documentdb-populatepartitionstatistics`).
#[derive(Debug, Default)]
struct RangeUsage {
    bytes: usize,
    documents: usize,
    partition_keys: std::collections::BTreeSet<String>,
}

impl Store {
    /// The JSON bytes of a container's live items (`x-ms-resource-usage`
    /// when a client asks for quota information): O(items), so only then.
    pub fn live_bytes(&self, database: &str, id: &str) -> ApiResult<usize> {
        self.with_container(database, id, |c, now| {
            Ok(c.live_items(None, None, now)
                .map(|(_, _, item)| item.body.len())
                .sum())
        })
    }

    /// Per range: `id`, `sizeInKB`, `documentCount` and
    /// `sampledDistinctPartitionKeyCount` of its live items. The service also
    /// lists the largest partition keys (`partitionKeys`) when one holds a
    /// large share of the range; with local sizes none does, so the list is
    /// empty.
    pub fn partition_statistics(&self, database: &str, id: &str) -> ApiResult<Vec<Value>> {
        self.with_container(database, id, |c, now| {
            let ranges = c.ranges().ranges();
            let mut usage: Vec<RangeUsage> = ranges.iter().map(|_| RangeUsage::default()).collect();
            // Each partition's range is found (its key hashed) once, not
            // once per item: items come in write order, partitions mixed.
            let mut range_at: std::collections::HashMap<&str, usize> = Default::default();
            for (_, key, item) in c.live_items(None, None, now) {
                let at = *range_at.entry(key.pk()).or_insert_with(|| {
                    let range = c.range_of(key.pk());
                    let at = ranges.iter().position(|r| r.id == range).unwrap_or(0);
                    usage[at].partition_keys.insert(key.pk().to_string());
                    at
                });
                let slot = &mut usage[at];
                slot.bytes += item.body.len();
                slot.documents += 1;
            }
            Ok(ranges
                .iter()
                .zip(usage)
                .map(|(range, used)| {
                    json!({
                        "id": range.id.to_string(),
                        "sizeInKB": used.bytes.div_ceil(1024),
                        "documentCount": used.documents,
                        "sampledDistinctPartitionKeyCount": used.partition_keys.len(),
                        "partitionKeys": [],
                    })
                })
                .collect())
        })
    }

    /// For each container, the items physically stored, expired or not: lets
    /// a client watch the purge free storage. O(containers), so that polling
    /// it never holds up the purge (a live count is O(expired items); the
    /// container's `x-ms-resource-usage` has it).
    pub fn stats(&self) -> Vec<ContainerStats> {
        let catalog = self.read();
        catalog
            .databases
            .values()
            .flat_map(|db| {
                db.containers().map(move |c| ContainerStats {
                    database: db.id.clone(),
                    container: c.id.clone(),
                    stored_items: c.stored_count(),
                })
            })
            .collect()
    }

    /// Items physically held by a container, expired or not: lets tests see
    /// that the purge frees storage, not only hides items.
    pub fn stored_item_count(&self, database: &str, container: &str) -> ApiResult<usize> {
        self.with_container(database, container, |c, _| Ok(c.stored_count()))
    }
}
