//! The Cosmos operations, below every protocol: each is a function of the
//! account (as one region's endpoint serves it: [`Serving`]), the resource
//! it addresses, the request's options ([`RequestOptions`], read by
//! meaning) and its body, and answers a [`Response`]: a status, typed
//! headers, a body. Nothing here knows HTTP: the HTTP adapter (`http/`)
//! parses a request into these and writes the answer back, and a second
//! protocol (Direct mode's binary frames) does the same with its own
//! names (`docs/src/architecture.md`, "A second protocol").
//!
//! - `options.rs`: what a request asks for besides address and body;
//! - `response.rs`: what an operation answers, and its refusals;
//! - `body.rs`: reading a body within the service's limits;
//! - `session.rs`: the checks of a container's RID and of a session token,
//!   and the LSN an answer's session token names;
//! - `kind.rs`: the kinds of operation (what fault rules, throttling and
//!   regions tell apart);
//! - `resource_token.rs`: the permission tokens the users' operations hand
//!   out and a request signs with, and `authorization.rs`: what a token's
//!   permission lets a request do;
//! - `around.rs`: what runs around every operation, once: the region, the
//!   budget, the fault rules, durability;
//! - `items.rs`: the item operations;
//! - `query.rs`: a query's page (and its plan), and the read feed's;
//!   `query_metrics.rs`: the metrics a query page answers when asked;
//! - `change_feed.rs`: a page of the change feed, in either mode;
//! - `batch.rs`: a transactional batch, or a bulk request;
//! - `stored_procedures.rs`: a stored procedure's execution.
//!
//! The metadata operations, one file per resource family, each a function
//! of the account, the resource's address (`paths.rs`), the options and
//! the body; what they share (resources held as JSON, their feeds and
//! in-memory queries) is `resources.rs`:
//!
//! - `account.rs`: the account document;
//! - `databases.rs`, `containers.rs`: databases and containers;
//! - `offers.rs`: their throughput;
//! - `users.rs`: users and their permissions (with fresh tokens);
//! - `scripts.rs`: stored procedures', triggers' and UDFs' definitions;
//! - `ranges.rs`: a container's partition key ranges;
//! - `keys.rs`: client encryption keys;
//! - `conflicts.rs`: the conflicts feed (always empty);
//! - `addresses.rs`: the address feed, where Direct mode finds replicas.

pub mod account;
pub mod addresses;
pub mod around;
pub mod authorization;
pub mod batch;
pub mod body;
pub mod change_feed;
pub mod conflicts;
pub mod containers;
pub mod databases;
pub mod items;
pub mod keys;
pub mod kind;
pub mod offers;
pub mod options;
pub mod paths;
pub mod query;
pub mod query_metrics;
pub mod ranges;
pub(crate) mod resource_token;
pub mod resources;
pub mod response;
pub mod scripts;
pub mod session;
pub mod stored_procedures;
pub mod users;

pub use around::{around, nothing_around, Breakable, Call, Reply, Target};
pub use kind::OperationKind;
pub use options::{GivenOptions, RequestOption, RequestOptions};
pub use paths::{
    ConflictPath, ContainerPath, DatabasePath, ItemPath, KeyPath, PermissionPath, ScriptPath,
    UserPath,
};
pub use response::{
    answered, Answer, ContainerState, Refusal, Response, ResponseEtag, ResponseHeaders,
};

use crate::account::Account;

/// The account as one of its endpoints serves it: the region that endpoint
/// is (reads there see that region's replica; writes there are refused
/// when it takes none).
#[derive(Clone, Copy)]
pub struct Serving<'a> {
    pub account: &'a Account,
    /// The region's number in the account's topology (0: the first).
    pub region: usize,
}

impl<'a> Serving<'a> {
    pub fn new(account: &'a Account, region: usize) -> Self {
        Serving { account, region }
    }
}
