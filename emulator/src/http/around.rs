//! The steps around every operation (`operations/around.rs`: the region,
//! the budget, the fault rules, durability) over HTTP: a routed request is
//! the [`Call`] they wrap, a response the [`Reply`] they read, and the
//! connection (`net/transport/breakable.rs`) what a rule or an outage breaks.

use axum::extract::Request;
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Response};
use tower::Service;

use super::operation::classify;
use super::request::CosmosHeaders;
use super::response::from_operation;
use super::{names, AppState};
use crate::data::store::MAX_ITEM_BYTES;
use crate::net::transport::ConnectionControl;
use crate::operations::{self, Breakable, Call, Reply, Target};

/// Runs a verified request through the steps and its handler (when one
/// applies: `authenticate` sends the others straight to their handler).
pub async fn run<N>(state: &AppState, request: Request, next: N) -> Response
where
    N: Service<Request, Error = std::convert::Infallible> + Send,
    N::Response: IntoResponse,
    N::Future: Send,
{
    let serving = state.serving();
    let connection = request.extensions().get::<ConnectionControl>().cloned();
    let breakable = connection.as_ref().map(|c| c as &dyn Breakable);
    operations::around(&serving, Routed { request, next }, breakable).await
}

/// A request on its way to its handler, `next`.
struct Routed<N> {
    request: Request,
    next: N,
}

impl<N> Call<Response> for Routed<N>
where
    N: Service<Request, Error = std::convert::Infallible> + Send,
    N::Response: IntoResponse,
    N::Future: Send,
{
    fn target(&self) -> Target<'_> {
        let headers = self.request.headers();
        let classified = classify(self.request.method(), self.request.uri().path(), headers);
        Target {
            kind: classified.kind,
            database: classified.database,
            container: classified.container,
            options: headers,
        }
    }

    async fn run(self) -> Response {
        super::steps::run(self.next, self.request).await
    }

    async fn refuse(self, answer: operations::Response) -> Response {
        // Read what the client is sending first: answering before the body
        // is read makes hyper close the connection, and a client that
        // pools it fails its next request.
        let _ = axum::body::to_bytes(self.request.into_body(), 8 * MAX_ITEM_BYTES).await;
        from_operation(Ok(answer), &Uri::from_static("/"))
    }
}

impl Reply for Response {
    fn status(&self) -> u16 {
        self.status().as_u16()
    }

    fn charge(&self) -> f64 {
        self.headers()
            .text(names::REQUEST_CHARGE)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    }

    fn range(&self) -> Option<u32> {
        self.headers().range_id()
    }

    fn container_lsn(&self) -> Option<(&[u8], u64)> {
        let headers: &HeaderMap = self.headers();
        let lsn = headers.text(names::LSN)?.parse().ok()?;
        Some((headers.get(names::CONTENT_PATH)?.as_bytes(), lsn))
    }

    fn from_response(response: operations::Response) -> Self {
        from_operation(Ok(response), &Uri::from_static("/"))
    }
}
