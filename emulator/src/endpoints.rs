//! The account's endpoints, served together and stopped together: each
//! region's routing gateway (`--regions`: one port per region) and the
//! compute gateway (`--compute-gateway-port`). A region taken down with
//! `refuse` (`POST /_emulator/regions/{name}/down`) closes its listener,
//! so that clients see their connections refused as when a region is
//! unreachable, and binds the same addresses again when it is brought up.
//! An endpoint on `localhost` listens on both loopbacks (`transport/listen.rs`),
//! each served alike. What one endpoint serves, [`app`], is assembled here,
//! above both of its parts: the resources (`http/`) and the control API
//! (`control/`), behind the same layers; and, over TLS, Direct mode's
//! front door ([`direct_mode`], `rntbd/`) on the same port.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::account::regions::Outage;
use crate::http::AppState;
use crate::net::transport::{self, App, BinaryFrontDoor, Transport};
use crate::rntbd::connection::{FrontDoor, Limits};
use crate::{control, http, rntbd};

/// Everything one endpoint serves: the resources' routes and the control
/// API's, behind authentication and the envelope (`http::app_with`).
pub fn app(state: AppState) -> App {
    http::app_with(state, control::routes())
}

/// Direct mode's front door for the endpoint of `state`, its connections
/// idle for at most `idle`: each request frame answered by the operation
/// HTTP calls, on the endpoint's account and region (`rntbd/dispatch.rs`).
pub fn direct_mode(state: &AppState, idle: Duration) -> Arc<dyn BinaryFrontDoor> {
    let account = state.account.clone();
    let region = state.region_index;
    let dispatcher: rntbd::connection::Dispatcher = Arc::new(move |request, connection| {
        let connection = connection.clone();
        Box::pin(rntbd::dispatch::answer(
            account.clone(),
            region,
            request,
            connection,
        ))
    });
    let limits = Limits {
        idle,
        ..Limits::default()
    };
    Arc::new(FrontDoor::new(dispatcher, limits))
}

/// How long a Direct-mode connection may idle by default (`rntbd/connection/`).
pub const DIRECT_IDLE_TIMEOUT: Duration = rntbd::connection::IDLE_TIMEOUT;

/// How often a region's endpoint looks whether it must close or reopen.
const OUTAGE_POLL: Duration = Duration::from_millis(20);

/// The bound listeners of one endpoint (one, or both loopbacks for
/// `localhost`) and the state of what it serves.
pub struct Endpoint {
    listeners: Vec<std::net::TcpListener>,
    /// The host clients are told (`localhost` by name, else the address).
    host: String,
    state: AppState,
    /// How long a Direct-mode connection may idle.
    direct_idle: Duration,
}

impl Endpoint {
    pub fn new(listeners: Vec<std::net::TcpListener>, host: &str, state: AppState) -> Self {
        Endpoint {
            listeners,
            host: host.to_string(),
            state,
            direct_idle: DIRECT_IDLE_TIMEOUT,
        }
    }

    /// The endpoint, its Direct-mode connections idle for at most `idle`.
    pub fn with_direct_idle(self, idle: Duration) -> Self {
        Endpoint {
            direct_idle: idle,
            ..self
        }
    }

    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// The first address bound (IPv4's, for `localhost`).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listeners[0].local_addr()
    }

    /// Every address bound.
    pub fn local_addrs(&self) -> io::Result<Vec<SocketAddr>> {
        self.listeners.iter().map(|l| l.local_addr()).collect()
    }

    /// `scheme://host:port`, as clients should address it.
    pub fn url(&self) -> io::Result<String> {
        Ok(transport::endpoint_url(
            self.state.scheme,
            &self.host,
            self.local_addr()?,
        ))
    }
}

