//! The account's regions (`--regions`): their names in failover order, the
//! write region (moved by a failover), which regions are down and how, and
//! how far each read region's replica lags. Every region serves the one
//! store; a region's endpoint consults this to answer as that region would.
//! All times are the emulator clock's milliseconds, so a test moves an
//! outage's end or a replica's lag with the test clock.
//!
//! Replication is modelled by what a session token can tell: a read region
//! has applied the writes up to its *replicated LSN* (the store's LSN as it
//! was `lag` ago, or when replication was paused); a read whose session
//! token names a later LSN is refused there with 404/1002, as the service
//! refuses it. Reads without such a token see the store as it is.
//!
//! A session token names its partition's LSN, not the store's: each
//! partition key range's writes are noted with the store LSN they brought
//! the store to ([`Topology::record_range`]), so that the range's LSN a
//! lagging replica has applied follows from the store LSN it has applied
//! ([`Topology::range_lsn_at`]). (The children of a split start with no
//! history: a lagging replica is taken to have applied all of theirs.)
//!
//! Nothing here knows HTTP: the steps around every operation
//! (`operations/around.rs`) apply it to requests, `http/regions.rs` serves
//! its control routes and the account document's locations.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, RwLock};

/// How a region that is down fails its clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outage {
    /// Its endpoint refuses connections (nothing listens).
    Refuse,
    /// Connections are reset (TCP RST) when a request arrives.
    Reset,
    /// Requests are never answered.
    Hang,
    /// 503 ServiceUnavailable.
    Unavailable,
    /// 403/1008: the account is not found in this region (a region removed).
    Removed,
}

impl Outage {
    pub fn parse(text: &str) -> Option<Outage> {
        Some(match text {
            "refuse" => Outage::Refuse,
            "reset" => Outage::Reset,
            "hang" => Outage::Hang,
            "503" => Outage::Unavailable,
            "403-1008" | "403/1008" => Outage::Removed,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Outage::Refuse => "refuse",
            Outage::Reset => "reset",
            Outage::Hang => "hang",
            Outage::Unavailable => "503",
            Outage::Removed => "403-1008",
        }
    }
}

/// One region's condition.
#[derive(Debug, Clone, Default)]
struct Condition {
    /// Down, and until when (`None`: until brought up).
    outage: Option<(Outage, Option<i64>)>,
    /// How far behind the write region its replica is, in milliseconds.
    lag_ms: i64,
    /// Replication stopped at this LSN.
    paused_at: Option<u64>,
}

#[derive(Debug)]
struct State {
    write_region: usize,
    conditions: Vec<Condition>,
}

/// How many LSN samples the replication history keeps: enough for lags of
/// many seconds at any write rate a test makes.
const HISTORY: usize = 4096;

/// One range's writes as [`Topology::record_range`] noted them.
#[derive(Debug, Default)]
struct RangeHistory {
    /// `(store LSN, range LSN)`, both ascending.
    writes: VecDeque<(u64, u64)>,
    /// The range LSN of the newest pair dropped (0: none).
    dropped: u64,
}

/// A range of a container: the container's RID and the range's id.
type RangeOf = (Vec<u8>, u32);

/// The regions of the account.
#[derive(Debug)]
pub struct Topology {
    names: Vec<String>,
    multi_write: bool,
    state: RwLock<State>,
    /// `(emulator ms, store LSN)` each time a write moved the LSN, oldest
    /// first: what a lagging replica had applied at an instant.
    history: Mutex<VecDeque<(i64, u64)>>,
    /// Per container (by RID): `(store LSN, container LSN)` after each of
    /// its writes, oldest first, and the container LSN of the newest pair
    /// dropped to keep [`HISTORY`] of them.
    ranges: Mutex<HashMap<RangeOf, RangeHistory>>,
    /// Whether each region's listener is open (`endpoints.rs` closes it
    /// while the region refuses connections): the control routes answer
    /// once it is as they asked.
    listening: Vec<AtomicBool>,
}

/// A refusal of a region change: the message for a 400 or 404.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    UnknownRegion(String),
    Invalid(String),
}

