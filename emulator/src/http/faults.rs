//! Applying the fault rules (`faults/`, `docs/src/faults.md`), the last
//! step of `authenticate`: after the signature is checked (an unsigned
//! request is still a 401), before the durability layer (a fault `after` a
//! write answers once it is kept). Control requests never match. With no
//! rule it costs one atomic load.
//!
//! A matching rule answers as the service does: its status, `x-ms-substatus`,
//! the `{"code", "message"}` body, `x-ms-retry-after-ms` (always on a 429),
//! and the envelope's activity id, session token and charge; or it delays
//! the real answer, or breaks the connection (`transport/breakable.rs`).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::operation::{classify, Classified, Operation};
use super::request::CosmosHeaders;
use super::{names, AppState};
use crate::error::ApiError;
use crate::faults::{Connection, Rule, Target, When};
use crate::store::MAX_ITEM_BYTES;
use crate::transport::{Break, ConnectionControl};

/// Answers `request` as the first rule that applies to it says, or lets it
/// through. Called by `authenticate` once the request is verified, not a
/// layer of its own: a layer costs every request about 4% of a point
/// read's instructions, the empty check nothing measurable.
pub async fn inject(state: &AppState, request: Request, next: Next) -> Response {
    if state.faults.is_empty() {
        return next.run(request).await;
    }
    let rule = {
        let headers = request.headers();
        let classified = classify(request.method(), request.uri().path(), headers);
        if classified.operation == Operation::Control {
            None
        } else {
            let target = Target {
                region: &state.region,
                operation: classified.operation.name(),
                database: classified.database.as_deref(),
                container: classified.container.as_deref(),
                partition_key: headers.partition_key(),
            };
            let now = state.store.clock.now_millis();
            state
                .faults
                .hit(&target, now, || range_of(state, &classified, headers))
        }
    };
    match rule {
        None => next.run(request).await,
        Some(rule) => apply(rule, request, next).await,
    }
}

/// The partition key range a request addresses: the one its header names
/// (a feed or query sent to one range), else the one that owns its
/// partition key (a point operation), else none.
fn range_of(state: &AppState, classified: &Classified<'_>, headers: &HeaderMap) -> Option<String> {
    if let Some(range) = headers.text(names::PARTITION_KEY_RANGE_ID) {
        // Some SDKs send `{collection rid},{range id}`.
        return range.rsplit(',').next().map(|r| r.trim().to_string());
    }
    let key = headers.partition_key()?;
    let components = match serde_json::from_str(key).ok()? {
        serde_json::Value::Array(components) => components,
        single => vec![single],
    };
    let key = serde_json::Value::Array(components).to_string();
    let (database, container) = (
        classified.database.as_deref()?,
        classified.container.as_deref()?,
    );
    state
        .store
        .with_container(database, container, |c, _| Ok(c.range_of(&key)))
        .ok()
        .map(|range| range.to_string())
}

async fn apply(rule: Arc<Rule>, request: Request, next: Next) -> Response {
    let respond = &rule.respond;
    let faulted = respond.status.is_some() || respond.connection.is_some();
    let delay = respond.delay_ms.map(Duration::from_millis);
    let control = request.extensions().get::<ConnectionControl>().cloned();
    match rule.when {
        When::Before => {
            if let Some(delay) = delay {
                tokio::time::sleep(delay).await;
            }
            if !faulted {
                return next.run(request).await;
            }
            // Read what the client sent: a connection closed with unread
            // bytes would reset rather than close, and an answer before the
            // body is read makes hyper close a connection the rule keeps.
            let _ = axum::body::to_bytes(request.into_body(), 8 * MAX_ITEM_BYTES).await;
            answer(&rule, None, control)
        }
        When::After => {
            let real = next.run(request).await;
            if let Some(delay) = delay {
                tokio::time::sleep(delay).await;
            }
            if !faulted {
                return real;
            }
            answer(&rule, Some(real), control)
        }
    }
}

/// The rule's answer; `real` is the operation's own (a fault `after` it).
fn answer(rule: &Rule, real: Option<Response>, control: Option<ConnectionControl>) -> Response {
    let respond = &rule.respond;
    if let Some(connection) = respond.connection {
        let Some(control) = control else {
            return ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!(
                    "Fault rule \"{}\" asks to break the connection, which this server cannot do.",
                    rule.id
                ),
            )
            .into_response();
        };
        control.break_with(match connection {
            Connection::Close => Break::Close,
            Connection::Reset => Break::Reset,
            Connection::Hang => Break::Hang,
        });
        // Never reaches the client: the connection breaks as hyper writes it.
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    let status = respond
        .status
        .and_then(|s| StatusCode::from_u16(s).ok())
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let outcome = if real.is_some() {
        "the operation ran and its changes were kept"
    } else {
        "the operation was not run"
    };
    let mut error = ApiError::new(
        status,
        format!(
            "Injected fault: fault rule \"{}\" (POST /_emulator/faults) answered this request; {outcome}.",
            rule.id
        ),
    );
    if let Some(substatus) = respond.sub_status {
        error = error.with_substatus(substatus);
    }
    let mut response = error.into_response();
    let headers = response.headers_mut();
    if let Some(wait) = respond.retry_after_ms {
        headers.insert("x-ms-retry-after-ms", HeaderValue::from(wait));
    }
    if let Some(real) = real {
        // What the operation charged, and the range its session token names.
        for name in [names::REQUEST_CHARGE, names::PARTITION_KEY_RANGE_ID] {
            if let Some(value) = real.headers().get(&name) {
                headers.insert(name, value.clone());
            }
        }
    }
    response
}
