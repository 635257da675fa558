//! `GET /`: the account document. Its locations must carry the scheme, host
//! and port the client reached, since the Python SDK sends later requests
//! there; with `--advertise-host`, that host with the port the client used.

use axum::extract::State;
use axum::http::uri::Authority;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use serde_json::json;

use super::response::{resource, READ_CHARGE};
use super::AppState;

/// `scheme://host:port/` as the client should address the emulator.
pub(super) fn endpoint(state: &AppState, uri: &Uri, headers: &HeaderMap) -> String {
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
        None => addressed,
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
    format!("{}://{host}/", state.scheme)
}

pub async fn read(State(state): State<AppState>, uri: Uri, headers: HeaderMap) -> Response {
    let endpoint = endpoint(&state, &uri, &headers);
    let location = json!([{"name": "South Central US", "databaseAccountEndpoint": endpoint}]);
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
        "id": "localhost",
        "_rid": "localhost",
        "media": "//media/",
        "addresses": "//addresses/",
        "_dbs": "//dbs/",
        "writableLocations": location,
        "readableLocations": location,
        "enableMultipleWriteLocations": false,
        "userReplicationPolicy": {"asyncReplication": false, "minReplicaSetSize": 1, "maxReplicasetSize": 4},
        "userConsistencyPolicy": {"defaultConsistencyLevel": "Session"},
        "systemReplicationPolicy": {"minReplicaSetSize": 1, "maxReplicasetSize": 4},
        "readPolicy": {"primaryReadCoefficient": 1, "secondaryReadCoefficient": 1},
        "queryEngineConfiguration": query_engine.to_string(),
    });
    resource(StatusCode::OK, &account, READ_CHARGE)
}
