//! The throttle on the wire (`--rate-limit`; the rules are `throttle.rs`):
//! which partitions a request spends, the service's 429 when they are
//! spent, and the charge of what was let through. Control requests, the
//! account read and the public routes are never throttled; metadata
//! requests spend the account's metadata budget.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use percent_encoding::percent_decode_str;

use super::names;
use super::request::CosmosHeaders;
use super::AppState;
use crate::error::ApiError;
use crate::store::MAX_ITEM_BYTES;
use crate::throttle::{Admission, PartitionId, Priority};

/// Substatus of a request refused because its partition spent its RU/s.
const RU_BUDGET_EXCEEDED: u32 = 3200;

/// What a request spends.
enum Spends {
    /// Never throttled: control routes and the account read.
    Nothing,
    /// The account's metadata budget.
    Metadata,
    /// The partitions of this container.
    Container { db: String, coll: String },
}

fn spends(method: &Method, path: &str) -> Spends {
    if path == "/" || path.starts_with("/_") {
        return Spends::Nothing;
    }
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let decode = |s: &str| percent_decode_str(s).decode_utf8_lossy().into_owned();
    match segments.as_slice() {
        ["dbs", db, "colls", coll, "docs", ..] | ["dbs", db, "colls", coll, "operations", ..] => {
            Spends::Container {
                db: decode(db),
                coll: decode(coll),
            }
        }
        // A stored procedure's execution (its definition's CRUD is metadata).
        ["dbs", db, "colls", coll, "sprocs", _] if method == Method::POST => Spends::Container {
            db: decode(db),
            coll: decode(coll),
        },
        _ => Spends::Metadata,
    }
}

/// Admits, throttles or lets through a request, then charges it.
pub async fn throttle(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let Some(limiter) = state.limiter.as_deref() else {
        return next.run(request).await;
    };
    let now_ms = state.store.clock.now_millis();
    let admitted = match spends(request.method(), request.uri().path()) {
        Spends::Nothing => return next.run(request).await,
        Spends::Metadata => limiter.admit_metadata(now_ms).await,
        Spends::Container { db, coll } => {
            let headers = request.headers();
            let range = super::query::addressed_range(headers);
            let budget = state
                .store
                .partition_budget(&db, &coll, headers.partition_key(), range);
            // A container that is not there: the handler says so, uncharged.
            let Ok(budget) = budget else {
                return next.run(request).await;
            };
            let priority = match headers.text(names::PRIORITY_LEVEL) {
                Some(level) if level.trim().eq_ignore_ascii_case("low") => Priority::Low,
                _ => Priority::High,
            };
            let mut partitions: Vec<PartitionId> = budget
                .ranges
                .iter()
                .map(|range| (budget.container.clone(), *range))
                .collect();
            limiter
                .admit(&mut partitions, budget.ru_per_partition, now_ms, priority)
                .await
        }
    };
    match admitted {
        Ok(admission) => charged(admission, next.run(request).await),
        Err(retry_after_ms) => {
            // Read what the client is sending first, as for any refusal
            // before the body: else hyper closes the connection.
            let _ = axum::body::to_bytes(request.into_body(), 8 * MAX_ITEM_BYTES).await;
            too_many_requests(retry_after_ms)
        }
    }
}

/// Charges the admitted request what its response says it cost.
fn charged(admission: Admission, response: Response) -> Response {
    let ru = response
        .headers()
        .get(names::REQUEST_CHARGE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0);
    admission.spend(ru);
    response
}

/// The service's 429: no change made, nothing charged, and always the
/// wait until the partition's budget refills.
pub fn too_many_requests(retry_after_ms: u64) -> Response {
    let mut response = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "Message: {\"Errors\":[\"Request rate is large. More Request Units may be needed, so no \
         changes were made. Please retry this request later. Learn more: \
         http://aka.ms/cosmosdb-error-429\"]}",
    )
    .with_substatus(RU_BUDGET_EXCEEDED)
    .into_response();
    let headers = response.headers_mut();
    headers.insert(names::RETRY_AFTER_MS, HeaderValue::from(retry_after_ms));
    headers.insert(names::REQUEST_CHARGE, HeaderValue::from_static("0"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_each_path_spends() {
        let post = Method::POST;
        let get = Method::GET;
        let kind = |m: &Method, p: &str| match spends(m, p) {
            Spends::Nothing => "nothing".to_string(),
            Spends::Metadata => "metadata".to_string(),
            Spends::Container { db, coll } => format!("{db}/{coll}"),
        };
        assert_eq!(kind(&get, "/"), "nothing");
        assert_eq!(kind(&post, "/_emulator/clock"), "nothing");
        assert_eq!(kind(&get, "/dbs/d/colls/c/docs/x"), "d/c");
        assert_eq!(kind(&post, "/dbs/d/colls/my%20c/docs"), "d/my c");
        assert_eq!(kind(&post, "/dbs/d/colls/c/sprocs/s"), "d/c");
        assert_eq!(kind(&get, "/dbs/d/colls/c/sprocs/s"), "metadata");
        assert_eq!(
            kind(&post, "/dbs/d/colls/c/operations/partitionkeydelete"),
            "d/c"
        );
        assert_eq!(kind(&get, "/dbs/d/colls/c/pkranges"), "metadata");
        assert_eq!(kind(&post, "/dbs"), "metadata");
        assert_eq!(kind(&get, "/offers"), "metadata");
    }
}