impl Topology {
    /// The regions, named in failover order (the first writes, unless
    /// `multi_write`: all do). Names must be distinct and not empty.
    pub fn new(names: Vec<String>, multi_write: bool) -> Result<Topology, String> {
        if names.is_empty() {
            return Err("--regions needs at least one region name".into());
        }
        for (i, name) in names.iter().enumerate() {
            if name.trim().is_empty() {
                return Err("--regions has an empty region name".into());
            }
            if names[..i]
                .iter()
                .any(|other| other.eq_ignore_ascii_case(name))
            {
                return Err(format!("--regions names '{name}' twice"));
            }
        }
        Ok(Topology {
            state: RwLock::new(State {
                write_region: 0,
                conditions: vec![Condition::default(); names.len()],
            }),
            listening: names.iter().map(|_| AtomicBool::new(true)).collect(),
            names,
            multi_write,
            history: Mutex::new(VecDeque::new()),
            ranges: Mutex::new(HashMap::new()),
        })
    }

    /// The one region of an account started without `--regions`.
    pub fn single(name: &str) -> Topology {
        Topology::new(vec![name.to_string()], false).expect("one named region")
    }

    /// Every region up, current, and the first writing (`POST /_emulator/reset`).
    pub fn reset(&self) {
        let mut state = self.state_mut();
        state.write_region = 0;
        state.conditions = vec![Condition::default(); self.names.len()];
    }

    /// Notes that `region`'s listener is open or closed.
    pub fn set_listening(&self, region: usize, listening: bool) {
        self.listening[region].store(listening, Ordering::Release);
    }

    /// Whether every region's listener is as its condition wants it at
    /// `now_ms`: closed while it refuses connections, open otherwise.
    pub fn listeners_settled(&self, now_ms: i64) -> bool {
        (0..self.names.len()).all(|region| {
            let refusing = self.outage(region, now_ms) == Some(Outage::Refuse);
            self.listening[region].load(Ordering::Acquire) != refusing
        })
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn name(&self, region: usize) -> &str {
        &self.names[region]
    }

    pub fn multi_write(&self) -> bool {
        self.multi_write
    }

    /// A region by name (any case, as the SDKs compare them).
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.names
            .iter()
            .position(|n| n.eq_ignore_ascii_case(name.trim()))
    }

