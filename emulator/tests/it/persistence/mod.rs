//! Persistence (issue 14), from outside: the real `cosmos-emulator` binary
//! started with `--data-dir`, driven over signed HTTP on loopback, killed
//! with SIGKILL (or stopped) and started again on the same directory.
//!
//! - every acknowledged write survives a SIGKILL under load (items and a
//!   container replace), for each `--sync` mode and among compactions; a
//!   transactional batch cut by the kill is all or nothing; a purge cut by
//!   it still ends with one TTL delete per item;
//! - a restart keeps container settings, offers, users and permissions,
//!   ranges after a split, items with their system properties, the
//!   all-versions-and-deletes change feed, session and resource tokens, the
//!   manual clock, time to live (manual and system clock), the RID
//!   counters and the write order scans read items in;
//! - a restore of a named snapshot, and a reset, survive a SIGKILL right
//!   after their answer (the restored clock and TTL included);
//! - a torn or corrupt log is cut where it goes bad, and said so; a damaged
//!   snapshot stops the start;
//! - a second emulator on the same directory refuses to start;
//! - `POST /_emulator/compact` writes a snapshot the log then continues.
//!
//! No assertion depends on timing: the clocks that matter are manual, or the
//! waits are generous and their outcomes are checked, not their durations.
pub(crate) mod support;

mod damaged;
mod kill;
mod order;
mod restart;
