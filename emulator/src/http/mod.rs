//! The REST surface: routes, the authentication and common-headers
//! middleware, and the handlers per resource (`docs/src/reference/protocol.md`).

mod account;
mod addresses;
mod around;
mod client_encryption_keys;
mod conflicts;
mod containers;
mod databases;
mod explorer;
mod items;
mod names;
mod offers;
pub mod operation;
mod owner_path;
mod pkranges;
mod query;
mod regions;
mod request;
mod response;
mod routes;
mod script_runs;
mod scripts;
mod steps;
mod users;

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::handler::Handler;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE, DATE};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tower::Layer;
use tower::Service;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::normalize_path::NormalizePathLayer;

use crate::net::transport::{App, QueryIntoPath};

use crate::account::Account;
use crate::data::store::MAX_ITEM_BYTES;
use crate::operations::authorization::{self, Access, Verb};
use crate::operations::resource_token;
use crate::operations::{self, session};
use crate::protocol::auth;
use crate::protocol::entra_token;
use crate::protocol::error::ApiError;
use request::CosmosHeaders;

/// What every handler shares, behind one `Arc`: the router clones the state
/// for each layer and handler of every request, and one counter to move is
/// cheaper than one per field (it was a tenth of a point read's CPU).
#[derive(Clone)]
pub struct AppState(Arc<EndpointState>);

impl AppState {
    pub fn new(endpoint: EndpointState) -> Self {
        AppState(Arc::new(endpoint))
    }
}

impl std::ops::Deref for AppState {
    type Target = EndpointState;

    fn deref(&self) -> &EndpointState {
        &self.0
    }
}

/// One endpoint: the account it serves, and what is its own.
pub struct EndpointState {
    /// What every endpoint of the account shares (`account.rs`).
    pub account: Arc<Account>,
    /// `http` or `https`: what the account document advertises (unless the
    /// request's connection says otherwise: `transport::ConnectionScheme`).
    pub scheme: &'static str,
    /// The PEM certificate clients should trust, when serving HTTPS (alone
    /// or beside HTTP).
    pub certificate: Option<Arc<str>>,
    /// The address the server listens on.
    pub local_addr: std::net::SocketAddr,
    /// Whether the explorer page is served (`--enable-explorer`).
    pub explorer: bool,
    /// The host the account document advertises instead of the client's
    /// (`--advertise-host`).
    pub advertise_host: Option<String>,
    /// How this endpoint reads URLs: the routing gateway's way, or the
    /// compute gateway's (`--compute-gateway-port`).
    pub gateway: auth::Gateway,
    /// The region this endpoint serves, as the account document names it
    /// (fault rules match on it): the account's region numbered
    /// `region_index`.
    pub region: Arc<str>,
    pub region_index: usize,
    /// Where each region listens, in the order `--regions` names them.
    pub region_addrs: Arc<[std::net::SocketAddr]>,
}

impl EndpointState {
    /// The account as this endpoint serves it, for the operations.
    pub fn serving(&self) -> crate::operations::Serving<'_> {
        crate::operations::Serving::new(&self.account, self.region_index)
    }
}

/// The one region the account has, as the service names regions.
pub const REGION: &str = "South Central US";

// What the control API (`control/`, the layer above) builds its handlers
// with: the body extractor and the ranges' listing its split answers.
pub use pkranges::listing as pk_range_listing;
pub use request::Body;

/// The whole service: the resources' routes and `more` (the control API's,
/// which `endpoints::app` passes, as this layer names nothing above it),
/// behind authentication, with trailing slashes trimmed first (the Python
/// SDK sends `/dbs/db/colls/c/docs/`).
pub fn app_with(state: AppState, more: Router<AppState>) -> App {
    with_layers(routes::routes().merge(more), state)
}

