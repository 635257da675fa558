//! A request's answer, or a 500 when answering it panicked: the connection
//! and its other requests go on (as `http/`'s catch-panic layer keeps an
//! HTTP connection), and the client gets an answer with its
//! TransportRequestID instead of waiting for one that never comes. The
//! dispatcher catches a panic in an operation itself (to answer with the
//! request's LSN and session token); this is the last resort for one in
//! the dispatcher's own framing.

use std::panic::{catch_unwind, AssertUnwindSafe};

use bytes::Bytes;
use futures_util::FutureExt;
use uuid::Uuid;

use super::{internal_error, Dispatcher};
use crate::net::transport::ConnectionControl;

/// `dispatcher`'s answer to `request`, or a 500 echoing the request's ids.
pub(super) async fn answer_or_500(
    dispatcher: &Dispatcher,
    request: Bytes,
    control: &ConnectionControl,
    activity_id: Uuid,
    transport_request_id: Option<u32>,
) -> Bytes {
    let answered = match catch_unwind(AssertUnwindSafe(|| dispatcher(request, control))) {
        Ok(answer) => AssertUnwindSafe(answer).catch_unwind().await.ok(),
        Err(_) => None,
    };
    answered.unwrap_or_else(|| {
        tracing::error!(%activity_id, "answering a Direct-mode request panicked");
        internal_error(activity_id, transport_request_id)
    })
}
