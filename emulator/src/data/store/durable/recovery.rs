//! Start: the newest snapshot, then the journal frames after it, applied
//! in order, and the journal opened for what comes next (see `mod.rs`). A
//! torn log tail is set aside and reported; a damaged snapshot refuses the
//! directory.

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::super::catalog::Catalog;
use super::super::container::Container;
use super::super::image::{unknown, PendingContainers};
use super::super::records::{ContainerNumbers, Record};
use super::super::Store;
use super::journal::{Durable, COMPACT_AT_LEAST};
use super::meta::WrittenMeta;
use crate::data::clock::Clock;
use crate::data::persist::{DataDir, Journal, Next, Reader, SyncMode};

/// What start-up read back, for its log line.
#[derive(Debug, Default)]
struct Replayed {
    frames: usize,
    records: usize,
}

impl Catalog {
    pub(in crate::data::store) fn container_by_numbers(
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
