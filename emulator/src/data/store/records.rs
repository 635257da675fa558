//! What the store writes to its data directory, as bytes: the records of
//! the journal (each operation's changes, one frame per operation) and of
//! snapshots. Integers are little-endian; strings and bodies carry a `u32`
//! length. The frame's checksum covers them, so decoding a frame that
//! passed it fails only on a bug or a newer format, reported as such.

use std::num::NonZeroU64;

use bytes::{Buf, BufMut, Bytes};

use super::item::{Etag, Item, Lsns};
use super::log::{Change, ChangeKind};
use crate::data::ttl::Ttl;
use crate::protocol::item_key::ItemKey;

/// A container, as records name it: its database's number and its own
/// (the parts of its RID), which are never reused.
pub type ContainerNumbers = (u32, u32);

/// One record.
#[derive(Debug, Clone)]
pub enum Record {
    /// An item version was stored (create, replace, upsert, patch, batch).
    Install {
        container: ContainerNumbers,
        key: ItemKey,
        item: Item,
    },
    /// An item was deleted, by a client or (`ttl_expired`) by the purge.
    Remove {
        container: ContainerNumbers,
        key: ItemKey,
        lsns: Lsns,
        crts: i64,
        ttl_expired: bool,
    },
    /// A piece of the catalog's metadata (`durable/meta.rs`) as JSON, or
    /// (`None`) its removal.
    Meta { key: String, value: Option<Vec<u8>> },
    /// The manual clock's position.
    Clock(i64),
    /// Snapshot only: an item as stored.
    Item {
        container: ContainerNumbers,
        key: ItemKey,
        item: Item,
    },
    /// Snapshot only: a retained change log entry; `body: None` when it is
    /// the body of the item's current version (stored once).
    Change {
        container: ContainerNumbers,
        change: Change,
        body_is_current: bool,
    },
    /// Snapshot only: a container's counters.
    Counters {
        container: ContainerNumbers,
        next_item: u64,
        last_lsn: u64,
        dropped_through: u64,
    },
    /// Snapshot only: each physical partition's highest RID counter given
    /// in a container, (`ridPrefix`, counter) (`container/rids.rs`),
    /// before its `Counters`. Snapshots from before have none: the
    /// counters then come from the items.
    RidCounters {
        container: ContainerNumbers,
        counters: Vec<(u32, u64)>,
    },
    /// Snapshot only: the last record, with how many came before it.
    End(u64),
    /// The account was reset or restored (`POST /_emulator/reset`, a
    /// snapshot's restore): every database goes; with `clock`, the manual
    /// clock is set to it, even backwards. A restore's image follows in the
    /// same frame, as a snapshot's records.
    Reset { clock: Option<i64> },
}

const INSTALL: u8 = 1;
const REMOVE: u8 = 2;
const META: u8 = 3;
const CLOCK: u8 = 4;
const ITEM: u8 = 5;
const CHANGE: u8 = 6;
const END: u8 = 7;
const COUNTERS: u8 = 8;
const RESET: u8 = 9;
// Since LSNs are per range: an item, a removal and a change carry their
// range's LSN after what the older tags held (which read as their log LSN).
const INSTALL_RANGED: u8 = 10;
const REMOVE_RANGED: u8 = 11;
const ITEM_RANGED: u8 = 12;
const CHANGE_RANGED: u8 = 13;
// Since items' RIDs are numbered per physical partition: an item carries
// the last part of its RID after its range's LSN; the older tags' items
// read with their number as that part (their RIDs end in it: range 0's
// numbering, `rid::item_document`).
const INSTALL_WITH_RID: u8 = 14;
const ITEM_WITH_RID: u8 = 15;
const RID_COUNTERS: u8 = 16;

