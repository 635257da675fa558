//! A local Azure Cosmos DB (NoSQL API) endpoint with exact time-to-live
//! semantics and a test clock.
//!
//! Start it in-process with [`Emulator::start`] (tests, tools) or as the
//! `cosmos-emulator` binary. The modules, one concept each:
//! - the data: `ttl` (the TTL rules), `store` (databases, containers,
//!   items, the expiry index, behind one lock), `purge` (the background
//!   deletion), `reindex` (rebuilding indexes after a policy change),
//!   `persist` (the data directory and its journal), `query` (the SQL
//!   dialect), `script` (stored procedures, triggers and UDFs), `patch`
//!   (partial updates), `partition_key` (definitions, values, headers),
//!   `epk` (effective partition keys), `rid` (resource ids), `json` (JSON
//!   within the nesting limit), `limits` (the quotas, in one place);
//! - the wire: `http` (routes and handlers), `auth` (master-key
//!   signatures), `resource_token` (permission tokens), `error` (the wire
//!   format of failures), `clock` (the one source of time), `faults` (the
//!   fault rules of the control API, which know nothing of HTTP);
//! - for the binary: `settings` (flags and environment variables), `health`
//!   (the health server), `probe` (the `health` subcommand that asks it)
//!   and `shutdown` (signals and `--parent-pid`); for both, `transport`
//!   (plain HTTP, HTTPS, or either by the first byte) and `tls` (the
//!   certificates).

pub mod auth;
pub mod clock;
pub mod consistency;
mod entra_token;
mod epk;
pub mod error;
mod faults;
pub mod health;
mod http;
mod item_key;
mod json;
pub mod limits;
mod partition_key;
mod patch;
pub mod persist;
pub mod probe;
mod purge;
mod query;
mod reindex;
pub mod request_units;
mod resource_token;
mod rid;
mod script;
pub mod settings;
pub mod shutdown;
pub mod store;
mod throttle;
mod tls;
mod transport;
pub mod ttl;

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

pub use auth::WELL_KNOWN_KEY;
pub use clock::{Clock, ClockMode};
pub use http::{app, AppState, SharedState, REGION};
pub use store::Store;
pub use transport::Protocol;

/// Sets the allocator up for a long-running server: freed memory goes back
/// to the system 200 ms after it is freed, so that a large TTL purge shrinks
/// the process (mimalloc's default left it at its peak in our benchmark).
pub fn configure_allocator() {
    /// `mi_option_purge_delay` in mimalloc's `mi_option_t` (its bindings name no constant for it).
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: mimalloc options are plain integers; `mi_option_set` is not
    // thread-safe, so callers call this first thing in `main`, before any
    // other thread exists.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 200) };
}

#[derive(Debug, Clone)]
pub struct Config {
    pub host: String,
    /// 0 picks a free port.
    pub port: u16,
    /// The base64 master key clients sign with.
    pub key: String,
    pub clock: ClockMode,
    /// Whether expired items are physically deleted in the background. Off
    /// only in tests that check that reads hide expired items by themselves.
    pub background_purge: bool,
    /// Plain HTTP, HTTPS with certificates made at start-up, or both.
    pub protocol: Protocol,
    /// Where to write the certificate clients should trust (with HTTPS or
    /// both), its directory created if missing.
    pub cert_out: Option<std::path::PathBuf>,
    /// How long change log entries are kept, emulator-clock seconds.
    pub change_feed_retention: i64,
    /// The least number of partition key ranges a new container gets
    /// (default 1: as many as its throughput takes; see `store/ranges.rs`).
    pub min_ranges_per_container: usize,
    /// Where to keep the data (`--data-dir`); `None`: in memory only.
    pub data_dir: Option<std::path::PathBuf>,
    /// When writes reach the disk (`--sync`), with a data directory.
    pub sync: persist::SyncMode,
    /// Whether `/_explorer/index.html` serves the explorer page (else 404).
    pub explorer: bool,
    /// The host the account document advertises (an IP address or a DNS
    /// name, with the port the client used); `None`: the host the client
    /// addressed.
    pub advertise_host: Option<String>,
    /// Where the SQL compute gateway answers too (`--compute-gateway-port`;
    /// 0 picks a free port): the same account, its URLs read as the compute
    /// gateway reads them (`auth::Gateway`). `None`: not served.
    pub compute_gateway_port: Option<u16>,
    /// The account's default consistency level (`--consistency`): what the
    /// account document says, and the strongest a request may ask for.
    pub consistency: consistency::Consistency,
    /// How requests are charged (`--ru-charges`).
    pub charges: request_units::ChargeModel,
    /// Whether requests are throttled by provisioned throughput
    /// (`--rate-limit`), and whether partitions save burst capacity
    /// (`--burst-capacity`).
    pub rate_limit: bool,
    pub burst_capacity: bool,
    /// How long a stored procedure, trigger or query's UDFs may run: the
    /// service's 5 s (not a flag; tests shorten it).
    pub script_time_bound: std::time::Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            host: "127.0.0.1".into(),
            port: 8081,
            key: WELL_KNOWN_KEY.into(),
            clock: ClockMode::System,
            background_purge: true,
            protocol: Protocol::Http,
            cert_out: None,
            change_feed_retention: store::DEFAULT_CHANGE_FEED_RETENTION_SECONDS,
            min_ranges_per_container: 1,
            consistency: consistency::Consistency::default(),
            charges: request_units::ChargeModel::default(),
            rate_limit: false,
            burst_capacity: false,
            compute_gateway_port: None,
            data_dir: None,
            sync: persist::SyncMode::default(),
            explorer: true,
            advertise_host: None,
            script_time_bound: script::Limits::SERVICE.time,
        }
    }
}

