//! `--protocol auto`: HTTP and HTTPS on one port. A TLS connection starts
//! with a handshake record, whose first byte is 0x16; an HTTP request
//! starts with a method's letter (or HTTP/2's `PRI`). So each connection's
//! first byte is peeked (left in the socket for whoever reads next), once,
//! before anything else: 0x16 → the TLS handshake with the certificates
//! made at start, then the app; anything else → the app over plain TCP.
//! Requests are then served as on either server alone, and learn their
//! connection's scheme ([`ConnectionScheme`]).
//!
//! A connection that sends nothing is closed after [`FIRST_BYTE_WAIT`] (as
//! a handshake that stalls is after [`HANDSHAKE_WAIT`]), or as soon as the
//! server stops; garbage goes to the HTTP parser, which answers 400.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum_server::accept::Accept;
use rustls::ServerConfig;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::timeout;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

use super::breakable::Breakable;
use super::{ConnectionScheme, WithConnection};

/// The content type of a TLS handshake record: a ClientHello's first byte.
const TLS_HANDSHAKE: u8 = 0x16;
/// How long a new connection may stay silent (browsers open spare ones).
const FIRST_BYTE_WAIT: Duration = Duration::from_secs(10);
/// How long a TLS handshake may take (axum-server's own limit).
const HANDSHAKE_WAIT: Duration = Duration::from_secs(10);

#[derive(Clone)]
pub struct Acceptor {
    tls: TlsAcceptor,
    /// Becomes true when the server stops.
    stopped: watch::Receiver<bool>,
}

impl Acceptor {
    pub fn new(config: Arc<ServerConfig>, stopped: watch::Receiver<bool>) -> Self {
        Acceptor {
            tls: TlsAcceptor::from(config),
            stopped,
        }
    }
}

type Accepted<S> = io::Result<(Stream, WithConnection<S>)>;

impl<S: Send + 'static> Accept<TcpStream, S> for Acceptor {
    type Stream = Stream;
    type Service = WithConnection<S>;
    type Future = Pin<Box<dyn Future<Output = Accepted<S>> + Send>>;

    fn accept(&self, tcp: TcpStream, service: S) -> Self::Future {
        let tls = self.tls.clone();
        let mut stopped = self.stopped.clone();
        Box::pin(async move {
            let sorted = async move {
                let first = timeout(FIRST_BYTE_WAIT, first_byte(&tcp))
                    .await
                    .map_err(|_| timed_out("no byte"))??;
                let tcp = Breakable::new(tcp);
                let control = tcp.control();
                if first == TLS_HANDSHAKE {
                    let stream = timeout(HANDSHAKE_WAIT, tls.accept(tcp))
                        .await
                        .map_err(|_| timed_out("no TLS handshake"))??;
                    let service = with(service, control, "https");
                    Ok((Stream::Tls(Box::new(stream)), service))
                } else {
                    Ok((Stream::Plain(tcp), with(service, control, "http")))
                }
            };
            tokio::select! {
                accepted = sorted => accepted,
                _ = stopped.wait_for(|stopped| *stopped) => {
                    Err(io::Error::other("the server is stopping"))
                }
            }
        })
    }
}

fn with<S>(inner: S, control: super::ConnectionControl, scheme: &'static str) -> WithConnection<S> {
    WithConnection {
        inner,
        control,
        scheme: Some(ConnectionScheme(scheme)),
    }
}

/// The connection's first byte, left in the socket; an error at its end.
async fn first_byte(tcp: &TcpStream) -> io::Result<u8> {
    let mut byte = [0u8; 1];
    match tcp.peek(&mut byte).await? {
        0 => Err(io::ErrorKind::UnexpectedEof.into()),
        _ => Ok(byte[0]),
    }
}

fn timed_out(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, format!("{what} in time"))
}

/// A connection of either kind.
pub enum Stream {
    Plain(Breakable),
    /// Boxed: a TLS stream is over a kilobyte, a TCP one a few words.
    Tls(Box<TlsStream<Breakable>>),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(s) => s.is_write_vectored(),
            Stream::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
