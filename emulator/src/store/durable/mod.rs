//! The store in its data directory (`--data-dir`): what is written ahead,
//! how the state comes back at start, and the snapshots that bound the log.
//!
//! - **Writing ahead.** Every item change is recorded as the container logs
//!   it (`Container::install` and `forget`, the change log's two doors); a
//!   change to the catalog (databases, container settings, offers, users,
//!   ranges) records the catalog's metadata whole; a manual clock move
//!   records its position. When the store's write lock is released
//!   ([`CatalogWrite`]'s drop), the operation's records go to the journal as
//!   one frame: a transactional batch, a container replace with the purge it
//!   runs, or a purge batch is whole after a crash or absent.
//! - **Start.** The newest snapshot, then the journal frames after it, are
//!   applied in order ([`Store::open_data_dir`]). Expiry needs nothing of its
//!   own: items carry their `_ts` and TTL, so an item that expired while the
//!   emulator was stopped is absent from the first request, and the purge
//!   that runs at start logs its one TTL delete.
//! - **Snapshots.** When the log outgrows the last snapshot (its size, and
//!   over [`COMPACT_AT_LEAST`]), or on `POST /_emulator/compact`, the
//!   state is captured under the write lock (items and log entries share
//!   their bodies, so this is cheap), a new log generation starts, and the
//!   snapshot is written beside, outside the lock.

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;

use super::container::Container;
use super::image::{unknown, Image, PendingContainers};
use super::records::{ContainerNumbers, Record};
use super::{Catalog, Store};
use crate::clock::Clock;
use crate::error::{ApiError, ApiResult, Status};
use crate::persist::{DataDir, Journal, Next, Reader, SyncMode};
use meta::WrittenMeta;

/// The log is compacted once it is larger than the last snapshot and at
/// least this big: start-up then reads at most about twice the live data
/// (a rewrite of the live data per its size in new log, as the price).
pub const COMPACT_AT_LEAST: u64 = 64 << 20;

/// What `POST /_emulator/compact` reports.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Compaction {
    pub generation: u64,
    pub snapshot_bytes: u64,
    pub log_bytes_before: u64,
    /// The whole compaction (mostly writing and syncing the snapshot).
    pub millis: f64,
    /// The part under the store's write lock (capturing the state), during
    /// which requests wait.
    pub locked_millis: f64,
}

/// What the store keeps only with a data directory: the journal, and what
/// compacting it and journaling only changed metadata need. The store holds
/// one (`Store::durable`) once `Store::open_data_dir` has read the
/// directory back; without one it keeps everything in memory only.
pub(in crate::store) struct Durable {
    /// Where changes are written ahead.
    journal: Arc<Journal>,
    /// The size of the last snapshot (the log is compacted past it).
    snapshot_bytes: AtomicU64,
    /// The least log size compacted ([`COMPACT_AT_LEAST`]).
    compact_at_least: u64,
    /// Held while a compaction runs.
    compacting: Mutex<()>,
    /// The metadata the journal holds, to journal only what changes.
    written_meta: Mutex<WrittenMeta>,
}

impl Durable {
    pub(in crate::store) fn journal(&self) -> &Arc<Journal> {
        &self.journal
    }

    /// Refuses a change once the data directory could not be written:
    /// nothing more is acknowledged that is not kept.
    pub(in crate::store) fn check_writable(&self) -> ApiResult<()> {
        if self.journal.has_failed() {
            return Err(unavailable(&format!(
                "a write to {} failed",
                self.journal.dir().path().display()
            )));
        }
        Ok(())
    }

    /// Commits an operation's records as one frame (as its write lock is
    /// released), with the pieces of `catalog`'s metadata that changed if
    /// the operation changed any; `session` is the session LSN it brings
    /// the store to (or more).
    pub(in crate::store) fn commit(&self, catalog: &Catalog, meta_changed: bool, session: u64) {
        if meta_changed {
            let pieces = catalog.meta_pieces();
            let changed = self
                .written_meta
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .diff(pieces);
            for record in changed {
                self.journal.record(|out| record.encode(out));
            }
        }
        self.journal.commit(&session.to_le_bytes());
    }

    /// Writes ahead that the account became `fresh` (a reset or a restore,
    /// `account.rs`): a reset, then the image of the catalog as it now is,
    /// and the metadata the journal holds is exactly that image's.
    pub(in crate::store) fn reset_to(&self, fresh: &Catalog, clock: Option<i64>) {
        let written = Image::capture(fresh, None);
        self.journal
            .record(|out| Record::Reset { clock }.encode(out));
        for record in written.records() {
            self.journal.record(|out| record.encode(out));
        }
        let mut held = self.written_meta.lock().unwrap_or_else(|e| e.into_inner());
        *held = WrittenMeta::default();
        held.diff(written.meta);
    }