    fn state(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn state_mut(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    pub fn write_region(&self) -> usize {
        self.state().write_region
    }

    /// The regions in failover order: the write region first, then the
    /// others as `--regions` named them (the account document's order).
    pub fn in_failover_order(&self) -> Vec<usize> {
        let write = self.write_region();
        std::iter::once(write)
            .chain((0..self.names.len()).filter(|r| *r != write))
            .collect()
    }

    /// The regions that take writes: all with multi-write, else the write region.
    pub fn writable(&self) -> Vec<usize> {
        match self.multi_write {
            true => self.in_failover_order(),
            false => vec![self.write_region()],
        }
    }

    /// Whether `region` takes writes now.
    pub fn takes_writes(&self, region: usize) -> bool {
        self.multi_write || self.write_region() == region
    }

    /// Makes `name` the write region (a manual failover).
    pub fn fail_over(&self, name: &str) -> Result<usize, Refusal> {
        let region = self.known(name)?;
        self.state_mut().write_region = region;
        Ok(region)
    }

    fn known(&self, name: &str) -> Result<usize, Refusal> {
        self.index_of(name)
            .ok_or_else(|| Refusal::UnknownRegion(name.to_string()))
    }

    /// Takes `name` down in `mode`, until `until_ms` on the emulator's clock
    /// (`None`: until brought up).
    pub fn take_down(
        &self,
        name: &str,
        mode: Outage,
        until_ms: Option<i64>,
    ) -> Result<usize, Refusal> {
        let region = self.known(name)?;
        self.state_mut().conditions[region].outage = Some((mode, until_ms));
        Ok(region)
    }

    pub fn bring_up(&self, name: &str) -> Result<usize, Refusal> {
        let region = self.known(name)?;
        self.state_mut().conditions[region].outage = None;
        Ok(region)
    }

    /// How `region` is down at `now_ms`, if it is.
    pub fn outage(&self, region: usize, now_ms: i64) -> Option<Outage> {
        match self.state().conditions[region].outage {
            Some((mode, None)) => Some(mode),
            Some((mode, Some(until))) if now_ms < until => Some(mode),
            _ => None,
        }
    }

    /// Sets `name`'s replica behind by `lag_ms`, or pauses it at `lsn`
    /// (`paused: Some(false)` resumes it).
    pub fn set_replication(
        &self,
        name: &str,
        lag_ms: Option<i64>,
        paused: Option<bool>,
        lsn: u64,
    ) -> Result<usize, Refusal> {
        let region = self.known(name)?;
        if lag_ms.is_some_and(|lag| lag < 0) {
            return Err(Refusal::Invalid(
                "'lagMs' must be 0 or more milliseconds of the emulator's clock".into(),
            ));
        }
        let mut state = self.state_mut();
        let condition = &mut state.conditions[region];
        if let Some(lag) = lag_ms {
            condition.lag_ms = lag;
        }
        match paused {
            Some(true) => condition.paused_at = condition.paused_at.or(Some(lsn)),
            Some(false) => condition.paused_at = None,
            None => {}
        }
        Ok(region)
    }

    /// A region's replication, as the control API reports it.
    pub fn replication(&self, region: usize) -> (i64, Option<u64>) {
        let state = self.state();
        let condition = &state.conditions[region];
        (condition.lag_ms, condition.paused_at)
    }

    /// Notes that the store's LSN is `lsn` at `now_ms` (after a write).
    pub fn record(&self, now_ms: i64, lsn: u64) {
        let mut history = self.history.lock().unwrap_or_else(|e| e.into_inner());
        if history.back().is_some_and(|(_, last)| *last >= lsn) {
            return;
        }
        if history.len() == HISTORY {
            history.pop_front();
        }
        history.push_back((now_ms, lsn));
    }

    /// Notes that a write brought the range `range` of the container `rid`
    /// to `lsn` and the store to `store_lsn`.
    pub fn record_range(&self, rid: &[u8], range: u32, store_lsn: u64, lsn: u64) {
        let mut ranges = self.ranges.lock().unwrap_or_else(|e| e.into_inner());
        let history = ranges.entry((rid.to_vec(), range)).or_default();
        if history.writes.back().is_some_and(|(_, last)| *last >= lsn) {
            return;
        }
        if history.writes.len() == HISTORY {
            if let Some((_, dropped)) = history.writes.pop_front() {
                history.dropped = dropped;
            }
        }
        history.writes.push_back((store_lsn, lsn));
    }

    /// The LSN of the range `range` of the container `rid` that a replica
    /// having applied the store up to `store_lsn` has, the range being at
    /// `current`: its last write noted at or before `store_lsn`. A range
    /// with no write noted (none through a request) is all applied.
    pub fn range_lsn_at(&self, rid: &[u8], range: u32, store_lsn: u64, current: u64) -> u64 {
        let ranges = self.ranges.lock().unwrap_or_else(|e| e.into_inner());
        let Some(history) = ranges.get(&(rid.to_vec(), range)) else {
            return current;
        };
        let applied = history
            .writes
            .iter()
            .rev()
            .find(|(store, _)| *store <= store_lsn)
            .map_or(history.dropped, |(_, lsn)| *lsn);
        applied.min(current)
    }

    /// The LSN `region`'s replica has applied at `now_ms`, the store being
    /// at `current`: all of it for a region that writes or does not lag.
    pub fn replicated_lsn(&self, region: usize, now_ms: i64, current: u64) -> u64 {
        let (lag_ms, paused_at) = {
            let state = self.state();
            if state.write_region == region || self.multi_write {
                return current;
            }
            let condition = &state.conditions[region];
            (condition.lag_ms, condition.paused_at)
        };
        let lagged = if lag_ms == 0 {
            current
        } else {
            // The last LSN written at or before `now - lag`.
            let history = self.history.lock().unwrap_or_else(|e| e.into_inner());
            history
                .iter()
                .rev()
                .find(|(at, _)| *at <= now_ms.saturating_sub(lag_ms))
                .map_or(0, |(_, lsn)| *lsn)
        };
        match paused_at {
            Some(paused) => lagged.min(paused),
            None => lagged,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn three() -> Topology {
        Topology::new(
            vec!["West US".into(), "East US".into(), "North Europe".into()],
            false,
        )
        .unwrap()
    }

    #[test]
    fn names_are_checked() {
        assert!(Topology::new(vec![], false).is_err());
        assert!(Topology::new(vec!["A".into(), "a".into()], false).is_err());
        assert!(Topology::new(vec![" ".into()], false).is_err());
    }

    #[test]
    fn the_first_region_writes_until_a_failover() {
        let regions = three();
        assert_eq!(regions.writable(), vec![0]);
        assert_eq!(regions.in_failover_order(), vec![0, 1, 2]);
        assert!(regions.takes_writes(0) && !regions.takes_writes(1));
        regions.fail_over("east us").unwrap();
        assert_eq!(regions.writable(), vec![1]);
        assert_eq!(regions.in_failover_order(), vec![1, 0, 2]);
        assert_eq!(
            regions.fail_over("Mars"),
            Err(Refusal::UnknownRegion("Mars".into()))
        );
        let multi = Topology::new(vec!["A".into(), "B".into()], true).unwrap();
        assert_eq!(multi.writable(), vec![0, 1]);
        assert!(multi.takes_writes(1));
    }

    #[test]
    fn an_outage_ends_when_brought_up_or_when_its_time_is_over() {
        let regions = three();
        regions
            .take_down("East US", Outage::Unavailable, Some(5_000))
            .unwrap();
        assert_eq!(regions.outage(1, 4_999), Some(Outage::Unavailable));
        assert_eq!(regions.outage(1, 5_000), None);
        assert_eq!(regions.outage(0, 0), None);
        regions.take_down("East US", Outage::Refuse, None).unwrap();
        assert_eq!(regions.outage(1, i64::MAX), Some(Outage::Refuse));
        regions.bring_up("East US").unwrap();
        assert_eq!(regions.outage(1, 0), None);
    }

    #[test]
    fn a_lagging_replica_has_applied_what_was_written_lag_ago() {
        let regions = three();
        regions.record(1_000, 5);
        regions.record(2_000, 9);
        regions
            .set_replication("East US", Some(500), None, 9)
            .unwrap();
        assert_eq!(regions.replicated_lsn(1, 2_400, 9), 5);
        assert_eq!(regions.replicated_lsn(1, 2_500, 9), 9);
        assert_eq!(
            regions.replicated_lsn(0, 2_400, 9),
            9,
            "the write region is current"
        );
        // Paused: nothing after the pause arrives, whatever the time.
        regions
            .set_replication("North Europe", None, Some(true), 9)
            .unwrap();
        regions.record(3_000, 12);
        assert_eq!(regions.replicated_lsn(2, 10_000, 12), 9);
        regions
            .set_replication("North Europe", None, Some(false), 12)
            .unwrap();
        assert_eq!(regions.replicated_lsn(2, 10_000, 12), 12);
        assert!(regions
            .set_replication("East US", Some(-1), None, 0)
            .is_err());
    }

    #[test]
    fn a_ranges_applied_lsn_follows_the_stores() {
        let t = three();
        // Container a written at store LSNs 2, 3, 7; b at 4, 5, 6; a's
        // range 1 at 8.
        for (rid, store, lsn) in [
            ("a", 2, 1),
            ("a", 3, 2),
            ("b", 4, 1),
            ("b", 5, 2),
            ("b", 6, 3),
            ("a", 7, 3),
        ] {
            t.record_range(rid.as_bytes(), 0, store, lsn);
        }
        t.record_range(b"a", 1, 8, 1);
        assert_eq!(t.range_lsn_at(b"a", 1, 7, 1), 0, "range 1 of a: not yet");
        assert_eq!(t.range_lsn_at(b"a", 1, 8, 1), 1);
        assert_eq!(t.range_lsn_at(b"a", 0, 8, 3), 3, "range 0 untouched by 1");
        assert_eq!(t.range_lsn_at(b"a", 0, 7, 3), 3);
        assert_eq!(
            t.range_lsn_at(b"a", 0, 6, 3),
            2,
            "b's writes move a nowhere"
        );
        assert_eq!(t.range_lsn_at(b"a", 0, 2, 3), 1);
        assert_eq!(t.range_lsn_at(b"a", 0, 1, 3), 0);
        assert_eq!(t.range_lsn_at(b"b", 0, 4, 3), 1);
        assert_eq!(
            t.range_lsn_at(b"none", 0, 1, 5),
            5,
            "no write noted: all applied"
        );
        assert_eq!(t.range_lsn_at(b"a", 0, 7, 2), 2, "never past the container");
    }
}
