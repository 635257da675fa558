//! One partition key range's log sequence numbers (LSNs), as the service
//! numbers each physical partition's writes: what clients see of a write
//! (`_lsn`, the `lsn` header, session tokens, the change feed's `etag`).
//!
//! A container's change log orders all its writes by its own sequence (the
//! *log* LSN, `log.rs`); each write also takes the next LSN of its range.
//! Within a range both grow together, so a range LSN names a place in the
//! log: [`RangeLsns::log_position_after`] finds, from waypoints noted every
//! [`WAYPOINT_EVERY`] writes, a log LSN before every write of the range past
//! a given range LSN, where a change feed continuing from that range LSN
//! starts reading (it then skips the few writes before its own).
//!
//! The children of a split take a copy of their parent's: they continue its
//! numbering, so a continuation or a session token from before the split
//! holds on either child.

use serde::{Deserialize, Serialize};

/// How many writes of a range apart its waypoints are: a feed continuing
/// from a range LSN reads at most this many of the range's writes (and the
/// other ranges' between them) before its first.
const WAYPOINT_EVERY: u64 = 64;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RangeLsns {
    /// The last LSN given out (0 before the first write).
    #[serde(default, rename = "lsn")]
    last: u64,
    /// The range LSN of the newest change dropped from the container's
    /// change log (retention): the all-versions-and-deletes feed cannot
    /// continue from before it.
    #[serde(default, rename = "droppedLsn")]
    dropped: u64,
    /// `(range LSN, log LSN)` of some of its writes, both ascending. Rebuilt
    /// from the items when the data directory is read.
    #[serde(skip)]
    waypoints: Vec<(u64, u64)>,
}

impl RangeLsns {
    /// The last LSN given out.
    pub fn last(&self) -> u64 {
        self.last
    }

    /// The range LSN of the newest change dropped from the log.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Gives out the next LSN, for a write under the log LSN `log`.
    pub fn next(&mut self, log: u64) -> u64 {
        self.last += 1;
        self.note(self.last, log);
        self.last
    }

    /// Replaying the data directory: a write of this range took `lsn`
    /// under the log LSN `log`.
    pub fn restore(&mut self, lsn: u64, log: u64) {
        self.last = self.last.max(lsn);
        self.note(lsn, log);
    }

    /// Gives out no LSN up to `lsn` from now on.
    pub fn raise(&mut self, lsn: u64) {
        self.last = self.last.max(lsn);
    }

    /// A change of this range under `lsn` left the change log.
    pub fn dropped_from_log(&mut self, lsn: u64) {
        self.dropped = self.dropped.max(lsn);
    }

    /// Takes on `other`'s LSNs where they are beyond these (the map that
    /// replaced this one, a split's parent).
    pub fn carry(&mut self, other: &RangeLsns) {
        self.last = self.last.max(other.last);
        self.dropped = self.dropped.max(other.dropped);
        for &(lsn, log) in &other.waypoints {
            self.note(lsn, log);
        }
    }

    /// A log LSN such that every write of this range with a range LSN past
    /// `after` has a log LSN past it.
    pub fn log_position_after(&self, after: u64) -> u64 {
        // The last waypoint at or before the first write wanted (after + 1):
        // that write, and all later ones, sit at or after its log LSN.
        let index = self
            .waypoints
            .partition_point(|(lsn, _)| *lsn <= after.saturating_add(1));
        match index {
            0 => 0,
            i => self.waypoints[i - 1].1.saturating_sub(1),
        }
    }

    /// Notes `(lsn, log)` as a waypoint if it is the first, or far enough
    /// from its neighbour; out of order (a replay) it goes in its place.
    fn note(&mut self, lsn: u64, log: u64) {
        match self.waypoints.last() {
            None => self.waypoints.push((lsn, log)),
            Some(&(last, last_log)) if lsn > last && log > last_log => {
                if lsn - last >= WAYPOINT_EVERY {
                    self.waypoints.push((lsn, log));
                }
            }
            Some(_) => {
                let at = self.waypoints.partition_point(|(l, _)| *l < lsn);
                if self.waypoints.get(at).is_none_or(|(l, _)| *l != lsn) {
                    self.waypoints.insert(at, (lsn, log));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_lsn_names_a_place_in_the_log_before_its_writes() {
        // This range wrote every third log LSN: range LSN n at log 3n.
        let mut lsns = RangeLsns::default();
        for n in 1..=1000 {
            assert_eq!(lsns.next(3 * n), n);
        }
        assert_eq!(lsns.last(), 1000);
        for after in [0, 1, 63, 64, 65, 500, 999, 1000] {
            let position = lsns.log_position_after(after);
            // Before the first wanted write, and not far before it.
            let first_wanted = 3 * (after + 1);
            assert!(position < first_wanted, "{after}: {position}");
            assert!(
                first_wanted - position <= 3 * WAYPOINT_EVERY + 3,
                "{after}: {position}"
            );
        }
        assert!(lsns.waypoints.len() <= 1000 / WAYPOINT_EVERY as usize + 1);
    }

    #[test]
    fn a_replay_out_of_order_and_a_carry_keep_the_waypoints_true() {
        let mut replayed = RangeLsns::default();
        replayed.restore(200, 800);
        replayed.restore(5, 20);
        replayed.restore(100, 400);
        assert_eq!(replayed.last(), 200);
        assert_eq!(replayed.log_position_after(4), 19);
        assert_eq!(replayed.log_position_after(150), 399);
        let mut child = RangeLsns::default();
        child.carry(&replayed);
        assert_eq!(child.next(900), 201);
        assert_eq!(child.log_position_after(200), 799);
        child.dropped_from_log(7);
        assert_eq!(child.dropped(), 7);
    }
}
