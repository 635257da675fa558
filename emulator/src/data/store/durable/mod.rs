//! The store in its data directory (`--data-dir`): what is written ahead,
//! how the state comes back at start, and the snapshots that bound the log.
//!
//! - **Writing ahead.** Every item change is recorded as the container logs
//!   it (`Container::install` and `forget`, the change log's two doors); a
//!   change to the catalog (databases, container settings, offers, users,
//!   ranges) records the catalog's metadata whole; a manual clock move
//!   records its position. When the store's write lock is released
//!   (`CatalogWrite`'s drop, `data/store/lock.rs`), the operation's records go to
//!   the journal as one frame: a transactional batch, a container replace
//!   with the purge it runs, or a purge batch is whole after a crash or
//!   absent.
//! - **Start.** The newest snapshot, then the journal frames after it, are
//!   applied in order (`Store::open_data_dir`). Expiry needs nothing of its
//!   own: items carry their `_ts` and TTL, so an item that expired while the
//!   emulator was stopped is absent from the first request, and the purge
//!   that runs at start logs its one TTL delete.
//! - **Snapshots.** When the log outgrows the last snapshot (its size, and
//!   over `COMPACT_AT_LEAST`), or on `POST /_emulator/compact`, the
//!   state is captured under the write lock (items and log entries share
//!   their bodies, so this is cheap), a new log generation starts, and the
//!   snapshot is written beside, outside the lock.
//!
//! The parts: `journal.rs` (what the store keeps with a data directory, and
//! an operation's commit), `recovery.rs` (start), `compaction.rs`
//! (snapshots), `clock_moves.rs` (the manual clock's records), `meta.rs`
//! (the catalog's metadata as records).

mod clock_moves;
mod compaction;
mod journal;
pub mod meta;
mod recovery;
#[cfg(test)]
pub(in crate::data::store) mod tests;

pub use compaction::Compaction;
pub(in crate::data::store) use journal::Durable;
pub use journal::{unavailable, COMPACT_AT_LEAST};