    /// Whether the log has outgrown the last snapshot (see the module comment).
    fn compaction_due(&self) -> bool {
        let log_bytes = self.journal.log_bytes();
        log_bytes >= self.compact_at_least
            && log_bytes > self.snapshot_bytes.load(Ordering::Acquire)
    }
}

/// What start-up read back, for its log line.
#[derive(Debug, Default)]
struct Replayed {
    frames: usize,
    records: usize,
}

impl Catalog {
    pub(in crate::store) fn container_by_numbers(
        &mut self,
        (database, container): ContainerNumbers,
    ) -> Option<&mut Container> {
        self.databases
            .values_mut()
            .find(|db| db.number == database)?
            .containers
            .values_mut()
            .find(|c| c.numbers() == (database, container))
    }
}

impl Store {
    /// Loads the state kept in `path` and writes every change there from
    /// now on. Refuses a directory another emulator holds, or one whose
    /// snapshot is damaged; a torn log tail is set aside and reported.
    pub fn open_data_dir(mut self, path: &Path, mode: SyncMode) -> io::Result<Store> {
        let started = Instant::now();
        let dir = DataDir::open(path)?;
        let plan = dir.plan()?;
        let mut replayed = Replayed::default();
        let mut snapshot_bytes = 0;
        let mut generation = 0;
        if let Some((g, snapshot)) = &plan.snapshot {
            generation = *g;
            snapshot_bytes = std::fs::metadata(snapshot)?.len();
            self.load_snapshot(snapshot).map_err(|e| {
                invalid(format!(
                    "the snapshot {}: {e}. Move the directory aside to start empty, or restore \
                     it from a copy.",
                    snapshot.display()
                ))
            })?;
        }
        let mut dropped = Vec::new();
        for (g, log) in &plan.logs {
            if !dropped.is_empty() {
                // After a torn frame, later frames cannot be applied.
                dropped.push(dir.set_aside(log, 0)?);
                continue;
            }
            generation = *g;
            let torn_at = self
                .replay_log(log, &mut replayed)
                .map_err(|e| invalid(format!("log {}: {e}", log.display())))?;
            if let Some(at) = torn_at {
                dropped.push(dir.set_aside(log, at)?);
            }
        }
        for dropped in &dropped {
            tracing::warn!(
                file = %dropped.file.display(),
                at = dropped.at,
                bytes = dropped.bytes,
                moved_to = %dropped.moved_to.display(),
                "dropped the end of a log that is not whole, checksummed frames (torn by a crash, or damaged); \
                 everything before it is recovered"
            );
        }
        let journal = Journal::open(dir, generation, mode)?;
        // Every container writes ahead from now on; log entries past their
        // retention go, as the purge's pass would have dropped them.
        let now = self.clock.now();
        let catalog = self.catalog.get_mut().unwrap_or_else(|e| e.into_inner());
        for c in catalog
            .databases
            .values_mut()
            .flat_map(|db| db.containers.values_mut())
        {
            c.attach(Some(journal.clone()));
            c.settle_container_lsns();
            c.expire_log(now);
        }
        let mut written_meta = WrittenMeta::default();
        written_meta.diff(catalog.meta_pieces());
        self.durable = Some(Durable {
            journal,
            snapshot_bytes: AtomicU64::new(snapshot_bytes),
            compact_at_least: COMPACT_AT_LEAST,
            compacting: Mutex::new(()),
            written_meta: Mutex::new(written_meta),
        });
        let catalog = self.read();
        let containers = catalog
            .databases
            .values()
            .map(|db| db.containers.len())
            .sum::<usize>();
        let items = catalog
            .databases
            .values()
            .flat_map(|db| db.containers())
            .map(Container::stored_count)
            .sum::<usize>();
        tracing::info!(
            dir = %path.display(),
            databases = catalog.databases.len(),
            containers,
            items,
            frames = replayed.frames,
            records = replayed.records,
            millis = started.elapsed().as_secs_f64() * 1e3,
            sync = ?mode,
            "recovered the data directory"
        );
        drop(catalog);
        Ok(self)
    }

    /// Compacts logs from `bytes` on (tests; see [`COMPACT_AT_LEAST`]),
    /// after [`Self::open_data_dir`]; without a data directory there is
    /// nothing to compact, and this changes nothing.
    pub fn with_compaction_at_least(mut self, bytes: u64) -> Self {
        if let Some(durable) = self.durable.as_mut() {
            durable.compact_at_least = bytes;
        }
        self
    }

    /// The journal, with `--data-dir`.
    pub fn journal(&self) -> Option<&Arc<Journal>> {
        self.durable.as_ref().map(Durable::journal)
    }

