//! A multi-region account on the wire (`--regions`; the model is
//! `regions.rs`; what a region that is down or takes no writes answers is
//! `operations/around.rs`'s): the account document's locations
//! (`docs/src/regions.md`). The routes that take regions down, bring them
//! up and fail over are the control API's (`control/regions.rs`).

use axum::http::uri::Authority;
use serde_json::{json, Value};

use super::AppState;

/// The account document's `writableLocations` and `readableLocations`:
/// each region with the endpoint a client reaches it at, the host as the
/// client addressed this endpoint (`addressed`, `host:port`), the port the
/// region's.
pub fn locations(state: &AppState, scheme: &str, addressed: &str) -> (Value, Value) {
    let authority = addressed.parse::<Authority>().ok();
    let host = authority
        .as_ref()
        .map_or(addressed.to_string(), |a| a.host().to_string());
    let client_port = authority.as_ref().and_then(Authority::port_u16);
    let own_port = state.region_addrs[state.region_index].port();
    let location = |region: usize| {
        let port = state.region_addrs[region].port();
        // The port the client used, moved as far as the region's is from
        // this endpoint's (a container's published ports keep the offsets).
        let port = match client_port {
            Some(used) => i32::from(used) + i32::from(port) - i32::from(own_port),
            None => i32::from(port),
        };
        json!({
            "name": state.account.topology.name(region),
            "databaseAccountEndpoint": format!("{scheme}://{host}:{port}/"),
        })
    };
    let writable = state
        .account
        .topology
        .writable()
        .into_iter()
        .map(location)
        .collect();
    let readable = state
        .account
        .topology
        .in_failover_order()
        .into_iter()
        .map(location)
        .collect();
    (Value::Array(writable), Value::Array(readable))
}
