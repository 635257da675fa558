//! A local Azure Cosmos DB (NoSQL API) endpoint with exact time-to-live
//! semantics and a test clock.
//!
//! Start it in-process with [`Emulator::start`] (tests, tools) or as the
//! `cosmos-emulator` binary. Its folders and modules, bottom to top (a
//! folder lists its modules in its own opening lines):
//! - `protocol` (the protocol's rules: signatures and tokens, partition
//!   keys, RIDs, consistency, charges, limits, the failures' wire format);
//! - `data` (the clock and the TTL rules, the store and its data
//!   directory, the indexes, the query engine, scripts, patches, the
//!   purge and re-indexing);
//! - `account` (the account: the store with its key, consistency,
//!   scripts, charges, regions, budgets and fault rules, as one value
//!   every endpoint and front door shares);
//! - `operations` (each Cosmos operation as a function of the account and
//!   a protocol-neutral request, below every protocol, and what runs
//!   around every one);
//! - `http` (the adapter from HTTP to the operations) and `control` (the
//!   control API, `/_emulator/...`: its route table and handlers, above
//!   `http`);
//! - `rntbd` (Direct mode's front door beside `http`: RNTBD, the binary
//!   protocol of the Java and .NET SDKs; its frame codec and its
//!   connections);
//! - `net` (connections: listening, TLS, and which protocol a connection
//!   speaks), below the adapters;
//! - `endpoints` (each region's gateway and the compute gateway, served and
//!   stopped together, and `app`, which puts `http` and `control` behind
//!   one set of layers, with Direct mode's front door beside them);
//! - `binary` (what the `cosmos-emulator` binary adds, over this file: its
//!   settings, its health server and probe, and when it stops).
//!
//! This file assembles them: [`Config`], [`Emulator`] (in process) and
//! [`Server`] (binds, serves, starts the background tasks).

pub mod account;
pub mod binary;
pub mod control;
pub mod data;
mod endpoints;
mod http;
pub mod net;
pub mod operations;
pub mod protocol;
mod rntbd;

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

pub use account::Account;
pub use data::clock::{Clock, ClockMode};
pub use data::store::Store;
pub use endpoints::app;
pub use http::{AppState, EndpointState, REGION};
pub use net::tls::CertificateFiles;
pub use net::transport::Protocol;
pub use protocol::auth::WELL_KNOWN_KEY;

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
    /// The certificate to serve (`--cert`): an authority's, which signs the
    /// server certificates, or a server's own; `None`: an authority made at
    /// start (or kept, below).
    pub certificate: Option<CertificateFiles>,
    /// Where the authority made at start is kept and read back by later
    /// starts (`--cert-dir`); `None`: the data directory, if any, else
    /// nowhere (a new one each start).
    pub cert_dir: Option<std::path::PathBuf>,
    /// How long change log entries are kept, emulator-clock seconds.
    pub change_feed_retention: i64,
    /// The least number of partition key ranges a new container gets
    /// (default 1: as many as its throughput takes; see `data/store/ranges.rs`).
    pub min_ranges_per_container: usize,
    /// Where to keep the data (`--data-dir`); `None`: in memory only.
    pub data_dir: Option<std::path::PathBuf>,
    /// When writes reach the disk (`--sync`), with a data directory.
    pub sync: data::persist::SyncMode,
    /// Whether `/_explorer/index.html` serves the explorer page (else 404).
    pub explorer: bool,
    /// The host the account document advertises (an IP address or a DNS
    /// name, with the port the client used); `None`: the host the client
    /// addressed.
    pub advertise_host: Option<String>,
    /// Where the SQL compute gateway answers too (`--compute-gateway-port`;
    /// 0 picks a free port): the same account, its URLs read as the compute
    /// gateway reads them (`protocol::auth::Gateway`). `None`: not served.
    pub compute_gateway_port: Option<u16>,
    /// The account's default consistency level (`--consistency`): what the
    /// account document says, and the strongest a request may ask for.
    pub consistency: protocol::consistency::Consistency,
    /// The account's regions in failover order (`--regions`), each served
    /// on its own port: the first on `port`, the next on the ports after it
    /// (or free ports when `port` is 0). Empty: one region, [`REGION`].
    pub regions: Vec<String>,
    /// Whether every region takes writes (`--multi-write`).
    pub multi_write: bool,
    /// A serverless account (`--serverless`): no offers, 5,000 RU/s per
    /// partition when throttling.
    pub serverless: bool,
    /// How requests are charged (`--ru-charges`).
    pub charges: protocol::request_units::ChargeModel,
    /// Whether requests are throttled by provisioned throughput
    /// (`--rate-limit`), and whether partitions save burst capacity
    /// (`--burst-capacity`).
    pub rate_limit: bool,
    pub burst_capacity: bool,
    /// How long a stored procedure, trigger or query's UDFs may run: the
    /// service's 5 s (not a flag; tests shorten it).
    pub script_time_bound: std::time::Duration,
    /// How long a Direct-mode (RNTBD) connection may idle before it is
    /// closed: 10 minutes (`rntbd/connection/mod.rs`; not a flag, tests
    /// shorten it).
    pub direct_idle_timeout: std::time::Duration,
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
            certificate: None,
            cert_dir: None,
            change_feed_retention: data::store::DEFAULT_CHANGE_FEED_RETENTION_SECONDS,
            min_ranges_per_container: 1,
            consistency: protocol::consistency::Consistency::default(),
            regions: Vec::new(),
            multi_write: false,
            serverless: false,
            charges: protocol::request_units::ChargeModel::default(),
            rate_limit: false,
            burst_capacity: false,
            compute_gateway_port: None,
            data_dir: None,
            sync: data::persist::SyncMode::default(),
            explorer: true,
            advertise_host: None,
            script_time_bound: data::script::Limits::SERVICE.time,
            direct_idle_timeout: endpoints::DIRECT_IDLE_TIMEOUT,
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
    /// Every endpoint of the account, bound without a runtime (so that
    /// binding works from any thread): the first region's routing gateway
    /// first, the other regions' after it, the compute gateway last.
    endpoints: Vec<endpoints::Endpoint>,
    background_purge: bool,
    transport: net::transport::Transport,
}

