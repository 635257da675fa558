//! One Direct-mode connection as the SDKs hold one: TLS to the emulator's
//! own port (`docs/src/reference/rntbd.md#connections`), the context
//! request first and its answer awaited, then requests pipelined: a writer
//! task sends whatever frames are queued in one write, a reader task cuts
//! answers from what arrives and hands each to the request whose
//! TransportRequestID it echoes, in whatever order they come. An answer
//! naming no request waiting is counted and dropped, as the SDK drops it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::connection::Endpoint;
use crate::rntbd::frame::{guid_bytes, PayloadRule, ResponseFrame};
use crate::rntbd::request::context_request;

/// Bytes read from the socket at a time, at most.
const READ_CHUNK: usize = 64 * 1024;

/// Requests waiting for their answers, by TransportRequestID.
#[derive(Default)]
struct Pending {
    waiting: HashMap<u32, oneshot::Sender<ResponseFrame>>,
    /// Why the connection ended, once it has: no request waits any more.
    closed: Option<String>,
}

#[derive(Default)]
struct Shared {
    next_id: AtomicU32,
    pending: Mutex<Pending>,
    /// Answers whose TransportRequestID no request was waiting for.
    unmatched: AtomicUsize,
}

impl Shared {
    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Ends every wait: the requests still waiting get `why`.
    fn close(&self, why: String) {
        let mut pending = self.pending();
        pending.closed.get_or_insert(why);
        pending.waiting.clear();
    }
}

/// A connection past its context exchange; requests may be sent from any
/// number of tasks at once.
pub struct DirectConnection {
    shared: Arc<Shared>,
    frames: mpsc::UnboundedSender<Vec<u8>>,
    tasks: [JoinHandle<()>; 2],
}

impl DirectConnection {
    /// Opens TLS to `endpoint` and exchanges the context.
    pub async fn open(endpoint: &Endpoint) -> Result<DirectConnection, String> {
        let tls = endpoint
            .open_tls()
            .await
            .map_err(|e| format!("cannot open TLS to {}: {e}", endpoint.authority()))?;
        DirectConnection::negotiate(tls).await
    }

    /// Sends the context request on `stream` and waits for its answer (a
    /// 200), then starts the reader and the writer.
    pub async fn negotiate<S>(mut stream: S) -> Result<DirectConnection, String>
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
        S: Unpin,
    {
        let activity = guid_bytes(fastrand::u128(..));
        stream
            .write_all(&context_request(activity))
            .await
            .map_err(|e| format!("sending the context request: {e}"))?;
        stream.flush().await.map_err(|e| e.to_string())?;
        let mut buffer = BytesMut::with_capacity(READ_CHUNK);
        let context = loop {
            if buffer.starts_with(b"HTTP/") {
                return Err("the server answered the context request in HTTP: it serves no Direct mode (an emulator before it, or --protocol http)".into());
            }
            if let Some(frame) = ResponseFrame::cut(&mut buffer, PayloadRule::Context)? {
                break frame;
            }
            let read = stream
                .read_buf(&mut buffer)
                .await
                .map_err(|e| format!("reading the context response: {e}"))?;
            if read == 0 {
                return Err("the connection closed before the context response".into());
            }
        };
        if context.status != 200 || context.activity != activity {
            return Err(format!(
                "the context request was answered {} ({})",
                context.status,
                String::from_utf8_lossy(context.payload().unwrap_or_default())
            ));
        }
        Ok(DirectConnection::start(stream, buffer))
    }

    /// Serves requests over `stream`, whose next bytes (after `buffer`)
    /// are answers.
    fn start<S>(stream: S, buffer: BytesMut) -> DirectConnection
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        let shared = Arc::new(Shared::default());
        let (reader, writer) = tokio::io::split(stream);
        let (frames, queued) = mpsc::unbounded_channel();
        let tasks = [
            tokio::spawn(read_answers(reader, buffer, shared.clone())),
            tokio::spawn(write_requests(writer, queued, shared.clone())),
        ];
        DirectConnection {
            shared,
            frames,
            tasks,
        }
    }

    /// Sends the frame `build` makes with the next TransportRequestID and
    /// waits for its answer.
    pub async fn call(&self, build: impl FnOnce(u32) -> Vec<u8>) -> Result<ResponseFrame, String> {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let frame = build(id);
        let (answer, answered) = oneshot::channel();
        {
            let mut pending = self.shared.pending();
            if let Some(why) = &pending.closed {
                return Err(why.clone());
            }
            pending.waiting.insert(id, answer);
        }
        if self.frames.send(frame).is_err() {
            self.shared.pending().waiting.remove(&id);
            return Err("the connection's writer has stopped".into());
        }
        answered.await.map_err(|_| {
            self.shared
                .pending()
                .closed
                .clone()
                .unwrap_or_else(|| "the connection closed".into())
        })
    }

    /// Answers that named no request waiting (dropped).
    pub fn unmatched(&self) -> usize {
        self.shared.unmatched.load(Ordering::Relaxed)
    }
}

impl Drop for DirectConnection {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Hands each answer to its request until the stream ends or its framing
/// is lost.
async fn read_answers<R: AsyncRead>(
    reader: tokio::io::ReadHalf<R>,
    mut buffer: BytesMut,
    shared: Arc<Shared>,
) {
    let why = match answers(reader, &mut buffer, &shared).await {
        Ok(()) => "the server closed the connection".to_string(),
        Err(e) => e,
    };
    shared.close(why);
}

async fn answers<R: AsyncRead>(
    mut reader: tokio::io::ReadHalf<R>,
    buffer: &mut BytesMut,
    shared: &Shared,
) -> Result<(), String> {
    loop {
        while let Some(frame) = ResponseFrame::cut(buffer, PayloadRule::Token)
            .map_err(|e| format!("an answer that is no frame: {e}"))?
        {
            let waiting = frame
                .transport_request_id()
                .and_then(|id| shared.pending().waiting.remove(&id));
            match waiting {
                // The request may have stopped waiting: nothing to do.
                Some(request) => drop(request.send(frame)),
                None => {
                    shared.unmatched.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        buffer.reserve(READ_CHUNK);
        let read = reader
            .read_buf(buffer)
            .await
            .map_err(|e| format!("reading answers: {e}"))?;
        if read == 0 {
            return Ok(());
        }
    }
}

/// Writes the queued frames, as many as are queued in one write.
async fn write_requests<W: AsyncWrite>(
    mut writer: tokio::io::WriteHalf<W>,
    mut queued: mpsc::UnboundedReceiver<Vec<u8>>,
    shared: Arc<Shared>,
) {
    while let Some(mut batch) = queued.recv().await {
        while let Ok(more) = queued.try_recv() {
            batch.extend_from_slice(&more);
        }
        let written = async {
            writer.write_all(&batch).await?;
            writer.flush().await
        };
        if let Err(e) = written.await {
            shared.close(format!("writing requests: {e}"));
            return;
        }
    }
}

#[cfg(test)]
mod tests;
