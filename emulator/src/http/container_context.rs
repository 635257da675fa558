//! What an item request says about its container, and what the response
//! says back: the checks of `x-ms-cosmos-intended-collection-rid` (a client
//! holding a dropped container's RID) and of `x-ms-session-token` (a state
//! the client has seen), and the headers the SDKs key their session
//! tokens by (`x-ms-content-path`, `x-ms-alt-content-path`, the session
//! token, `lsn`, `x-ms-global-committed-lsn`, `x-ms-item-lsn`).
//!
//! The session token is the service's `{pkRangeId}:{version}#{globalLsn}`:
//! the range of the item (of the range a feed read; `0` otherwise), version
//! `-1`, with the LSN of the partition, as on the service: the range's LSN
//! (`store/range_lsns.rs`), the `lsn` header's and the items' `_lsn` (the
//! envelope writes it on every response that names a range's LSN; in a
//! lagging read region, the LSN its replica has applied). The Java change
//! feed estimator subtracts a pending item's `_lsn` from it. Other
//! responses (databases, containers, the account) carry none.

use axum::http::header::CONTENT_LOCATION;
use axum::http::{HeaderMap, HeaderValue, Uri};
use axum::response::{IntoResponse, Response};

use super::names;
use super::owner_path::header_value;
use super::request::CosmosHeaders;
use super::AppState;
use crate::error::{ApiError, ApiResult, Status};
use crate::store::ContainerContext;

/// Substatus of a request naming a container by a RID it no longer has.
const COLLECTION_RID_MISMATCH: u32 = 1024;
/// Substatus of a read asking for a state the replica has not reached.
const READ_SESSION_NOT_AVAILABLE: u32 = 1002;

/// A refusal ready to send: an `ApiError`, or one carrying headers of its
/// own (the 1002 names its container so that the SDK can clear its session).
pub struct Refusal(Box<Response>);

impl From<ApiError> for Refusal {
    fn from(error: ApiError) -> Self {
        Refusal(Box::new(error.into_response()))
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        *self.0
    }
}

/// The addressed container, once the request's intended RID and session
/// token hold against it; otherwise the service's refusal. Reads pass
/// `read = true`: only they honour a session token (a write always acts on
/// the latest state).
pub fn check(
    state: &AppState,
    db: &str,
    coll: &str,
    headers: &HeaderMap,
    read: bool,
) -> Result<ContainerContext, Refusal> {
    // A read's range (its session token's, its answer's); a write's is
    // its item's, which its handler names once it is written.
    let context = match read {
        true => state.store.container_context_at(
            db,
            coll,
            headers.partition_key(),
            headers.text(names::PARTITION_KEY_RANGE_ID.as_str()),
        )?,
        false => state.store.container_context(db, coll)?,
    };
    verify(state, &context, headers, read)?;
    Ok(context)
}

/// [`check`] of a context the caller already holds (a point read takes it
/// under the lock of the read itself).
pub fn verify(
    state: &AppState,
    context: &ContainerContext,
    headers: &HeaderMap,
    read: bool,
) -> Result<(), Refusal> {
    if let Some(intended) = headers.text(names::INTENDED_COLLECTION_RID) {
        if intended.as_bytes() != &context.owner.rid[..] {
            // The SDKs refresh their container cache on 400/1024 and retry.
            return Err(ApiError::bad_request(
                "Collection rid provided by the user does not match the existing collection.",
            )
            .with_substatus(COLLECTION_RID_MISMATCH)
            .into());
        }
    }
    if read {
        if let Some(token) = headers.text(names::SESSION_TOKEN).filter(|t| !t.is_empty()) {
            // A token naming an LSN the container never reached, but that
            // some container of the account has, was another container's:
            // the Python SDK keeps the tokens of every container it first
            // wrote with `no_response_on_write` under one key, the
            // JavaScript SDK a dropped container's under its name. It asks
            // for no more than this container committed. A token beyond
            // anything the account wrote names a state that is not there.
            let named = session_lsn(token, context.range)?;
            let seen = if named <= state.store.session_lsn() {
                named.min(context.lsn)
            } else {
                named
            };
            // A lagging region's replica has not reached what the container has.
            let visible = super::regions::visible_range_lsn(
                state,
                &context.owner.rid,
                context.range,
                context.lsn,
            );
            if seen > visible {
                // The SDKs clear the session (keyed by the owner path) and retry.
                let mut response = ApiError::new(
                    Status::NOT_FOUND,
                    "The read session is not available for the input session token.",
                )
                .with_substatus(READ_SESSION_NOT_AVAILABLE)
                .into_response();
                owner_headers(response.headers_mut(), context);
                return Err(Refusal(Box::new(response)));
            }
        }
    }
    Ok(())
}