impl Server {
    /// Binds the port; the kernel queues connections from here on.
    pub fn bind(config: &Config) -> io::Result<Server> {
        let key = protocol::auth::MasterKey::from_base64(&config.key)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("--key: {e}")))?;
        let topology = match config.regions.as_slice() {
            [] => account::regions::Topology::single(http::REGION),
            names => account::regions::Topology::new(names.to_vec(), config.multi_write)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?,
        };
        let listeners = endpoints::bind_regions(&config.host, config.port, topology.names())?;
        let certificates = if config.protocol.serves_tls() {
            // A kept authority lives in --cert-dir, else in the data directory.
            let keep_in = config.cert_dir.as_ref().or(config.data_dir.as_ref());
            let certificates = net::tls::prepare(
                &config.host,
                config.certificate.as_ref(),
                keep_in.map(|p| p.as_path()),
            )?;
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
        let transport = net::transport::Transport::new(config.protocol, certificates)?;
        let mut store = Store::new(Clock::new(config.clock))
            .with_change_feed_retention(config.change_feed_retention)
            .with_min_ranges_per_container(config.min_ranges_per_container)
            .with_serverless(config.serverless);
        if let Some(dir) = &config.data_dir {
            store = store.open_data_dir(dir, config.sync)?;
        }
        let region_addrs = listeners
            .iter()
            .map(|l| l[0].local_addr())
            .collect::<io::Result<Arc<[SocketAddr]>>>()?;
        let account = Arc::new(Account {
            store: Arc::new(store),
            key,
            consistency: config.consistency,
            scripts: Arc::new(data::script::ScriptEngine::new(data::script::Limits {
                time: config.script_time_bound,
                ..data::script::Limits::SERVICE
            })),
            charges: config.charges,
            limiter: config
                .rate_limit
                .then(|| account::throttle::Limiter::new(config.burst_capacity)),
            topology,
            faults: Default::default(),
            query_results: Default::default(),
        });
        // One state per endpoint, sharing the account, each with its own
        // address, region and way of reading URLs.
        let at = |listeners: &[std::net::TcpListener], region: usize, gateway| {
            Ok::<_, io::Error>(AppState::new(EndpointState {
                account: Arc::clone(&account),
                // Auto: what plain connections are told; TLS ones say https.
                scheme: if config.protocol == Protocol::Https {
                    "https"
                } else {
                    "http"
                },
                certificate: certificate.clone(),
                local_addr: listeners[0].local_addr()?,
                explorer: config.explorer,
                advertise_host: config.advertise_host.clone(),
                gateway,
                region: account.topology.name(region).into(),
                region_index: region,
                region_addrs: Arc::clone(&region_addrs),
            }))
        };
        let mut endpoints = Vec::with_capacity(listeners.len() + 1);
        let mut listeners = listeners.into_iter();
        let first = listeners.next().expect("an account has a region");
        let host = config.host.as_str();
        let state = at(&first, 0, protocol::auth::Gateway::Routing)?;
        let idle = config.direct_idle_timeout;
        let endpoint = |listeners, state| {
            endpoints::Endpoint::new(listeners, host, state).with_direct_idle(idle)
        };
        endpoints.push(endpoint(first, state));
        for (i, listeners) in listeners.enumerate() {
            let state = at(&listeners, i + 1, protocol::auth::Gateway::Routing)?;
            endpoints.push(endpoint(listeners, state));
        }
        if let Some(port) = config.compute_gateway_port {
            let listeners = net::transport::bind_host(host, port)?;
            let state = at(&listeners, 0, protocol::auth::Gateway::Compute)?;
            endpoints.push(endpoint(listeners, state));
        }
        Ok(Server {
            endpoints,
            background_purge: config.background_purge,
            transport,
        })
    }

    /// The compute gateway's endpoint, as [`Self::endpoint`], when served.
    pub fn compute_endpoint(&self) -> io::Result<Option<String>> {
        self.endpoints
            .iter()
            .find(|e| e.state().gateway == protocol::auth::Gateway::Compute)
            .map(endpoints::Endpoint::url)
            .transpose()
    }

    /// Each region's name and endpoint, in the order `--regions` named them.
    pub fn region_endpoints(&self) -> io::Result<Vec<(String, String)>> {
        self.endpoints
            .iter()
            .filter(|e| e.state().gateway == protocol::auth::Gateway::Routing)
            .map(|e| Ok((e.state().region.to_string(), e.url()?)))
            .collect()
    }

    /// The first address the account's endpoint listens on (for
    /// `localhost`, IPv4's: `127.0.0.1`).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.endpoints[0].local_addr()
    }

    /// Every address the account's endpoint listens on (`localhost`: both
    /// loopbacks, one port), as `scheme://address` URLs, for tools that
    /// want an address rather than a name.
    pub fn endpoint_addresses(&self) -> io::Result<Vec<String>> {
        let scheme = self.endpoints[0].state().scheme;
        Ok(self.endpoints[0]
            .local_addrs()?
            .into_iter()
            .map(|address| format!("{scheme}://{address}"))
            .collect())
    }

    /// `http://HOST:PORT`, as clients should address it (`http` for auto;
    /// `localhost` by name when it is the host).
    pub fn endpoint(&self) -> io::Result<String> {
        self.endpoints[0].url()
    }

    pub fn store(&self) -> Arc<Store> {
        self.account().store.clone()
    }

    /// The account every endpoint serves.
    pub fn account(&self) -> &Arc<Account> {
        &self.endpoints[0].state().account
    }

    /// Serves until `shutdown` completes, with the purge and index
    /// transformation tasks beside.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> io::Result<()> {
        let store = self.store();
        let purge = self
            .background_purge
            .then(|| tokio::spawn(data::purge::run(store.clone())));
        let reindex = tokio::spawn(data::reindex::run(store));
        let served = endpoints::serve_all(self.transport, self.endpoints, shutdown).await;
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
    /// Each region's name and endpoint (one, the account's, without `--regions`).
    regions: Vec<(String, String)>,
    /// The account it serves: the in-process API works on it directly.
    account: Arc<Account>,
    key: String,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<io::Result<()>>>,
}

