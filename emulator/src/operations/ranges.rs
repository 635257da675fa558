//! A container's physical partition key ranges (one `["", "FF")` by
//! default, several for a container with more throughput, more after
//! splits; see `data/store/ranges.rs`), served as the incremental feed the SDKs
//! poll until they get a literal 304
//! (`docs/src/reference/protocol.md#pkranges`).
//!
//! The etag names the container and its ranges' version (the splits it
//! has seen): `IfNoneMatch` with the current etag is 304; with an older
//! one (or none), 200 with every current range, children listing their
//! `parents`, so that a client merging changes into its routing map (the
//! Python SDK) drops the parents, and one rebuilding it (JavaScript) gets
//! the full map.

use bytes::Bytes;
use serde_json::{json, Value};

use super::options::RequestOptions;
use super::response::{Answer, Response, ResponseEtag};
use super::{ContainerPath, Serving};
use crate::data::store::{Range, RangeMap};
use crate::protocol::request_units::METADATA_READ;

/// A container's ranges as the feed serves them.
pub struct Listing {
    pub etag: String,
    pub documents: Vec<Value>,
}

/// The ranges `ranges` of the container resource `container` (its JSON),
/// as documents, under the etag of their version.
pub fn listing(container: &Value, ranges: &RangeMap) -> Listing {
    let rid = container["_rid"].as_str().unwrap_or_default();
    let etag = format!("\"pkranges-{rid}-{}\"", ranges.version());
    let documents = ranges
        .ranges()
        .iter()
        .map(|range| document(container, range, ranges.count(), &etag))
        .collect();
    Listing { etag, documents }
}

/// One range, as the service lists it.
fn document(container: &Value, range: &Range, count: usize, etag: &str) -> Value {
    let rid = container["_rid"].as_str().unwrap_or_default();
    let link = container["_self"].as_str().unwrap_or_default();
    let ts = container["_ts"].as_i64().unwrap_or_default();
    // Each range's share of the container's throughput (`1` for the one range).
    let fraction = if count == 1 {
        json!(1)
    } else {
        json!(1.0 / count as f64)
    };
    let range_rid = crate::protocol::rid::partition_key_range(rid, range.id);
    let parents: Vec<String> = range.parents.iter().map(u32::to_string).collect();
    json!({
        "_rid": range_rid,
        "id": range.id.to_string(),
        "_etag": etag,
        "minInclusive": range.min,
        "maxExclusive": range.max,
        "ridPrefix": range.id,
        "_self": format!("{link}pkranges/{range_rid}/"),
        "throughputFraction": fraction,
        "status": "online",
        "parents": parents,
        "_ts": ts,
        // Later for a child than for the ranges it came from.
        "_lsn": 1 + range.parents.len(),
    })
}

/// The ranges' feed, or 304 (no charge, no body) when the client holds
/// their current version.
pub fn read(
    serving: &Serving<'_>,
    container: ContainerPath<'_>,
    options: &dyn RequestOptions,
) -> Answer {
    let store = &serving.account.store;
    let (db, coll) = (container.database, container.container);
    let (found, _) = store.container(db, coll)?;
    let ranges = store.with_container(db, coll, |c, _| Ok(c.ranges().clone()))?;
    let Listing { etag, documents } = listing(&found, &ranges);
    if options.if_none_match() == Some(etag.as_str()) {
        let mut response = Response::not_modified();
        response.headers.etag = Some(ResponseEtag::Text(etag));
        return Ok(response);
    }
    let rid = found["_rid"].as_str().unwrap_or_default();
    let documents: Vec<Bytes> = documents
        .iter()
        .map(|d| Bytes::from(d.to_string()))
        .collect();
    let mut response = Response::feed(rid, "PartitionKeyRanges", &documents, None, METADATA_READ);
    response.headers.etag = Some(ResponseEtag::Text(etag));
    Ok(response)
}
