//! The whole account at once, for test isolation: reset it to empty, and
//! take and restore named in-memory snapshots of it (`POST
//! /_emulator/reset`, `/_emulator/snapshots`).
//!
//! A restore swaps the catalog under the write lock, so readers see the
//! state before or after it, never a mix. Numbers that must not be reused
//! (database, container and item numbers behind RIDs, LSNs behind session
//! tokens and change feed continuations) keep growing across a reset or a
//! restore, as if the restored state had been written anew: a client that
//! cached an RID or holds a continuation from before is never pointed at
//! a different resource. With `--data-dir`, a reset or restore is one
//! journal frame (a reset record, then the new state as a snapshot's
//! records), so it is whole or absent after a crash.
//!
//! Snapshots live in memory only: they are gone when the emulator stops
//! (`snapshot.rs`: what one holds).

use std::sync::Arc;

use super::catalog::Catalog;
use super::image::Image;
use super::snapshot::{Snapshot, SnapshotSummary, MAX_SNAPSHOT_NAME};
use super::{Store, Written};
use crate::protocol::error::{ApiError, ApiResult, Status};

impl Store {
    /// Drops every database (with its containers, items, scripts, change feeds,
    /// offers and users); with `clock`, sets the manual clock to it.
    /// Returns how many databases were dropped.
    pub fn reset(&self, clock: Option<i64>) -> ApiResult<usize> {
        if clock.is_some() && !self.clock.is_manual() {
            return Err(ApiError::bad_request(
                "'clock' sets the test clock, which is off: start the emulator with \
                 --clock manual, or reset without 'clock'.",
            ));
        }
        let empty = Image {
            meta: Vec::new(),
            clock: None,
            containers: Vec::new(),
        };
        let old = self.replace_account(&empty, clock)?;
        Ok(old.databases.len())
    }

    /// Keeps a copy of the whole account under `name` (replacing one of
    /// that name); returns what it holds and whether it replaced one.
    pub fn take_snapshot(&self, name: &str) -> ApiResult<(SnapshotSummary, Written)> {
        check_name(name)?;
        let now = self.clock.now();
        let image = {
            let catalog = self.read();
            Image::capture(&catalog, self.clock.is_manual().then_some(now))
        };
        let summary = SnapshotSummary {
            name: name.to_string(),
            databases: image.databases(),
            containers: image.containers.len(),
            items: image.item_count(),
            now,
        };
        let snapshot = Arc::new(Snapshot {
            image,
            summary: summary.clone(),
        });
        let replaced = self
            .snapshots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), snapshot)
            .is_some();
        let written = match replaced {
            true => Written::Replaced,
            false => Written::Created,
        };
        Ok((summary, written))
    }

    /// Makes the account exactly the snapshot `name` (the manual clock
    /// included); 404 if there is none.
    pub fn restore_snapshot(&self, name: &str) -> ApiResult<SnapshotSummary> {
        check_name(name)?;
        let snapshot = self
            .snapshots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
            .ok_or_else(|| {
                ApiError::not_found().with_message(format!(
                    "There is no snapshot named '{name}': take one first with \
                     PUT /_emulator/snapshots/{name} (GET /_emulator/snapshots lists them)."
                ))
            })?;
        let clock = snapshot.image.clock.filter(|_| self.clock.is_manual());
        let old = self.replace_account(&snapshot.image, clock)?;
        drop(old);
        let mut summary = snapshot.summary.clone();
        summary.now = self.clock.now();
        Ok(summary)
    }

    /// The snapshots kept, by name.
    pub fn snapshots(&self) -> Vec<SnapshotSummary> {
        self.snapshots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .map(|s| s.summary.clone())
            .collect()
    }

    /// Forgets the snapshot `name`; 404 if there is none.
    pub fn delete_snapshot(&self, name: &str) -> ApiResult<()> {
        check_name(name)?;
        let removed = self
            .snapshots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        match removed {
            Some(_) => Ok(()),
            None => {
                Err(ApiError::not_found()
                    .with_message(format!("There is no snapshot named '{name}'.")))
            }
        }
    }

    /// Replaces the catalog by the one `image` describes, journals it, and
    /// moves the manual clock to `clock`; returns the old catalog, to be
    /// freed by the caller once the lock is released.
    fn replace_account(&self, image: &Image, clock: Option<i64>) -> ApiResult<Catalog> {
        // Built outside the lock: requests go on meanwhile.
        let mut fresh = image.to_catalog(self.change_feed_retention).map_err(|e| {
            ApiError::new(
                Status::INTERNAL_SERVER_ERROR,
                format!("The snapshot cannot be restored: {e}"),
            )
        })?;
        let mut catalog = self.write()?;
        keep_numbers_growing(&mut fresh, &catalog);
        for c in fresh
            .databases
            .values_mut()
            .flat_map(|db| db.containers.values_mut())
        {
            c.attach(self.journal().cloned());
        }
        if let Some(durable) = &self.durable {
            // The new state as written ahead (numbers moved on).
            durable.reset_to(&fresh, clock);
        }
        let old = std::mem::replace(&mut *catalog, fresh);
        if let Some(at) = clock {
            self.clock.rewind_to(at)?;
        }
        drop(catalog);
        self.wrote();
        // Expiry instants changed: the purge task looks again.
        self.time_moved();
        Ok(old)
    }
}

/// Numbers behind RIDs and LSNs only grow: the restored catalog takes the
/// larger of its own and the current one's, resource by resource.
fn keep_numbers_growing(fresh: &mut Catalog, current: &Catalog) {
    fresh.next_database = fresh.next_database.max(current.next_database);
    fresh
        .offers
        .restore_next_number(current.offers.next_number());
    for db in fresh.databases.values_mut() {
        let Some(old) = current.databases.values().find(|d| d.rid == db.rid) else {
            continue;
        };
        db.next_container = db.next_container.max(old.next_container);
        db.next_user = db.next_user.max(old.next_user);
        db.next_client_encryption_key = db
            .next_client_encryption_key
            .max(old.next_client_encryption_key);
        for c in db.containers.values_mut() {
            if let Some(old) = old.containers.values().find(|o| o.rid == c.rid) {
                let (next_item, last_lsn, dropped_through) = old.counters();
                c.restore_counters(next_item, last_lsn, dropped_through);
                c.keep_rids_growing(old);
                c.scripts.keep_numbers_growing(&old.scripts);
            }
        }
    }
}

fn check_name(name: &str) -> ApiResult<()> {
    let ok = !name.is_empty()
        && name.len() <= MAX_SNAPSHOT_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "A snapshot name is 1 to {MAX_SNAPSHOT_NAME} characters of A-Z, a-z, 0-9, '.', '_' \
             and '-'; got '{name}'."
        )))
    }
}

#[cfg(test)]
mod tests;
