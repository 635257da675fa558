//! One stored item: its serialised JSON (system properties included, served
//! as is on reads) and the few fields the store needs without parsing it.

use bytes::Bytes;
use serde_json::{Map, Value};

use crate::data::ttl::Ttl;
use crate::protocol::error::{ApiError, ApiResult};

pub use crate::protocol::limits::MAX_ITEM_BYTES;
use crate::protocol::limits::{MAX_ID_BYTES, MAX_NESTING_DEPTH, MAX_RESOURCE_NAME_CHARS};

/// System properties the server owns; whatever a client sends for them is replaced.
pub const SYSTEM_PROPERTIES: [&str; 5] = ["_rid", "_self", "_etag", "_attachments", "_ts"];

/// Kept compact: an item costs its JSON plus a few dozen bytes.
#[derive(Debug, Clone)]
pub struct Item {
    /// The item as served: the client's properties followed by the system ones.
    pub body: Bytes,
    /// Last write, epoch seconds (R1).
    pub ts: i64,
    /// The item's own `ttl`, validated (R3, R9).
    pub ttl: Option<Ttl>,
    pub etag: Etag,
    /// The item's number in its container: its place in write order
    /// (`container/scan.rs`), given once by its create.
    pub number: u64,
    /// The last part of its RID (`rid::item_document`): numbered within
    /// its physical partition, as the service does (`container/rids.rs`).
    pub rid: u64,
    /// The container change log's LSN of the change that wrote this version:
    /// its place in the log and in the change feed's order.
    pub lsn: u64,
    /// Its partition key range's LSN of that change: the `_lsn` the change
    /// feed serves, the `x-ms-item-lsn` header (see [`Lsns`]).
    pub range_lsn: u64,
}

/// The LSNs a write takes (one per change, or one for a whole transactional
/// batch): the container's change log orders every change of the container
/// by `log` (the change feed's continuation is one); the service numbers
/// each physical partition's writes on their own, and that `range` LSN is
/// what clients see: `_lsn`, the `lsn` header, session tokens (the Java
/// change feed estimator subtracts the one from the other).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lsns {
    pub log: u64,
    pub range: u64,
}

/// A version stamp, written as the service does: a quoted UUID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Etag(uuid::Uuid);

impl Etag {
    pub fn new() -> Self {
        Etag(uuid::Uuid::new_v4())
    }

    /// Its 16 bytes, as the data directory keeps it.
    pub fn as_bytes(&self) -> &[u8; 16] {
        self.0.as_bytes()
    }

    pub fn from_bytes(bytes: [u8; 16]) -> Self {
        Etag(uuid::Uuid::from_bytes(bytes))
    }

    /// Writes it, quoted, into `buffer`: the text without an allocation
    /// (every item response carries it).
    pub fn encode<'b>(&self, buffer: &'b mut [u8; 38]) -> &'b str {
        buffer[0] = b'"';
        buffer[37] = b'"';
        self.0.hyphenated().encode_lower(&mut buffer[1..37]);
        std::str::from_utf8(buffer).expect("a quoted uuid is ascii")
    }
}

impl Default for Etag {
    fn default() -> Self {
        Etag::new()
    }
}

impl std::fmt::Display for Etag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.encode(&mut [0; 38]))
    }
}

impl Item {
    /// The item as the change feed serves it: with `_lsn`, spliced in
    /// before the closing brace (no parse).
    pub fn with_lsn(&self) -> Bytes {
        with_lsn(&self.body, self.range_lsn)
    }

    /// Stamps this version with the LSNs of the write that stores it.
    pub fn stamp(&mut self, lsns: Lsns) {
        self.lsn = lsns.log;
        self.range_lsn = lsns.range;
    }

    pub fn parse(&self) -> Map<String, Value> {
        crate::protocol::json::parse_unguarded(&self.body)
            .expect("stored items are JSON objects within the nesting limit")
    }
}

/// `body` (a stored item's JSON object) with `"_lsn": lsn` as its last property.
pub fn with_lsn(body: &Bytes, lsn: u64) -> Bytes {
    let Some(end) = body.iter().rposition(|b| *b == b'}') else {
        return body.clone();
    };
    let mut out = Vec::with_capacity(body.len() + 24);
    out.extend_from_slice(&body[..end]);
    let empty = body[..end].iter().rev().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    if !empty {
        out.push(b',');
    }
    out.extend_from_slice(format!("\"_lsn\":{lsn}}}").as_bytes());
    Bytes::from(out)
}

