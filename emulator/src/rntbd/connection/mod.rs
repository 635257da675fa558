//! One Direct-mode connection, served: the context exchange first (a data
//! request before it closes the connection), then request frames read as
//! they arrive, each whole one split off and handed to the [`Dispatcher`]
//! in a task of its own, up to [`MAX_IN_FLIGHT`] at once (then reading
//! stops until one is answered: nothing is dropped), and one writer
//! (`writer.rs`) writing the answers in the order they complete (the
//! client matches them by TransportRequestID). Bytes that are no frame, or
//! a length past the codec's limits, close the connection after the
//! answers already running are written; so does a connection that idles
//! ([`IDLE_TIMEOUT`]), a client that ends it, or the server stopping.
//! Also here: [`FrontDoor`], what the transport is given to serve such
//! connections (`net/transport/binary.rs`). See
//! `docs/src/reference/rntbd.md#serving-a-connection`.

mod unwind;
mod writer;

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::{mpsc, watch, Semaphore};
use tokio::time::{sleep_until, Instant};

use super::codec::{decode_incoming, ContextResponse, Incoming};
use super::refusal::error_frame;
use crate::net::transport::{BinaryConnection, BinaryFrontDoor, GRACE};
use writer::{write_answers, Outgoing};

/// A whole answer frame, to come.
pub(crate) type Answer = Pin<Box<dyn Future<Output = Bytes> + Send>>;

/// What answers a request: one whole request frame's bytes in, the whole
/// response frame's bytes out, its TransportRequestID echoed.
pub(crate) type Dispatcher = Arc<dyn Fn(Bytes) -> Answer + Send + Sync>;

/// The context response's ServerAgent.
pub(crate) const SERVER_AGENT: &str = "cosmos-emulator";
/// The context response's ServerVersion, which the Java SDK shows as
/// `x-ms-serviceversion` on every answer: the emulator's version.
pub(crate) const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// How many requests of one connection may run at once: above the 30 the
/// Java and .NET SDKs pipeline on a connection at most (Java's
/// `DirectConnectionConfig`), so that an SDK never waits on it, and low
/// enough that one connection cannot hold more than 32 frames (each at most
/// 1 MiB of tokens and 4 MiB of payload) and their answers.
pub(crate) const MAX_IN_FLIGHT: usize = 32;

/// How long a connection may stay idle (no byte read, nothing in flight)
/// before it is closed: long, because the SDKs keep their connections open
/// between bursts (Java's idle connection timeout is off by default) and a
/// close that crosses a request makes the client retry it; finite, so that
/// a client that vanished without closing (a killed container), or one
/// that sent half a frame and stopped, does not hold a task and its buffer
/// for ever. Said to the client as IdleTimeoutInSeconds.
pub(crate) const IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// How long the context request may take to arrive whole: the client sends
/// it at once on connecting. Said as UnauthenticatedTimeoutInSeconds.
pub(crate) const CONTEXT_WAIT: Duration = Duration::from_secs(10);

/// How much room a read is given at least.
const READ_CHUNK: usize = 64 * 1024;

/// How one connection is served.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub idle: Duration,
    pub in_flight: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            idle: IDLE_TIMEOUT,
            in_flight: MAX_IN_FLIGHT,
        }
    }
}

/// Serves the binary connections the transport hands over.
pub(crate) struct FrontDoor {
    dispatcher: Dispatcher,
    limits: Limits,
}

impl FrontDoor {
    pub(crate) fn new(dispatcher: Dispatcher, limits: Limits) -> Self {
        FrontDoor { dispatcher, limits }
    }
}

impl BinaryFrontDoor for FrontDoor {
    fn serve(&self, connection: BinaryConnection) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(serve(
            connection.stream,
            connection.peer,
            self.dispatcher.clone(),
            self.limits,
            connection.stopped,
        ))
    }
}

