//! The two steps a routed request takes before its handler, the envelope
//! and authentication (`mod.rs`), as one tower service each: what
//! `middleware::from_fn_with_state` and `CatchPanicLayer` did, without
//! their boxes. `from_fn` boxed the rest of the stack and its future for
//! every request, and each layer the router wrapped around the routes
//! cloned the whole chain below it again: a tenth of a point read.

use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use futures_util::future::{CatchUnwind, Map};
use futures_util::FutureExt;
use tower::{Layer, Service, ServiceExt};

use super::AppState;

/// Which step a [`Step`] runs.
#[derive(Clone, Copy)]
pub(super) enum Which {
    /// `envelope`: the activity id, the common headers, a panic below
    /// logged and answered with the request's activity id.
    Envelope,
    /// `authenticate`: the signature, then the steps around the operation.
    Authenticate,
}

/// The layer of one step, with the state it reads.
#[derive(Clone)]
pub(super) struct StepLayer {
    pub state: AppState,
    pub which: Which,
}

impl<S> Layer<S> for StepLayer {
    type Service = Step<S>;

    fn layer(&self, next: S) -> Step<S> {
        Step {
            state: self.state.clone(),
            which: self.which,
            next,
        }
    }
}

/// One step, then `next`: the rest of the stack, down to the handler.
#[derive(Clone)]
pub(super) struct Step<S> {
    state: AppState,
    which: Which,
    next: S,
}

impl<S> Service<Request> for Step<S>
where
    S: Service<Request, Error = Infallible> + Clone + Send + 'static,
    S::Response: IntoResponse,
    S::Future: Send,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Caught;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Readiness is the next service's, checked when the step calls it.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Caught {
        let (state, next) = (self.state.clone(), self.next.clone());
        let step: StepFuture = match self.which {
            Which::Envelope => Box::pin(super::envelope(state, request, next)),
            Which::Authenticate => Box::pin(super::authenticate(state, request, next)),
        };
        AssertUnwindSafe(step).catch_unwind().map(answered)
    }
}

/// Runs the rest of a request's way: what axum's `Next::run` does.
pub(super) async fn run<S>(next: S, request: Request) -> Response
where
    S: Service<Request, Error = Infallible>,
    S::Response: IntoResponse,
{
    match next.oneshot(request).await {
        Ok(response) => response.into_response(),
        Err(never) => match never {},
    }
}

/// A step's way to its answer.
type StepFuture = Pin<Box<dyn Future<Output = Response> + Send>>;

/// A step's answer; a panic while computing it is answered as a 500 marked
/// [`super::Panicked`], as `CatchPanicLayer::custom(panicked)` did (the
/// envelope then logs it with the request's activity id).
pub(super) type Caught = Map<
    CatchUnwind<AssertUnwindSafe<StepFuture>>,
    fn(std::thread::Result<Response>) -> Result<Response, Infallible>,
>;

fn answered(result: std::thread::Result<Response>) -> Result<Response, Infallible> {
    Ok(result.unwrap_or_else(super::panicked))
}
