//! The address feed (`GET /addresses/?$resolveFor=...`): where Direct
//! mode's client finds the replicas of a container's partition key ranges
//! (or of the master partition, for databases, users and permissions).
//! Each range gets four replicas, one primary and three secondaries (the
//! SDK reads a quorum of two secondaries, and refreshes every 600 s when
//! given fewer than four), all on the host and port the client reached the
//! gateway at (its `Host`: whatever reaches the gateway reaches the
//! replicas, certificates and port mappings included), told apart by their
//! paths, which name the range. A range that no longer exists (split)
//! gets none: the client then reads the ranges again. The JSON's names
//! are the service's, misspellings included (`Addresss`, `physcialUri`).
//! See `docs/src/reference/rntbd.md#the-address-feed`.

use serde_json::{json, Value};

use super::response::{Answer, Response};
use super::Serving;
use crate::protocol::error::{ApiError, Status};
use crate::protocol::request_units::METADATA_READ;

/// Replicas per range: one primary, then secondaries.
pub const REPLICAS: usize = 4;

/// The account segment of every replica path.
const APP: &str = "cosmos-emulator";

/// What the client asked to resolve: the feed request's query parameters,
/// decoded.
pub struct Resolve<'a> {
    /// `$resolveFor`: `dbs/{db rid}/colls/{coll rid}/docs` (a container's
    /// ranges; names also resolve) or `dbs` (the master partition).
    pub resolve_for: &'a str,
    /// `$partitionKeyRangeIds`: the ranges, comma-separated (none: all).
    pub range_ids: Option<&'a str>,
    /// `host:port` the client reached the gateway at.
    pub authority: &'a str,
}

/// The feed's answer: `{"_rid", "Addresss": [...], "_count"}`.
pub fn list(serving: &Serving<'_>, request: Resolve<'_>) -> Answer {
    let segments: Vec<&str> = request
        .resolve_for
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let (rid, ranges): (String, Vec<(String, String)>) = match segments.as_slice() {
        ["dbs"] => (String::new(), vec![("M".into(), "master".into())]),
        ["dbs", db, "colls", coll, ..] => {
            let store = &serving.account.store;
            store.with_container(db, coll, |c, _| {
                let rid = String::from_utf8_lossy(&c.owner.rid).into_owned();
                // A RID's base64 may hold `/`: its URL form writes `-`.
                let service = rid.replace('/', "-");
                let asked: Vec<String> = match request.range_ids {
                    Some(ids) => ids
                        .split(',')
                        .map(|id| id.trim().to_string())
                        .filter(|id| !id.is_empty())
                        .collect(),
                    None => c
                        .ranges()
                        .ranges()
                        .iter()
                        .map(|r| r.id.to_string())
                        .collect(),
                };
                let ranges = asked
                    .into_iter()
                    .filter(|id| {
                        c.ranges()
                            .by_id(id)
                            .is_some_and(|r| r.id.to_string() == *id)
                    })
                    .map(|id| (id, service.clone()))
                    .collect();
                Ok((rid, ranges))
            })?
        }
        _ => {
            return Err(ApiError::bad_request(format!(
                "The address feed resolves '$resolveFor=dbs' (the master partition) or \
                 '$resolveFor=dbs/{{db}}/colls/{{coll}}/docs' (a container's ranges); got '{}'.",
                request.resolve_for
            ))
            .into())
        }
    };
    let mut addresses = Vec::with_capacity(ranges.len() * REPLICAS);
    for (range, service) in &ranges {
        for replica in 0..REPLICAS {
            addresses.push(address(request.authority, service, range, replica));
        }
    }
    let count = addresses.len();
    let body = json!({ "_rid": rid, "Addresss": addresses, "_count": count });
    Ok(Response::json(Status::OK, body.to_string(), METADATA_READ))
}

/// Replica `replica` of range `range` (the first is the primary).
fn address(authority: &str, service: &str, range: &str, replica: usize) -> Value {
    let primary = replica == 0;
    let role = if primary { 'p' } else { 's' };
    let uri = format!(
        "rntbd://{authority}/apps/{APP}/services/{service}/partitions/{range}/replicas/{}{role}/",
        replica + 1
    );
    json!({
        "isPrimary": primary,
        "protocol": "rntbd",
        "physcialUri": uri,
        "logicalUri": uri,
        "partitionKeyRangeId": range,
        "partitionIndex": format!("{service}[{range}]"),
        "isAuxiliary": false,
    })
}