impl Config {
    /// A free loopback port and the manual clock: what tests want.
    pub fn for_tests() -> Self {
        Config {
            port: 0,
            clock: ClockMode::Manual { start: None },
            ..Config::default()
        }
    }
}

/// A bound, not yet serving, emulator.
pub struct Server {
    /// Bound without a runtime, so that binding works from any thread.
    listener: std::net::TcpListener,
    state: AppState,
    /// The compute gateway's listener and state (`--compute-gateway-port`).
    compute: Option<(std::net::TcpListener, AppState)>,
    background_purge: bool,
    transport: transport::Transport,
}

impl Server {
    /// Binds the port; the kernel queues connections from here on.
    pub fn bind(config: &Config) -> io::Result<Server> {
        let key = auth::MasterKey::from_base64(&config.key)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("--key: {e}")))?;
        let listener = std::net::TcpListener::bind((config.host.as_str(), config.port))?;
        listener.set_nonblocking(true)?;
        let certificates = if config.protocol.serves_tls() {
            let certificates = tls::generate(&config.host).map_err(io::Error::other)?;
            if let Some(path) = &config.cert_out {
                write_cert_out(path, &certificates.authority_pem)?;
            }
            Some(certificates)
        } else {
            None
        };
        let certificate = certificates
            .as_ref()
            .map(|c| Arc::from(c.authority_pem.as_str()));
        let transport = transport::Transport::new(config.protocol, certificates)?;
        let mut store = Store::new(Clock::new(config.clock))
            .with_change_feed_retention(config.change_feed_retention)
            .with_min_ranges_per_container(config.min_ranges_per_container);
        if let Some(dir) = &config.data_dir {
            store = store.open_data_dir(dir, config.sync)?;
        }
        let shared = SharedState {
            store: Arc::new(store),
            key,
            // Auto: what plain connections are told; TLS ones say https.
            scheme: if config.protocol == Protocol::Https {
                "https"
            } else {
                "http"
            },
            certificate,
            local_addr: listener.local_addr()?,
            query_results: Default::default(),
            explorer: config.explorer,
            advertise_host: config.advertise_host.clone(),
            consistency: config.consistency,
            gateway: auth::Gateway::Routing,
            charges: config.charges,
            limiter: config
                .rate_limit
                .then(|| Arc::new(throttle::Limiter::new(config.burst_capacity))),
            scripts: Arc::new(script::ScriptEngine::new(script::Limits {
                time: config.script_time_bound,
                ..script::Limits::SERVICE
            })),
            region: http::REGION.into(),
            faults: Default::default(),
        };
        let compute = match config.compute_gateway_port {
            Some(port) => {
                let listener = std::net::TcpListener::bind((config.host.as_str(), port))?;
                listener.set_nonblocking(true)?;
                let state = AppState::new(SharedState {
                    store: Arc::clone(&shared.store),
                    key: shared.key.clone(),
                    certificate: shared.certificate.clone(),
                    local_addr: listener.local_addr()?,
                    query_results: Default::default(),
                    advertise_host: shared.advertise_host.clone(),
                    gateway: auth::Gateway::Compute,
                    scripts: Arc::clone(&shared.scripts),
                    limiter: shared.limiter.clone(),
                    region: Arc::clone(&shared.region),
                    faults: Arc::clone(&shared.faults),
                    ..shared
                });
                Some((listener, state))
            }
            None => None,
        };
        Ok(Server {
            listener,
            state: AppState::new(shared),
            compute,
            background_purge: config.background_purge,
            transport,
        })
    }

    /// The compute gateway's endpoint, as [`Self::endpoint`], when served.
    pub fn compute_endpoint(&self) -> io::Result<Option<String>> {
        self.compute
            .as_ref()
            .map(|(listener, state)| Ok(format!("{}://{}", state.scheme, listener.local_addr()?)))
            .transpose()
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// `http://HOST:PORT`, as clients should address it (`http` for auto).
    pub fn endpoint(&self) -> io::Result<String> {
        Ok(format!("{}://{}", self.state.scheme, self.local_addr()?))
    }

    pub fn store(&self) -> Arc<Store> {
        self.state.store.clone()
    }

    /// Serves until `shutdown` completes, with the purge and index
    /// transformation tasks beside.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> io::Result<()> {
        let purge = self
            .background_purge
            .then(|| tokio::spawn(purge::run(self.state.store.clone())));
        let reindex = tokio::spawn(reindex::run(self.state.store.clone()));
        let served = match self.compute {
            None => {
                self.transport
                    .serve(self.listener, app(self.state), shutdown)
                    .await
            }
            // Both endpoints stop together.
            Some((listener, state)) => {
                let (stop, stopped) = tokio::sync::watch::channel(false);
                tokio::spawn(async move {
                    shutdown.await;
                    let _ = stop.send(true);
                });
                let until_stopped = |mut stopped: tokio::sync::watch::Receiver<bool>| async move {
                    let _ = stopped.wait_for(|stop| *stop).await;
                };
                let routing = self.transport.clone().serve(
                    self.listener,
                    app(self.state),
                    until_stopped(stopped.clone()),
                );
                let compute = self
                    .transport
                    .serve(listener, app(state), until_stopped(stopped));
                let (routing, compute) = tokio::join!(routing, compute);
                routing.and(compute)
            }
        };
        if let Some(purge) = purge {
            purge.abort();
        }
        reindex.abort();
        served
    }
}

