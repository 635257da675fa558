//! The acceptor of `--protocol auto` and `--protocol https`. In auto, HTTP
//! and HTTPS share one port: a TLS connection starts with a handshake
//! record, whose first byte is 0x16; an HTTP request starts with a
//! method's letter (or HTTP/2's `PRI`). So each connection's first byte is
//! peeked (left in the socket for whoever reads next), once, before
//! anything else: 0x16 → the TLS handshake with the certificates made at
//! start; anything else → the app over plain TCP. In https, every
//! connection goes to the handshake. After a handshake, the decrypted
//! stream's first bytes tell a binary protocol (Direct mode's RNTBD) from
//! HTTP (`binary.rs`): the first goes to the [`BinaryFrontDoor`] the
//! transport was given, served inside this accept future (axum-server
//! serves only the streams an acceptor answers `Ok`, and counts the
//! connection until the future ends, so a stop waits for it as for an HTTP
//! one); the second to the app. Requests are then served as on either
//! server alone, and learn their connection's scheme ([`ConnectionScheme`])
//! in auto.
//!
//! A connection that sends nothing is closed after [`FIRST_BYTE_WAIT`] (as
//! a handshake that stalls is after [`HANDSHAKE_WAIT`], and a TLS stream
//! that opens with nothing after [`FIRST_BYTE_WAIT`] more), or as soon as
//! the server stops; garbage goes to the HTTP parser, which answers 400.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
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

use super::binary::{self, BinaryConnection, BinaryFrontDoor, BinaryStream};
use super::breakable::Breakable;
use super::rewind::Rewind;
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
    /// Whether plain HTTP is served beside TLS (auto) or not (https).
    plain_too: bool,
    /// Where connections that open with a binary frame go.
    binary: Option<Arc<dyn BinaryFrontDoor>>,
    /// Becomes true when the server stops.
    stopped: watch::Receiver<bool>,
}

impl Acceptor {
    /// Auto's acceptor (`plain_too`) or HTTPS's.
    pub fn new(
        config: Arc<ServerConfig>,
        plain_too: bool,
        binary: Option<Arc<dyn BinaryFrontDoor>>,
        stopped: watch::Receiver<bool>,
    ) -> Self {
        Acceptor {
            tls: TlsAcceptor::from(config),
            plain_too,
            binary,
            stopped,
        }
    }
}

/// What the acceptor made of a connection.
enum Sorted<S> {
    Http(Stream, WithConnection<S>),
    Binary(BinaryConnection),
}

type Accepted<S> = io::Result<(Stream, WithConnection<S>)>;

impl<S: Send + 'static> Accept<TcpStream, S> for Acceptor {
    type Stream = Stream;
    type Service = WithConnection<S>;
    type Future = Pin<Box<dyn Future<Output = Accepted<S>> + Send>>;

    fn accept(&self, tcp: TcpStream, service: S) -> Self::Future {
        let tls = self.tls.clone();
        let plain_too = self.plain_too;
        let front_door = self.binary.clone();
        let sniff = front_door.is_some();
        let mut stopped = self.stopped.clone();
        let stopped_too = self.stopped.clone();
        Box::pin(async move {
            let sorted = async move {
                let peer: Option<SocketAddr> = tcp.peer_addr().ok();
                let first = match plain_too {
                    true => timeout(FIRST_BYTE_WAIT, first_byte(&tcp))
                        .await
                        .map_err(|_| timed_out("no byte"))??,
                    false => TLS_HANDSHAKE,
                };
                let tcp = Breakable::new(tcp);
                let control = tcp.control();
                let scheme = |scheme| plain_too.then_some(ConnectionScheme(scheme));
                if first != TLS_HANDSHAKE {
                    let service = with(service, control, scheme("http"));
                    return Ok(Sorted::Http(Stream::Plain(tcp), service));
                }
                let mut stream = timeout(HANDSHAKE_WAIT, tls.accept(tcp))
                    .await
                    .map_err(|_| timed_out("no TLS handshake"))??;
                let read = match sniff {
                    true => timeout(FIRST_BYTE_WAIT, binary::opening(&mut stream))
                        .await
                        .map_err(|_| timed_out("no request after the TLS handshake"))??,
                    false => Vec::new(),
                };
                let is_binary = sniff && binary::is_binary(&read);
                let stream = Box::new(Rewind::new(read, stream));
                if is_binary {
                    return Ok(Sorted::Binary(BinaryConnection {
                        stream: BinaryStream(stream),
                        peer,
                        control,
                        stopped: stopped_too,
                    }));
                }
                let service = with(service, control, scheme("https"));
                Ok::<_, io::Error>(Sorted::Http(Stream::Tls(stream), service))
            };
            let sorted = tokio::select! {
                sorted = sorted => sorted?,
                _ = stopped.wait_for(|stopped| *stopped) => {
                    return Err(io::Error::other("the server is stopping"));
                }
            };
            match sorted {
                Sorted::Http(stream, service) => Ok((stream, service)),
                Sorted::Binary(connection) => {
                    // Served here, to its end; axum-server drops the error.
                    if let Some(front_door) = front_door {
                        front_door.serve(connection).await;
                    }
                    Err(io::Error::other("served by the binary front door"))
                }
            }
        })
    }
}

fn with<S>(
    inner: S,
    control: super::ConnectionControl,
    scheme: Option<ConnectionScheme>,
) -> WithConnection<S> {
    WithConnection {
        inner,
        control,
        scheme,
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
    Tls(Box<Rewind<TlsStream<Breakable>>>),
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
