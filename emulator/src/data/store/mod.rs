//! The in-memory store: databases, containers, items, behind one lock.
//!
//! Reads take the lock shared; writes and purge batches take it exclusively
//! and briefly. All operations read time from the one [`Clock`]. This file
//! is the store's front door: its parts and what they hand out. The store
//! and its lock are `lock.rs`; what the lock guards is `catalog.rs`, and the
//! operations are `impl Store` blocks in the files named for what they do.
//! This file defines nothing: a name a part takes through it (`super::Store`)
//! is the defining file's, so the parts form no import cycle through it
//! (`xtask/src/tidy/imports.rs` follows a re-export to its definition).
//!
//! [`Clock`]: crate::data::clock::Clock

mod account;
mod batch;
mod budgets;
mod catalog;
mod checks;
mod client_encryption_key;
mod client_encryption_keys;
mod container;
mod containers;
mod durable;
mod encryption_policy;
mod expiry;
mod feed_position;
mod image;
mod item;
mod item_ops;
mod item_request;
mod lifetimes;
mod lock;
mod log;
mod lookup;
mod numbered;
mod offer;
mod offers;
mod purging;
mod query_source;
mod range_lsns;
mod range_walk;
mod ranges;
mod records;
mod reindex;
mod scope;
mod script;
mod scripts;
mod sequence;
mod snapshot;
mod transaction;
mod unique_keys;
mod usage;
mod user;
mod users;
mod written;

pub use batch::{Action, BatchMode, Edit, Operation, Outcome};
pub use budgets::PartitionBudget;
pub use catalog::Database;
pub use container::{Container, ContainerSettings, Owner, ScopedView};
pub use durable::{unavailable, Compaction, COMPACT_AT_LEAST};
pub use feed_position::FeedPosition;
pub use item::{
    check_nesting, strip_system_properties, too_deep, validate_id, validate_name, with_lsn, Etag,
    Item, MAX_ITEM_BYTES,
};
pub use item_request::{ContainerContext, Deleted, ItemAddress, ItemWrite, WriteMode};
pub use lifetimes::LifetimeCursor;
pub use lock::Store;
pub use log::{
    Change, ChangeKind, ChangeLog,
    DEFAULT_RETENTION_SECONDS as DEFAULT_CHANGE_FEED_RETENTION_SECONDS,
};
pub use offer::{serverless_offers, Migration, Throughput};
pub use query_source::{check_cross_partition_enabled, QuerySource};
pub use ranges::{
    parse_id as parse_range_id, Range, RangeMap, SplitRefusal, RU_PER_NEW_PHYSICAL_PARTITION,
    RU_PER_PHYSICAL_PARTITION,
};
pub use scope::{range_gone, FeedScope, ScopeRequest, PARTITION_KEY_RANGE_GONE};
pub use script::{Script, ScriptCounts, ScriptKind, ScriptView, TriggerOperation, TriggerType};
pub use snapshot::{SnapshotSummary, MAX_SNAPSHOT_NAME};
pub use transaction::{Committed, Conflict, ContainerNames, ScriptWork, Transaction};
pub use usage::ContainerStats;
pub use user::{Grant, PermissionMode, PermissionView, ScriptGrant};
pub use written::{CreateMode, Written};
