//! The conformance suite's integration tests, one binary: each module is
//! one area, as its file says; `common` holds what they share.
//!
//! `cargo test -p cosmos-conformance --test it gate::` runs one module's tests.
//! The whole suite against the in-process emulator is the other binary,
//! `tests/conformance.rs`: a libtest-mimic harness of its own.

mod change_feed;
mod common;
mod comparison;
mod fixtures;
mod gate;
mod html;
mod misbehaving;
mod no_expiry;
mod schema;
mod snapshot;
