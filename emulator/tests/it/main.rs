//! The emulator's integration tests, one binary (the layout rust-analyzer's
//! authors recommend: one link of the emulator for every test): each module
//! is one area, as its file says; `common` starts emulators and signs
//! requests for all of them.
//!
//! `cargo test -p cosmos-emulator --test it index::` runs one module's tests.

mod addresses;
mod auto;
mod batch;
mod change_feed;
mod cli;
mod client_encryption_keys;
mod common;
mod computed_properties;
mod control_routes;
mod conventions;
mod direct;
mod faults;
mod faults_order;
mod faults_writers;
mod fuzz;
mod hostile;
mod index;
mod item_rids;
mod items_protocol;
mod lifetimes;
mod offers;
mod operations;
mod operations_feeds;
mod operations_metadata;
mod partition_keys;
mod persistence;
mod protocol;
mod purge_and_clock;
mod query_clock;
mod query_paging;
mod ranges;
mod regions;
mod request_units;
mod reset_and_snapshots;
mod scan_order;
mod scripts;
mod scripts_resources;
mod search_policies;
mod splits;
mod throttling;
mod tls;
mod tls_given;
mod ttl;
mod unique_keys;
mod users_permissions;
mod validation;