/// One endpoint's listeners per region: the first on `port`, the others
/// on the ports after it, or on free ports when `port` is 0.
pub fn bind_regions(
    host: &str,
    port: u16,
    names: &[String],
) -> io::Result<Vec<Vec<std::net::TcpListener>>> {
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
            transport::bind_host(host, port).map_err(|e| {
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
        .is_some_and(|e| e.state.account.topology.names().len() > 1);
    if endpoints.len() == 1 && endpoints[0].listeners.len() == 1 && !multi_region {
        let Endpoint {
            mut listeners,
            state,
            direct_idle,
            ..
        } = endpoints.into_iter().next().expect("one");
        let listener = listeners.pop().expect("one");
        let direct = direct_mode(&state, direct_idle);
        return transport
            .serve(listener, app(state), Some(direct), shutdown)
            .await;
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
                    false => serve_each(&transport, endpoint, stopped).await,
                }
            })
        })
        .collect();
    join(served).await
}

/// Waits for every task, and answers the first failure (after all ended).
async fn join(tasks: Vec<tokio::task::JoinHandle<io::Result<()>>>) -> io::Result<()> {
    let mut result = Ok(());
    for task in tasks {
        let ended = task.await.map_err(io::Error::other).and_then(|r| r);
        result = result.and(ended);
    }
    result
}

/// Serves `state` on each listener until `stopped` turns true.
async fn serve_each(
    transport: &Transport,
    endpoint: Endpoint,
    stopped: watch::Receiver<bool>,
) -> io::Result<()> {
    let direct = direct_mode(&endpoint.state, endpoint.direct_idle);
    let served = endpoint
        .listeners
        .into_iter()
        .map(|listener| {
            let transport = transport.clone();
            let app = app(endpoint.state.clone());
            let direct = Some(direct.clone());
            let stopped = stopped.clone();
            tokio::spawn(
                async move { transport.serve(listener, app, direct, until(stopped)).await },
            )
        })
        .collect();
    join(served).await
}

/// Resolves once the server stops.
async fn until(mut stopped: watch::Receiver<bool>) {
    let _ = stopped.wait_for(|stop| *stop).await;
}

/// Serves a region's endpoint, closing its listeners while the region
/// refuses connections and binding the addresses again once it is up.
async fn serve_region(
    transport: Transport,
    endpoint: Endpoint,
    stopped: watch::Receiver<bool>,
) -> io::Result<()> {
    let addresses = endpoint.local_addrs()?;
    let Endpoint {
        listeners,
        state,
        host,
        direct_idle,
    } = endpoint;
    let mut listeners = Some(listeners);
    loop {
        let bound = match listeners.take() {
            Some(bound) => bound,
            None => match transport::bind_again(&addresses) {
                Ok(bound) => bound,
                Err(error) => {
                    tracing::warn!(address = %addresses[0], %error, "a region brought up cannot listen again yet");
                    tokio::time::sleep(OUTAGE_POLL * 5).await;
                    if *stopped.borrow() {
                        return Ok(());
                    }
                    continue;
                }
            },
        };
        state
            .account
            .topology
            .set_listening(state.region_index, true);
        // This round ends when the server stops or the region refuses.
        let (end_round, round_ended) = watch::channel(false);
        let watcher = {
            let state = state.clone();
            let stopped = stopped.clone();
            tokio::spawn(async move {
                let refusing = async {
                    while !refuses(&state) {
                        tokio::time::sleep(OUTAGE_POLL).await;
                    }
                };
                tokio::select! {
                    () = until(stopped) => {}
                    () = refusing => {}
                }
                let _ = end_round.send(true);
            })
        };
        let round = Endpoint {
            listeners: bound,
            host: host.clone(),
            state: state.clone(),
            direct_idle,
        };
        let served = serve_each(&transport, round, round_ended).await;
        watcher.abort();
        served?;
        if *stopped.borrow() {
            return Ok(());
        }
        state
            .account
            .topology
            .set_listening(state.region_index, false);
        tracing::info!(region = %state.region, address = %addresses[0], "the region refuses connections");
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
    let now = state.account.store.clock.now_millis();
    state.account.topology.outage(state.region_index, now) == Some(Outage::Refuse)
}