impl Record {
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Record::Install {
                container,
                key,
                item,
            } => encode_install(out, *container, key, item),
            Record::Remove {
                container,
                key,
                lsns,
                crts,
                ttl_expired,
            } => encode_remove(out, *container, key, *lsns, *crts, *ttl_expired),
            Record::Meta { key, value } => {
                out.put_u8(META);
                put_bytes(out, key.as_bytes());
                match value {
                    Some(value) => {
                        out.put_u8(1);
                        put_bytes(out, value);
                    }
                    None => out.put_u8(0),
                }
            }
            Record::Counters {
                container,
                next_item,
                last_lsn,
                dropped_through,
            } => {
                out.put_u8(COUNTERS);
                put_container(out, *container);
                out.put_u64_le(*next_item);
                out.put_u64_le(*last_lsn);
                out.put_u64_le(*dropped_through);
            }
            Record::RidCounters {
                container,
                counters,
            } => {
                out.put_u8(RID_COUNTERS);
                put_container(out, *container);
                out.put_u32_le(u32::try_from(counters.len()).expect("fewer ranges than 2^32"));
                for (prefix, counter) in counters {
                    out.put_u32_le(*prefix);
                    out.put_u64_le(*counter);
                }
            }
            Record::Clock(now) => {
                out.put_u8(CLOCK);
                out.put_i64_le(*now);
            }
            Record::Item {
                container,
                key,
                item,
            } => {
                out.put_u8(ITEM_WITH_RID);
                put_container(out, *container);
                put_key(out, key);
                put_item(out, item);
                out.put_u64_le(item.range_lsn);
                out.put_u64_le(item.rid);
            }
            Record::Change {
                container,
                change,
                body_is_current,
            } => {
                out.put_u8(CHANGE_RANGED);
                put_container(out, *container);
                put_key(out, &change.key);
                out.put_u64_le(change.lsn);
                out.put_i64_le(change.crts);
                out.put_u8(match change.kind {
                    ChangeKind::Create => 0,
                    ChangeKind::Replace => 1,
                    ChangeKind::Delete { ttl_expired: false } => 2,
                    ChangeKind::Delete { ttl_expired: true } => 3,
                });
                out.put_u64_le(change.previous_lsn.map_or(0, NonZeroU64::get));
                out.put_u8(u8::from(*body_is_current));
                if !body_is_current {
                    put_bytes(out, &change.body);
                }
                out.put_u64_le(change.range_lsn);
            }
            Record::End(count) => {
                out.put_u8(END);
                out.put_u64_le(*count);
            }
            Record::Reset { clock } => {
                out.put_u8(RESET);
                match clock {
                    Some(now) => {
                        out.put_u8(1);
                        out.put_i64_le(*now);
                    }
                    None => out.put_u8(0),
                }
            }
        }
    }

    /// Decodes the records of one frame's payload (after its header).
    pub fn decode_all(mut payload: &[u8]) -> Result<Vec<Record>, String> {
        let mut records = Vec::new();
        while payload.has_remaining() {
            records.push(Record::decode(&mut payload)?);
        }
        Ok(records)
    }

    fn decode(input: &mut &[u8]) -> Result<Record, String> {
        let tag = get_u8(input)?;
        Ok(match tag {
            INSTALL | ITEM | INSTALL_RANGED | ITEM_RANGED | INSTALL_WITH_RID | ITEM_WITH_RID => {
                let container = get_container(input)?;
                let key = get_key(input)?;
                let mut item = get_item(input)?;
                item.range_lsn = match tag {
                    INSTALL | ITEM => item.lsn,
                    _ => get_u64(input)?,
                };
                item.rid = match tag {
                    INSTALL_WITH_RID | ITEM_WITH_RID => get_u64(input)?,
                    _ => item.number,
                };
                if matches!(tag, INSTALL | INSTALL_RANGED | INSTALL_WITH_RID) {
                    Record::Install {
                        container,
                        key,
                        item,
                    }
                } else {
                    Record::Item {
                        container,
                        key,
                        item,
                    }
                }
            }
            REMOVE | REMOVE_RANGED => {
                let container = get_container(input)?;
                let key = get_key(input)?;
                let log = get_u64(input)?;
                let crts = get_u64(input)? as i64;
                let ttl_expired = get_u8(input)? != 0;
                let range = match tag {
                    REMOVE_RANGED => get_u64(input)?,
                    _ => log,
                };
                Record::Remove {
                    container,
                    key,
                    lsns: Lsns { log, range },
                    crts,
                    ttl_expired,
                }
            }
            META => Record::Meta {
                key: get_str(input)?.to_string(),
                value: match get_u8(input)? {
                    0 => None,
                    _ => Some(get_bytes(input)?.to_vec()),
                },
            },
            COUNTERS => Record::Counters {
                container: get_container(input)?,
                next_item: get_u64(input)?,
                last_lsn: get_u64(input)?,
                dropped_through: get_u64(input)?,
            },
            RID_COUNTERS => {
                let container = get_container(input)?;
                let count = get_u32(input)?;
                // Each pair is 12 bytes: a count beyond the record is an error.
                if input.len() < count as usize * 12 {
                    return Err(short());
                }
                let counters = (0..count)
                    .map(|_| Ok((get_u32(input)?, get_u64(input)?)))
                    .collect::<Result<_, String>>()?;
                Record::RidCounters {
                    container,
                    counters,
                }
            }
            CLOCK => Record::Clock(get_u64(input)? as i64),
            CHANGE | CHANGE_RANGED => {
                let container = get_container(input)?;
                let key = get_key(input)?;
                let lsn = get_u64(input)?;
                let crts = get_u64(input)? as i64;
                let kind = match get_u8(input)? {
                    0 => ChangeKind::Create,
                    1 => ChangeKind::Replace,
                    2 => ChangeKind::Delete { ttl_expired: false },
                    3 => ChangeKind::Delete { ttl_expired: true },
                    other => return Err(format!("unknown change kind {other}")),
                };
                let previous_lsn = NonZeroU64::new(get_u64(input)?);
                let body_is_current = get_u8(input)? != 0;
                let body = if body_is_current {
                    Bytes::new()
                } else {
                    Bytes::copy_from_slice(get_bytes(input)?)
                };
                let range_lsn = match tag {
                    CHANGE_RANGED => get_u64(input)?,
                    _ => lsn,
                };
                Record::Change {
                    container,
                    change: Change {
                        lsn,
                        range_lsn,
                        crts,
                        key,
                        kind,
                        body,
                        previous_lsn,
                    },
                    body_is_current,
                }
            }
            END => Record::End(get_u64(input)?),
            RESET => Record::Reset {
                clock: match get_u8(input)? {
                    0 => None,
                    _ => Some(get_u64(input)? as i64),
                },
            },
            other => return Err(format!("unknown record type {other}")),
        })
    }
}

