//! What each physical partition may spend a second, from the offers, as
//! the service shares throughput (`docs/src/request-units.md#throttling`):
//!
//! - a container with throughput of its own (manual, or the autoscale
//!   maximum) divides it among its partition key ranges, each its own
//!   bucket;
//! - a container sharing its database's throughput spends the database's
//!   physical partitions: the database's RU/s divided among as many
//!   partitions as that throughput takes (one up to 10,000 RU/s), each
//!   holding its share of the hash space of every container sharing it.
//!   So one busy container may use the whole database's RU/s while the
//!   others are idle, and two busy ones split it ("the throughput
//!   configured on a database is shared by all the containers within that
//!   database"); a container of its own throughput in that database keeps
//!   its budget apart;
//! - in a serverless account, 5,000 RU/s per partition.
//!
//! Read by the throttle (`throttle.rs`).

use std::sync::Arc;

use super::ranges::RangeMap;
use super::Store;
use crate::protocol::error::ApiResult;

/// What each partition of a serverless container may spend a second (the
/// service's "5,000 RU/s per partition").
pub const SERVERLESS_RU_PER_PARTITION: f64 = 5000.0;

/// The partitions a request on a container uses, and each one's budget.
#[derive(Debug, Clone)]
pub struct PartitionBudget {
    /// Whose partitions they are: the container's RID, or for a container
    /// sharing its database's throughput the database's. Partitions are
    /// keyed by it, so that a container or database dropped and made again
    /// under its name starts afresh, and the containers sharing a database
    /// spend the same buckets.
    pub owner: Arc<str>,
    /// The partitions the request uses: the one holding its partition key,
    /// the ones of the range it names, or every one.
    pub ranges: Vec<u32>,
    pub ru_per_partition: f64,
}

impl Store {
    /// The budget of the partitions a request on `database`/`container`
    /// uses: the partition of `partition_key` (a header value), else those
    /// of the range `range` names, else all.
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
        let offer = |rid: &str| {
            catalog
                .offers
                .iter()
                .find(|(_, offer)| offer.resource_rid() == rid)
                .map(|(_, offer)| offer)
        };
        let key = partition_key
            .and_then(|header| Self::key_from_header(c, Some(header), "").ok())
            .map(|key| key.pk().to_string());
        let named = range.and_then(|id| c.ranges().ranges().iter().find(|r| r.id == id));
        let dedicated = match offer(&c.rid) {
            _ if self.serverless() => Some(SERVERLESS_RU_PER_PARTITION),
            Some(own) => Some(own.provisioned() as f64 / c.ranges().count() as f64),
            None => None,
        };
        if let Some(ru_per_partition) = dedicated {
            let ranges = match (&key, named) {
                (Some(pk), _) => vec![c.range_of(pk)],
                (None, Some(named)) => vec![named.id],
                _ => c.ranges().ranges().iter().map(|r| r.id).collect(),
            };
            return Ok(PartitionBudget {
                owner: Arc::from(c.rid.as_str()),
                ranges,
                ru_per_partition,
            });
        }
        // Shared: the database's physical partitions, cut over the hash
        // space as a container of its throughput would be.
        let (ru, autoscale) = offer(&db.rid)
            .map_or((super::offer::MIN_MANUAL_THROUGHPUT, false), |offer| {
                (offer.provisioned(), offer.is_autoscale())
            });
        let count = RangeMap::count_for_throughput(ru, autoscale);
        let ranges = if count == 1 {
            vec![0]
        } else {
            let partitions = RangeMap::even(c.partition_key(), count);
            match (&key, named) {
                (Some(pk), _) => vec![partitions.range_of(&c.epk(pk)).id],
                (None, Some(named)) => partitions.overlapping(named).collect(),
                _ => (0..count as u32).collect(),
            }
        };
        Ok(PartitionBudget {
            owner: Arc::from(db.rid.as_str()),
            ranges,
            ru_per_partition: ru as f64 / count as f64,
        })
    }
}
