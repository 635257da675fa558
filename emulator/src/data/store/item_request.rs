//! What an item request hands the store and gets back besides the item:
//! the item it addresses, the write it asks for (validated up to what needs
//! the container), and the container as the response's headers name it.

use serde_json::{Map, Value};

use super::Owner;

/// An item request's container, for the response headers and the checks
/// of `x-ms-cosmos-intended-collection-rid` and `x-ms-session-token`.
#[derive(Debug, Clone)]
pub struct ContainerContext {
    pub owner: Owner,
    /// The LSN of the range the response names (see `item.rs`'s `Lsns`).
    pub lsn: u64,
    /// The partition key range the response names (the item's range for
    /// an item request): its `x-ms-documentdb-partitionkeyrangeid` and the
    /// range of its session token.
    pub range: u32,
    /// Whether writes index the item (the indexing mode is not `none`):
    /// what a write costs depends on it (`request_units`).
    pub indexes_writes: bool,
}

/// What a point delete did: its range's LSN after it, the range that held
/// the item, and the size it had (what the delete costs).
#[derive(Debug, Clone, Copy)]
pub struct Deleted {
    pub lsn: u64,
    pub range: u32,
    pub bytes: usize,
}

/// What kind of item write a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    Create,
    Upsert,
    /// Replace the item whose id is in the URL.
    Replace,
}

/// Which item a point request addresses, and its precondition.
#[derive(Debug, Clone, Copy)]
pub struct ItemAddress<'a> {
    pub database: &'a str,
    pub container: &'a str,
    pub partition_key: Option<&'a str>,
    pub id: &'a str,
    pub if_match: Option<&'a str>,
}

/// An item write, validated up to what needs the container.
pub struct ItemWrite<'a> {
    pub mode: WriteMode,
    /// For `Replace`, the id in the URL.
    pub url_id: Option<&'a str>,
    pub partition_key_header: Option<&'a str>,
    pub if_match: Option<&'a str>,
    pub body: Map<String, Value>,
}