/// [`Record::Install`], from references (the write path's).
pub fn encode_install(out: &mut Vec<u8>, container: ContainerNumbers, key: &ItemKey, item: &Item) {
    out.put_u8(INSTALL_WITH_RID);
    put_container(out, container);
    put_key(out, key);
    put_item(out, item);
    out.put_u64_le(item.range_lsn);
    out.put_u64_le(item.rid);
}

/// [`Record::Remove`], from references.
pub fn encode_remove(
    out: &mut Vec<u8>,
    container: ContainerNumbers,
    key: &ItemKey,
    lsns: Lsns,
    crts: i64,
    ttl_expired: bool,
) {
    out.put_u8(REMOVE_RANGED);
    put_container(out, container);
    put_key(out, key);
    out.put_u64_le(lsns.log);
    out.put_i64_le(crts);
    out.put_u8(u8::from(ttl_expired));
    out.put_u64_le(lsns.range);
}

fn put_container(out: &mut Vec<u8>, (database, container): ContainerNumbers) {
    out.put_u32_le(database);
    out.put_u32_le(container);
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.put_u32_le(u32::try_from(bytes.len()).expect("records hold less than 4 GiB"));
    out.put_slice(bytes);
}

fn put_key(out: &mut Vec<u8>, key: &ItemKey) {
    put_bytes(out, key.pk().as_bytes());
    put_bytes(out, key.id().as_bytes());
}

fn put_item(out: &mut Vec<u8>, item: &Item) {
    put_bytes(out, &item.body);
    out.put_i64_le(item.ts);
    // -1 never, n seconds, 0 none (0 is no valid TTL).
    out.put_i64_le(item.ttl.map_or(0, Ttl::to_i64));
    out.put_slice(item.etag.as_bytes());
    out.put_u64_le(item.number);
    out.put_u64_le(item.lsn);
}

fn short() -> String {
    "a record ends early".to_string()
}

fn get_u8(input: &mut &[u8]) -> Result<u8, String> {
    input.try_get_u8().map_err(|_| short())
}

fn get_u32(input: &mut &[u8]) -> Result<u32, String> {
    input.try_get_u32_le().map_err(|_| short())
}

fn get_u64(input: &mut &[u8]) -> Result<u64, String> {
    input.try_get_u64_le().map_err(|_| short())
}

fn get_bytes<'a>(input: &mut &'a [u8]) -> Result<&'a [u8], String> {
    let length = get_u32(input)? as usize;
    if input.len() < length {
        return Err(short());
    }
    let (bytes, rest) = input.split_at(length);
    *input = rest;
    Ok(bytes)
}

fn get_str<'a>(input: &mut &'a [u8]) -> Result<&'a str, String> {
    std::str::from_utf8(get_bytes(input)?)
        .map_err(|_| "a record holds a string that is not UTF-8".to_string())
}

fn get_container(input: &mut &[u8]) -> Result<ContainerNumbers, String> {
    Ok((get_u32(input)?, get_u32(input)?))
}

fn get_key(input: &mut &[u8]) -> Result<ItemKey, String> {
    let pk = get_str(input)?;
    let id = get_str(input)?;
    Ok(ItemKey::new(pk, id))
}

