//! `GET /`: the account document. Its locations must carry the scheme, host
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
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use axum::Extension;
use serde_json::json;

use super::response::{resource, METADATA_READ};
use super::AppState;
use crate::transport::ConnectionScheme;

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

pub async fn read(
    State(state): State<AppState>,
    connection: Option<Extension<ConnectionScheme>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let scheme = connection.map_or(state.scheme, |Extension(c)| c.0);
    let endpoint = endpoint(&state, scheme, &uri, &headers);
    let (writable, readable) = match state.account.topology.names().len() {
        1 => {
            let location = json!([{"name": &*state.region, "databaseAccountEndpoint": endpoint}]);
            (location.clone(), location)
        }
        // Every region, each at its own port of the host this one was reached at.
        _ => {
            let addressed = endpoint
                .trim_end_matches('/')
                .rsplit_once("://")
                .map_or(endpoint.as_str(), |(_, authority)| authority);
            super::regions::locations(&state, scheme, addressed)
        }
    };
    // Microsoft's emulator's account is `localhost`, and the JavaScript SDK
    // ignores the locations of an account so named: a multi-region account
    // must be called otherwise for its regions to count.
    let account_id = match state.account.topology.names().len() {
        1 => "localhost",
        _ => "emulator",
    };
    let query_engine = json!({
        "maxSqlQueryInputLength": 262144, "maxJoinsPerSqlQuery": 5, "maxLogicalAndPerSqlQuery": 500,
        "maxLogicalOrPerSqlQuery": 500, "maxUdfRefPerSqlQuery": 10, "maxInExpressionItemsCount": 16000,
        "queryMaxInMemorySortDocumentCount": 500, "maxQueryRequestTimeoutFraction": 0.9,
        "sqlAllowNonFiniteNumbers": false, "sqlAllowAggregateFunctions": true, "sqlAllowSubQuery": true,
        "sqlAllowScalarSubQuery": true, "allowNewKeywordsAsIdentifiers": true, "enableSpatialIndexing": true,
        "maxSpatialQueryCells": 12, "spatialMaxGeometryPointCount": 256, "sqlDisableOptimizationFlags": 0,
        "sqlAllowTop": true, "enableUDFs": true
    });
    let account = json!({
        "_self": "",
        "id": account_id,
        "_rid": account_id,
        "media": "//media/",
        "addresses": "//addresses/",
        "_dbs": "//dbs/",
        "writableLocations": writable,
        "readableLocations": readable,
        "enableMultipleWriteLocations": state.account.topology.multi_write(),
        "userReplicationPolicy": {"asyncReplication": false, "minReplicaSetSize": 1, "maxReplicasetSize": 4},
        "userConsistencyPolicy": {"defaultConsistencyLevel": state.account.consistency.name()},
        "systemReplicationPolicy": {"minReplicaSetSize": 1, "maxReplicasetSize": 4},
        "readPolicy": {"primaryReadCoefficient": 1, "secondaryReadCoefficient": 1},
        "queryEngineConfiguration": query_engine.to_string(),
    });
    resource(StatusCode::OK, &account, METADATA_READ)
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
