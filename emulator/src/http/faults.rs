//! Applying the fault rules (`faults/`, `docs/src/faults.md`), the last
//! step of `authenticate`: after the signature is checked (an unsigned
//! request is still a 401), the region's answer (`http/regions.rs`) and
//! the budget (`http/throttling.rs`: a throttled request meets no rule),
//! before the durability layer (a fault `after` a write answers once it is
//! kept). Control requests never match. With no rule it costs one atomic
//! load.
//!
//! A matching rule answers as the service does: its status, `x-ms-substatus`,
//! the `{"code", "message"}` body, `x-ms-retry-after-ms` (always on a 429),
//! the envelope's activity id and session token, and the charge of the
//! failure it imitates (`request_units.rs`, `ChargeModel::failure`); or it
//! delays the real answer, or breaks the connection
//! (`transport/breakable.rs`). A rule `after` the operation answers only
//! when the operation ran and succeeded ([`ran`]); otherwise the request
//! gets its own answer and the rule's hit is given back.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::operation::{classify, Classified, Operation};
use super::request::CosmosHeaders;
use super::response::charge_value;
use super::{names, AppState};
use crate::error::{ApiError, Status};
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
        Some(rule) => apply(state, rule, request, next).await,
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

async fn apply(state: &AppState, rule: Arc<Rule>, request: Request, next: Next) -> Response {
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
            answer(state, &rule, None, control)
        }
        When::After => {
            let real = next.run(request).await;
            if !ran(real.status()) {
                // Refused or failed: nothing ran for the rule to answer
                // after, and no hit.
                state.faults.give_back(&rule);
                return real;
            }
            if let Some(delay) = delay {
                tokio::time::sleep(delay).await;
            }
            if !faulted {
                return real;
            }
            answer(state, &rule, Some(real), control)
        }
    }
}

/// Whether an operation answered `status` ran and succeeded, so that a
/// rule `after` it may answer instead: a 2xx (its changes are committed),
/// or a change feed's 304 (it read, and found nothing new). Not a 207: a
/// transactional batch that answers it committed nothing, and a bulk
/// whose operation failed keeps its own per-operation answer.
pub fn ran(status: StatusCode) -> bool {
    (status.is_success() && status != StatusCode::MULTI_STATUS)
        || status == StatusCode::NOT_MODIFIED
}

/// The rule's answer; `real` is the operation's own (a fault `after` it).
fn answer(
    state: &AppState,
    rule: &Rule,
    real: Option<Response>,
    control: Option<ConnectionControl>,
) -> Response {
    let respond = &rule.respond;
    // After the operation: what it charged (the service charges what ran),
    // and the range its session token names. Before: the failure imitated.
    let mut kept = HeaderMap::new();
    match &real {
        Some(real) => {
            for name in [names::REQUEST_CHARGE, names::PARTITION_KEY_RANGE_ID] {
                if let Some(value) = real.headers().get(&name) {
                    kept.insert(name, value.clone());
                }
            }
        }
        None => {
            let charge = state.charges.failure(respond.status);
            kept.insert(names::REQUEST_CHARGE, charge_value(charge));
        }
    }
    if let Some(connection) = respond.connection {
        let Some(control) = control else {
            return ApiError::new(
                Status::INTERNAL_SERVER_ERROR,
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
        // Never reaches the client: the connection breaks as hyper writes
        // it. Its charge is what the budget spends.
        let mut response = StatusCode::SERVICE_UNAVAILABLE.into_response();
        response.headers_mut().extend(kept);
        return response;
    }
    let status = respond
        .status
        .and_then(Status::from_u16)
        .unwrap_or(Status::INTERNAL_SERVER_ERROR);
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
    headers.extend(kept);
    response
}
