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
//! query through its plan, as the SDKs run one), `rntbd` (the bench's own
//! Direct-mode client: frames, pipelined connections, their load),
//! `settings` (what a run is
//! given), `figures` (how a number is written), `results` (the model of
//! results.json), `checks` (targets and ratios), `report` (results.md),
//! `run` (the sequence).

pub mod checks;
pub mod connection;
pub mod cosmos;
pub mod documents;
pub mod figures;
pub mod load;
pub mod measure;
pub mod plan_query;
pub mod process;
pub mod report;
pub mod results;
pub mod rntbd;
pub mod run;
pub mod settings;
pub mod stats;
pub mod targets;
