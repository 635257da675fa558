//! Throttling by provisioned throughput (`--rate-limit`), as the service
//! does it: each physical partition may spend its share of the RU/s in
//! each second of the emulator's clock; a request that finds its
//! partition's second spent is refused (429/3200) and told how long until
//! the next second. With `--clock manual` the second moves only when the
//! test clock does, so a test can say "the 11th write of this second is
//! throttled" and mean it.
//!
//! - A request is admitted while its partition has spent less than its
//!   budget this second, and is then charged what it cost: the second's
//!   spending exceeds the budget by at most the last request's charge.
//!   Requests of one partition are admitted one at a time (the guard of
//!   [`Admission`] is held until the charge is known), so concurrent
//!   requests cannot all slip under the budget together.
//! - `Low` priority requests may not take the last fifth of a second's
//!   budget: when both priorities want the same second, Low is throttled
//!   first (the service's "best effort", made deterministic).
//! - Burst capacity (`--burst-capacity`): a partition under 3,000 RU/s
//!   saves what it leaves unspent, up to 300 seconds' worth, and may
//!   spend the savings at up to 3,000 RU/s.
//! - Metadata requests (databases, containers, offers...) share one
//!   budget of [`METADATA_RU_PER_SECOND`] for the account.
//!
//! Nothing here knows HTTP or the store: the steps around every operation
//! (`operations/around.rs`) say which partitions a request uses and what
//! each may spend.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::{Mutex, OwnedMutexGuard};

/// What metadata requests may spend each second, account-wide (the
/// service reserves a budget for them but does not publish it).
pub const METADATA_RU_PER_SECOND: f64 = 1000.0;
/// Burst capacity: how many seconds of unused RU/s a partition may save,
/// and the rate it may spend at (the service's documented figures).
const BURST_SECONDS: f64 = 300.0;
const BURST_CEILING_RU_PER_SECOND: f64 = 3000.0;
/// The share of a second's budget Low priority requests may spend.
const LOW_PRIORITY_SHARE: f64 = 0.8;

/// `x-ms-cosmos-priority-level`: High unless the request says Low.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Priority {
    #[default]
    High,
    Low,
}

/// A partition's spending in its current second, and its savings.
#[derive(Debug, Default)]
pub struct Bucket {
    /// The emulator-clock second being spent (`None`: never used).
    second: Option<i64>,
    spent: f64,
    /// Burst capacity saved from earlier seconds.
    saved: f64,
}

impl Bucket {
    /// Moves to `second`: with burst, what earlier seconds left unspent is
    /// saved and what this one overspent comes out of the savings. A clock
    /// set back starts afresh.
    fn roll(&mut self, second: i64, budget: f64, burst: bool) {
        let Some(current) = self.second else {
            self.second = Some(second);
            return;
        };
        if second == current {
            return;
        }
        if burst && second > current {
            let idle_seconds = (second - current - 1) as f64;
            let unspent = (budget - self.spent).max(0.0) + idle_seconds * budget;
            let overspent = (self.spent - budget).max(0.0);
            self.saved = (self.saved - overspent + unspent).clamp(0.0, BURST_SECONDS * budget);
        }
        if second < current {
            self.saved = 0.0;
        }
        self.second = Some(second);
        self.spent = 0.0;
    }

    /// What this second may spend: the budget, and with burst the savings
    /// up to the burst rate.
    fn limit(&self, budget: f64, burst: bool) -> f64 {
        if burst && budget < BURST_CEILING_RU_PER_SECOND {
            budget + self.saved.min(BURST_CEILING_RU_PER_SECOND - budget)
        } else {
            budget
        }
    }

    /// Whether a request may start at `now_ms`; otherwise the wait, in
    /// milliseconds, until the partition's next second.
    fn admit(
        &mut self,
        now_ms: i64,
        budget: f64,
        priority: Priority,
        burst: bool,
    ) -> Result<(), u64> {
        self.roll(now_ms.div_euclid(1000), budget, burst);
        let limit = match priority {
            Priority::High => self.limit(budget, burst),
            Priority::Low => LOW_PRIORITY_SHARE * self.limit(budget, burst),
        };
        if self.spent < limit {
            Ok(())
        } else {
            Err(retry_after_ms(now_ms))
        }
    }
}

/// Milliseconds from `now_ms` to the next second of the emulator's clock.
pub fn retry_after_ms(now_ms: i64) -> u64 {
    (1000 - now_ms.rem_euclid(1000)) as u64
}

/// A partition of a container: the container's RID and the range's id.
pub type PartitionId = (Arc<str>, u32);

/// Every partition's bucket, and the metadata one.
#[derive(Debug)]
pub struct Limiter {
    burst: bool,
    partitions: std::sync::Mutex<HashMap<PartitionId, Arc<Mutex<Bucket>>>>,
    metadata: Arc<Mutex<Bucket>>,
}

/// A request let through: its partitions stay held until it is charged.
pub struct Admission {
    buckets: Vec<OwnedMutexGuard<Bucket>>,
}

impl Admission {
    /// Charges the request's cost, spread evenly over its partitions.
    pub fn spend(mut self, ru: f64) {
        let share = ru / self.buckets.len().max(1) as f64;
        for bucket in &mut self.buckets {
            bucket.spent += share;
        }
    }
}

impl Limiter {
    pub fn new(burst: bool) -> Self {
        Limiter {
            burst,
            partitions: Default::default(),
            metadata: Default::default(),
        }
    }

