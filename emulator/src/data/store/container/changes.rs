//! The container's change log and the LSNs it numbers: what a write or a
//! delete takes (the log's LSN and its range's), what the log's retention
//! drops (each range notes the newest change it lost), and the
//! latest-version feed (live items in the order of their last write).

use super::{epk_of, Container};
use crate::data::store::item::{Item, Lsns};
use crate::data::store::log::{Change, ChangeLog};
use crate::protocol::item_key::ItemKey;

impl Container {
    /// Gives out the next LSNs of a write in the partition `pk` (canonical
    /// key text): the change log's and its range's. One per change, or one
    /// for a whole transactional batch.
    pub fn next_lsn(&mut self, pk: &str) -> Lsns {
        let range = self.range_index(pk);
        self.next_lsn_at(range)
    }

    /// [`Self::next_lsn`] in the range at `index` of the range map.
    pub(super) fn next_lsn_at(&mut self, index: usize) -> Lsns {
        let log = self.log.next_lsn();
        let range = self.ranges.lsns_mut(index).next(log);
        Lsns { log, range }
    }

    /// The LSN of the range `id` (the partition's LSN a response names);
    /// the highest of the container's ranges for a range it does not have.
    pub fn range_lsn(&self, id: u32) -> u64 {
        self.ranges
            .by_number(id)
            .map_or_else(|| self.ranges.highest_lsn(), |r| r.lsns.last())
    }

    /// Appends a change to the log, and notes in each range the newest of
    /// its changes the log dropped.
    pub(super) fn log_change(&mut self, change: Change) {
        let dropped = self.log.append(change);
        self.note_dropped(dropped);
    }

    fn note_dropped(&mut self, dropped: Vec<Change>) {
        let definition = &self.settings.partition_key;
        for change in dropped {
            self.ranges
                .lsns_at(|| epk_of(definition, change.key.pk()))
                .dropped_from_log(change.range_lsn);
        }
    }

    /// The live items changed after `lsn`, in the order of their last write
    /// (the latest-version change feed): expired items are skipped.
    pub fn latest_changes<'a>(
        &'a self,
        after: u64,
        now: i64,
    ) -> impl Iterator<Item = (&'a ItemKey, &'a Item)> + 'a {
        self.by_lsn
            .after(after)
            .map(|(_, key)| (key, &self.items[key]))
            .filter(move |(_, item)| self.is_live(item, now))
    }

    /// The log of changes (the all-versions-and-deletes feed).
    pub fn log(&self) -> &ChangeLog {
        &self.log
    }

    /// Drops log entries past the retention at `now`.
    pub fn expire_log(&mut self, now: i64) {
        let dropped = self.log.expire(now);
        self.note_dropped(dropped);
    }
}
