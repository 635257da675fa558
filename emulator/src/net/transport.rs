//! How accepted connections become requests: plain HTTP (`axum::serve`, as
//! it always was), HTTPS, or either on one port (`--protocol auto`); HTTPS
//! and auto share one acceptor (`auto.rs`), which also hands a TLS
//! connection that opens with a binary frame (Direct mode's RNTBD) to the
//! [`BinaryFrontDoor`] it is given (`binary.rs`, with `rewind.rs` putting
//! the bytes read to tell back). Each serves the same app; each stops
//! gracefully: no new connection once `shutdown` completes, and the
//! requests in flight get [`GRACE`] to finish. Each wraps its TCP
//! connections in a [`Breakable`] (`breakable.rs`), whose control every
//! request carries, so that a fault rule can close, reset or hang it.
//! What is listened on comes first (`listen.rs`: `localhost` is both
//! loopbacks on one port).

mod auto;
mod binary;
mod breakable;
mod listen;
mod query_string;
mod rewind;

pub use binary::{BinaryConnection, BinaryFrontDoor};
pub use breakable::{Break, ConnectionControl};
pub use listen::{bind_again, bind_host, url as endpoint_url};
pub use query_string::QueryIntoPath;

use breakable::Breakable;

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::Request;
use axum::Router;
use rustls::ServerConfig;
use tokio::sync::watch;
use tower_http::normalize_path::NormalizePath;

use crate::net::tls;

/// The service every transport serves: the router, behind the rewrites
/// that come before routing (the trailing slash trimmed; a resource path's
/// query string read into its path, `query_string.rs`).
pub type App = NormalizePath<QueryIntoPath<Router>>;

/// What the endpoint speaks (`--protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    #[default]
    Http,
    /// HTTPS only, with certificates made at start (`tls.rs`).
    Https,
    /// Both on one port, told apart by each connection's first byte
    /// (`transport.rs`); the printed endpoint is the `http://` one.
    Auto,
}

impl Protocol {
    /// Whether HTTPS is served (alone or beside HTTP).
    pub fn serves_tls(self) -> bool {
        self != Protocol::Http
    }

    /// `http`, `https` or `auto`, as `--protocol` names it.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Http => "http",
            Protocol::Https => "https",
            Protocol::Auto => "auto",
        }
    }
}

/// How long requests in flight may take to finish once the server stops.
pub const GRACE: Duration = Duration::from_secs(5);

/// What the listener serves, with its TLS configuration.
#[derive(Clone)]
pub enum Transport {
    Http,
    Https(Arc<ServerConfig>),
    Auto(Arc<ServerConfig>),
}

impl Transport {
    /// `certificates` must be there for HTTPS and auto.
    pub fn new(protocol: Protocol, certificates: Option<tls::Certificates>) -> io::Result<Self> {
        let config = || match certificates {
            Some(c) => c.server_config().map_err(io::Error::other),
            None => Err(io::Error::other("HTTPS without certificates")),
        };
        Ok(match protocol {
            Protocol::Http => Transport::Http,
            Protocol::Https => Transport::Https(config()?),
            Protocol::Auto => Transport::Auto(config()?),
        })
    }

    /// Serves `app` on `listener` until `shutdown` completes (and the
    /// requests in flight finish); over TLS, a connection that opens with a
    /// binary frame goes to `binary` instead (plain HTTP has none: the
    /// SDKs open TLS to a replica).
    pub async fn serve(
        self,
        listener: std::net::TcpListener,
        app: App,
        binary: Option<Arc<dyn BinaryFrontDoor>>,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> io::Result<()> {
        let service = || axum::ServiceExt::<Request>::into_make_service(app.clone());
        let plain_too = matches!(self, Transport::Auto(_));
        match self {
            Transport::Http => {
                let listener = BreakableListener(tokio::net::TcpListener::from_std(listener)?);
                axum::serve(listener, MakeWithConnection(app.clone()))
                    .with_graceful_shutdown(shutdown)
                    .await
            }
            Transport::Https(config) | Transport::Auto(config) => {
                let (stopping, stopped) = watch::channel(false);
                axum_server::from_tcp(listener)?
                    .acceptor(auto::Acceptor::new(config, plain_too, binary, stopped))
                    .handle(graceful(shutdown, stopping))
                    .serve(service())
                    .await
            }
        }
    }
}

/// A handle that stops the server gracefully once `shutdown` completes,
/// telling `stopping` first (connections not yet serving then close).
fn graceful(
    shutdown: impl Future<Output = ()> + Send + 'static,
    stopping: watch::Sender<bool>,
) -> axum_server::Handle<SocketAddr> {
    let handle = axum_server::Handle::new();
    let stopper = handle.clone();
    tokio::spawn(async move {
        shutdown.await;
        let _ = stopping.send(true);
        stopper.graceful_shutdown(Some(GRACE));
    });
    handle
}

/// The scheme of the connection a request came on, where one port serves
/// both (auto): what the account document then advertises. Absent
/// elsewhere, where the server's one scheme holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionScheme(pub &'static str);

/// `inner`, with every request given its connection's control and, where
/// one port serves both schemes, marked with its connection's scheme.
#[derive(Debug, Clone)]
pub struct WithConnection<S> {
    inner: S,
    control: ConnectionControl,
    scheme: Option<ConnectionScheme>,
}

impl<S, B> tower::Service<axum::http::Request<B>> for WithConnection<S>
where
    S: tower::Service<axum::http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: axum::http::Request<B>) -> Self::Future {
        if let Some(scheme) = self.scheme {
            request.extensions_mut().insert(scheme);
        }
        request.extensions_mut().insert(self.control.clone());
        self.inner.call(request)
    }
}

/// Plain HTTP's listener: each connection accepted as a [`Breakable`].
struct BreakableListener(tokio::net::TcpListener);

impl axum::serve::Listener for BreakableListener {
    type Io = Breakable;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Breakable, SocketAddr) {
        let (tcp, addr) = axum::serve::Listener::accept(&mut self.0).await;
        (Breakable::new(tcp), addr)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

/// Plain HTTP's service per connection: the app, given the connection's control.
struct MakeWithConnection(App);

impl<'a> tower::Service<axum::serve::IncomingStream<'a, BreakableListener>> for MakeWithConnection {
    type Response = WithConnection<App>;
    type Error = std::convert::Infallible;
    type Future = std::future::Ready<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(
        &mut self,
        incoming: axum::serve::IncomingStream<'a, BreakableListener>,
    ) -> Self::Future {
        std::future::ready(Ok(WithConnection {
            inner: self.0.clone(),
            control: incoming.io().control(),
            scheme: None,
        }))
    }
}
