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
//! - **Snapshots.** When the log outgrows the last snapshot (twice its size,
//!   and over [`COMPACT_AT_LEAST`]), or on `POST /_emulator/compact`, the
//!   state is captured under the write lock (items and log entries share
//!   their bodies, so this is cheap), a new log generation starts, and the
//!   snapshot is written beside, outside the lock.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::container::Container;
use super::item::{Item, ItemKey};
use super::log::Change;
use super::offers::Offers;
use super::ranges::RangeMap;
use super::records::{ContainerNumbers, Record};
use super::users::User;
use super::{Catalog, Database, Store};
use crate::error::{ApiError, ApiResult};
use crate::persist::{encode_frame, DataDir, Journal, Next, Reader, SyncMode};

/// The log is compacted once it is over twice the last snapshot and at
/// least this big.
pub const COMPACT_AT_LEAST: u64 = 64 << 20;

/// Snapshot frames are cut at about this size.
const SNAPSHOT_FRAME_BYTES: usize = 1 << 20;

/// What a catalog record holds: everything but items and their log.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CatalogMeta {
    next_database: u32,
    offers: Offers,
    databases: Vec<DatabaseMeta>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DatabaseMeta {
    id: String,
    rid: String,
    number: u32,
    ts: i64,
    etag: String,
    next_container: u32,
    next_user: u32,
    users: Vec<User>,
    containers: Vec<ContainerMeta>,
}

/// A container in a catalog record: its resource as served (which its
/// settings are parsed back from), ranges and counters.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerMeta {
    pub id: String,
    pub rid: String,
    pub number: u32,
    pub ts: i64,
    pub etag: String,
    pub resource: Value,
    pub ranges: RangeMap,
    pub next_item: u64,
    pub last_lsn: u64,
    pub dropped_through: u64,
}

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

/// What start-up read back, for its log line.
#[derive(Debug, Default)]
struct Replayed {
    frames: usize,
    records: usize,
}

impl Catalog {
    fn meta(&self) -> CatalogMeta {
        CatalogMeta {
            next_database: self.next_database,
            offers: self.offers.clone(),
            databases: self
                .databases
                .values()
                .map(|db| DatabaseMeta {
                    id: db.id.clone(),
                    rid: db.rid.clone(),
                    number: db.number,
                    ts: db.ts,
                    etag: db.etag.clone(),
                    next_container: db.next_container,
                    next_user: db.next_user,
                    users: db.users.values().cloned().collect(),
                    containers: db.containers().map(|c| c.meta(&db.rid)).collect(),
                })
                .collect(),
        }
    }

    /// The catalog record of the current metadata.
    pub(super) fn meta_record(&self) -> Vec<u8> {
        serde_json::to_vec(&self.meta()).expect("the catalog serialises")
    }

    /// Takes a catalog record: databases and containers it does not name
    /// go, new ones come (empty), the others take its settings.
    fn apply_meta(&mut self, meta: CatalogMeta, default_retention: i64) -> ApiResult<()> {
        self.next_database = meta.next_database;
        self.offers = meta.offers;
        let mut databases = BTreeMap::new();
        for m in meta.databases {
            let mut db = match self.databases.remove(&m.id) {
                Some(db) if db.rid == m.rid => db,
                _ => Database {
                    id: m.id.clone(),
                    rid: m.rid.clone(),
                    number: m.number,
                    ts: m.ts,
                    etag: m.etag.clone(),
                    containers: BTreeMap::new(),
                    next_container: 0,
                    users: BTreeMap::new(),
                    next_user: 0,
                },
            };
            db.ts = m.ts;
            db.etag = m.etag;
            db.next_container = m.next_container;
            db.next_user = m.next_user;
            db.users = m
                .users
                .into_iter()
                .map(|u| (u.id().to_string(), u))
                .collect();
            let mut containers = BTreeMap::new();
            for cm in m.containers {
                let container = match db.containers.remove(&cm.id) {
                    Some(mut c) if c.rid == cm.rid => {
                        c.update_from_meta(&cm, default_retention)?;
                        c
                    }
                    _ => Container::from_meta(&cm, &db.id, db.number, default_retention)?,
                };
                containers.insert(cm.id, container);
            }
            db.containers = containers;
            databases.insert(m.id, db);
        }
        self.databases = databases;
        Ok(())
    }

