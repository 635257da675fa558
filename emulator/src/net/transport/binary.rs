//! A binary protocol's connections on the HTTPS port: Direct mode's RNTBD,
//! whose clients open TLS to the same host and port as the gateway's. After
//! the TLS handshake the acceptor reads the decrypted stream's first bytes
//! ([`opening`]): a binary frame starts with a little-endian `u32` length
//! and, in its first frame (RNTBD's context request), four zero bytes at
//! 4..8; an HTTP request starts with a method's ASCII letters (HTTP/2 with
//! `PRI`), none of them zero. The bytes read are put back ([`Rewind`]) for
//! whoever serves the connection: a [`BinaryFrontDoor`] given to the
//! transport, or HTTP. This module names no protocol above it: the front
//! door is handed in (`endpoints.rs` builds it).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::sync::watch;
use tokio_rustls::server::TlsStream;

use super::breakable::{Breakable, ConnectionControl};
use super::rewind::Rewind;

/// What a binary frame's opening must hold to be told from HTTP.
const OPENING_BYTES: usize = 8;

/// Serves the connections that open with a binary frame.
pub trait BinaryFrontDoor: Send + Sync + 'static {
    /// Serves `connection` until it ends (the client closes it, it breaks
    /// the protocol, it idles, or the server stops: `connection.stopped`).
    fn serve(&self, connection: BinaryConnection) -> Pin<Box<dyn Future<Output = ()> + Send>>;
}

/// A TLS connection that opened with a binary frame, handed to its front door.
pub struct BinaryConnection {
    /// The decrypted stream, from its first byte.
    pub stream: BinaryStream,
    /// The client's address, for the logs.
    pub peer: Option<SocketAddr>,
    /// What breaks the connection underneath TLS (a fault rule's
    /// `connection` answer, a region's outage), as for HTTP's.
    pub control: ConnectionControl,
    /// Becomes true when the server stops: the front door then stops
    /// reading, finishes what is in flight within [`super::GRACE`], and
    /// closes.
    pub stopped: watch::Receiver<bool>,
}

/// A TLS stream whose first bytes, read to sort it, come back first.
pub struct BinaryStream(pub(super) Box<Rewind<TlsStream<Breakable>>>);

/// Reads a TLS stream's first bytes: until [`OPENING_BYTES`] are in, one of
/// bytes 4..8 is not zero (not a binary frame), or the stream ends. What
/// was read is returned, to be put back.
pub(super) async fn opening<S: AsyncRead + Unpin>(stream: &mut S) -> io::Result<Vec<u8>> {
    let mut read = Vec::with_capacity(1024);
    while read.len() < OPENING_BYTES {
        if stream.read_buf(&mut read).await? == 0 {
            break;
        }
        if read
            .get(4..)
            .is_some_and(|kinds| kinds.iter().any(|&b| b != 0))
        {
            break;
        }
    }
    Ok(read)
}

/// Whether a stream that opened with `read` speaks a binary protocol: a
/// frame's length, then four zero bytes (RNTBD's context request: its
/// resource and operation types, both 0). No HTTP request has a zero byte
/// in its first eight.
pub(super) fn is_binary(read: &[u8]) -> bool {
    read.len() >= OPENING_BYTES && read[4..OPENING_BYTES] == [0; 4]
}

impl AsyncRead for BinaryStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(self.get_mut().0.as_mut()).poll_read(cx, buf)
    }
}

impl AsyncWrite for BinaryStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(self.get_mut().0.as_mut()).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(self.get_mut().0.as_mut()).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(self.get_mut().0.as_mut()).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(self.get_mut().0.as_mut()).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    async fn opened_with(bytes: &[u8]) -> Vec<u8> {
        let (mut client, mut server) = tokio::io::duplex(64);
        client.write_all(bytes).await.unwrap();
        drop(client);
        opening(&mut server).await.unwrap()
    }

    #[tokio::test]
    async fn a_context_request_is_binary_and_http_is_not() {
        // The Java SDK's context request, as the guide's golden frame opens.
        let context = [0x6b, 0, 0, 0, 0, 0, 0, 0, 4, 3, 2, 1];
        assert!(is_binary(&opened_with(&context).await));
        // A length whose low byte is a method's letter ('G'): still binary.
        assert!(is_binary(&opened_with(&[b'G', 0, 0, 0, 0, 0, 0, 0]).await));
        for http in [
            &b"GET /dbs HTTP/1.1\r\n"[..],
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
            b"POST",
            b"",
        ] {
            assert!(!is_binary(&opened_with(http).await), "{http:?}");
        }
        // A data request's opening (resource type 3) is not a context request.
        assert!(!is_binary(&opened_with(&[0xe7, 0, 0, 0, 3, 0, 1, 0]).await));
    }
}
