//! An error answer in RNTBD's form: a response frame with the status, the
//! request's activity id and TransportRequestID echoed (the client drops an
//! answer without it), and the service's JSON body `{"code","message"}`,
//! which the client reads into its exception.

use bytes::{Bytes, BytesMut};
use uuid::Uuid;

use super::codec::{ResponseFrame, ResponseTokens};

/// The frame answering a request (`activity_id`, `transport_request_id`)
/// with `status` and the body `{"code","message"}`.
pub(crate) fn error_frame(
    activity_id: Uuid,
    transport_request_id: Option<u32>,
    status: u32,
    code: &str,
    message: &str,
) -> Bytes {
    let mut tokens = ResponseTokens::new();
    if let Some(id) = transport_request_id {
        tokens.set_transport_request_id(id);
    }
    let body = serde_json::json!({ "code": code, "message": message }).to_string();
    let frame = ResponseFrame {
        status,
        activity_id,
        tokens,
        payload: Some(body.as_bytes()),
    };
    let mut out = BytesMut::new();
    frame
        .encode(&mut out)
        .expect("a short JSON body and one ULong token fit a frame");
    out.freeze()
}
