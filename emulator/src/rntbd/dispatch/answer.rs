//! An operation's answer as a response frame: its status, its body (the
//! gateway's JSON, or a refusal's `{"code","message"}`), and the tokens
//! every answer carries (TransportRequestID echoed, LSN > 0 with
//! GlobalCommittedLSN = QuorumAckedLSN = LSN, the replica set's size and
//! write quorum, PartitionKeyRangeId, the session token without its range
//! prefix, the charge, the owner) with ETag, ContinuationToken,
//! ItemCount, SubStatus... where HTTP has their headers. See
//! `docs/src/reference/rntbd.md#response-tokens`.

use bytes::{Bytes, BytesMut};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use uuid::Uuid;

use crate::operations::{session, Response, Serving};
use crate::rntbd::codec::{ResponseFrame, ResponseTokens};

/// The replicas the address feed advertises per range (one primary, three
/// secondaries): with 4 the SDK's read quorum is 2 (`max - max/2`), and
/// fewer makes it refresh its addresses every 600 s.
pub const REPLICA_SET_SIZE: u32 = 4;
/// A majority of [`REPLICA_SET_SIZE`]: what a write acknowledged by the
/// service's replicas would have needed. All replicas are one store here,
/// so every write is on all of them at once.
pub const WRITE_QUORUM: u32 = 3;

/// What the answer is about beyond the operation's own headers, found by
/// the dispatcher when the operation named no container (a refusal, a
/// master resource): the state its LSN and session token name.
#[derive(Debug, Clone, Default)]
pub struct About {
    /// The range's (or the store's) LSN.
    pub lsn: u64,
    pub range: u32,
    /// The container's RID and `dbs/{db}/colls/{coll}`, or the database's.
    pub owner: Option<(String, String)>,
}

/// What a stored procedure's log escapes, as over HTTP (the SDKs decode it).
const LOG_ESCAPED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The response frame of `response` to the request `activity_id`,
/// `transport` (its TransportRequestID).
pub fn frame(
    serving: &Serving<'_>,
    activity_id: Uuid,
    transport: Option<u32>,
    response: Response,
    about: About,
) -> Bytes {
    let Response {
        status,
        headers,
        body,
    } = response;
    let range = headers.range.unwrap_or(about.range);
    let (rid, path, lsn, item_lsn) = match &headers.container {
        Some(state) => (
            String::from_utf8_lossy(&state.owner.rid).into_owned(),
            String::from_utf8_lossy(&state.owner.path).into_owned(),
            state.lsn.unwrap_or(about.lsn),
            state.item_lsn,
        ),
        None => {
            let (rid, path) = about.owner.clone().unwrap_or_default();
            (rid, path, about.lsn, None)
        }
    };
    // The client reads an LSN of 0 as "no replica has it": never send one.
    let lsn = lsn.max(1);
    let rid_bytes = (!rid.is_empty()).then_some(rid.as_bytes());
    let token = session::token(serving, rid_bytes, range, lsn);
    let token = String::from_utf8_lossy(token.as_bytes());
    // The client prefixes PartitionKeyRangeId and a colon itself.
    let session = token
        .split_once(':')
        .map_or(&*token, |(_, t)| t)
        .to_string();
    let range_text = range.to_string();
    let lsn = i64::try_from(lsn).unwrap_or(i64::MAX);
    let mut etag_room = [0; 38];
    let etag = headers.etag.as_ref().map(|e| e.encode(&mut etag_room));
    let log = headers
        .script_log
        .as_deref()
        .map(|l| utf8_percent_encode(l, LOG_ESCAPED).to_string());
    let charge = headers.charge.map_or(1.0, |c| c.ru());

    let mut tokens = ResponseTokens::new();
    tokens
        .set_lsn(lsn)
        .set_global_committed_lsn(lsn)
        .set_quorum_acked_lsn(lsn)
        // The Java SDK reads a non-Strong read's LSN from the local ones
        // (`StoreReader`, `useLocalLSNBasedHeaders`): without them a 404
        // counts as no answer and a session read retries until its budget
        // ends. One region writes here, so local and global agree.
        .set_local_lsn(lsn)
        .set_quorum_acked_local_lsn(lsn)
        .set_current_replica_set_size(REPLICA_SET_SIZE)
        .set_current_write_quorum(WRITE_QUORUM)
        // One store behind every region: the global committed LSN is the
        // LSN, so no barrier would have anything to wait for.
        .set_number_of_read_regions(0)
        .set_partition_key_range_id(&range_text)
        .set_session_token(&session)
        .set_request_charge(charge);
    if let Some(transport) = transport {
        tokens.set_transport_request_id(transport);
    }
    if let Some(item_lsn) = item_lsn {
        let item_lsn = i64::try_from(item_lsn).unwrap_or(i64::MAX);
        tokens.set_item_lsn(item_lsn).set_item_local_lsn(item_lsn);
    }
    if !rid.is_empty() {
        tokens.set_owner_id(&rid).set_owner_full_name(&path);
    }
    if let Some(etag) = etag {
        tokens.set_etag(etag);
    }
    if let Some(continuation) = headers.continuation.as_deref() {
        tokens.set_continuation_token(continuation);
    }
    if let Some(count) = headers.item_count {
        tokens.set_item_count(u32::try_from(count).unwrap_or(u32::MAX));
    }
    if let Some(substatus) = headers.substatus {
        tokens.set_sub_status(substatus);
    }
    if let Some(wait) = headers.retry_after_ms {
        tokens.set_retry_after_milliseconds(u32::try_from(wait).unwrap_or(u32::MAX));
    }
    if let Some(log) = log.as_deref() {
        tokens.set_log_results(log);
    }
    if let Some(metrics) = headers.query_metrics.as_deref() {
        tokens.set_query_metrics(metrics);
    }
    if let Some(utilization) = headers.index_utilization.as_deref() {
        tokens.set_index_utilization(utilization);
    }
    if let Some(quota) = headers.resource_quota {
        tokens.set_resource_quota(quota);
    }
    if let Some(usage) = headers.resource_usage.as_deref() {
        tokens.set_resource_usage(usage);
    }
    let frame = ResponseFrame {
        status: u32::from(status.as_u16()),
        activity_id,
        tokens,
        payload: (!body.is_empty()).then_some(&body[..]),
    };
    encode(&frame)
}

/// The frame's bytes; a frame too large to encode (a body past the
/// protocol's limit) becomes a 413 saying so, never a panic.
fn encode(frame: &ResponseFrame<'_>) -> Bytes {
    let mut out = BytesMut::with_capacity(256 + frame.payload.map_or(0, <[u8]>::len));
    if let Err(error) = frame.encode(&mut out) {
        let body = crate::protocol::error::ApiError::new(
            crate::protocol::error::Status::INTERNAL_SERVER_ERROR,
            format!("The answer could not be framed: {error}."),
        )
        .body()
        .to_string();
        let mut tokens = ResponseTokens::new();
        if let Some(t) = frame.tokens.transport_request_id() {
            tokens.set_transport_request_id(t);
        }
        tokens.set_lsn(frame.tokens.lsn().unwrap_or(1));
        let fallback = ResponseFrame {
            status: 500,
            activity_id: frame.activity_id,
            tokens,
            payload: Some(body.as_bytes()),
        };
        out.clear();
        fallback
            .encode(&mut out)
            .expect("a short error body always frames");
    }
    out.freeze()
}