    /// Applies a log's frames in order; returns where it stops being whole
    /// frames, if it does before its end.
    fn replay_log(&mut self, path: &Path, replayed: &mut Replayed) -> Result<Option<u64>, String> {
        // A restore (`account.rs`) writes a whole image after its reset.
        let mut pending = PendingContainers::default();
        let read = read_records(self, path, |catalog, clock, record, _| {
            match record {
                Record::Reset { clock: at } => {
                    pending.finished()?;
                    *catalog = Catalog::default();
                    if let Some(at) = at {
                        clock.restart_at(at);
                    }
                }
                Record::Item { .. }
                | Record::Change { .. }
                | Record::RidCounters { .. }
                | Record::Counters { .. } => pending.apply(catalog, record)?,
                Record::Install {
                    container,
                    key,
                    item,
                } => {
                    clock.resume_at(item.ts);
                    catalog
                        .container_by_numbers(container)
                        .ok_or_else(|| unknown(container))?
                        .replay_install(key, item);
                }
                Record::Remove {
                    container,
                    key,
                    lsns,
                    crts,
                    ttl_expired,
                } => {
                    clock.resume_at(crts);
                    catalog
                        .container_by_numbers(container)
                        .ok_or_else(|| unknown(container))?
                        .replay_remove(&key, lsns, crts, ttl_expired);
                }
                Record::End(_) | Record::Meta { .. } | Record::Clock(_) => {
                    return Err("a snapshot's end record in a log".into())
                }
            }
            Ok(())
        })?;
        pending.finished()?;
        replayed.frames += read.frames;
        replayed.records += read.records;
        Ok(read.torn_at)
    }

    fn load_snapshot(&mut self, path: &Path) -> Result<(), String> {
        let mut pending = PendingContainers::default();
        let mut ended = false;
        let read = read_records(self, path, |catalog, _, record, count| {
            match record {
                Record::End(expected) if expected == count => ended = true,
                Record::End(expected) => {
                    return Err(format!("it says {expected} records, {count} were read"))
                }
                Record::Item { .. }
                | Record::Change { .. }
                | Record::RidCounters { .. }
                | Record::Counters { .. } => pending.apply(catalog, record)?,
                _ => return Err("a log record in a snapshot".into()),
            }
            Ok(())
        })?;
        if let Some(at) = read.torn_at {
            return Err(format!("it is damaged at byte {at}"));
        }
        if !ended {
            return Err("it has no end record".into());
        }
        pending.finished()
    }

    /// Writes the state as a snapshot and starts a new log generation.
    pub fn compact(&self) -> ApiResult<Compaction> {
        let Some(durable) = &self.durable else {
            return Err(ApiError::bad_request(
                "There is nothing to compact: the emulator was started without --data-dir.",
            ));
        };
        let journal = &durable.journal;
        let _one_at_a_time = durable.compacting.lock().unwrap_or_else(|e| e.into_inner());
        let started = Instant::now();
        journal.sync_log().map_err(|e| unavailable(&e))?;
        let locking = Instant::now();
        let (generation, log_bytes_before, locked, image) = {
            let catalog = self.write()?;
            let (_, log_bytes_before) = journal.log_size();
            let image = Image::capture(&catalog, self.clock.is_manual().then(|| self.clock.now()));
            let generation = journal.start_generation().map_err(|e| unavailable(&e))?;
            drop(catalog);
            let locked = locking.elapsed();
            (generation, log_bytes_before, locked, image)
        };
        let session = self.session_lsn() + 1;
        let snapshot_bytes = journal
            .write_snapshot(generation, |out| image.write(session, out))
            .map_err(|e| unavailable(&e))?;
        durable
            .snapshot_bytes
            .store(snapshot_bytes, Ordering::Release);
        let report = Compaction {
            generation,
            snapshot_bytes,
            log_bytes_before,
            millis: started.elapsed().as_secs_f64() * 1e3,
            locked_millis: locked.as_secs_f64() * 1e3,
        };
        tracing::info!(?report, "compacted the data directory");
        Ok(report)
    }

    /// Whether the log has outgrown the last snapshot (see the module comment).
    pub fn compaction_due(&self) -> bool {
        self.durable.as_ref().is_some_and(Durable::compaction_due)
    }

    /// Compacts if [`Self::compaction_due`] and no compaction runs: called
    /// after requests, off the request's thread.
    pub fn compact_if_due(&self) {
        let Some(durable) = &self.durable else {
            return;
        };
        // Busy means a compaction runs; a lock poisoned by one that
        // panicked is free, as everywhere (`compact` recovers it too).
        let running = matches!(
            durable.compacting.try_lock(),
            Err(std::sync::TryLockError::WouldBlock)
        );
        if !durable.compaction_due() || running {
            return;
        }
        if let Err(e) = self.compact() {
            tracing::error!(error = %e.message, "the automatic compaction failed");
        }
    }

