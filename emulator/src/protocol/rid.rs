//! Resource ids (RIDs) in the service's shape: a database's is 4 bytes, a
//! container's extends it by 4, an item's extends that by 8; all base64 with
//! `/` written as `-`. The Python SDK takes an 8-character base64 database
//! segment for a RID, so names and RIDs are told apart the same way here.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;

fn encode(bytes: &[u8]) -> String {
    BASE64.encode(bytes).replace('/', "-")
}

/// A RID's text from its bytes (Direct mode's ResourceId token carries
/// the bytes).
pub fn from_bytes(bytes: &[u8]) -> String {
    encode(bytes)
}

/// Whether `text` is the container RID whose 8 bytes are `bytes`, without
/// building the text: what every Direct-mode request's ResourceId is
/// checked with.
pub fn is_text_of(text: &str, bytes: &[u8; 8]) -> bool {
    let mut encoded = [0u8; 12];
    match BASE64.encode_slice(bytes, &mut encoded) {
        Ok(12) => {}
        _ => return false,
    }
    for b in &mut encoded {
        if *b == b'/' {
            *b = b'-';
        }
    }
    text.as_bytes() == encoded
}

pub fn database(db: u32) -> String {
    encode(&db.to_le_bytes())
}

pub fn container(db: u32, container: u32) -> String {
    let mut bytes = [0u8; 8];
    bytes[..4].copy_from_slice(&db.to_le_bytes());
    // The service sets the high bit of a container's own part.
    bytes[4..].copy_from_slice(&(container | 0x8000_0000).to_be_bytes());
    encode(&bytes)
}

/// An item's RID: the container's 8 bytes, then `item`, the document part
/// ([`item_document`]), as 8 little-endian bytes.
pub fn item(db: u32, container: u32, item: u64) -> String {
    let mut bytes = [0u8; 16];
    bytes[..4].copy_from_slice(&db.to_le_bytes());
    bytes[4..8].copy_from_slice(&(container | 0x8000_0000).to_be_bytes());
    bytes[8..].copy_from_slice(&item.to_le_bytes());
    encode(&bytes)
}

/// Bits of an item's document part that count its physical partition's
/// items; the partition's `ridPrefix` lies above them.
const ITEM_COUNTER_BITS: u32 = 32;
/// Bits above the counter for the `ridPrefix`, below the kind nibble.
const RID_PREFIX_BITS: u32 = 60 - ITEM_COUNTER_BITS;

/// The document part of an item's RID as the service lays it out: each
/// physical partition numbers its own items from 1 (`counter`, from bit 0
/// up), and its `ridPrefix` (the `pkranges` field, here the range's id)
/// lies bit-reversed from bit 59 down, under the kind nibble (0, a
/// document). Range 1's items end in `...AAAAAAAACA==` (byte 15 is 0x08),
/// range 2's in `...BA==`, range 3's in `...DA==`: the RIDs a
/// five-partition container of the service gave (`docs/src/search.md`).
/// Items stay unique across splits: a child range has a new id.
pub fn item_document(rid_prefix: u32, counter: u64) -> u64 {
    debug_assert!(counter < 1 << ITEM_COUNTER_BITS, "{counter}");
    let reversed = u64::from(rid_prefix.reverse_bits() >> (32 - RID_PREFIX_BITS));
    (reversed << ITEM_COUNTER_BITS) | (counter & ((1 << ITEM_COUNTER_BITS) - 1))
}

/// The (`ridPrefix`, counter) of an item's document part: the inverse of
/// [`item_document`]. A data directory's items from before it have the
/// container's own number as their document part: prefix 0, that counter.
pub fn split_item_document(document: u64) -> (u32, u64) {
    let counter = document & ((1 << ITEM_COUNTER_BITS) - 1);
    let reversed = ((document >> ITEM_COUNTER_BITS) & ((1 << RID_PREFIX_BITS) - 1)) as u32;
    (reversed.reverse_bits() >> (32 - RID_PREFIX_BITS), counter)
}

/// A partition key range's RID: the container's 8 bytes, then 8 more (a
/// kind byte, 2, then the range's number), one base64 string of 16 bytes as
/// the service's are (`7AVPAOp7xwACAAAAAAAAUA==`). The Java SDK parses it
/// (`ResourceId.parse`) when Direct mode re-resolves a request's range, and
/// refuses two base64 strings end to end, as this was once written.
pub fn partition_key_range(container_rid: &str, index: u32) -> String {
    let mut bytes = BASE64
        .decode(container_rid.replace('-', "/"))
        .unwrap_or_default();
    bytes.extend_from_slice(&[2, 0, 0, 0]);
    bytes.extend_from_slice(&index.to_le_bytes());
    encode(&bytes)
}

