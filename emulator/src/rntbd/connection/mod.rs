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
use crate::net::transport::{BinaryConnection, BinaryFrontDoor, ConnectionControl, GRACE};
use writer::{write_answers, Outgoing};

/// A whole answer frame, to come.
pub(crate) type Answer = Pin<Box<dyn Future<Output = Bytes> + Send>>;

/// What answers a request: one whole request frame's bytes in, with the
/// control of the connection it came on (which a fault rule or an outage
/// may break), the whole response frame's bytes out, its
/// TransportRequestID echoed.
pub(crate) type Dispatcher = Arc<dyn Fn(Bytes, &ConnectionControl) -> Answer + Send + Sync>;

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
    pub context_wait: Duration,
    pub in_flight: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            idle: IDLE_TIMEOUT,
            context_wait: CONTEXT_WAIT,
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
            connection.control,
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
    /// The writer ended (the client stopped reading, its socket broke, or
    /// a request broke the connection: `ConnectionControl`).
    WriterGone,
}

/// Serves `stream` until it ends; then waits for the answers in flight to
/// be written (at most [`GRACE`] once the server stops) and closes it.
pub(crate) async fn serve<S>(
    stream: S,
    peer: Option<SocketAddr>,
    control: ConnectionControl,
    dispatcher: Dispatcher,
    limits: Limits,
    mut stopped: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let (mut reader, writer) = tokio::io::split(stream);
    let (answers, queue) = mpsc::unbounded_channel();
    let mut writing = tokio::spawn(write_answers(writer, queue, limits.idle));
    let ended = read_requests(
        &mut reader,
        &answers,
        &control,
        dispatcher,
        limits,
        &mut stopped,
    )
    .await;
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
    control: &ConnectionControl,
    dispatcher: Dispatcher,
    limits: Limits,
    stopped: &mut watch::Receiver<bool>,
) -> Ended {
    let in_flight = Arc::new(Semaphore::new(limits.in_flight));
    let mut buf = BytesMut::with_capacity(READ_CHUNK);
    let mut context_done = false;
    // Decoding waits until this many bytes are in (a frame's known end).
    let mut needed = 0;
    let mut deadline = Instant::now() + limits.context_wait;
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
                        seconds(limits.context_wait),
                    );
                    if let Err(error) = accepted.encode(&mut out) {
                        return Ended::Broken(format!("the context response: {error}"));
                    }
                    if answers.send(Outgoing::new(out.freeze(), None)).is_err() {
                        return Ended::WriterGone;
                    }
                    context_done = true;
                    deadline = Instant::now() + limits.idle;
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
                    let control = control.clone();
                    tokio::spawn(async move {
                        let answer = unwind::answer_or_500(
                            &dispatcher,
                            request,
                            &control,
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
            // A broken connection's writer fails: stop reading at once
            // rather than when the client next sends.
            () = answers.closed() => return Ended::WriterGone,
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

/// Used by the panic answer.
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

    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::{AsyncWriteExt, DuplexStream};

    use crate::rntbd::codec::{
        ContextRequest, OperationType, RequestFrame, RequestTokens, ResourceType, ResponseFrame,
    };

    fn context() -> Vec<u8> {
        let mut out = BytesMut::new();
        ContextRequest {
            activity_id: uuid::Uuid::from_u128(1),
            protocol_version: 1,
            client_version: "2020-07-15",
            user_agent: None,
        }
        .encode(&mut out)
        .unwrap();
        out.to_vec()
    }

    fn request(id: u32) -> Vec<u8> {
        let mut tokens = RequestTokens::new();
        tokens.set_transport_request_id(id);
        let mut out = BytesMut::new();
        RequestFrame {
            resource_type: ResourceType::Document,
            operation_type: OperationType::Read,
            activity_id: uuid::Uuid::from_u128(u128::from(id)),
            tokens,
            payload: None,
        }
        .encode(&mut out)
        .unwrap();
        out.to_vec()
    }

    /// A dispatcher that answers 200 after `delay`, counting how many of
    /// its answers run at once at most; `panic_on` panics instead.
    fn counting(delay: Duration, most: Arc<AtomicUsize>, panic_on: Option<u32>) -> Dispatcher {
        let now = Arc::new(AtomicUsize::new(0));
        Arc::new(move |request: Bytes, _: &ConnectionControl| {
            let (now, most) = (now.clone(), most.clone());
            Box::pin(async move {
                let running = now.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(running, Ordering::SeqCst);
                tokio::time::sleep(delay).await;
                now.fetch_sub(1, Ordering::SeqCst);
                let (frame, _) = RequestFrame::decode(&request).unwrap().unwrap();
                let id = frame.tokens.transport_request_id();
                if id.is_some() && id == panic_on {
                    panic!("a dispatcher's bug");
                }
                error_frame(frame.activity_id, id, 200, "Ok", "answered")
            })
        })
    }

    /// Serves one end of a pipe; the other is the client's.
    fn served(dispatcher: Dispatcher, limits: Limits) -> (DuplexStream, watch::Sender<bool>) {
        let (client, server) = tokio::io::duplex(1 << 20);
        let (stop, stopped) = watch::channel(false);
        tokio::spawn(serve(
            server,
            None,
            ConnectionControl::default(),
            dispatcher,
            limits,
            stopped,
        ));
        (client, stop)
    }

    /// Every frame the server writes until it closes the pipe.
    async fn answers(client: &mut DuplexStream) -> Vec<(u32, Option<u32>)> {
        let mut all = Vec::new();
        client.read_to_end(&mut all).await.unwrap();
        let mut at = 0;
        let mut read = Vec::new();
        // The context response first (no PayloadPresent), then answers.
        let (context, used) = ContextResponse::decode(&all).unwrap().unwrap();
        assert_eq!(context.status, 200);
        at += used;
        while at < all.len() {
            let (frame, used) = ResponseFrame::decode(&all[at..]).unwrap().unwrap();
            read.push((frame.status, frame.tokens.transport_request_id()));
            at += used;
        }
        read
    }

    #[tokio::test]
    async fn no_more_than_the_bound_run_at_once_and_none_is_lost() {
        let most = Arc::new(AtomicUsize::new(0));
        let limits = Limits {
            in_flight: 4,
            ..Limits::default()
        };
        let dispatcher = counting(Duration::from_millis(5), most.clone(), None);
        let (mut client, _stop) = served(dispatcher, limits);
        let mut bytes = context();
        for id in 1..=40 {
            bytes.extend(request(id));
        }
        client.write_all(&bytes).await.unwrap();
        client.shutdown().await.unwrap();
        let mut ids: Vec<u32> = answers(&mut client)
            .await
            .into_iter()
            .map(|(status, id)| {
                assert_eq!(status, 200);
                id.unwrap()
            })
            .collect();
        ids.sort_unstable();
        assert_eq!(ids, (1..=40).collect::<Vec<_>>());
        assert_eq!(
            most.load(Ordering::SeqCst),
            4,
            "the bound, reached, not passed"
        );
    }

    #[tokio::test]
    async fn a_malformed_frame_closes_after_the_answers_already_running() {
        let most = Arc::new(AtomicUsize::new(0));
        let dispatcher = counting(Duration::from_millis(50), most, Some(2));
        let (mut client, _stop) = served(dispatcher, Limits::default());
        let mut bytes = context();
        bytes.extend(request(1));
        bytes.extend(request(2));
        bytes.extend(10u32.to_le_bytes().repeat(2));
        bytes.extend(request(3));
        client.write_all(&bytes).await.unwrap();
        // Not shut down by the client: the server closes it.
        let mut read = answers(&mut client).await;
        read.sort_unstable();
        // 1 answered, 2 answered 500 (its dispatcher panicked), 3 never read.
        assert_eq!(read, [(200, Some(1)), (500, Some(2))]);
    }

    #[tokio::test]
    async fn a_request_before_the_context_is_not_answered() {
        let most = Arc::new(AtomicUsize::new(0));
        let dispatcher = counting(Duration::ZERO, most.clone(), None);
        let (mut client, _stop) = served(dispatcher, Limits::default());
        client.write_all(&request(1)).await.unwrap();
        let mut all = Vec::new();
        client.read_to_end(&mut all).await.unwrap();
        assert!(all.is_empty());
        assert_eq!(most.load(Ordering::SeqCst), 0, "never dispatched");
    }

    #[tokio::test]
    async fn after_the_context_the_idle_timeout_holds_not_the_context_wait() {
        let most = Arc::new(AtomicUsize::new(0));
        let dispatcher = counting(Duration::ZERO, most.clone(), None);
        let limits = Limits {
            idle: Duration::from_millis(600),
            context_wait: Duration::from_millis(100),
            ..Limits::default()
        };
        let (mut client, _stop) = served(dispatcher, limits);
        client.write_all(&context()).await.unwrap();
        // Past the context wait, within the idle timeout: still served.
        tokio::time::sleep(Duration::from_millis(300)).await;
        client.write_all(&request(1)).await.unwrap();
        // Then idle: closed by the idle timeout.
        let started = Instant::now();
        let read = tokio::time::timeout(Duration::from_secs(5), answers(&mut client)).await;
        assert_eq!(read.expect("closed when idle"), [(200, Some(1))]);
        assert!(
            started.elapsed() >= Duration::from_millis(500),
            "{:?}",
            started.elapsed()
        );
    }

    #[tokio::test]
    async fn half_a_context_request_is_closed_after_the_context_wait() {
        let dispatcher = counting(Duration::ZERO, Arc::new(AtomicUsize::new(0)), None);
        let limits = Limits {
            context_wait: Duration::from_millis(100),
            ..Limits::default()
        };
        let (mut client, _stop) = served(dispatcher, limits);
        client.write_all(&context()[..10]).await.unwrap();
        let mut all = Vec::new();
        let closed = tokio::time::timeout(Duration::from_secs(5), client.read_to_end(&mut all));
        closed.await.expect("closed").unwrap();
        assert!(all.is_empty());
    }

    #[tokio::test]
    async fn the_stop_ends_an_idle_connection_at_once() {
        let dispatcher = counting(Duration::ZERO, Arc::new(AtomicUsize::new(0)), None);
        let (mut client, stop) = served(dispatcher, Limits::default());
        client.write_all(&context()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        stop.send(true).unwrap();
        let closed = tokio::time::timeout(Duration::from_secs(2), answers(&mut client)).await;
        assert_eq!(closed.expect("closed at once"), []);
    }
}
