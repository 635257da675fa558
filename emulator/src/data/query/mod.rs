//! Queries: the SQL dialect of `POST .../docs` with
//! `x-ms-documentdb-isquery: True`. This file is the front door: what the
//! rest of the emulator may use, and where each part lives.
//!
//! - the text: `lexer.rs`, `parser/` into an [`ast`](Select), then
//!   `validate.rs` (what the service refuses) and `prepared.rs` (a
//!   [`PreparedQuery`]: what running it needs to know of it);
//! - the language: `eval.rs` (expressions over one row), `rows.rs` (what
//!   FROM and JOINs make of an item), `order.rs` (how values compare),
//!   `execute.rs` (filter, project,
//!   group, sort), `functions/` (the system functions, marked where they
//!   read the clock), `search/` (vector and full-text search), `udf.rs`
//!   (user-defined functions, through a runner the caller gives);
//! - running it: `run/` (every way a query runs, each through one run
//!   context, `context.rs`; `run/pipeline.rs` the page a request asks for,
//!   over a data-only [`Source`](run::pipeline::Source)), `access.rs`
//!   (an index or the scan), `view.rs` (what it reads of a container beside
//!   the scan), `page.rs` and `results.rs` (pages, and whole results kept
//!   between them);
//! - around it: `plan.rs` and `gateway.rs` (query plans, and what the
//!   gateway serves across partitions), `computed.rs` (computed
//!   properties), `paths.rs` (which path of the item an expression reads),
//!   `now.rs` (the instant `GetCurrent*` return), `spatial_column.rs`
//!   (the spatial index, beside the geometry it reads).
//!
//! The indexes, the indexing policy and the document path are a leaf of
//! their own (`index/`), below this engine and the store.

mod access;
mod ast;
mod budget;
mod computed;
mod context;
mod eval;
mod execute;
mod functions;
mod gateway;
mod lexer;
mod like;
mod now;
mod number;
mod order;
mod page;
mod parser;
mod paths;
mod plan;
mod prepared;
pub mod results;
pub mod retrieved;
mod rows;
pub mod run;
pub mod search;
pub mod spatial_column;
#[cfg(test)]
pub mod testing;
pub mod udf;
mod validate;
pub mod view;

pub use ast::Projection;
pub use computed::ComputedProperties;
pub use context::{RunContext, Setting};
pub(crate) use functions::spatial::{Reach, Region};
pub use page::{Continuation, PageLimit};
pub use prepared::{PreparedQuery, QueryBody};
pub use run::pipeline;

#[cfg(test)]
pub(crate) mod tests;