/// An offer's RID: 3 bytes, 4 characters (`offers/{rid}/`), the service's length.
pub fn offer(number: u32) -> String {
    encode(&number.to_le_bytes()[..3])
}

/// A user's: the database's 4 bytes and the user's own 4 (without the
/// high bit that marks a container).
pub fn user(db: u32, user: u32) -> String {
    let mut bytes = [0u8; 8];
    bytes[..4].copy_from_slice(&db.to_le_bytes());
    bytes[4..].copy_from_slice(&(user & 0x7fff_ffff).to_be_bytes());
    encode(&bytes)
}

/// A permission's: its user's 8 bytes and its own 8.
pub fn permission(db: u32, user: u32, permission: u64) -> String {
    let mut bytes = [0u8; 16];
    bytes[..4].copy_from_slice(&db.to_le_bytes());
    bytes[4..8].copy_from_slice(&(user & 0x7fff_ffff).to_be_bytes());
    bytes[8..].copy_from_slice(&permission.to_be_bytes());
    encode(&bytes)
}

/// A client encryption key's, as the service lays it out: the database's
/// 4 bytes, 4 zero bytes (no container or user), the key's number, then the
/// kind of database child (2: client encryption key), little-endian.
pub fn client_encryption_key(db: u32, key: u32) -> String {
    let mut bytes = [0u8; 16];
    bytes[..4].copy_from_slice(&db.to_le_bytes());
    bytes[8..12].copy_from_slice(&key.to_le_bytes());
    bytes[12..].copy_from_slice(&2u32.to_le_bytes());
    encode(&bytes)
}

/// A stored procedure's, trigger's or user-defined function's RID, as the
/// service lays it out (the .NET SDK's `ResourceId`): the container's 8
/// bytes, then the script's number as 8 little-endian bytes whose highest
/// byte carries the kind of container child in its high nibble (0x0 an
/// item, 0x8 a stored procedure, 0x7 a trigger, 0x6 a user-defined
/// function). The service's sproc RIDs end in `...gA==`, triggers' in
/// `...cA==`, functions' in `...YA==`, as these do.
fn container_child(db: u32, container: u32, kind_nibble: u8, number: u64) -> String {
    let mut bytes = [0u8; 16];
    bytes[..4].copy_from_slice(&db.to_le_bytes());
    bytes[4..8].copy_from_slice(&(container | 0x8000_0000).to_be_bytes());
    let number = (number & 0x0fff_ffff_ffff_ffff) | (u64::from(kind_nibble) << 60);
    bytes[8..].copy_from_slice(&number.to_le_bytes());
    encode(&bytes)
}

pub fn stored_procedure(db: u32, container: u32, number: u64) -> String {
    container_child(db, container, 0x8, number)
}

pub fn trigger(db: u32, container: u32, number: u64) -> String {
    container_child(db, container, 0x7, number)
}

pub fn user_defined_function(db: u32, container: u32, number: u64) -> String {
    container_child(db, container, 0x6, number)
}

/// The (database, container, item) numbers an item RID encodes.
pub fn parse_item(rid: &str) -> Option<(u32, u32, u64)> {
    let bytes = BASE64.decode(rid.replace('-', "/")).ok()?;
    let bytes: [u8; 16] = bytes.try_into().ok()?;
    let db = u32::from_le_bytes(bytes[..4].try_into().ok()?);
    let container = u32::from_be_bytes(bytes[4..8].try_into().ok()?) & 0x7fff_ffff;
    let item = u64::from_le_bytes(bytes[8..].try_into().ok()?);
    Some((db, container, item))
}

/// Whether a database path segment is a RID rather than a name (the SDKs' test).
pub fn looks_like_database_rid(segment: &str) -> bool {
    segment.len() == 8
        && BASE64
            .decode(segment.replace('-', "/"))
            .is_ok_and(|b| b.len() == 4)
}

