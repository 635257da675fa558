//! The emulator's own control API (`/_emulator/...`): what a test does to
//! the emulator that the service has no request for (move the test clock,
//! purge, split a range, take a region down, add a fault rule, snapshot
//! the account...). Every route is in [`ROUTES`], one line each, and the
//! router is built from that table; `docs/src/reference/control-api.md`
//! describes each route, and the Python and npm packages' clients call
//! each one (`emulator/tests/it/control_routes.rs` holds the page and both
//! clients to the table). `CONTRIBUTING.md`'s "Add a control route" lists
//! what a new route touches.
//!
//! This module sits above `http/`: its handlers are axum handlers over
//! `http::AppState`, and `http::app_with` puts them behind the same
//! layers as the resources' routes (signed with the master key like the
//! account read, the envelope's headers, durability with `--data-dir`).
//! `http/` never names this module; it knows the `/_emulator` prefix only
//! to let control requests past outages, the budget and fault rules
//! (`http/operation.rs`, `Operation::Control`).
//!
//! One file per concern: `clock.rs`, `stats.rs`, `regions.rs`,
//! `faults.rs`, `snapshots.rs`, `maintenance.rs` (purge, split, compact,
//! reset), `lifetimes.rs`.

mod clock;
mod faults;
mod lifetimes;
mod maintenance;
mod regions;
mod snapshots;
mod stats;

use axum::http::Method;
use axum::routing::{on, MethodFilter, MethodRouter};
use axum::Router;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::http::{AppState, Body};
use crate::protocol::error::Status;
use crate::protocol::error::{ApiError, ApiResult};

/// One control route: its method, its path (axum's syntax: `{name}` is a
/// parameter), what it does in a line, and its handler, given the method
/// (so that the table alone says which method a handler serves).
pub struct ControlRoute {
    pub method: Method,
    pub path: &'static str,
    pub summary: &'static str,
    handler: fn(MethodFilter) -> MethodRouter<AppState>,
}

impl std::fmt::Debug for ControlRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.path)
    }
}

