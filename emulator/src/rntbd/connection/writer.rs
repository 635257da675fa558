//! A connection's one writer: a task that owns the write half and writes
//! the answers in the order they are queued (the order their requests
//! completed), flushing once the queue is empty, so that answers that
//! complete together leave in one TLS record where they fit. A request's
//! place in flight ([`OwnedSemaphorePermit`]) is given back only once its
//! answer is written: a client that stops reading stops the reading of its
//! requests too. A write that makes no progress for the idle timeout ends
//! the writer; the queue's end (every request answered, the reader gone)
//! closes the stream.

use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, OwnedSemaphorePermit};
use tokio::time::timeout;

/// An answer to write, with the request's place in flight, if it had one
/// (the context response has none).
pub(super) struct Outgoing {
    bytes: Bytes,
    _permit: Option<OwnedSemaphorePermit>,
}

impl Outgoing {
    pub(super) fn new(bytes: Bytes, permit: Option<OwnedSemaphorePermit>) -> Self {
        Outgoing {
            bytes,
            _permit: permit,
        }
    }
}

/// How many queued answers are written before a flush at most.
const BATCH: usize = 64;

/// Writes what `queue` brings until it ends (then closes the stream) or a
/// write fails or stalls for `stall`.
pub(super) async fn write_answers<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut queue: mpsc::UnboundedReceiver<Outgoing>,
    stall: Duration,
) {
    let mut batch = Vec::with_capacity(BATCH);
    while queue.recv_many(&mut batch, BATCH).await > 0 {
        for outgoing in &batch {
            match timeout(stall, writer.write_all(&outgoing.bytes)).await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => {
                    tracing::debug!(%error, "writing a Direct-mode answer failed");
                    return;
                }
                Err(_) => {
                    tracing::debug!("a Direct-mode client stopped reading its answers");
                    return;
                }
            }
        }
        if !matches!(timeout(stall, writer.flush()).await, Ok(Ok(()))) {
            return;
        }
        // Written: their places in flight are free again.
        batch.clear();
    }
    let _ = timeout(stall, writer.shutdown()).await;
}