/// What every request passes through: the common headers (`envelope`),
/// authentication of the routes (`authenticate`, which then runs the steps
/// around every operation, `around.rs`: the region, the budget, the fault
/// rules, durability), the body limit,
/// Cosmos-shaped 404 and 405, and a panic, should one slip through,
/// answered as a 500 instead of a dropped connection. The certificate route
/// and the explorer page are public, outside authentication.
fn with_layers(routes: Router<AppState>, state: AppState) -> App {
    let step = |which| steps::StepLayer {
        state: state.clone(),
        which,
    };
    // Bodies up to 8x the item limit are read whole, so that the client
    // gets the 413 Cosmos error body; refusing earlier would close the
    // connection while the client is still sending, and it would see a
    // reset instead of the answer. Larger bodies are refused at once.
    let body_limit = DefaultBodyLimit::max(8 * MAX_ITEM_BYTES);
    // Each step answers a panic in itself or below it as a 500
    // (`steps.rs`): authentication's inside the envelope, so that the 500
    // gets the request's activity id, the envelope's as the last resort.
    // One stack, one box: each layer the router wraps around its routes
    // is cloned, chain and all, by every request (`steps.rs`).
    let around_routes = tower::ServiceBuilder::new()
        .layer(step(steps::Which::Envelope))
        .layer(body_limit)
        .layer(step(steps::Which::Authenticate));
    // Only a request for a route is authenticated: an unknown path is a 404
    // whatever its signature (it serves nothing), never a 401 that would
    // send a client author hunting for a signing bug. The fallbacks get the
    // rest: the envelope, the body limit, a panic caught inside the envelope.
    let around_fallbacks = tower::ServiceBuilder::new()
        .layer(step(steps::Which::Envelope))
        .layer(body_limit)
        .layer(CatchPanicLayer::custom(panicked));
    let authenticated = routes
        .route_layer(around_routes)
        .fallback(not_found.layer(around_fallbacks.clone()))
        .method_not_allowed_fallback(method_not_allowed.layer(around_fallbacks));
    let mut public = Router::new()
        // Public, like Microsoft's emulator: the certificate is no secret.
        .route(
            "/_explorer/emulator.pem",
            get(certificate).fallback(method_not_allowed),
        );
    if state.explorer {
        // Container tools wait for this page (public in Microsoft's emulators).
        // (`/_explorer/` arrives as `/_explorer`: trailing slashes are trimmed.)
        for path in ["/_explorer", "/_explorer/index.html"] {
            public = public.route(path, get(explorer::page).fallback(method_not_allowed));
        }
        public = public.route(
            "/_explorer/{file}",
            get(explorer::asset).fallback(method_not_allowed),
        );
    }
    let router = public
        .layer(CatchPanicLayer::custom(panicked))
        .merge(authenticated)
        .with_state(state);
    // Before routing (a layer of the router would run after it).
    let router = QueryIntoPath(router);
    NormalizePathLayer::trim_trailing_slash().layer(router)
}

/// Marks the response to a request whose handler panicked; the envelope
/// logs it and writes the Cosmos body with the request's activity id.
#[derive(Clone)]
struct Panicked(Arc<str>);

fn panicked(cause: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let cause: Arc<str> = if let Some(s) = cause.downcast_ref::<&str>() {
        (*s).into()
    } else if let Some(s) = cause.downcast_ref::<String>() {
        s.as_str().into()
    } else {
        "a panic without a message".into()
    };
    let mut response = internal_error(None).into_response();
    response.extensions_mut().insert(Panicked(cause));
    response
}

fn internal_error(activity_id: Option<&str>) -> ApiError {
    ApiError::new(
        crate::protocol::error::Status::INTERNAL_SERVER_ERROR,
        format!(
            "The emulator failed while serving this request, which may not have been applied. This \
             is a bug in the emulator: please report it with the request and its ActivityId{}.",
            activity_id.map(|id| format!(" {id}")).unwrap_or_default()
        ),
    )
}

