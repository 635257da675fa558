//! The account: what every endpoint and every front door (HTTP today, the
//! in-process [`crate::Emulator`], a binary protocol tomorrow) shares,
//! as one value behind an `Arc`. Its data (the store, and the clock the
//! store keeps), its key and consistency level, the script engine, how it
//! charges and throttles, its regions, the fault rules and the query
//! results kept between pages.
//!
//! What belongs to one endpoint (its scheme, address, region, certificate,
//! the gateway kind whose URLs it reads) stays with the endpoint
//! (`http::Endpoint`).
//!
//! The account's own parts, which know nothing of any protocol:
//! - `regions`: the account's regions, the write region, outages and
//!   replication lag;
//! - `throttle`: the per-second budgets of `--rate-limit`;
//! - `faults`: the fault rules of the control API (what matches, how often).

pub(crate) mod faults;
pub mod regions;
pub mod throttle;

use std::sync::Arc;

use crate::account::faults::Faults;
use crate::account::regions::Topology;
use crate::account::throttle::Limiter;
use crate::data::clock::Clock;
use crate::data::query::results::ResultCache;
use crate::data::script::ScriptEngine;
use crate::data::store::Store;
use crate::protocol::auth::MasterKey;
use crate::protocol::consistency::Consistency;
use crate::protocol::request_units::ChargeModel;

/// Everything account-wide.
pub struct Account {
    /// Databases, containers, items, the log and the clock.
    pub store: Arc<Store>,
    /// The master key requests are signed with (`--key`).
    pub key: MasterKey,
    /// The default consistency level (`--consistency`): the strongest a
    /// request may ask for.
    pub consistency: Consistency,
    /// Stored procedure, trigger and UDF executions (`script/`).
    pub scripts: Arc<ScriptEngine>,
    /// How requests are charged (`--ru-charges`).
    pub charges: ChargeModel,
    /// Every partition's spending, with `--rate-limit` (`throttle.rs`).
    pub limiter: Option<Limiter>,
    /// The regions (`--regions`): names, the write region, outages, lag.
    pub topology: Topology,
    /// The fault rules (`POST /_emulator/faults`).
    pub faults: Faults,
    /// Whole query results between their pages (`data/query/results.rs`).
    pub query_results: ResultCache,
}

impl Account {
    /// An account over `store` with the service's defaults: one region,
    /// Session consistency, no throttling, no fault rule.
    pub fn new(store: Store, key: MasterKey, region: &str) -> Self {
        Account {
            store: Arc::new(store),
            key,
            consistency: Consistency::default(),
            scripts: Arc::default(),
            charges: ChargeModel::default(),
            limiter: None,
            topology: Topology::single(region),
            faults: Faults::default(),
            query_results: ResultCache::default(),
        }
    }

    /// The account's one source of time (the store's).
    pub fn clock(&self) -> &Clock {
        &self.store.clock
    }

    /// Whether a request asking for the consistency level `requested`
    /// gives (its `x-ms-consistency-level`, if any) reads a quorum: Strong
    /// or Bounded Staleness, which doubles a read's charge. A request may
    /// only relax the account's level, so under a weaker account nothing
    /// reads one, and `requested` is not even asked.
    pub fn reads_quorum<'a>(&self, requested: impl FnOnce() -> Option<&'a str>) -> bool {
        if !crate::protocol::request_units::reads_quorum(self.consistency) {
            return false;
        }
        crate::protocol::request_units::reads_quorum(self.consistency.for_request(requested()))
    }

    /// The LSN reads at region `region` can see now: the store's at the
    /// write region, a lagging replica's elsewhere.
    fn visible_lsn(&self, region: usize) -> u64 {
        let current = self.store.session_lsn();
        if self.topology.names().len() == 1 {
            return current;
        }
        let now = self.store.clock.now_millis();
        self.topology.replicated_lsn(region, now, current)
    }

    /// The LSN of the range `range` of the container `rid` (at `current`)
    /// that reads at region `region` can see now: what session tokens name
    /// and are checked against.
    pub fn visible_range_lsn(&self, region: usize, rid: &[u8], range: u32, current: u64) -> u64 {
        if self.topology.names().len() == 1 {
            return current;
        }
        let store_lsn = self.visible_lsn(region);
        if store_lsn >= self.store.session_lsn() {
            return current; // all applied (the write region, or no lag)
        }
        self.topology.range_lsn_at(rid, range, store_lsn, current)
    }
}
