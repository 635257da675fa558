//! `GET /` on the wire: the account document (`operations/account.rs`),
//! with where this endpoint is reached. Its locations must carry the scheme, host
//! and port the client reached, since the Python SDK sends later requests
//! there; with `--advertise-host`, that host with the port the client used.
//! The scheme is the connection's where one port serves both
//! (`--protocol auto`), else the server's.
//!
//! A client that reached `localhost` is told `127.0.0.1`, as Microsoft's
//! emulator tells it: the region's endpoint then differs from the account's
//! as a regional endpoint does on the service, and the SDKs' fault-injection
//! tests tell the "write region" (`127.0.0.1`) from the "read region"
//! (`localhost`) they add by that difference.

use axum::extract::State;
use axum::http::uri::Authority;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use axum::Extension;

use super::response::from_operation;
use super::AppState;
use crate::net::transport::ConnectionScheme;
use crate::operations::account;

/// `scheme://host:port/` as the client should address the emulator.
pub(super) fn endpoint(state: &AppState, scheme: &str, uri: &Uri, headers: &HeaderMap) -> String {
    // HTTP/2 clients name the server in the URI's authority, HTTP/1.1 ones in
    // `Host`; a client that sends neither gets the address the server bound.
    let addressed = uri
        .authority()
        .map(|a| a.as_str().to_string())
        .or_else(|| {
            headers
                .get("host")
                .and_then(|h| h.to_str().ok())
                .map(str::to_string)
        })
        .unwrap_or_else(|| state.local_addr.to_string());
    let host = match &state.advertise_host {
        None => regional(addressed, state.local_addr.is_ipv4()),
        Some(host) => {
            let host = if host.contains(':') {
                format!("[{host}]")
            } else {
                host.clone()
            };
            // The port the client used (none: the scheme's, as it addressed it).
            match addressed
                .parse::<Authority>()
                .ok()
                .and_then(|a| a.port_u16())
            {
                Some(port) => format!("{host}:{port}"),
                None => host,
            }
        }
    };
    format!("{scheme}://{host}/")
}

/// The `host[:port]` of an endpoint URL as [`endpoint`] writes it.
pub(super) fn authority_of(endpoint: &str) -> &str {
    endpoint
        .trim_end_matches('/')
        .rsplit_once("://")
        .map_or(endpoint, |(_, authority)| authority)
}

/// `localhost[:port]` as `127.0.0.1[:port]` when the server listens on IPv4
/// (so that the address reaches it); any other host as it is.
fn regional(addressed: String, listens_on_ipv4: bool) -> String {
    let Ok(authority) = addressed.parse::<Authority>() else {
        return addressed;
    };
    if !listens_on_ipv4 || !authority.host().eq_ignore_ascii_case("localhost") {
        return addressed;
    }
    match authority.port_u16() {
        Some(port) => format!("127.0.0.1:{port}"),
        None => "127.0.0.1".to_string(),
    }
}

/// `GET /`: the account document (`operations/account.rs`), with the
/// addresses this endpoint computes: its own as the client reached it,
/// and, with several regions, each region's (`regions.rs`).
pub async fn read(
    State(state): State<AppState>,
    connection: Option<Extension<ConnectionScheme>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let scheme = connection.map_or(state.scheme, |Extension(c)| c.0);
    let endpoint = endpoint(&state, scheme, &uri, &headers);
    let regions = (state.account.topology.names().len() > 1).then(|| {
        // Every region, each at its own port of the host this one was reached at.
        super::regions::locations(&state, scheme, authority_of(&endpoint))
    });
    let reached = account::Reached { endpoint, regions };
    from_operation(account::read(&state.serving(), reached), &uri)
}

#[cfg(test)]
mod tests {
    use super::regional;

    #[test]
    fn localhost_is_advertised_as_the_ipv4_loopback() {
        assert_eq!(regional("localhost:8081".into(), true), "127.0.0.1:8081");
        assert_eq!(regional("LocalHost".into(), true), "127.0.0.1");
        // Listening on IPv6 only, 127.0.0.1 would not reach the server.
        assert_eq!(regional("localhost:8081".into(), false), "localhost:8081");
        for other in ["127.0.0.1:8081", "cosmos:8081", "[::1]:8081", "example.com"] {
            assert_eq!(regional(other.into(), true), other);
        }
    }
}
