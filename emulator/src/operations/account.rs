//! The account read (`GET /` over HTTP): the account document, which tells
//! a client its regions, where each is reached, and the account's
//! consistency and query limits. Where the client reaches the account is
//! the endpoint's to say (the host it was addressed by, its scheme, each
//! region's port): the front door passes it in.

use serde_json::{json, Value};

use super::response::Answer;
use super::{resources, Serving};

/// Where the client reaches the account, as the endpoint it addressed
/// computed it.
pub struct Reached {
    /// `scheme://host:port/`: this endpoint, as the client should address it.
    pub endpoint: String,
    /// With several regions, each region at its own address: the writable
    /// ones and the readable ones, in the account's failover order, as the
    /// document lists them (`[{"name", "databaseAccountEndpoint"}]`).
    pub regions: Option<(Value, Value)>,
}

/// The account document.
pub fn read(serving: &Serving<'_>, reached: Reached) -> Answer {
    let account = serving.account;
    let single = account.topology.names().len() == 1;
    let (writable, readable) = match reached.regions {
        Some(regions) if !single => regions,
        _ => {
            let location = json!([{
                "name": account.topology.name(serving.region),
                "databaseAccountEndpoint": reached.endpoint,
            }]);
            (location.clone(), location)
        }
    };
    // Microsoft's emulator's account is `localhost`, and the JavaScript SDK
    // ignores the locations of an account so named: a multi-region account
    // must be called otherwise for its regions to count.
    let account_id = match single {
        true => "localhost",
        false => "emulator",
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
    let document = json!({
        "_self": "",
        "id": account_id,
        "_rid": account_id,
        "media": "//media/",
        "addresses": "//addresses/",
        "_dbs": "//dbs/",
        "writableLocations": writable,
        "readableLocations": readable,
        "enableMultipleWriteLocations": account.topology.multi_write(),
        "userReplicationPolicy": {"asyncReplication": false, "minReplicaSetSize": 1, "maxReplicasetSize": 4},
        "userConsistencyPolicy": {"defaultConsistencyLevel": account.consistency.name()},
        "systemReplicationPolicy": {"minReplicaSetSize": 1, "maxReplicasetSize": 4},
        "readPolicy": {"primaryReadCoefficient": 1, "secondaryReadCoefficient": 1},
        "queryEngineConfiguration": query_engine.to_string(),
    });
    Ok(resources::read(&document))
}