/// Every control route, in the order of the reference page
/// (`docs/src/reference/control-api.md`).
pub const ROUTES: &[ControlRoute] = &[
    // The test clock (`clock.rs`).
    ControlRoute {
        method: Method::GET,
        path: "/_emulator/clock",
        summary: "the test clock's time, in epoch seconds (--clock manual)",
        handler: |m| on(m, clock::read),
    },
    ControlRoute {
        method: Method::POST,
        path: "/_emulator/clock",
        summary: "advances the test clock ({\"advance\": s}) or sets it ({\"set\": s})",
        handler: |m| on(m, clock::update),
    },
    // What is stored (`stats.rs`).
    ControlRoute {
        method: Method::GET,
        path: "/_emulator/stats",
        summary: "the clock and the items stored per container, expired ones included",
        handler: |m| on(m, stats::read),
    },
    ControlRoute {
        method: Method::POST,
        path: "/_emulator/lifetimes",
        summary: "a page of a container's items with their lifetimes explained",
        handler: |m| on(m, lifetimes::page),
    },
    // Maintenance (`maintenance.rs`).
    ControlRoute {
        method: Method::POST,
        path: "/_emulator/purge",
        summary: "purges every item due now; answers once they are gone",
        handler: |m| on(m, maintenance::purge),
    },
    ControlRoute {
        method: Method::POST,
        path: "/_emulator/split",
        summary: "splits one partition key range of a container in two",
        handler: |m| on(m, maintenance::split),
    },
    ControlRoute {
        method: Method::POST,
        path: "/_emulator/compact",
        summary: "writes a snapshot of the data directory now (--data-dir)",
        handler: |m| on(m, maintenance::compact),
    },
    ControlRoute {
        method: Method::POST,
        path: "/_emulator/reset",
        summary: "drops every database, fault rule and region condition",
        handler: |m| on(m, maintenance::reset),
    },
    // Named in-memory snapshots of the account (`snapshots.rs`).
    ControlRoute {
        method: Method::GET,
        path: "/_emulator/snapshots",
        summary: "the snapshots kept, by name",
        handler: |m| on(m, snapshots::list),
    },
    ControlRoute {
        method: Method::PUT,
        path: "/_emulator/snapshots/{name}",
        summary: "keeps a copy of the whole account under a name",
        handler: |m| on(m, snapshots::take),
    },
    ControlRoute {
        method: Method::POST,
        path: "/_emulator/snapshots/{name}/restore",
        summary: "makes the account exactly a snapshot",
        handler: |m| on(m, snapshots::restore),
    },
    ControlRoute {
        method: Method::DELETE,
        path: "/_emulator/snapshots/{name}",
        summary: "forgets a snapshot",
        handler: |m| on(m, snapshots::delete),
    },
    // Fault rules (`faults.rs`).
    ControlRoute {
        method: Method::POST,
        path: "/_emulator/faults",
        summary: "adds a fault rule",
        handler: |m| on(m, faults::add),
    },
    ControlRoute {
        method: Method::GET,
        path: "/_emulator/faults",
        summary: "every fault rule, with its hit count",
        handler: |m| on(m, faults::list),
    },
    ControlRoute {
        method: Method::DELETE,
        path: "/_emulator/faults",
        summary: "removes every fault rule",
        handler: |m| on(m, faults::clear),
    },
    ControlRoute {
        method: Method::GET,
        path: "/_emulator/faults/{id}",
        summary: "one fault rule, with its hit count",
        handler: |m| on(m, faults::read),
    },
    ControlRoute {
        method: Method::DELETE,
        path: "/_emulator/faults/{id}",
        summary: "removes one fault rule",
        handler: |m| on(m, faults::delete),
    },
    // Regions (`regions.rs`).
    ControlRoute {
        method: Method::GET,
        path: "/_emulator/regions",
        summary: "every region: its endpoint, writes, outage, replication",
        handler: |m| on(m, regions::list),
    },
    ControlRoute {
        method: Method::POST,
        path: "/_emulator/regions/{name}/down",
        summary: "takes a region down (refuse, reset, hang, 503 or 403-1008)",
        handler: |m| on(m, regions::take_down),
    },
    ControlRoute {
        method: Method::POST,
        path: "/_emulator/regions/{name}/up",
        summary: "brings a region back",
        handler: |m| on(m, regions::bring_up),
    },
    ControlRoute {
        method: Method::POST,
        path: "/_emulator/regions/{name}/replication",
        summary: "sets a region's replication lag, or pauses it",
        handler: |m| on(m, regions::replicate),
    },
    ControlRoute {
        method: Method::POST,
        path: "/_emulator/failover",
        summary: "moves the account's write region",
        handler: |m| on(m, regions::fail_over),
    },
];

/// The control API's router, built from [`ROUTES`] (the routes of one path
/// merge into one method router).
pub fn routes() -> Router<AppState> {
    ROUTES.iter().fold(Router::new(), |router, route| {
        let filter = MethodFilter::try_from(route.method.clone())
            .expect("the table names methods a router can filter on");
        router.route(route.path, (route.handler)(filter))
    })
}

/// An empty control body, or a JSON object of shape `T` (an array is
/// refused: serde would read it as the struct's fields in order).
fn optional_body<T: DeserializeOwned + Default>(body: &Body, what: &str) -> ApiResult<T> {
    if body.0.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_value(Value::Object(body.object()?))
        .map_err(|e| ApiError::bad_request(format!("The {what} body is invalid: {e}.")))
}

/// An empty body or `{}`: the control routes that take no parameters.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NoParameters {}

/// Runs store work that holds its lock for a while (a purge, a
/// compaction, copying or swapping the whole account) off the threads that
/// serve requests; `failed` is the 500's message should it panic.
async fn blocking<T: Send + 'static>(
    failed: &'static str,
    work: impl FnOnce() -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|_| ApiError::new(Status::INTERNAL_SERVER_ERROR, failed))?
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table is what the router serves: one entry per method and path,
    /// each under the control prefix, each with its line of summary.
    #[test]
    fn the_table_names_each_route_once() {
        let mut seen = std::collections::BTreeSet::new();
        for route in ROUTES {
            assert!(
                route.path.starts_with("/_emulator/"),
                "{route:?}: control routes live under /_emulator/"
            );
            assert!(!route.summary.is_empty(), "{route:?} has no summary");
            assert!(
                seen.insert((route.method.as_str(), route.path)),
                "{route:?} is in ROUTES twice"
            );
        }
    }

    /// Building the router panics if two entries overlap (the same method
    /// on one path) or a path is malformed.
    #[test]
    fn the_router_is_built_from_the_table() {
        let _ = routes();
    }
}
