//! The throttle on the wire (`--rate-limit`; the rules are `throttle.rs`):
//! which partitions a request spends, the service's 429 when they are
//! spent, and the charge of what was let through. Control requests, the
//! account read and the public routes are never throttled; metadata
//! requests spend the account's metadata budget.
//!
//! A step of `authenticate`, after the region's answer (`http/regions.rs`)
//! and before the fault rules (`http/faults.rs`): a request the budget
//! refuses meets no rule (it did not run, and is no rule's hit), and what
//! a rule answers is spent as it is charged (`docs/src/faults.md`).

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::names;
use super::operation::{self, Operation};
use super::request::CosmosHeaders;
use super::AppState;
use crate::error::{ApiError, Status};
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

fn spends(request: &Request) -> Spends {
    let classified = operation::classify(request.method(), request.uri().path(), request.headers());
    match (
        classified.operation,
        classified.database,
        classified.container,
    ) {
        (Operation::Control | Operation::Account, _, _) => Spends::Nothing,
        (Operation::Metadata, _, _) => Spends::Metadata,
        (_, Some(db), Some(coll)) => Spends::Container {
            db: db.into_owned(),
            coll: coll.into_owned(),
        },
        _ => Spends::Metadata,
    }
}

/// Admits or throttles a request; an admitted one goes on to the fault
/// rules and the handler, then is charged what its answer says it cost.
pub async fn throttle(state: &AppState, request: Request, next: Next) -> Response {
    let Some(limiter) = state.limiter.as_deref() else {
        return super::faults::inject(state, request, next).await;
    };
    let now_ms = state.store.clock.now_millis();
    let admitted = match spends(&request) {
        Spends::Nothing => return super::faults::inject(state, request, next).await,
        Spends::Metadata => limiter.admit_metadata(now_ms).await,
        Spends::Container { db, coll } => {
            let headers = request.headers();
            let range = headers.range_id();
            let budget = state
                .store
                .partition_budget(&db, &coll, headers.partition_key(), range);
            // A container that is not there: the handler says so, uncharged.
            let Ok(budget) = budget else {
                return super::faults::inject(state, request, next).await;
            };
            let priority = match headers.text(names::PRIORITY_LEVEL) {
                Some(level) if level.trim().eq_ignore_ascii_case("low") => Priority::Low,
                _ => Priority::High,
            };
            let mut partitions: Vec<PartitionId> = budget
                .ranges
                .iter()
                .map(|range| (budget.owner.clone(), *range))
                .collect();
            limiter
                .admit(&mut partitions, budget.ru_per_partition, now_ms, priority)
                .await
        }
    };
    match admitted {
        Ok(admission) => charged(
            admission,
            Box::pin(super::faults::inject(state, request, next)).await,
        ),
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
        Status::TOO_MANY_REQUESTS,
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
    use axum::body::Body;
    use axum::http::Method;

    #[test]
    fn what_each_path_spends() {
        let kind = |method: Method, path: &str| {
            let request = Request::builder()
                .method(method)
                .uri(path)
                .body(Body::empty())
                .unwrap();
            match spends(&request) {
                Spends::Nothing => "nothing".to_string(),
                Spends::Metadata => "metadata".to_string(),
                Spends::Container { db, coll } => format!("{db}/{coll}"),
            }
        };
        assert_eq!(kind(Method::GET, "/"), "nothing");
        assert_eq!(kind(Method::POST, "/_emulator/clock"), "nothing");
        assert_eq!(kind(Method::GET, "/dbs/d/colls/c/docs/x"), "d/c");
        assert_eq!(kind(Method::POST, "/dbs/d/colls/my%20c/docs"), "d/my c");
        assert_eq!(kind(Method::POST, "/dbs/d/colls/c/sprocs/s"), "d/c");
        assert_eq!(kind(Method::GET, "/dbs/d/colls/c/sprocs/s"), "metadata");
        assert_eq!(
            kind(Method::POST, "/dbs/d/colls/c/operations/partitionkeydelete"),
            "d/c"
        );
        assert_eq!(kind(Method::GET, "/dbs/d/colls/c/pkranges"), "metadata");
        assert_eq!(kind(Method::POST, "/dbs"), "metadata");
        assert_eq!(kind(Method::GET, "/offers"), "metadata");
    }
}