impl Emulator {
    /// Binds and starts serving; returns once the port accepts connections.
    pub fn start(config: Config) -> io::Result<Emulator> {
        let server = Server::bind(&config)?;
        let endpoint = server.endpoint()?;
        let regions = server.region_endpoints()?;
        let account = Arc::clone(server.account());
        let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("cosmos-emulator".into())
            .stack_size(protocol::limits::THREAD_STACK_BYTES)
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
            regions,
            account,
            key: config.key,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:PORT`
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Adds a fault rule, as `POST /_emulator/faults` does
    /// (`docs/src/faults.md`): the rule as stored, with its id; or the
    /// route's 400 or 409.
    pub fn add_fault(
        &self,
        rule: serde_json::Value,
    ) -> Result<serde_json::Value, protocol::error::ApiError> {
        self.account
            .faults
            .add(rule, self.account.clock().now_millis())
    }

    /// Every fault rule with its `hitCount`, as `GET /_emulator/faults`
    /// lists them.
    pub fn faults(&self) -> Vec<serde_json::Value> {
        self.account.faults.list()
    }

    /// Each region's name and endpoint, as `--regions` named them.
    pub fn region_endpoints(&self) -> &[(String, String)] {
        &self.regions
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    /// The store, for tests that look beneath the API (e.g. at purged storage).
    pub fn store(&self) -> &Arc<Store> {
        &self.account.store
    }

    /// The account, for tests that drive its operations without HTTP.
    pub fn account(&self) -> &Arc<Account> {
        &self.account
    }

    /// Moves the manual test clock forward by `seconds` and answers the new
    /// time, as `POST /_emulator/clock {"advance": seconds}` does: kept with
    /// `--data-dir`, and the background purge follows. Refused (the
    /// service-shaped error of that route) for a negative `seconds` or an
    /// emulator on the system clock.
    pub fn advance(&self, seconds: i64) -> Result<i64, protocol::error::ApiError> {
        self.account.store.advance_clock(seconds)
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