/// The certificate to trust, PEM; 404 when serving plain HTTP.
async fn certificate(State(state): State<AppState>) -> Result<Response, ApiError> {
    let pem = state.certificate.clone().ok_or_else(|| {
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

/// Checks the master-key signature of a request for a known route, then
/// lets it through the region, the budget and the fault rules to `next`.
async fn authenticate<N>(state: AppState, request: Request, next: N) -> Response
where
    N: Service<Request, Error = std::convert::Infallible> + Send + 'static,
    N::Response: IntoResponse,
    N::Future: Send,
{
    let verified = {
        let headers = request.headers();
        let header = |name| headers.get(name).and_then(|v| v.to_str().ok());
        // The routing gateway refuses a URL holding a control character.
        let routing = state.gateway == auth::Gateway::Routing;
        let path_refused = routing
            .then(|| auth::check_path(request.uri().path()).err())
            .flatten();
        // Nearly every request carries a master token: told by its first
        // bytes, without looking for the other kinds' words in it.
        let master = header(&AUTHORIZATION)
            .is_some_and(|a| a.starts_with("type%3Dmaster") || a.starts_with("type=master"));
        if let Some(refused) = path_refused {
            Err(refused)
        } else if master {
            verify_master(&state, &request)
        } else if let Some(token) = resource_token::signature(header(&AUTHORIZATION)) {
            let access = Access {
                verb: verb(request.method()),
                query: headers.is_query(),
                path: request.uri().path(),
                options: headers,
            };
            authorization::authorize(&state.account, &access, &token)
        } else if let Some(jwt) = entra_token::token(header(&AUTHORIZATION)) {
            let is_query = headers.flag("x-ms-documentdb-isquery")
                || header(&CONTENT_TYPE).is_some_and(|t| t.starts_with("application/query+json"));
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64);
            let request = (request.method().as_str(), request.uri().path(), is_query);
            entra_token::verify(&state.account.key, &jwt, request, now)
        } else {
            verify_master(&state, &request)
        }
    };
    // A request may relax the account's consistency, never strengthen it.
    let verified = verified.and_then(|()| match request.headers().get(names::CONSISTENCY_LEVEL) {
        Some(level) => state
            .account
            .consistency
            .check_request(level.to_str().unwrap_or_default()),
        None => Ok(()),
    });
    // What may answer instead of the handler, in this order (the guide's
    // faults.md, "The order"): authentication (an unsigned request is a 401
    // whatever else), the region (down, or refusing a write), the budget
    // (`--rate-limit`: a 429 meets no rule), the fault rules (outside
    // durability: a fault after a write answers once the write is kept).
    match verified {
        // Nothing around the operation (one region, no limiter, no rule,
        // no data directory): straight to the handler, without the steps'
        // future (boxed below: it is large, and a point read would pay
        // for its allocation and copy).
        Ok(()) if operations::nothing_around(&state.serving()) => steps::run(next, request).await,
        Ok(()) => Box::pin(around::run(&state, request, next)).await,
        Err(error) => {
            tracing::debug!(%error, "refused an unauthenticated request");
            // Read what the client is sending first: answering before the
            // body is read makes hyper close the connection, and a client
            // that pools it fails its next request.
            let _ = axum::body::to_bytes(request.into_body(), 8 * MAX_ITEM_BYTES).await;
            error.into_response()
        }
    }
}

/// The Cosmos verb an HTTP method is (the routes serve no other methods).
fn verb(method: &axum::http::Method) -> Verb {
    use axum::http::Method;
    match *method {
        Method::HEAD => Verb::Head,
        Method::POST => Verb::Post,
        Method::PUT => Verb::Put,
        Method::PATCH => Verb::Patch,
        Method::DELETE => Verb::Delete,
        _ => Verb::Get,
    }
}

/// Checks a request's master-key signature, read at this endpoint's gateway.
fn verify_master(state: &AppState, request: &Request) -> Result<(), ApiError> {
    let headers = request.headers();
    let header = |name: &axum::http::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    // The address feed is signed for what it resolves, not for its path.
    let resolved = (request.uri().path() == addresses::PATH)
        .then(|| addresses::signed_path(request.uri()))
        .flatten();
    auth::verify_at(
        state.gateway,
        &state.account.key,
        &auth::SignedRequest {
            verb: request.method().as_str(),
            path: resolved.as_deref().unwrap_or(request.uri().path()),
            authorization: header(&AUTHORIZATION),
            x_ms_date: header(&names::DATE),
            date: header(&DATE),
        },
        std::time::SystemTime::now(),
    )
}

/// What every response passes through: the activity id, a panic turned into
/// a logged 500, and the headers every response carries.
async fn envelope<N>(state: AppState, request: Request, next: N) -> Response
where
    N: Service<Request, Error = std::convert::Infallible> + Send + 'static,
    N::Response: IntoResponse,
    N::Future: Send,
{
    let activity_id = request
        .headers()
        .get(names::ACTIVITY_ID)
        .cloned()
        .unwrap_or_else(new_activity_id);
    // Kept for the log of a panic; a clone of each shares its bytes.
    let (method, uri) = (request.method().clone(), request.uri().clone());
    let mut response = steps::run(next, request).await;
    if let Some(Panicked(cause)) = response.extensions().get::<Panicked>().cloned() {
        let id = activity_id.to_str().unwrap_or("");
        let path = uri.path();
        tracing::error!(activity_id = id, %method, path, %cause, "a request handler panicked");
        response = internal_error(Some(id)).into_response();
    }
    common_headers(&state, response.headers_mut(), activity_id);
    if response.status().is_success() && !response.headers().contains_key(names::ALT_CONTENT_PATH) {
        if let Some(owner) = owner_path::of(uri.path()) {
            response
                .headers_mut()
                .insert(names::ALT_CONTENT_PATH, owner);
        }
    }
    response
}

/// A fresh activity id for a request that sent none, written on the stack.
fn new_activity_id() -> HeaderValue {
    let mut buffer = uuid::Uuid::encode_buffer();
    let text = uuid::Uuid::new_v4().hyphenated().encode_lower(&mut buffer);
    HeaderValue::from_str(text).expect("uuid is ascii")
}

/// The session token of a response that names a range's LSN (`lsn`):
/// that LSN, as far as this endpoint's region has applied it (a lagging
/// replica's tokens must not name writes it has not applied).
fn common_headers(state: &AppState, headers: &mut HeaderMap, activity_id: HeaderValue) {
    headers.insert(names::ACTIVITY_ID, activity_id);
    // Read after the handler: a write's token names its own LSN.
    let lsn = headers
        .get(names::LSN)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if let Some(lsn) = lsn {
        let range = headers.range_id().unwrap_or(0);
        let rid = headers.get(names::CONTENT_PATH).map(HeaderValue::as_bytes);
        let token = session::token(&state.serving(), rid, range, lsn);
        let token = HeaderValue::from_bytes(token.as_bytes()).expect("ascii digits");
        headers.insert(names::SESSION_TOKEN, token);
    }
    headers
        .entry(names::REQUEST_CHARGE)
        .or_insert(HeaderValue::from_static("1"));
    headers.insert(names::SCHEMA_VERSION, HeaderValue::from_static("1.14"));
    headers.insert(
        names::SERVICE_VERSION,
        HeaderValue::from_static("version=2.14.0.0"),
    );
    headers.insert(names::GATEWAY_VERSION, HeaderValue::from_static("2.0.0"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::clock::{Clock, ClockMode};
    use crate::data::store::Store;
    use crate::protocol::auth::MasterKey;

    /// The envelope wraps every answer of the authenticated router, its
    /// refusals included (401, and the unauthenticated 404 and 405), and
    /// none of the public routes'.
    #[tokio::test]
    async fn the_envelope_wraps_every_answer_but_the_public_routes() {
        use tower::ServiceExt;
        let key = MasterKey::from_base64(crate::protocol::auth::WELL_KNOWN_KEY).unwrap();
        let addr: std::net::SocketAddr = "127.0.0.1:8081".parse().unwrap();
        let store = Store::new(Clock::new(ClockMode::Manual { start: None }));
        let state = AppState::new(EndpointState {
            account: Arc::new(Account::new(store, key, REGION)),
            scheme: "http",
            certificate: None,
            local_addr: addr,
            explorer: false,
            advertise_host: None,
            gateway: Default::default(),
            region: REGION.into(),
            region_index: 0,
            region_addrs: Arc::from([addr]),
        });
        let app = with_layers(routes::routes(), state);
        for (method, path, status, enveloped) in [
            ("GET", "/dbs", 401, true),
            ("GET", "/nowhere", 404, true),
            ("GET", "/dbs/db/colls/c/docs/a/b", 404, true),
            ("DELETE", "/", 405, true),
            ("PATCH", "/dbs/db/colls/c", 405, true),
            ("GET", "/_explorer/emulator.pem", 404, false),
            ("POST", "/_explorer/emulator.pem", 405, false),
        ] {
            let request = Request::builder()
                .method(method)
                .uri(path)
                .header(names::ACTIVITY_ID, "3f1e6a52-0000-4000-8000-00000000beef")
                .body(axum::body::Body::empty())
                .unwrap();
            let response = app.clone().oneshot(request).await.unwrap();
            assert_eq!(response.status().as_u16(), status, "{method} {path}");
            let headers = response.headers();
            assert_eq!(
                headers.get(names::ACTIVITY_ID).is_some(),
                enveloped,
                "{method} {path}: {headers:?}"
            );
            assert_eq!(
                headers.get(names::GATEWAY_VERSION).is_some(),
                enveloped,
                "{method} {path}: {headers:?}"
            );
            assert_eq!(
                headers["content-type"], "application/json",
                "{method} {path}"
            );
        }
    }

    /// A handler that panics (a test-only route, never a real bug) gets a
    /// Cosmos 500 with the request's activity id, the connection stays
    /// usable, and the server goes on serving.
    #[tokio::test]
    async fn a_panicking_handler_answers_500_and_the_server_lives_on() {
        let key = MasterKey::from_base64(crate::protocol::auth::WELL_KNOWN_KEY).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let store = Store::new(Clock::new(ClockMode::Manual { start: None }));
        let state = AppState::new(EndpointState {
            account: Arc::new(Account::new(store, key.clone(), REGION)),
            scheme: "http",
            certificate: None,
            local_addr: addr,
            explorer: true,
            advertise_host: None,
            gateway: Default::default(),
            region: REGION.into(),
            region_index: 0,
            region_addrs: Arc::from([addr]),
        });
        let routes = routes::routes().route(
            "/_test/panic",
            get(|| async {
                if true {
                    panic!("deliberately, for the test");
                }
            }),
        );
        let service = axum::ServiceExt::<Request>::into_make_service(with_layers(routes, state));
        tokio::spawn(async move { axum::serve(listener, service).await });

        // One connection for every request: a panic must not close it.
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(1)
            .build()
            .unwrap();
        let send = |path: &'static str| {
            let date = httpdate::fmt_http_date(std::time::SystemTime::now());
            let resource = auth::signed_resource(path);
            let payload = auth::payload(
                "GET",
                &resource.resource_type,
                &resource.links[0],
                &date,
                "",
            );
            client
                .get(format!("http://{addr}{path}"))
                .header("authorization", auth::authorization_header(&key, &payload))
                .header("x-ms-date", date)
                .header("x-ms-activity-id", "3f1e6a52-0000-4000-8000-00000000beef")
                .send()
        };
        for _ in 0..3 {
            let response = send("/_test/panic").await.expect("an answer, not a reset");
            assert_eq!(response.status(), 500);
            assert_eq!(
                response.headers()["x-ms-activity-id"],
                "3f1e6a52-0000-4000-8000-00000000beef"
            );
            assert_eq!(response.headers()["content-type"], "application/json");
            let body: serde_json::Value = response.json().await.unwrap();
            assert_eq!(body["code"], "InternalServerError");
            let message = body["message"].as_str().unwrap();
            assert!(
                message.contains("3f1e6a52-0000-4000-8000-00000000beef"),
                "{message}"
            );
        }
        let account = send("/").await.unwrap();
        assert_eq!(account.status(), 200, "the server still serves");
    }
}
