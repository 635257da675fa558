//! What each physical partition may spend a second, from the offers: a
//! container's own RU/s (manual, or the autoscale maximum) divided by its
//! partition key ranges; or, for a container sharing its database's
//! throughput, the database's RU/s divided by every partition of the
//! containers that share it; in a serverless account, 5,000 RU/s per
//! partition. Read by the throttle (`throttle.rs`).

use std::sync::Arc;

use super::Store;
use crate::error::ApiResult;

/// What each partition of a serverless container may spend a second (the
/// service's "5,000 RU/s per partition").
pub const SERVERLESS_RU_PER_PARTITION: f64 = 5000.0;

/// The partitions a request on a container uses, and each one's budget.
#[derive(Debug, Clone)]
pub struct PartitionBudget {
    /// The container's RID: partitions are keyed by it, so that a container
    /// dropped and made again under its name starts afresh.
    pub container: Arc<str>,
    /// The ranges the request uses: the one holding its partition key, the
    /// one it names, or every one.
    pub ranges: Vec<u32>,
    pub ru_per_partition: f64,
}

impl Store {
    /// The budget of the partitions a request on `database`/`container`
    /// uses: the range of `partition_key` (a header value), else the
    /// range `range` names, else all.
    pub fn partition_budget(
        &self,
        database: &str,
        container: &str,
        partition_key: Option<&str>,
        range: Option<u32>,
    ) -> ApiResult<PartitionBudget> {
        let catalog = self.read();
        let db = catalog.database(database)?;
        let c = db.container(container)?;
        let all: Vec<u32> = c.ranges().ranges().iter().map(|r| r.id).collect();
        let keyed = partition_key
            .and_then(|header| Self::key_from_header(c, Some(header), "").ok())
            .map(|key| c.range_of(key.pk()));
        let ranges = match (keyed, range) {
            (Some(id), _) => vec![id],
            (None, Some(id)) if all.contains(&id) => vec![id],
            _ => all.clone(),
        };
        let provisioned = |rid: &str| {
            catalog
                .offers
                .iter()
                .find(|(_, offer)| offer.resource_rid() == rid)
                .map(|(_, offer)| offer.provisioned() as f64)
        };
        let ru_per_partition = match provisioned(&c.rid) {
            _ if self.serverless() => SERVERLESS_RU_PER_PARTITION,
            Some(ru) => ru / all.len() as f64,
            None => {
                // Shared: the database's RU/s over the partitions of every
                // container without throughput of its own.
                let sharing: usize = db
                    .containers()
                    .filter(|other| provisioned(&other.rid).is_none())
                    .map(|other| other.ranges().count())
                    .sum();
                provisioned(&db.rid).unwrap_or(super::offers::MIN_MANUAL_THROUGHPUT as f64)
                    / sharing.max(1) as f64
            }
        };
        Ok(PartitionBudget {
            container: Arc::from(c.rid.as_str()),
            ranges,
            ru_per_partition,
        })
    }
}