    fn container_by_numbers(
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
            self.restore_snapshot(snapshot).map_err(|e| {
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
        self.snapshot_bytes.store(snapshot_bytes, Ordering::Release);
        {
            let catalog = self.catalog.get_mut().unwrap_or_else(|e| e.into_inner());
            for c in catalog
                .databases
                .values_mut()
                .flat_map(|db| db.containers.values_mut())
            {
                c.attach(Some(journal.clone()));
            }
        }
        self.journal = Some(journal);
        // As the purge's pass would: entries past their retention go.
        let now = self.clock.now();
        let catalog = self.catalog.get_mut().unwrap_or_else(|e| e.into_inner());
        for c in catalog
            .databases
            .values_mut()
            .flat_map(|db| db.containers.values_mut())
        {
            c.expire_log(now);
        }
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

    /// The journal, with `--data-dir`.
    pub fn journal(&self) -> Option<&Arc<Journal>> {
        self.journal.as_ref()
    }

    /// Applies a log's frames in order; returns where it stops being whole
    /// frames, if it does before its end.
    fn replay_log(&mut self, path: &Path, replayed: &mut Replayed) -> Result<Option<u64>, String> {
        let retention = self.change_feed_retention;
        let mut frames = open_frames(path)?;
        let mut payload = Vec::new();
        loop {
            match frames.next_into(&mut payload).map_err(|e| e.to_string())? {
                Next::Frame => {}
                Next::End => return Ok(None),
                Next::Torn => return Ok(Some(frames.position())),
            }
            let (session, records) = split_header(&payload)?;
            self.lsn.fetch_max(session, Ordering::AcqRel);
            replayed.frames += 1;
            let catalog = self.catalog.get_mut().unwrap_or_else(|e| e.into_inner());
            for record in Record::decode_all(records)? {
                replayed.records += 1;
                match record {
                    Record::Install {
                        container,
                        key,
                        item,
                    } => {
                        self.clock.resume_at(item.ts);
                        catalog
                            .container_by_numbers(container)
                            .ok_or_else(|| unknown(container))?
                            .replay_install(key, item);
                    }
                    Record::Remove {
                        container,
                        key,
                        lsn,
                        crts,
                        ttl_expired,
                    } => {
                        self.clock.resume_at(crts);
                        catalog
                            .container_by_numbers(container)
                            .ok_or_else(|| unknown(container))?
                            .replay_remove(&key, lsn, crts, ttl_expired);
                    }
                    Record::Catalog(json) => {
                        let meta = serde_json::from_slice(&json)
                            .map_err(|e| format!("a catalog record does not read: {e}"))?;
                        catalog.apply_meta(meta, retention).map_err(|e| {
                            format!("a catalog record does not apply: {}", e.message)
                        })?;
                    }
                    Record::Clock(now) => self.clock.resume_at(now),
                    Record::Item { .. } | Record::Change { .. } | Record::End(_) => {
                        return Err("a snapshot record in a log".into())
                    }
                }
            }
        }
    }

    fn restore_snapshot(&mut self, path: &Path) -> Result<(), String> {
        let retention = self.change_feed_retention;
        let catalog = self.catalog.get_mut().unwrap_or_else(|e| e.into_inner());
        let mut items: HashMap<ContainerNumbers, Vec<(ItemKey, Item)>> = HashMap::new();
        let mut changes: Vec<(ContainerNumbers, Change, bool)> = Vec::new();
        let mut count = 0;
        let mut ended = false;
        let mut frames = open_frames(path)?;
        let mut payload = Vec::new();
        loop {
            match frames.next_into(&mut payload).map_err(|e| e.to_string())? {
                Next::Frame => {}
                Next::End => break,
                Next::Torn => return Err(format!("it is damaged at byte {}", frames.position())),
            }
            let (session, records) = split_header(&payload)?;
            self.lsn.fetch_max(session, Ordering::AcqRel);
            for record in Record::decode_all(records)? {
                match record {
                    Record::Catalog(json) => {
                        let meta = serde_json::from_slice(&json)
                            .map_err(|e| format!("its catalog does not read: {e}"))?;
                        catalog
                            .apply_meta(meta, retention)
                            .map_err(|e| format!("its catalog does not apply: {}", e.message))?;
                    }
                    Record::Clock(now) => self.clock.resume_at(now),
                    Record::Item {
                        container,
                        key,
                        item,
                    } => items.entry(container).or_default().push((key, item)),
                    Record::Change {
                        container,
                        change,
                        body_is_current,
                    } => changes.push((container, change, body_is_current)),
                    Record::End(expected) if expected == count => ended = true,
                    Record::End(expected) => {
                        return Err(format!("it says {expected} records, {count} were read"))
                    }
                    Record::Install { .. } | Record::Remove { .. } => {
                        return Err("a log record in a snapshot".into())
                    }
                }
                count += 1;
            }
        }
        if !ended {
            return Err("it has no end record".into());
        }
        for (numbers, list) in items {
            let container = catalog
                .container_by_numbers(numbers)
                .ok_or_else(|| unknown(numbers))?;
            container.restore_items(list);
        }
        for (numbers, change, body_is_current) in changes {
            let container = catalog
                .container_by_numbers(numbers)
                .ok_or_else(|| unknown(numbers))?;
            container.restore_change(change, body_is_current);
        }
        Ok(())
    }

    /// Writes the state as a snapshot and starts a new log generation.
    pub fn compact(&self) -> ApiResult<Compaction> {
        let Some(journal) = &self.journal else {
            return Err(ApiError::bad_request(
                "There is nothing to compact: the emulator was started without --data-dir.",
            ));
        };
        let _one_at_a_time = self.compacting.lock().unwrap_or_else(|e| e.into_inner());
        let started = Instant::now();
        let (generation, log_bytes_before, locked, image) = {
            let catalog = self.write()?;
            let (_, log_bytes_before) = journal.log_size();
            let image = Image::capture(&catalog, self.clock.is_manual().then(|| self.clock.now()));
            let generation = journal.start_generation().map_err(|e| unavailable(&e))?;
            drop(catalog);
            let locked = started.elapsed();
            (generation, log_bytes_before, locked, image)
        };
        let session = self.session_lsn() + 1;
        let snapshot_bytes = journal
            .write_snapshot(generation, |out| image.write(session, out))
            .map_err(|e| unavailable(&e))?;
        self.snapshot_bytes.store(snapshot_bytes, Ordering::Release);
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
        let Some(journal) = &self.journal else {
            return false;
        };
        let (_, log_bytes) = journal.log_size();
        log_bytes >= COMPACT_AT_LEAST && log_bytes > 2 * self.snapshot_bytes.load(Ordering::Acquire)
    }

    /// Compacts if [`Self::compaction_due`] and no compaction runs: called
    /// after requests, off the request's thread.
    pub fn compact_if_due(&self) {
        if !self.compaction_due() || self.compacting.try_lock().is_err() {
            return;
        }
        if let Err(e) = self.compact() {
            tracing::error!(error = %e.message, "the automatic compaction failed");
        }
    }

    /// Records the manual clock's position (after a move), durably before
    /// the move is acknowledged.
    pub fn clock_moved(&self) -> ApiResult<()> {
        if self.journal.is_some() && self.clock.is_manual() {
            let now = self.clock.now();
            let catalog = self.write()?;
            if let Some(journal) = &self.journal {
                journal.record(|out| Record::Clock(now).encode(out));
            }
            drop(catalog);
        }
        self.time_moved();
        Ok(())
    }
}

/// The state as a snapshot holds it, captured under the write lock.
struct Image {
    catalog: Vec<u8>,
    clock: Option<i64>,
    items: Vec<(ContainerNumbers, ItemKey, Item)>,
    changes: Vec<(ContainerNumbers, Change, bool)>,
}

impl Image {
    fn capture(catalog: &Catalog, clock: Option<i64>) -> Image {
        let mut items = Vec::new();
        let mut changes = Vec::new();
        for c in catalog.databases.values().flat_map(|db| db.containers()) {
            let numbers = c.numbers();
            items.extend(
                c.stored_in_lsn_order()
                    .map(|(key, item)| (numbers, key.clone(), item.clone())),
            );
            changes.extend(c.log().retained().map(|change| {
                let current = c.stored(&change.key).is_some_and(|item| {
                    item.lsn == change.lsn
                        && item.body.as_ptr() == change.body.as_ptr()
                        && item.body.len() == change.body.len()
                });
                let mut change = change.clone();
                if current {
                    change.body = bytes::Bytes::new();
                }
                (numbers, change, current)
            }));
        }
        Image {
            catalog: catalog.meta_record(),
            clock,
            items,
            changes,
        }
    }

    /// Writes the snapshot: frames of records, the catalog first, an end
    /// record last.
    fn write(self, session: u64, out: &mut dyn io::Write) -> io::Result<()> {
        let mut writer = SnapshotWriter {
            out,
            header: session.to_le_bytes(),
            payload: session.to_le_bytes().to_vec(),
            frame: Vec::new(),
            count: 0,
        };
        writer.add(Record::Catalog(self.catalog))?;
        if let Some(now) = self.clock {
            writer.add(Record::Clock(now))?;
        }
        for (container, key, item) in self.items {
            writer.add(Record::Item {
                container,
                key,
                item,
            })?;
        }
        for (container, change, body_is_current) in self.changes {
            writer.add(Record::Change {
                container,
                change,
                body_is_current,
            })?;
        }
        let count = writer.count;
        Record::End(count).encode(&mut writer.payload);
        writer.flush()
    }
}

/// Cuts a snapshot's records into frames of about [`SNAPSHOT_FRAME_BYTES`].
struct SnapshotWriter<'a> {
    out: &'a mut dyn io::Write,
    header: [u8; 8],
    payload: Vec<u8>,
    frame: Vec<u8>,
    count: u64,
}

impl SnapshotWriter<'_> {
    fn add(&mut self, record: Record) -> io::Result<()> {
        record.encode(&mut self.payload);
        self.count += 1;
        if self.payload.len() >= SNAPSHOT_FRAME_BYTES {
            self.flush()?;
            self.payload.extend_from_slice(&self.header);
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.frame.clear();
        encode_frame(&self.payload, &mut self.frame);
        self.payload.clear();
        self.out.write_all(&self.frame)
    }
}

/// The frames of a file, read a megabyte at a time.
fn open_frames(path: &Path) -> Result<Reader<io::BufReader<std::fs::File>>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read it: {e}"))?;
    Ok(Reader::new(io::BufReader::with_capacity(1 << 20, file)))
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

fn unknown((database, container): ContainerNumbers) -> String {
    format!("a record names container {container} of database {database}, which the catalog does not hold")
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
        axum::http::StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "The emulator cannot write to its data directory ({e}); it refuses writes until it is \
             restarted, so that nothing is acknowledged that is not kept. See its log."
        ),
    )
}

#[cfg(test)]
mod tests;