/// Checks that objects and arrays nest at most [`MAX_NESTING_DEPTH`] levels
/// (the item itself is the first), without recursion, so that any tree can
/// be checked. Bodies parsed from a request already hold this (the JSON
/// parser stops at the same depth); a patch can deepen an item, so its
/// result is checked before it is stored.
pub fn check_nesting(body: &Map<String, Value>) -> ApiResult<()> {
    let mut pending: Vec<(&Value, usize)> = body.values().map(|v| (v, 2)).collect();
    while let Some((value, depth)) = pending.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(fields) => Box::new(fields.values()),
            _ => continue,
        };
        if depth > MAX_NESTING_DEPTH {
            return Err(too_deep());
        }
        pending.extend(children.map(|child| (child, depth + 1)));
    }
    Ok(())
}

/// The refusal of an item that nests deeper than the service allows.
pub fn too_deep() -> ApiError {
    ApiError::bad_request(format!(
        "The item nests objects and arrays more than {MAX_NESTING_DEPTH} levels deep (the item itself \
         is the first level); the service allows at most {MAX_NESTING_DEPTH}. Flatten the document."
    ))
}

/// Checks a database or container name: as an item id, and at most
/// [`MAX_RESOURCE_NAME_CHARS`] characters.
pub fn validate_name(value: Option<&Value>) -> ApiResult<&str> {
    let name = checked_id(value, MAX_RESOURCE_NAME_CHARS, NAME_FORBIDDEN)?;
    if name.chars().count() > MAX_RESOURCE_NAME_CHARS {
        return Err(invalid_name(name, MAX_RESOURCE_NAME_CHARS));
    }
    Ok(name)
}

/// The service's refusal of an empty or too long id or name (the SDKs'
/// `test_create_illegal_characters` look for its second sentence), where
/// `less_than` is its bound as the service words it: 255 for databases
/// and containers, 1024 for items.
fn invalid_name(name: &str, less_than: usize) -> ApiError {
    let shown: String = name.chars().take(64).collect();
    let ellipsis = if shown.len() < name.len() { "..." } else { "" };
    ApiError::bad_request(format!(
        "The input name '{shown}{ellipsis}' is invalid. Ensure to provide a unique non-empty \
         string less than '{less_than}' characters. (It has {} characters, {} bytes of UTF-8.)",
        name.chars().count(),
        name.len()
    ))
}

/// Checks an item's `id` (`docs/src/reference/protocol.md#ids`).
pub fn validate_id(value: Option<&Value>) -> ApiResult<&str> {
    checked_id(value, MAX_ID_BYTES + 1, &[])
}

/// An id or name: a non-empty string of at most [`MAX_ID_BYTES`] bytes
/// without any of the `forbidden` characters; `less_than` words the bound
/// of the refusal.
fn checked_id<'a>(
    value: Option<&'a Value>,
    less_than: usize,
    forbidden: &[char],
) -> ApiResult<&'a str> {
    let id = match value {
        Some(Value::String(id)) => id.as_str(),
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "The input content is invalid: 'id' must be a string, got {other}."
            )))
        }
        None => return Err(ApiError::bad_request(
            "The input content is invalid because the required properties - 'id; ' - are missing.",
        )),
    };
    if id.is_empty() || id.len() > MAX_ID_BYTES {
        return Err(invalid_name(id, less_than));
    }
    if let Some(c) = id.chars().find(|c| forbidden.contains(c)) {
        let listed: Vec<String> = forbidden.iter().map(|c| format!("'{c}'")).collect();
        return Err(ApiError::bad_request(format!(
            "The input content is invalid: 'id' contains the invalid character '{c}'; {} are \
             not allowed here.",
            listed.join(", ")
        )));
    }
    Ok(id)
}

/// What a database's or a container's name may not hold. An item's id may
/// hold anything: the service creates an item whose id holds `/`, `\` or
/// `#` (201 to the Go SDK's `TestItemIdEncodingRoutingGW`), though its URL
/// can then not address it (401: `auth::gateway_segments`).
const NAME_FORBIDDEN: &[char] = &['/', '\\', '?', '#'];

/// Removes client-sent system properties, so the server's own are the only ones.
pub fn strip_system_properties(body: &mut Map<String, Value>) {
    for name in SYSTEM_PROPERTIES {
        body.remove(name);
    }
}

/// A fresh etag as text, for databases and containers.
pub fn new_etag() -> String {
    Etag::new().to_string()
}