/// The global LSN a session token names for the range `range`: `0:-1#12`,
/// or several ranges `0:-1#12,1:-1#7`, each maybe with regional progress
/// `#1=5`. LSNs are per range: the segment of `range` if the token has one;
/// otherwise (a parent's token after a split, or one of another range) the
/// highest it names, which the caller caps at what the account committed.
fn session_lsn(token: &str, range: u32) -> ApiResult<u64> {
    let invalid = || {
        ApiError::bad_request(format!(
            "The session token provided '{token}' is invalid. A session token looks like \
             '0:-1#12' ({{partition key range}}:{{version}}#{{LSN}}): send back one this emulator gave."
        ))
    };
    let mut highest = 0;
    let mut own = None;
    for pair in token.split(',') {
        let (named_range, vector) = pair.split_once(':').ok_or_else(invalid)?;
        let mut segments = vector.split('#');
        let _version: i64 = segments
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or_else(invalid)?;
        let lsn: u64 = segments
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or_else(invalid)?;
        highest = highest.max(lsn);
        if crate::store::parse_range_id(named_range) == Some(range) {
            own = Some(own.unwrap_or(0).max(lsn));
        }
    }
    Ok(own.unwrap_or(highest))
}

/// The headers naming the container and the state a response reflects:
/// `lsn` is the LSN of the range the response names after the request (for
/// a write, at least the write's own), `item_lsn` the LSN of the item
/// served, if one is. (The envelope adds the session token.)
pub fn decorate(
    response: &mut Response,
    context: &ContainerContext,
    lsn: u64,
    item_lsn: Option<u64>,
    uri: &Uri,
) {
    let headers = response.headers_mut();
    // Room for these six and the envelope's six: no growth for a response
    // built with room for them (`response::RESPONSE_HEADERS`), one for others.
    headers.reserve(12);
    owner_headers(headers, context);
    let lsn = HeaderValue::from(lsn);
    headers.insert(names::GLOBAL_COMMITTED_LSN, lsn.clone());
    headers.insert(names::LSN, lsn);
    if let Some(item_lsn) = item_lsn {
        headers.insert(names::ITEM_LSN, HeaderValue::from(item_lsn));
    }
    if let Ok(location) = HeaderValue::from_str(uri.path()) {
        headers.insert(CONTENT_LOCATION, location);
    }
}

pub(super) fn owner_headers(headers: &mut HeaderMap, context: &ContainerContext) {
    headers.insert(names::CONTENT_PATH, header_value(&context.owner.rid));
    headers.insert(names::ALT_CONTENT_PATH, header_value(&context.owner.path));
    // The item's range (or the range a feed read): the Python SDK takes a
    // write naming a range it does not know for a split and refreshes its
    // routing map. The envelope names it in the session token too.
    headers.insert(
        names::PARTITION_KEY_RANGE_ID,
        HeaderValue::from(context.range),
    );
}

/// `{range}:-1#{lsn}`, written on the stack: the header copies it once.
/// `range` is a response's `x-ms-documentdb-partitionkeyrangeid` (digits),
/// `0` for a response naming none.
pub fn session_token(range: Option<&HeaderValue>, lsn: u64) -> HeaderValue {
    use std::io::Write;
    let range = range
        .map(HeaderValue::as_bytes)
        .filter(|r| !r.is_empty() && r.len() <= 10 && r.iter().all(u8::is_ascii_digit))
        .unwrap_or(b"0");
    let mut buffer = [0u8; 48];
    let mut cursor = std::io::Cursor::new(&mut buffer[..]);
    cursor.write_all(range).expect("fits in 48 bytes");
    write!(cursor, ":-1#{lsn}").expect("fits in 48 bytes");
    let written = cursor.position() as usize;
    HeaderValue::from_bytes(&buffer[..written]).expect("ascii digits")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_tokens_as_the_service_writes_them() {
        assert_eq!(session_token(None, 12), "0:-1#12");
        assert_eq!(
            session_token(None, u64::MAX),
            format!("0:-1#{}", u64::MAX).as_str()
        );
        let range = HeaderValue::from(u32::MAX);
        assert_eq!(
            session_token(Some(&range), u64::MAX),
            format!("{}:-1#{}", u32::MAX, u64::MAX).as_str()
        );
        let odd = HeaderValue::from_static("1,2");
        assert_eq!(session_token(Some(&odd), 3), "0:-1#3");
    }

    #[test]
    fn session_tokens_as_the_sdks_send_them() {
        assert_eq!(session_lsn("0:-1#12", 0).unwrap(), 12);
        // Each range's own LSN; the highest for a range the token omits.
        assert_eq!(session_lsn("0:-1#12,1:-1#40", 0).unwrap(), 12);
        assert_eq!(session_lsn("0:-1#12,1:-1#40", 1).unwrap(), 40);
        assert_eq!(session_lsn("0:-1#12,1:-1#40", 5).unwrap(), 40);
        assert_eq!(session_lsn("0:0#7#1=5#2=9", 0).unwrap(), 7);
        for bad in ["12", "0:12", "0:-1#x", "0:a#1", ""] {
            let error = session_lsn(bad, 0).unwrap_err();
            assert_eq!(error.status, 400, "{bad}");
        }
    }
}