/// Whether `dbs/{database}/colls/{container}` is a link of RIDs: a database
/// RID and a container RID that extends it.
pub fn looks_like_container_rid(database: &str, container: &str) -> bool {
    let decode = |rid: &str| BASE64.decode(rid.replace('-', "/")).ok();
    match (decode(database), decode(container)) {
        (Some(db), Some(coll)) => db.len() == 4 && coll.len() == 8 && coll[..4] == db[..],
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rids_text_is_recognised_from_its_bytes_as_from_bytes_writes_it() {
        for bytes in [
            [1, 0, 0, 0, 0x80, 0, 0, 1],
            [0xff; 8],
            [0xd9, 0x8d, 0x28, 0, 0xe4, 0x3e, 0x9f, 0],
        ] {
            let text = from_bytes(&bytes);
            assert!(is_text_of(&text, &bytes), "{text}");
            let mut other = bytes;
            other[7] ^= 1;
            assert!(!is_text_of(&text, &other), "{text}");
        }
        // `/` is written `-`: 0xff bytes encode to `/` in standard base64.
        assert!(from_bytes(&[0xff; 8]).contains('-'));
        assert!(!is_text_of("", &[0; 8]));
    }

    #[test]
    fn a_partition_key_range_rid_is_one_base64_string_of_sixteen_bytes() {
        let container = container(2, 1);
        let range = partition_key_range(&container, 3);
        let bytes = BASE64
            .decode(range.replace('-', "/"))
            .expect("one base64 string");
        assert_eq!(bytes.len(), 16);
        assert_eq!(encode(&bytes[..8]), container);
        assert_eq!(bytes[8..], [2, 0, 0, 0, 3, 0, 0, 0]);
    }

    #[test]
    fn links_of_rids_are_told_from_names() {
        assert!(looks_like_container_rid(&database(7), &container(7, 3)));
        // The SDKs' "random one".
        assert!(looks_like_container_rid("AQAAAA==", "AQAAAJ0fgTc="));
        assert!(!looks_like_container_rid(&database(7), &container(8, 3)));
        assert!(!looks_like_container_rid("db", "coll"));
        assert!(!looks_like_container_rid(&database(7), "orders"));
    }

    #[test]
    fn rids_nest_and_are_recognised() {
        let db = database(7);
        let coll = container(7, 1);
        let doc = item(7, 1, 42);
        assert_eq!(db.len(), 8);
        assert_eq!(coll.len(), 12);
        assert_eq!(doc.len(), 24);
        assert!(looks_like_database_rid(&db));
        assert!(!looks_like_database_rid("mydb"));
        assert!(!looks_like_database_rid("database"));
        assert_ne!(item(7, 1, 42), item(7, 1, 43));
        assert_eq!(parse_item(&doc), Some((7, 1, 42)));
        assert_eq!(parse_item(&coll), None);
        assert_eq!(parse_item("not a rid"), None);
    }

    #[test]
    fn items_carry_their_partitions_rid_prefix_bit_reversed_under_the_kind() {
        // Items of the service's five-partition container (25,000 RU/s; the
        // JavaScript SDK's fullTextSearch.spec.ts, `docs/src/search.md`):
        // byte 15 is 0x00, 0x08, 0x04, 0x0C or 0x02, ridPrefix 0 to 4
        // bit-reversed; the counters run to 22 (100 items over 5).
        let service = [
            "7oh8AIMy9ekIAAAAAAAAAg==",
            "7oh8AIMy9ekUAAAAAAAADA==",
            "7oh8AIMy9ekUAAAAAAAABA==",
            "7oh8AIMy9ekBAAAAAAAAAA==",
            "7oh8AIMy9ekIAAAAAAAACA==",
            "JfY-AKTpHRQWAAAAAAAABA==",
        ];
        let mut prefixes = Vec::new();
        for rid in service {
            let (db, container, document) = parse_item(rid).unwrap();
            let (prefix, counter) = split_item_document(document);
            assert!(prefix < 5 && (1..=22).contains(&counter), "{rid}");
            assert_eq!(item(db, container, item_document(prefix, counter)), rid);
            prefixes.push(prefix);
        }
        assert_eq!(prefixes, [4, 3, 2, 0, 1, 2]);
        // Range 0's documents are what every item's was before.
        assert_eq!(item_document(0, 42), 42);
        assert_eq!(split_item_document(42), (0, 42));
        assert_eq!(split_item_document(item_document(1000, 3)), (1000, 3));
        assert_ne!(item_document(1, 1), item_document(2, 1));
    }

    #[test]
    fn scripts_extend_their_container_with_their_kind_in_the_last_byte() {
        let coll = container(7, 1);
        let (sproc, trigger, udf) = (
            stored_procedure(7, 1, 1),
            trigger(7, 1, 1),
            user_defined_function(7, 1, 1),
        );
        for (rid, last) in [(&sproc, "gA=="), (&trigger, "cA=="), (&udf, "YA==")] {
            assert_eq!(rid.len(), 24);
            assert!(rid.starts_with(&coll[..8]), "{rid}");
            assert!(rid.ends_with(&format!("AAAAAAAA{last}")), "{rid}");
        }
        assert_ne!(stored_procedure(7, 1, 1), stored_procedure(7, 1, 2));
        // Not an item of the container.
        assert_ne!(sproc, item(7, 1, 1));
    }
}