    /// Moves the manual clock forward by `seconds` and records it (see
    /// [`Store::clock_moved`]); the new time. What `POST /_emulator/clock`
    /// and `Emulator::advance` do.
    pub fn advance_clock(&self, seconds: i64) -> ApiResult<i64> {
        let now = self.clock.advance(seconds)?;
        self.clock_moved()?;
        Ok(now)
    }

    /// Moves the manual clock forward by `by` milliseconds (a fraction of
    /// a second included) and records it, as [`Self::advance_clock`].
    pub fn advance_clock_millis(&self, by: i64) -> ApiResult<i64> {
        let now = self.clock.advance_millis(by)?;
        self.clock_moved()?;
        Ok(now)
    }

    /// Sets the manual clock to `instant` (never earlier) and records it.
    pub fn set_clock(&self, instant: i64) -> ApiResult<i64> {
        let now = self.clock.set(instant)?;
        self.clock_moved()?;
        Ok(now)
    }

    /// Records the manual clock's position (after a move), durably before
    /// the move is acknowledged, and wakes what waits on time (the purge).
    pub fn clock_moved(&self) -> ApiResult<()> {
        if let Some(durable) = self.durable.as_ref().filter(|_| self.clock.is_manual()) {
            let now = self.clock.now();
            let catalog = self.write()?;
            durable.journal.record(|out| Record::Clock(now).encode(out));
            drop(catalog);
        }
        self.time_moved();
        Ok(())
    }
}

/// What [`read_records`] read.
struct Read {
    frames: usize,
    records: usize,
    /// Where the file stops being whole frames, if before its end.
    torn_at: Option<u64>,
}

/// Reads the records of a log or snapshot in order. Each frame's session
/// LSN raises the store's; metadata and clock records apply at once, as
/// both kinds of file hold them; `each` gets every other record, the
/// catalog, the clock, and how many records came before it.
fn read_records(
    store: &mut Store,
    path: &Path,
    mut each: impl FnMut(&mut Catalog, &Clock, Record, u64) -> Result<(), String>,
) -> Result<Read, String> {
    let retention = store.change_feed_retention;
    let catalog = store.catalog.get_mut().unwrap_or_else(|e| e.into_inner());
    let mut frames = open_frames(path)?;
    let mut payload = Vec::new();
    let mut read = Read {
        frames: 0,
        records: 0,
        torn_at: None,
    };
    loop {
        match frames.next_into(&mut payload).map_err(|e| e.to_string())? {
            Next::Frame => {}
            Next::End => return Ok(read),
            Next::Torn => {
                read.torn_at = Some(frames.position());
                return Ok(read);
            }
        }
        let (session, records) = split_header(&payload)?;
        store.lsn.fetch_max(session, Ordering::AcqRel);
        read.frames += 1;
        for record in Record::decode_all(records)? {
            let before = read.records as u64;
            read.records += 1;
            match record {
                Record::Meta { key, value } => {
                    catalog.apply_piece(&key, value.as_deref(), retention)?
                }
                Record::Clock(now) => store.clock.resume_at(now),
                other => each(catalog, &store.clock, other, before)?,
            }
        }
    }
}

/// The frames of a file, read a megabyte at a time.
fn open_frames(path: &Path) -> Result<Reader<io::BufReader<std::fs::File>>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read it: {e}"))?;
    let size = file
        .metadata()
        .map_err(|e| format!("cannot read it: {e}"))?
        .len();
    Ok(Reader::new(
        io::BufReader::with_capacity(1 << 20, file),
        size,
    ))
}

/// A frame's payload: the session LSN at its commit, then its records.
fn split_header(payload: &[u8]) -> Result<(u64, &[u8]), String> {
    if payload.len() < 8 {
        return Err("a frame is shorter than its header".into());
    }
    let (header, records) = payload.split_at(8);
    Ok((
        u64::from_le_bytes(header.try_into().expect("8 bytes")),
        records,
    ))
}

fn invalid(message: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the data directory cannot be read back: {message}"),
    )
}

/// The answer to a request when the data directory cannot be written.
pub fn unavailable(e: &dyn std::fmt::Display) -> ApiError {
    ApiError::new(
        Status::SERVICE_UNAVAILABLE,
        format!(
            "The emulator cannot write to its data directory ({e}); it refuses writes until it is \
             restarted, so that nothing is acknowledged that is not kept. See its log."
        ),
    )
}

pub mod meta;
#[cfg(test)]
pub(in crate::store) mod tests;
