//! A PLACEHOLDER, for the lead to replace: the dispatcher `endpoints.rs`
//! gives Direct mode's connections until the operations side
//! (a dispatcher in `rntbd/`, written beside this) lands. It answers every data
//! request 503 with the request's activity id and TransportRequestID
//! echoed, so that the connection side (the context exchange, pipelining,
//! limits, closes) can be served and tested end to end. It is not Direct
//! mode's behaviour: no operation runs.

use std::sync::Arc;

use bytes::Bytes;
use uuid::Uuid;

use super::codec::RequestFrame;
use super::connection::Dispatcher;
use super::refusal::error_frame;

/// The 503's message.
pub(crate) const NOT_SERVED_YET: &str = "Direct mode's operations are not served yet by this build";

/// A dispatcher that answers every request 503 `ServiceUnavailable`.
pub(crate) fn not_served_yet() -> Dispatcher {
    Arc::new(|request: Bytes| Box::pin(async move { answer(&request) }))
}

fn answer(request: &[u8]) -> Bytes {
    // The connection hands over only frames that decode whole.
    let (activity_id, transport_request_id) = match RequestFrame::decode(request) {
        Ok(Some((frame, _))) => (frame.activity_id, frame.tokens.transport_request_id()),
        _ => (Uuid::nil(), None),
    };
    error_frame(
        activity_id,
        transport_request_id,
        503,
        "ServiceUnavailable",
        NOT_SERVED_YET,
    )
}
