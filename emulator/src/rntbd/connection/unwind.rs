//! A request's answer, or a 500 when answering it panicked: the connection
//! and its other requests go on (as `http/`'s catch-panic layer keeps an
//! HTTP connection), and the client gets an answer with its
//! TransportRequestID instead of waiting for one that never comes.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use uuid::Uuid;

use super::{internal_error, Answer, Dispatcher};

/// `dispatcher`'s answer to `request`, or a 500 echoing the request's ids.
pub(super) async fn answer_or_500(
    dispatcher: &Dispatcher,
    request: Bytes,
    activity_id: Uuid,
    transport_request_id: Option<u32>,
) -> Bytes {
    let answered = match catch_unwind(AssertUnwindSafe(|| dispatcher(request))) {
        Ok(answer) => CatchUnwind(answer).await,
        Err(_) => Err(()),
    };
    answered.unwrap_or_else(|()| {
        tracing::error!(%activity_id, "answering a Direct-mode request panicked");
        internal_error(activity_id, transport_request_id)
    })
}

/// `Answer`, with a panic while polling it caught.
struct CatchUnwind(Answer);

impl Future for CatchUnwind {
    type Output = Result<Bytes, ()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let answer = &mut self.0;
        match catch_unwind(AssertUnwindSafe(|| answer.as_mut().poll(cx))) {
            Ok(Poll::Ready(bytes)) => Poll::Ready(Ok(bytes)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(_) => Poll::Ready(Err(())),
        }
    }
}
