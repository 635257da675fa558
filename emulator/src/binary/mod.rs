//! What the `cosmos-emulator` binary adds to the library, above the
//! crate's root (`main.rs` uses it):
//! - `settings` (every flag, its environment variable, its default);
//! - `health` (the health server, `--health-port`) and `probe` (the
//!   `health` subcommand that asks it, a container's HEALTHCHECK);
//! - `shutdown` (when the process stops: signals, `--parent-pid`).

pub mod health;
pub mod probe;
pub mod settings;
pub mod shutdown;