/// Writes the authority's certificate for `--cert-out`, creating the
/// directory (a container tool may look for it at a fixed, deep path).
fn write_cert_out(path: &std::path::Path, pem: &str) -> io::Result<()> {
    let named =
        |e: io::Error| io::Error::new(e.kind(), format!("--cert-out {}: {e}", path.display()));
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(named)?;
    }
    std::fs::write(path, pem).map_err(named)
}

/// An emulator serving on a background thread; stops when dropped.
pub struct Emulator {
    endpoint: String,
    key: String,
    store: Arc<Store>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<io::Result<()>>>,
}

impl Emulator {
    /// Binds and starts serving; returns once the port accepts connections.
    pub fn start(config: Config) -> io::Result<Emulator> {
        let server = Server::bind(&config)?;
        let endpoint = server.endpoint()?;
        let store = server.store();
        let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("cosmos-emulator".into())
            .stack_size(limits::THREAD_STACK_BYTES)
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                runtime.block_on(server.run(async {
                    let _ = stop.await;
                }))
            })?;
        Ok(Emulator {
            endpoint,
            key: config.key,
            store,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:PORT`
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    /// The store, for tests that look beneath the API (e.g. at purged storage).
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// Moves the manual test clock forward by `seconds` and answers the new
    /// time, as `POST /_emulator/clock {"advance": seconds}` does: kept with
    /// `--data-dir`, and the background purge follows. Refused (the
    /// service-shaped error of that route) for a negative `seconds` or an
    /// emulator on the system clock.
    pub fn advance(&self, seconds: i64) -> Result<i64, error::ApiError> {
        self.store.advance_clock(seconds)
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
