//! Benchmarks of the emulator, side by side with a peer emulator
//! (`@vercel/cosmosdb-server`) and with the bare HTTP stack it is built on.
//! `cargo xtask bench` builds the release binaries and runs `cosmos-bench`.
//!
//! One concept per module:
//! `stats` (percentiles), `documents` (the items stored), `cosmos` (signed
//! requests), `connection` (one keep-alive HTTP/1.1 connection),
//! `load` (the load generator and its measurement window), `process`
//! (servers under test, /proc), `targets` (the three servers),
//! `measure` (one module per measurement), `plan_query` (a cross-partition
//! query through its plan, as the SDKs run one), `checks` (targets and ratios),
//! `report` (results.json and results.md), `run` (the sequence).

pub mod checks;
pub mod connection;
pub mod cosmos;
pub mod documents;
pub mod load;
pub mod measure;
pub mod plan_query;
pub mod process;
pub mod report;
pub mod run;
pub mod stats;
pub mod targets;
