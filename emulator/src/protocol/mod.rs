//! The protocol's rules: what any front door reads from a request and
//! writes into an answer, whatever carries it, and nothing about the data.
//! - `auth` (master-key signatures) and `entra_token` (Entra ID tokens);
//! - `partition_key` (definitions, values, their headers), `epk`
//!   (effective partition keys), `item_key` (an item's address), `rid`
//!   (resource ids);
//! - `consistency` (the account's level and a request's) and
//!   `request_units` (what operations cost);
//! - `limits` (the quotas, in one place), `json` (JSON within the nesting
//!   limit) and `error` (the service's failures: status, substatus, message).

pub mod auth;
pub mod consistency;
pub(crate) mod entra_token;
pub(crate) mod epk;
pub mod error;
pub(crate) mod item_key;
pub(crate) mod json;
pub mod limits;
pub(crate) mod partition_key;
pub mod request_units;
pub(crate) mod rid;