    /// Forgets every partition's spending (`POST /_emulator/reset`).
    pub fn clear(&self) {
        self.partitions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Admits a request on `partitions` (each with `budget` RU/s) at
    /// `now_ms`, or answers how long to wait. Partitions are taken in
    /// order, so that two requests over several never wait on each other.
    pub async fn admit(
        &self,
        partitions: &mut [PartitionId],
        budget: f64,
        now_ms: i64,
        priority: Priority,
    ) -> Result<Admission, u64> {
        partitions.sort();
        let handles: Vec<Arc<Mutex<Bucket>>> = {
            let mut all = self.partitions.lock().unwrap_or_else(|e| e.into_inner());
            partitions
                .iter()
                .map(|id| Arc::clone(all.entry(id.clone()).or_default()))
                .collect()
        };
        let mut buckets = Vec::with_capacity(handles.len());
        for handle in handles {
            let mut bucket = handle.lock_owned().await;
            bucket.admit(now_ms, budget, priority, self.burst)?;
            buckets.push(bucket);
        }
        Ok(Admission { buckets })
    }

    /// Admits a metadata request against the account's metadata budget.
    pub async fn admit_metadata(&self, now_ms: i64) -> Result<Admission, u64> {
        let mut bucket = Arc::clone(&self.metadata).lock_owned().await;
        bucket.admit(now_ms, METADATA_RU_PER_SECOND, Priority::High, false)?;
        Ok(Admission {
            buckets: vec![bucket],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spend(
        bucket: &mut Bucket,
        now_ms: i64,
        budget: f64,
        ru: f64,
        burst: bool,
    ) -> Result<(), u64> {
        bucket.admit(now_ms, budget, Priority::High, burst)?;
        bucket.spent += ru;
        Ok(())
    }

    #[test]
    fn a_second_admits_until_its_budget_is_spent_and_refills_with_the_next() {
        let mut bucket = Bucket::default();
        // 400 RU/s, writes of 40: ten fit, the eleventh waits.
        for _ in 0..10 {
            spend(&mut bucket, 5_000, 400.0, 40.0, false).unwrap();
        }
        assert_eq!(spend(&mut bucket, 5_000, 400.0, 40.0, false), Err(1000));
        assert_eq!(spend(&mut bucket, 5_250, 400.0, 40.0, false), Err(750));
        spend(&mut bucket, 6_000, 400.0, 40.0, false).expect("the next second refills");
    }

    #[test]
    fn the_last_request_may_overshoot_but_nothing_after_it() {
        let mut bucket = Bucket::default();
        spend(&mut bucket, 0, 400.0, 399.0, false).unwrap();
        spend(&mut bucket, 0, 400.0, 50.0, false).expect("399 < 400: admitted");
        assert!(spend(&mut bucket, 0, 400.0, 1.0, false).is_err());
        assert_eq!(bucket.spent, 449.0);
    }

    #[test]
    fn low_priority_is_throttled_first() {
        let mut bucket = Bucket::default();
        spend(&mut bucket, 0, 400.0, 320.0, false).unwrap();
        assert_eq!(bucket.admit(0, 400.0, Priority::Low, false), Err(1000));
        assert_eq!(bucket.admit(0, 400.0, Priority::High, false), Ok(()));
    }

    #[test]
    fn burst_capacity_saves_idle_seconds_and_spends_them_up_to_3000() {
        let mut bucket = Bucket::default();
        spend(&mut bucket, 0, 400.0, 100.0, true).unwrap();
        // Ten seconds later: 300 unspent in second 0, 9 idle seconds of 400.
        bucket.roll(10, 400.0, true);
        assert_eq!(bucket.saved, 300.0 + 9.0 * 400.0);
        assert_eq!(
            bucket.limit(400.0, true),
            3000.0,
            "spent at up to 3,000 RU/s"
        );
        // Savings are capped at 300 seconds' worth.
        bucket.roll(1_000, 400.0, true);
        assert_eq!(bucket.saved, 300.0 * 400.0);
        // Without burst, nothing is saved.
        let mut plain = Bucket::default();
        spend(&mut plain, 0, 400.0, 100.0, false).unwrap();
        plain.roll(10, 400.0, false);
        assert_eq!(plain.limit(400.0, false), 400.0);
    }

    #[test]
    fn overspending_with_burst_comes_out_of_the_savings() {
        let mut bucket = Bucket::default();
        bucket.roll(0, 400.0, true);
        bucket.roll(5, 400.0, true);
        assert_eq!(bucket.saved, 2000.0);
        bucket.spent = 1400.0;
        bucket.roll(6, 400.0, true);
        assert_eq!(bucket.saved, 1000.0);
    }

    #[tokio::test]
    async fn partitions_are_held_until_charged() {
        let limiter = Limiter::new(false);
        let id: PartitionId = (Arc::from("c"), 0);
        let admission = limiter
            .admit(&mut [id.clone()], 10.0, 0, Priority::High)
            .await
            .unwrap();
        let second = tokio::time::timeout(
            std::time::Duration::from_millis(50),
            limiter.admit(&mut [id.clone()], 10.0, 0, Priority::High),
        )
        .await;
        assert!(
            second.is_err(),
            "a second request waits for the first's charge"
        );
        admission.spend(10.0);
        let third = limiter.admit(&mut [id], 10.0, 0, Priority::High).await;
        assert_eq!(third.err(), Some(1000));
    }
}
