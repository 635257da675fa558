//! The data and the engines that run over it, below the account and with
//! no protocol in sight.
//! - `clock` (the one source of time) and `ttl` (the TTL rules it counts);
//! - `store` (databases, containers, items, the expiry index, behind one
//!   lock), `persist` (the data directory and its journal), `purge` (the
//!   background deletion of expired items), `reindex` (rebuilding indexes
//!   after a policy change);
//! - `index` (indexes, the indexing policy, the paths they read), `query`
//!   (the SQL dialect: parser, evaluator, pipeline, over a data-only view
//!   the store implements), `patch` (partial updates) and `script`
//!   (stored procedures, triggers and user-defined functions).

pub mod clock;
pub(crate) mod index;
pub(crate) mod patch;
pub mod persist;
pub(crate) mod purge;
pub(crate) mod query;
pub(crate) mod reindex;
pub(crate) mod script;
pub mod store;
pub mod ttl;
