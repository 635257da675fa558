//! The REST surface: routes, the authentication and common-headers
//! middleware, and the handlers per resource (PROTOCOL.md).

mod account;
mod containers;
mod control;
mod databases;
mod items;
mod pkranges;
mod request;
mod response;

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tower::Layer;
use tower_http::normalize_path::{NormalizePath, NormalizePathLayer};

use crate::auth::{self, MasterKey};
use crate::error::ApiError;
use crate::store::{Store, MAX_ITEM_BYTES};

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    pub store: Arc<Store>,
    pub key: Arc<MasterKey>,
    /// `http` or `https`: what the account document advertises.
    pub scheme: &'static str,
    /// The PEM certificate clients should trust, when serving HTTPS.
    pub certificate: Option<Arc<str>>,
    /// The address the server listens on.
    pub local_addr: std::net::SocketAddr,
}

/// The whole service: routes behind authentication, with trailing slashes
/// trimmed first (the Python SDK sends `/dbs/db/colls/c/docs/`).
pub fn app(state: AppState) -> NormalizePath<Router> {
    let router = Router::new()
        .route("/", get(account::read))
        .route(
            "/dbs",
            get(databases::list).post(databases::create_or_query),
        )
        .route("/dbs/{db}", get(databases::read).delete(databases::delete))
        .route(
            "/dbs/{db}/colls",
            get(containers::list).post(containers::create_or_query),
        )
        .route(
            "/dbs/{db}/colls/{coll}",
            get(containers::read)
                .put(containers::replace)
                .delete(containers::delete),
        )
        .route(
            "/dbs/{db}/colls/{coll}/docs",
            get(items::read_feed).post(items::create_or_query),
        )
        .route(
            "/dbs/{db}/colls/{coll}/docs/{id}",
            get(items::read)
                .put(items::replace)
                .patch(items::patch)
                .delete(items::delete),
        )
        .route("/dbs/{db}/colls/{coll}/pkranges", get(pkranges::read))
        .route(
            "/_emulator/clock",
            get(control::read_clock).post(control::update_clock),
        )
        .route("/_emulator/stats", get(control::stats))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        // Bodies up to 8x the item limit are read whole, so that the client
        // gets the 413 Cosmos error body; refusing earlier would close the
        // connection while the client is still sending, and it would see a
        // reset instead of the answer. Larger bodies are refused at once.
        .layer(DefaultBodyLimit::max(8 * MAX_ITEM_BYTES))
        .layer(middleware::from_fn_with_state(state.clone(), envelope))
        // Public, like Microsoft's emulator: the certificate is no secret.
        .route("/_explorer/emulator.pem", get(certificate))
        .with_state(state);
    NormalizePathLayer::trim_trailing_slash().layer(router)
}

/// The certificate to trust, PEM; 404 when serving plain HTTP.
async fn certificate(State(state): State<AppState>) -> Result<Response, ApiError> {
    let pem = state.certificate.ok_or_else(|| {
        ApiError::not_found().with_message(
            "This emulator serves plain HTTP: start it with --tls to get a certificate.",
        )
    })?;
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/x-pem-file")],
        pem.to_string(),
    )
        .into_response())
}

async fn not_found() -> ApiError {
    ApiError::not_found().with_message(
        "Resource Not Found: this path names no resource. Paths look like /dbs/{db}/colls/{coll}/docs/{id}.",
    )
}

async fn method_not_allowed() -> ApiError {
    ApiError::method_not_allowed()
}

/// Authenticates every request, then adds the headers every response carries.
async fn envelope(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let activity_id = request
        .headers()
        .get("x-ms-activity-id")
        .cloned()
        .unwrap_or_else(|| {
            HeaderValue::from_str(&uuid::Uuid::new_v4().to_string()).expect("uuid is ascii")
        });
    let verified = {
        let headers = request.headers();
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        auth::verify(
            &state.key,
            &auth::SignedRequest {
                verb: request.method().as_str(),
                path: request.uri().path(),
                authorization: header("authorization"),
                x_ms_date: header("x-ms-date"),
                date: header("date"),
            },
        )
    };
    let mut response = match verified {
        Ok(()) => next.run(request).await,
        Err(error) => {
            tracing::debug!(%error, "refused an unauthenticated request");
            error.into_response()
        }
    };
    common_headers(response.headers_mut(), activity_id, &state.store);
    response
}

fn common_headers(headers: &mut HeaderMap, activity_id: HeaderValue, store: &Store) {
    headers.insert("x-ms-activity-id", activity_id);
    if let Ok(token) = HeaderValue::from_str(&store.session_token()) {
        headers.entry("x-ms-session-token").or_insert(token);
    }
    headers
        .entry("x-ms-request-charge")
        .or_insert(HeaderValue::from_static("1"));
    headers.insert("x-ms-schemaversion", HeaderValue::from_static("1.14"));
    headers.insert(
        "x-ms-serviceversion",
        HeaderValue::from_static("version=2.14.0.0"),
    );
    headers.insert("x-ms-gatewayversion", HeaderValue::from_static("2.0.0"));
}