fn get_item(input: &mut &[u8]) -> Result<Item, String> {
    let body = Bytes::copy_from_slice(get_bytes(input)?);
    let ts = get_u64(input)? as i64;
    let ttl = match get_u64(input)? as i64 {
        0 => None,
        -1 => Some(Ttl::Never),
        n => Some(Ttl::Seconds(n)),
    };
    if input.len() < 16 {
        return Err(short());
    }
    let etag = Etag::from_bytes(input[..16].try_into().expect("16 bytes"));
    input.advance(16);
    Ok(Item {
        body,
        ts,
        ttl,
        etag,
        number: get_u64(input)?,
        lsn: get_u64(input)?,
        // Read after the record's other fields, by its tag.
        range_lsn: 0,
        rid: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(body: &'static [u8], ttl: Option<Ttl>) -> Item {
        Item {
            body: Bytes::from_static(body),
            ts: 1_700_000_000,
            ttl,
            etag: Etag::new(),
            number: 42,
            rid: crate::protocol::rid::item_document(1, 3),
            lsn: 7,
            range_lsn: 3,
        }
    }

    #[test]
    fn every_record_reads_back_as_written() {
        let key = ItemKey::new("[\"p\"]", "é/1");
        let records = vec![
            Record::Install {
                container: (1, 2),
                key: key.clone(),
                item: item(b"{\"id\":\"x\"}", Some(Ttl::Seconds(10))),
            },
            Record::Remove {
                container: (1, 2),
                key: key.clone(),
                lsns: Lsns { log: 9, range: 2 },
                crts: -5,
                ttl_expired: true,
            },
            Record::Meta {
                key: "db/AQAAAA==".into(),
                value: Some(b"{\"id\":\"db\"}".to_vec()),
            },
            Record::Meta {
                key: "offer/x".into(),
                value: None,
            },
            Record::Counters {
                container: (1, 2),
                next_item: 3,
                last_lsn: 4,
                dropped_through: 5,
            },
            Record::RidCounters {
                container: (1, 2),
                counters: vec![(0, 7), (3, 1)],
            },
            Record::Clock(1_800_000_000),
            Record::Item {
                container: (3, 4),
                key: key.clone(),
                item: item(b"{}", Some(Ttl::Never)),
            },
            Record::Change {
                container: (3, 4),
                change: Change {
                    lsn: 5,
                    range_lsn: 1,
                    crts: 6,
                    key: key.clone(),
                    kind: ChangeKind::Delete { ttl_expired: false },
                    body: Bytes::from_static(b"{\"old\":1}"),
                    previous_lsn: NonZeroU64::new(4),
                },
                body_is_current: false,
            },
            Record::End(9),
        ];
        let mut bytes = Vec::new();
        for r in &records {
            r.encode(&mut bytes);
        }
        let read = Record::decode_all(&bytes).unwrap();
        assert_eq!(format!("{records:?}"), format!("{read:?}"));
        // A data directory's records from before RIDs were numbered per
        // partition: the same, without the RID part, which is the number.
        let mut old = Vec::new();
        records[0].encode(&mut old);
        assert_eq!(old[0], INSTALL_WITH_RID);
        old[0] = INSTALL_RANGED;
        old.truncate(old.len() - 8);
        match &Record::decode_all(&old).unwrap()[..] {
            [Record::Install { item, .. }] => assert_eq!((item.number, item.rid), (42, 42)),
            other => panic!("{other:?}"),
        }
        // A record cut anywhere is an error, not a panic.
        for cut in 0..bytes.len() {
            let _ = Record::decode_all(&bytes[..cut]);
        }
    }

    /// Data written before LSNs were per range: an install and a removal
    /// under the older tags read with their range LSN as their log LSN
    /// (then every LSN was the container's).
    #[test]
    fn records_from_before_range_lsns_read_with_the_log_lsn() {
        let key = ItemKey::new("[\"p\"]", "a");
        let mut old = Vec::new();
        old.put_u8(INSTALL);
        put_container(&mut old, (1, 2));
        put_key(&mut old, &key);
        put_item(&mut old, &item(b"{}", None));
        old.put_u8(REMOVE);
        put_container(&mut old, (1, 2));
        put_key(&mut old, &key);
        old.put_u64_le(9);
        old.put_i64_le(100);
        old.put_u8(0);
        let read = Record::decode_all(&old).unwrap();
        let Record::Install { item, .. } = &read[0] else {
            panic!("{read:?}")
        };
        assert_eq!((item.lsn, item.range_lsn), (7, 7));
        // Nor their RIDs per physical partition: the RID ends in the number.
        assert_eq!(item.rid, 42);
        let Record::Remove { lsns, .. } = &read[1] else {
            panic!("{read:?}")
        };
        assert_eq!(*lsns, Lsns { log: 9, range: 9 });
    }
}
