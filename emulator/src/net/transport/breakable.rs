//! A connection that a request can break: the fault rules' `connection`
//! answers (`faults/`). Every accepted TCP connection is wrapped in a
//! [`Breakable`] before HTTP or TLS reads it, and every request on it
//! carries its [`ConnectionControl`] (an extension). A handler that calls
//! [`ConnectionControl::break_with`] then returns any response:
//!
//! - [`Break::Close`]: the next read or write sends FIN and fails, hyper
//!   drops the connection and the socket closes (what arrived meanwhile is
//!   read first, so that the close stays a close): the client sees the
//!   connection end with no answer;
//! - [`Break::Reset`]: the same, with `SO_LINGER` 0 set first, so the
//!   close is a TCP RST: the client sees "connection reset";
//! - [`Break::Hang`]: everything written from then on is dropped (reads go
//!   on): the client never gets an answer and times out; when it closes,
//!   hyper reads the end and drops the connection.
//!
//! Only the one connection is affected; the server serves the others.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// How a request breaks its connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Break {
    Close,
    Reset,
    Hang,
}

const INTACT: u8 = 0;
const CLOSE: u8 = 1;
const RESET: u8 = 2;
const HANG: u8 = 3;

/// The handle a request holds on its connection (a request extension).
#[derive(Debug, Clone, Default)]
pub struct ConnectionControl(Arc<AtomicU8>);

impl ConnectionControl {
    /// Breaks the connection as `how` says, from the response on.
    pub fn break_with(&self, how: Break) {
        let state = match how {
            Break::Close => CLOSE,
            Break::Reset => RESET,
            Break::Hang => HANG,
        };
        self.0.store(state, Ordering::Release);
    }

    fn state(&self) -> u8 {
        self.0.load(Ordering::Acquire)
    }
}

/// A TCP connection with its [`ConnectionControl`].
pub struct Breakable {
    tcp: TcpStream,
    control: ConnectionControl,
}

impl Breakable {
    pub fn new(tcp: TcpStream) -> Self {
        Breakable {
            tcp,
            control: ConnectionControl::default(),
        }
    }

    pub fn control(&self) -> ConnectionControl {
        self.control.clone()
    }

    /// What a broken connection answers reads and writes with.
    fn broken_now<T>(&mut self, state: u8, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        if state == CLOSE {
            self.send_fin(cx);
        }
        Poll::Ready(Err(Self::broken(state)))
    }

    /// The error a broken connection answers reads and writes with.
    fn broken(state: u8) -> io::Error {
        let kind = if state == RESET {
            io::ErrorKind::ConnectionReset
        } else {
            io::ErrorKind::ConnectionAborted
        };
        io::Error::new(kind, "broken by a fault rule")
    }
}

impl Breakable {
    /// A closed connection's first step: FIN now, so that the client sees
    /// the end even if bytes it sends later (an HTTP/2 window update) make
    /// the final close a reset.
    fn send_fin(&mut self, cx: &mut Context<'_>) {
        let _ = Pin::new(&mut self.tcp).poll_shutdown(cx);
    }
}

impl Drop for Breakable {
    fn drop(&mut self) {
        match self.control.state() {
            // The close that follows sends RST instead of FIN.
            RESET => {
                let _ = self.tcp.set_zero_linger();
            }
            // Bytes left unread would make the close a reset: read what
            // has arrived (without waiting).
            CLOSE => {
                let mut sink = [0u8; 4096];
                for _ in 0..16 {
                    match self.tcp.try_read(&mut sink) {
                        Ok(n) if n > 0 => continue,
                        _ => break,
                    }
                }
            }
            _ => {}
        }
    }
}

impl AsyncRead for Breakable {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match this.control.state() {
            state @ (CLOSE | RESET) => this.broken_now(state, cx),
            _ => Pin::new(&mut this.tcp).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Breakable {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match this.control.state() {
            INTACT => Pin::new(&mut this.tcp).poll_write(cx, buf),
            HANG => Poll::Ready(Ok(buf.len())),
            state => this.broken_now(state, cx),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match this.control.state() {
            INTACT => Pin::new(&mut this.tcp).poll_write_vectored(cx, bufs),
            HANG => Poll::Ready(Ok(bufs.iter().map(|b| b.len()).sum())),
            state => this.broken_now(state, cx),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match this.control.state() {
            INTACT => Pin::new(&mut this.tcp).poll_flush(cx),
            HANG => Poll::Ready(Ok(())),
            state => this.broken_now(state, cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match this.control.state() {
            INTACT => Pin::new(&mut this.tcp).poll_shutdown(cx),
            // A hung connection stays open until the client gives up.
            HANG => Poll::Ready(Ok(())),
            state => this.broken_now(state, cx),
        }
    }
}
