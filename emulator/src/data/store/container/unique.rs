//! A container's unique keys (`data/store/unique_keys.rs`): the check a write
//! passes, and the index rebuilt when items come back from elsewhere.

use serde_json::{Map, Value};

use super::Container;
use crate::data::store::unique_keys::{UniqueIndex, UniqueKeyPolicy};
use crate::protocol::error::{ApiError, ApiResult, Status};
use crate::protocol::item_key::ItemKey;

/// The service's refusal of a changed policy (see `unique_keys.rs`).
const IMMUTABLE: &str = "The unique index cannot be modified. To change the unique index, \
    remove the collection and re-create a new one. (A container replace sends the container's \
    current uniqueKeyPolicy, or none if it has none.)";

impl Container {
    /// A replace may not change the unique key policy, nor drop it by
    /// leaving it out: 403, as the service answers.
    pub(super) fn check_same_unique_keys(
        current: &UniqueKeyPolicy,
        sent: &UniqueKeyPolicy,
    ) -> ApiResult<()> {
        if current.same_as(sent) {
            return Ok(());
        }
        Err(ApiError::new(Status::FORBIDDEN, IMMUTABLE))
    }

    /// The index entries of `body` as the item at `key` (none without a
    /// policy): for a write staged elsewhere (batch) to check.
    pub fn unique_entries(&self, key: &ItemKey, body: &Map<String, Value>) -> Vec<String> {
        self.unique
            .as_ref()
            .map(|u| u.policy().entries(key.pk(), body))
            .unwrap_or_default()
    }

    /// The live item other than `key` that holds `entry`, if any: an expired
    /// holder, purged or not, holds nothing (R5).
    pub fn unique_holder(&self, entry: &str, key: &ItemKey, now: i64) -> Option<&ItemKey> {
        let holder = self.unique.as_ref()?.holder(entry)?;
        (holder != key && self.get(holder, now).is_some()).then_some(holder)
    }

    /// The conflict of a write of `entry` (see [`Self::unique_entries`]).
    pub fn unique_conflict(&self, entry: &str) -> ApiError {
        match &self.unique {
            Some(u) => u.policy().conflict(entry),
            None => ApiError::conflict(),
        }
    }

    /// Refuses (409) writing `body` as the item at `key` when another live
    /// item of its logical partition has the same values at a unique key.
    pub fn check_unique(
        &self,
        key: &ItemKey,
        body: &Map<String, Value>,
        now: i64,
    ) -> ApiResult<()> {
        // The item at `key` itself is never a holder to refuse.
        self.check_unique_replacing(key, key, body, now)
    }

    /// [`Self::check_unique`] for a rename: the item at `replaced` becomes
    /// the one at `key`, so its own values are no conflict.
    pub fn check_unique_replacing(
        &self,
        key: &ItemKey,
        replaced: &ItemKey,
        body: &Map<String, Value>,
        now: i64,
    ) -> ApiResult<()> {
        for entry in self.unique_entries(key, body) {
            if self
                .unique_holder(&entry, key, now)
                .is_some_and(|holder| holder != replaced)
            {
                return Err(self.unique_conflict(&entry));
            }
        }
        Ok(())
    }

    /// Builds the index afresh from the stored items, in the order of their
    /// last write (a later holder of a value replaces an earlier, expired
    /// one): when the policy a container is given differs from the one it
    /// had (a catalog record replayed over it).
    pub(super) fn rebuild_unique(&mut self) {
        let mut unique = UniqueIndex::for_policy(&self.settings.unique_keys);
        if let Some(index) = &mut unique {
            for (key, item) in self.stored_in_lsn_order() {
                index.insert(key, &item.body);
            }
        }
        self.unique = unique;
    }

    /// Adds one restored item to the index (`restore_items`).
    pub(super) fn restore_unique(&mut self, key: &ItemKey, body: &[u8]) {
        if let Some(unique) = &mut self.unique {
            unique.insert(key, body);
        }
    }

    /// How many unique values the index holds (for tests).
    pub fn unique_values_held(&self) -> usize {
        self.unique.as_ref().map_or(0, |u| u.held())
    }
}
