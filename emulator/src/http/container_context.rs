//! What an answer about a container says on the wire: the headers the SDKs
//! key their session tokens by (`x-ms-content-path`,
//! `x-ms-alt-content-path`, the partition key range), `lsn`,
//! `x-ms-global-committed-lsn`, `x-ms-item-lsn`, and the session token the
//! envelope writes from them (`{pkRangeId}:-1#{lsn}`; the rules are
//! `operations/session.rs`'s). The checks of a request against its
//! container are `operations::session`'s; [`check`] runs them over a
//! request's headers.

use axum::http::header::CONTENT_LOCATION;
use axum::http::{HeaderMap, HeaderValue, Uri};
use axum::response::{IntoResponse, Response};

use super::response::{write_names, write_state};
use super::AppState;
use crate::error::ApiError;
use crate::operations::{self, session, Serving};
use crate::store::ContainerContext;

/// A refusal ready to send: an `ApiError`, or one carrying headers of its
/// own (the 1002 names its container so that the SDK can clear its session).
pub struct Refusal(Box<Response>);

impl From<ApiError> for Refusal {
    fn from(error: ApiError) -> Self {
        Refusal(Box::new(error.into_response()))
    }
}

impl From<operations::Refusal> for Refusal {
    fn from(refusal: operations::Refusal) -> Self {
        let uri = Uri::from_static("/");
        Refusal(Box::new(super::response::from_operation(
            Err(refusal),
            &uri,
        )))
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        *self.0
    }
}

/// The addressed container, once the request's intended RID and session
/// token hold against it (`operations::session::check`).
pub fn check(
    state: &AppState,
    db: &str,
    coll: &str,
    headers: &HeaderMap,
    read: bool,
) -> Result<ContainerContext, Refusal> {
    let serving = Serving::new(&state.account, state.region_index);
    Ok(session::check(&serving, db, coll, headers, read)?)
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
    write_names(headers, &context.owner, context.range);
    write_state(headers, Some(lsn), item_lsn);
    if let Ok(location) = HeaderValue::from_str(uri.path()) {
        headers.insert(CONTENT_LOCATION, location);
    }
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
}
