//! The health server (`--health-port`): what container tools and
//! orchestrators poll, on a listener of its own, plain HTTP and without
//! signatures, as Microsoft's Linux emulator serves it on port 8080.
//!
//! - `GET /alive`: 200 as soon as the process runs;
//! - `GET /ready`: 503 until the Cosmos endpoint serves requests, then 200;
//! - `GET /status`: 200, JSON: `status` ("starting" or "ready"), `version`,
//!   `endpoint` (null until ready), `clock`, `protocol` (`http`, `https`
//!   or `auto`), `tls` (whether HTTPS is served), `dataDir`,
//!   `uptimeSeconds`.
//!
//! It starts before the data directory is read back, which can take a while
//! for a large one: `/alive` answers throughout, `/ready` only after.

use std::io;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

use crate::data::clock::ClockMode;
use crate::Config;

/// What the health server reports; shared with whoever starts the endpoint.
#[derive(Debug)]
pub struct Health {
    started: Instant,
    clock: &'static str,
    protocol: crate::net::transport::Protocol,
    data_dir: Option<PathBuf>,
    /// Set once the Cosmos endpoint serves requests.
    endpoint: OnceLock<String>,
}

impl Health {
    pub fn new(config: &Config) -> Arc<Health> {
        Arc::new(Health {
            started: Instant::now(),
            clock: match config.clock {
                ClockMode::System => "system",
                ClockMode::Manual { .. } => "manual",
            },
            protocol: config.protocol,
            data_dir: config.data_dir.clone(),
            endpoint: OnceLock::new(),
        })
    }

    /// The endpoint serves requests at `endpoint` from now on.
    pub fn ready(&self, endpoint: String) {
        let _ = self.endpoint.set(endpoint);
    }

    pub fn is_ready(&self) -> bool {
        self.endpoint.get().is_some()
    }
}

/// Binds `host:port` now (0: a free port), so that `/alive` answers while
/// the rest starts: for `localhost`, both loopbacks on one port, as the
/// endpoint (`transport/listen.rs`).
pub fn bind(host: &str, port: u16) -> io::Result<Vec<std::net::TcpListener>> {
    crate::net::transport::bind_host(host, port)
        .map_err(|e| io::Error::new(e.kind(), format!("--health-port {port} on {host}: {e}")))
}

/// Serves the three routes on `listener` until the process ends.
pub async fn serve(listener: std::net::TcpListener, health: Arc<Health>) -> io::Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)?;
    axum::serve(listener, router(health)).await
}

fn router(health: Arc<Health>) -> Router {
    Router::new()
        .route("/alive", get(alive))
        .route("/ready", get(ready))
        .route("/status", get(status))
        .fallback(not_found)
        .with_state(health)
}

async fn alive() -> Response {
    (StatusCode::OK, Json(json!({"status": "alive"}))).into_response()
}

async fn ready(State(health): State<Arc<Health>>) -> Response {
    if health.is_ready() {
        (StatusCode::OK, Json(json!({"status": "ready"}))).into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "starting"})),
        )
            .into_response()
    }
}

async fn status(State(health): State<Arc<Health>>) -> Response {
    let endpoint = health.endpoint.get();
    Json(json!({
        "status": if endpoint.is_some() { "ready" } else { "starting" },
        "version": env!("CARGO_PKG_VERSION"),
        "endpoint": endpoint,
        "clock": health.clock,
        "protocol": health.protocol.name(),
        "tls": health.protocol.serves_tls(),
        "dataDir": health.data_dir.as_ref().map(|d| d.display().to_string()),
        "uptimeSeconds": health.started.elapsed().as_secs(),
    }))
    .into_response()
}

async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(json!({
            "code": "NotFound",
            "message": "The health server serves GET /alive, /ready and /status."
        })),
    )
        .into_response()
}