/// Why a connection stopped being read.
#[derive(Debug)]
enum Ended {
    /// The client closed it (at a frame's end).
    ClientClosed,
    /// The client closed it in the middle of a frame.
    ClosedMidFrame,
    Idle,
    Stopped,
    /// Bytes no frame is, or a frame out of turn.
    Broken(String),
    ReadFailed(std::io::Error),
    /// The writer ended (the client stopped reading, or its socket broke).
    WriterGone,
}

/// Serves `stream` until it ends; then waits for the answers in flight to
/// be written (at most [`GRACE`] once the server stops) and closes it.
pub(crate) async fn serve<S>(
    stream: S,
    peer: Option<SocketAddr>,
    dispatcher: Dispatcher,
    limits: Limits,
    mut stopped: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let (mut reader, writer) = tokio::io::split(stream);
    let (answers, queue) = mpsc::unbounded_channel();
    let mut writing = tokio::spawn(write_answers(writer, queue, limits.idle));
    let ended = read_requests(&mut reader, &answers, dispatcher, limits, &mut stopped).await;
    match &ended {
        Ended::Broken(why) => {
            tracing::warn!(?peer, "closing a Direct-mode connection: {why}")
        }
        Ended::ReadFailed(error) => {
            tracing::debug!(?peer, %error, "a Direct-mode connection failed")
        }
        ended => tracing::debug!(?peer, ?ended, "a Direct-mode connection ends"),
    }
    // The writer ends once every answer in flight is written.
    drop(answers);
    let stop_and_grace = async {
        until(&mut stopped).await;
        tokio::time::sleep(GRACE).await;
    };
    tokio::select! {
        _ = &mut writing => {}
        () = stop_and_grace => writing.abort(),
    }
}

/// Resolves once the server stops (or can no longer say so).
async fn until(stopped: &mut watch::Receiver<bool>) {
    let _ = stopped.wait_for(|stopped| *stopped).await;
}

/// Reads frames until the connection ends, dispatching each request.
async fn read_requests<R: AsyncRead + Unpin>(
    reader: &mut R,
    answers: &mpsc::UnboundedSender<Outgoing>,
    dispatcher: Dispatcher,
    limits: Limits,
    stopped: &mut watch::Receiver<bool>,
) -> Ended {
    let in_flight = Arc::new(Semaphore::new(limits.in_flight));
    let mut buf = BytesMut::with_capacity(READ_CHUNK);
    let mut context_done = false;
    // Decoding waits until this many bytes are in (a frame's known end).
    let mut needed = 0;
    let mut deadline = Instant::now() + CONTEXT_WAIT;
    loop {
        while !buf.is_empty() && buf.len() >= needed {
            let decoded = match decode_incoming(&buf) {
                Err(error) => return Ended::Broken(error.to_string()),
                Ok(None) => {
                    needed = bytes_needed(&buf);
                    break;
                }
                Ok(Some(decoded)) => decoded,
            };
            needed = 0;
            match decoded {
                (Incoming::Context(request), used) => {
                    if context_done {
                        return Ended::Broken("a second context request".into());
                    }
                    let mut out = BytesMut::new();
                    let accepted = ContextResponse::accept(
                        &request,
                        SERVER_AGENT,
                        SERVER_VERSION,
                        seconds(limits.idle),
                        seconds(CONTEXT_WAIT),
                    );
                    if let Err(error) = accepted.encode(&mut out) {
                        return Ended::Broken(format!("the context response: {error}"));
                    }
                    if answers.send(Outgoing::new(out.freeze(), None)).is_err() {
                        return Ended::WriterGone;
                    }
                    context_done = true;
                    buf.advance(used);
                }
                (Incoming::Request(frame), used) => {
                    if !context_done {
                        return Ended::Broken("a request before the context request".into());
                    }
                    let activity_id = frame.activity_id;
                    let transport_request_id = frame.tokens.transport_request_id();
                    drop(frame);
                    let request = buf.split_to(used).freeze();
                    // Backpressure: no more reading while the connection is full.
                    let permit = tokio::select! {
                        permit = in_flight.clone().acquire_owned() => {
                            permit.expect("the semaphore is never closed")
                        }
                        () = until(stopped) => return Ended::Stopped,
                    };
                    let answers = answers.clone();
                    let dispatcher = dispatcher.clone();
                    tokio::spawn(async move {
                        let answer = unwind::answer_or_500(
                            &dispatcher,
                            request,
                            activity_id,
                            transport_request_id,
                        )
                        .await;
                        // A connection gone drops the answer (and the permit).
                        let _ = answers.send(Outgoing::new(answer, Some(permit)));
                    });
                }
            }
        }
        if answers.is_closed() {
            return Ended::WriterGone;
        }
        if buf.capacity() - buf.len() < READ_CHUNK / 4 {
            buf.reserve(READ_CHUNK.max(needed.saturating_sub(buf.len())));
        }
        tokio::select! {
            read = reader.read_buf(&mut buf) => match read {
                Ok(0) if buf.is_empty() => return Ended::ClientClosed,
                Ok(0) => return Ended::ClosedMidFrame,
                Ok(_) => {
                    if context_done {
                        deadline = Instant::now() + limits.idle;
                    }
                }
                Err(error) => return Ended::ReadFailed(error),
            },
            () = sleep_until(deadline) => {
                let idle = in_flight.available_permits() == limits.in_flight;
                if !context_done || idle {
                    return Ended::Idle;
                }
                // Busy answering: idle from now at the earliest.
                deadline = Instant::now() + limits.idle;
            }
            () = until(stopped) => return Ended::Stopped,
        }
    }
}

