//! The whole account as records: what a snapshot file of the data
//! directory holds (`durable/`), what a named in-memory snapshot holds
//! (`account.rs`), and what a restore writes ahead in the journal.
//!
//! Items and change log entries share their bodies with the live store
//! (reference-counted bytes), so capturing an image costs a clone of each
//! item's small fixed part, not of its JSON.

use std::collections::HashMap;
use std::io;

use super::catalog::Catalog;
use super::item::Item;
use super::log::Change;
use super::records::{ContainerNumbers, Record};
use crate::data::persist::encode_frame;
use crate::protocol::item_key::ItemKey;

/// Snapshot files' frames are cut at about this size.
const SNAPSHOT_FRAME_BYTES: usize = 1 << 20;

/// The state, captured under the store's lock.
#[derive(Debug)]
pub struct Image {
    /// Every piece of the catalog's metadata, parents first.
    pub meta: Vec<(String, Vec<u8>)>,
    /// The manual clock's position; `None` with the system clock.
    pub clock: Option<i64>,
    pub containers: Vec<ContainerImage>,
}

/// One container's items, retained change log and counters.
#[derive(Debug)]
pub struct ContainerImage {
    pub numbers: ContainerNumbers,
    /// In the order of their last write.
    pub items: Vec<(ItemKey, Item)>,
    /// Retained change log entries, with `true` (and no body) where the
    /// body is the stored item's current one.
    pub changes: Vec<(Change, bool)>,
    /// (next item number, last LSN, LSN of the newest dropped log entry).
    pub counters: (u64, u64, u64),
    /// Each physical partition's highest RID counter given.
    pub rid_counters: Vec<(u32, u64)>,
}

impl Image {
    pub fn capture(catalog: &Catalog, clock: Option<i64>) -> Image {
        let containers = catalog
            .databases
            .values()
            .flat_map(|db| db.containers())
            .map(|c| ContainerImage {
                numbers: c.numbers(),
                items: c
                    .stored_in_lsn_order()
                    .map(|(key, item)| (key.clone(), item.clone()))
                    .collect(),
                changes: c
                    .log()
                    .retained()
                    .map(|change| {
                        let current = c.stored(&change.key).is_some_and(|item| {
                            item.lsn == change.lsn
                                && item.body.as_ptr() == change.body.as_ptr()
                                && item.body.len() == change.body.len()
                        });
                        let mut change = change.clone();
                        if current {
                            change.body = bytes::Bytes::new();
                        }
                        (change, current)
                    })
                    .collect(),
                counters: c.counters(),
                rid_counters: c.rid_counters(),
            })
            .collect();
        Image {
            meta: catalog.meta_pieces(),
            clock,
            containers,
        }
    }

    pub fn databases(&self) -> usize {
        self.meta
            .iter()
            .filter(|(k, _)| k.starts_with("db/"))
            .count()
    }

    pub fn item_count(&self) -> usize {
        self.containers.iter().map(|c| c.items.len()).sum()
    }

    /// The records, in the order a reader applies them: the metadata (the
    /// catalog's shape), the clock, then container by container its items,
    /// its change log and last its counters (which complete it).
    pub fn records(&self) -> impl Iterator<Item = Record> + '_ {
        let meta = self.meta.iter().map(|(key, value)| Record::Meta {
            key: key.clone(),
            value: Some(value.clone()),
        });
        let clock = self.clock.map(Record::Clock);
        let containers = self.containers.iter().flat_map(|c| {
            let container = c.numbers;
            let items = c.items.iter().map(move |(key, item)| Record::Item {
                container,
                key: key.clone(),
                item: item.clone(),
            });
            let changes = c
                .changes
                .iter()
                .map(move |(change, body_is_current)| Record::Change {
                    container,
                    change: change.clone(),
                    body_is_current: *body_is_current,
                });
            let (next_item, last_lsn, dropped_through) = c.counters;
            let rid_counters = Record::RidCounters {
                container,
                counters: c.rid_counters.clone(),
            };
            items
                .chain(changes)
                .chain(std::iter::once(rid_counters))
                .chain(std::iter::once(Record::Counters {
                    container,
                    next_item,
                    last_lsn,
                    dropped_through,
                }))
        });
        meta.chain(clock).chain(containers)
    }

    /// The catalog this image describes (no journal attached), with
    /// `retention` for containers without a retention of their own.
    pub fn to_catalog(&self, retention: i64) -> Result<Catalog, String> {
        let mut catalog = Catalog::default();
        let mut pending = PendingContainers::default();
        for record in self.records() {
            match record {
                Record::Meta { key, value } => {
                    catalog.apply_piece(&key, value.as_deref(), retention)?
                }
                Record::Clock(_) => {}
                other => pending.apply(&mut catalog, other)?,
            }
        }
        pending.finished()?;
        Ok(catalog)
    }

    /// Writes a snapshot file: frames of records (each after the session
    /// LSN `session`), an end record with their count last.
    pub fn write(&self, session: u64, out: &mut dyn io::Write) -> io::Result<()> {
        let mut writer = SnapshotWriter {
            out,
            header: session.to_le_bytes(),
            payload: session.to_le_bytes().to_vec(),
            frame: Vec::new(),
            count: 0,
        };
        for record in self.records() {
            writer.add(record)?;
        }
        let count = writer.count;
        Record::End(count).encode(&mut writer.payload);
        writer.flush()
    }
}

/// Containers' snapshot records (items, change log entries) held until
/// the container's `Counters` record, its last, completes it: its items
/// then go into every index at once, in the order those indexes need.
#[derive(Debug, Default)]
pub struct PendingContainers(HashMap<ContainerNumbers, Pending>);

#[derive(Debug, Default)]
struct Pending {
    items: Vec<(ItemKey, Item)>,
    changes: Vec<(Change, bool)>,
}

impl PendingContainers {
    /// Takes an `Item`, `Change`, `RidCounters` or `Counters` record; refuses others.
    pub fn apply(&mut self, catalog: &mut Catalog, record: Record) -> Result<(), String> {
        match record {
            Record::Item {
                container,
                key,
                item,
            } => self.0.entry(container).or_default().items.push((key, item)),
            Record::Change {
                container,
                change,
                body_is_current,
            } => self
                .0
                .entry(container)
                .or_default()
                .changes
                .push((change, body_is_current)),
            Record::Counters {
                container,
                next_item,
                last_lsn,
                dropped_through,
            } => {
                let pending = self.0.remove(&container).unwrap_or_default();
                let c = catalog
                    .container_by_numbers(container)
                    .ok_or_else(|| unknown(container))?;
                c.restore_items(pending.items);
                for (change, body_is_current) in pending.changes {
                    c.restore_change(change, body_is_current);
                }
                c.restore_counters(next_item, last_lsn, dropped_through);
            }
            Record::RidCounters {
                container,
                counters,
            } => catalog
                .container_by_numbers(container)
                .ok_or_else(|| unknown(container))?
                .restore_rid_counters(&counters),
            _ => return Err("a record that belongs in no snapshot".into()),
        }
        Ok(())
    }

    /// Whether every container that had records was completed.
    pub fn finished(&self) -> Result<(), String> {
        match self.0.keys().next() {
            None => Ok(()),
            Some(&(database, container)) => Err(format!(
                "the records of container {container} of database {database} end without its counters"
            )),
        }
    }
}

pub fn unknown((database, container): ContainerNumbers) -> String {
    format!("a record names container {container} of database {database}, which the catalog does not hold")
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
        encode_frame(&self.payload, &mut self.frame)?;
        self.payload.clear();
        self.out.write_all(&self.frame)
    }
}
