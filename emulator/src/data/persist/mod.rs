//! Persistence (`--data-dir`): the data directory's files and the journal
//! the store writes ahead into. This module knows frames and files; what a
//! record means is the store's business (`data/store/durable/mod.rs`).

mod directory;
mod frame;
mod journal;

pub use directory::{DataDir, Dropped, Plan};
pub use frame::{Next, Reader};
pub use journal::{Committed, Journal, SyncMode};

/// Frames `payload` onto `out` (snapshots are written frame by frame).
pub fn encode_frame(payload: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
    frame::encode(payload, out)
}