/// The least length `buf` must reach before a frame that is not yet whole
/// can be: its length field, its L bytes, its payload's length, its
/// payload. (`decode_incoming` said it is not whole: with L bytes in, a
/// payload follows.)
fn bytes_needed(buf: &[u8]) -> usize {
    let word = |at: usize| {
        buf.get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let Some(length) = word(0) else {
        return 8;
    };
    if buf.len() < length {
        return length;
    }
    match word(length) {
        None => length + 4,
        Some(payload) => length + 4 + payload,
    }
}

fn seconds(duration: Duration) -> u32 {
    u32::try_from(duration.as_secs()).unwrap_or(u32::MAX)
}

/// Used by the placeholder and the panic answer alike.
pub(crate) fn internal_error(activity_id: uuid::Uuid, transport_request_id: Option<u32>) -> Bytes {
    error_frame(
        activity_id,
        transport_request_id,
        500,
        "InternalServerError",
        "the emulator failed while answering this request; it goes on serving others",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_not_yet_whole_says_how_far_to_read() {
        assert_eq!(bytes_needed(&[0x30, 0]), 8);
        // L = 48: its 48 bytes first.
        assert_eq!(bytes_needed(&[0x30, 0, 0, 0, 3, 0, 1, 0]), 48);
        // L bytes in (so a payload follows): its length, then its bytes.
        let mut frame = vec![0u8; 48];
        frame[0] = 0x30;
        assert_eq!(bytes_needed(&frame), 52);
        frame.extend_from_slice(&100u32.to_le_bytes());
        assert_eq!(bytes_needed(&frame), 152);
    }

    #[test]
    fn an_error_frame_echoes_the_request_and_reads_back() {
        use crate::rntbd::codec::ResponseFrame;
        let activity = uuid::Uuid::from_u128(42);
        let bytes = internal_error(activity, Some(7));
        let (frame, used) = ResponseFrame::decode(&bytes).unwrap().unwrap();
        assert_eq!(used, bytes.len());
        assert_eq!((frame.status, frame.activity_id), (500, activity));
        assert_eq!(frame.tokens.transport_request_id(), Some(7));
        let body: serde_json::Value = serde_json::from_slice(frame.payload.unwrap()).unwrap();
        assert_eq!(body["code"], "InternalServerError");
    }
}
