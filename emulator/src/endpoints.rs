//! The account's endpoints, served together and stopped together: each
//! region's routing gateway (`--regions`: one port per region) and the
//! compute gateway (`--compute-gateway-port`). A region taken down with
//! `refuse` (`POST /_emulator/regions/{name}/down`) closes its listener,
//! so that clients see their connections refused as when a region is
//! unreachable, and binds the same address again when it is brought up.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::sync::watch;

use crate::http::{app, AppState};
use crate::regions::Outage;
use crate::transport::Transport;

/// How often a region's endpoint looks whether it must close or reopen.
const OUTAGE_POLL: Duration = Duration::from_millis(20);

/// A bound listener and the state of what it serves.
pub struct Endpoint {
    listener: std::net::TcpListener,
    state: AppState,
}

impl Endpoint {
    pub fn new(listener: std::net::TcpListener, state: AppState) -> Self {
        Endpoint { listener, state }
    }

    pub fn state(&self) -> &AppState {
        &self.state
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// `scheme://address`, as clients should address it.
    pub fn url(&self) -> io::Result<String> {
        Ok(format!("{}://{}", self.state.scheme, self.local_addr()?))
    }
}

/// Binds `host:port` without a runtime (non-blocking, for tokio).
pub fn bind(host: &str, port: u16) -> io::Result<std::net::TcpListener> {
    let listener = std::net::TcpListener::bind((host, port))?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// One listener per region: the first on `port`, the others on the ports
/// after it, or on free ports when `port` is 0.
pub fn bind_regions(
    host: &str,
    port: u16,
    names: &[String],
) -> io::Result<Vec<std::net::TcpListener>> {
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let port = match port {
                0 => 0,
                first => u16::try_from(usize::from(first) + i).map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("--port {first}: region '{name}' would need a port above 65535"),
                    )
                })?,
            };
            bind(host, port).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("region '{name}' cannot listen on port {port}: {e}"),
                )
            })
        })
        .collect()
}

/// Serves every endpoint until `shutdown` completes.
pub async fn serve_all(
    transport: Transport,
    endpoints: Vec<Endpoint>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let multi_region = endpoints
        .first()
        .is_some_and(|e| e.state.topology.names().len() > 1);
    if endpoints.len() == 1 && !multi_region {
        let Endpoint { listener, state } = endpoints.into_iter().next().expect("one");
        return transport.serve(listener, app(state), shutdown).await;
    }
    let (stop, stopped) = watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop.send(true);
    });
    let served: Vec<_> = endpoints
        .into_iter()
        .map(|endpoint| {
            let transport = transport.clone();
            let stopped = stopped.clone();
            tokio::spawn(async move {
                match multi_region {
                    true => serve_region(transport, endpoint, stopped).await,
                    false => {
                        let Endpoint { listener, state } = endpoint;
                        transport.serve(listener, app(state), until(stopped)).await
                    }
                }
            })
        })
        .collect();
    // Each runs as its own task; waiting on them in turn waits for all.
    let mut result = Ok(());
    for served in served {
        let served = served.await.map_err(io::Error::other).and_then(|r| r);
        result = result.and(served);
    }
    result
}

/// Resolves once the server stops.
async fn until(mut stopped: watch::Receiver<bool>) {
    let _ = stopped.wait_for(|stop| *stop).await;
}

/// Serves a region's endpoint, closing its listener while the region
/// refuses connections and binding the address again once it is up.
async fn serve_region(
    transport: Transport,
    endpoint: Endpoint,
    stopped: watch::Receiver<bool>,
) -> io::Result<()> {
    let Endpoint { listener, state } = endpoint;
    let address = listener.local_addr()?;
    let mut listener = Some(listener);
    loop {
        let bound = match listener.take() {
            Some(bound) => bound,
            None => match std::net::TcpListener::bind(address).and_then(|l| {
                l.set_nonblocking(true)?;
                Ok(l)
            }) {
                Ok(bound) => bound,
                Err(error) => {
                    tracing::warn!(%address, %error, "a region brought up cannot listen again yet");
                    tokio::time::sleep(OUTAGE_POLL * 5).await;
                    if *stopped.borrow() {
                        return Ok(());
                    }
                    continue;
                }
            },
        };
        state.topology.set_listening(state.region_index, true);
        let refusing = {
            let state = state.clone();
            async move {
                while !refuses(&state) {
                    tokio::time::sleep(OUTAGE_POLL).await;
                }
            }
        };
        let stop = {
            let stopped = stopped.clone();
            async move {
                tokio::select! {
                    () = until(stopped) => {}
                    () = refusing => {}
                }
            }
        };
        transport
            .clone()
            .serve(bound, app(state.clone()), stop)
            .await?;
        if *stopped.borrow() {
            return Ok(());
        }
        state.topology.set_listening(state.region_index, false);
        tracing::info!(region = %state.region, %address, "the region refuses connections");
        // Closed: nothing listens until the region is up or the server stops.
        while refuses(&state) {
            if *stopped.borrow() {
                return Ok(());
            }
            tokio::time::sleep(OUTAGE_POLL).await;
        }
        if *stopped.borrow() {
            return Ok(());
        }
    }
}

/// Whether the endpoint's region is down refusing connections now.
fn refuses(state: &AppState) -> bool {
    let now = state.store.clock.now_millis();
    state.topology.outage(state.region_index, now) == Some(Outage::Refuse)
}
