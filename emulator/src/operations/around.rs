//! What runs around every operation, whatever the protocol, once, in this
//! order (the guide's faults.md, "The order"): the region's answer (down,
//! or refusing a write), the budget (`--rate-limit`: a 429 meets no rule),
//! the fault rules, then the operation, kept before it is answered with
//! `--data-dir`; after it, what a write leaves for a lagging region, and
//! the charge spent. Authentication comes first, at each front door (each
//! protocol signs its own way), and control requests pass every step but
//! durability.
//!
//! A front door hands its request over as a [`Call`] and reads answers
//! through [`Reply`], in its own types: the steps cost an HTTP answer no
//! conversion, and with one region, no limiter and no rule they cost one
//! atomic load.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::kind::OperationKind;
use super::options::{RequestOption, RequestOptions};
use super::response::Response;
use super::Serving;
use crate::account::faults::{Connection, Rule, Target as FaultTarget, When};
use crate::account::regions::Outage;
use crate::account::throttle::{PartitionId, Priority};
use crate::net::transport::{Break, ConnectionControl};
use crate::protocol::error::{ApiError, Status};
use crate::protocol::request_units::Charge;

/// Substatus of a request refused because its partition spent its RU/s.
const RU_BUDGET_EXCEEDED: u32 = 3200;
/// Substatus of a write sent to a region that takes none.
const WRITE_FORBIDDEN: u32 = 3;
/// Substatus of a request to a region the account no longer has.
const DATABASE_ACCOUNT_NOT_FOUND: u32 = 1008;

/// What the steps know of a request: its kind, the names its address
/// holds, and its options (partition key, range, priority).
pub struct Target<'a> {
    pub kind: OperationKind,
    /// The database and container its address names, decoded.
    pub database: Option<Cow<'a, str>>,
    pub container: Option<Cow<'a, str>>,
    pub options: &'a dyn RequestOptions,
}

/// What the steps read of an answer, in the front door's own type.
pub trait Reply: Sized + Send {
    fn status(&self) -> u16;
    /// What it cost, in RU (0 when it names no charge).
    fn charge(&self) -> f64;
    /// The partition key range it names.
    fn range(&self) -> Option<u32>;
    /// The container RID and the range's LSN it names (a write's own).
    fn container_lsn(&self) -> Option<(&[u8], u64)>;
    /// An answer of the steps' own (a refusal, a fault rule's), in the
    /// front door's type.
    fn from_response(response: Response) -> Self;
}

/// The operation the steps wrap, as the front door runs it.
pub trait Call<R>: Send {
    /// What the steps know of it (read before it runs).
    fn target(&self) -> Target<'_>;
    /// Runs the operation.
    fn run(self) -> impl Future<Output = R> + Send;
    /// Answers `answer` without running it. (HTTP reads the body the
    /// client is sending first: a connection answered before its body is
    /// read is closed, and a client that pools it fails its next request.)
    fn refuse(self, answer: Response) -> impl Future<Output = R> + Send;
}

/// The connection a request came on, which a fault rule or an outage may
/// break: a front door's [`ConnectionControl`] (`net/transport/breakable.rs`),
/// which both HTTP's and Direct mode's connections carry.
pub trait Breakable: Send + Sync {
    fn break_with(&self, how: Connection);
}

impl Breakable for ConnectionControl {
    fn break_with(&self, how: Connection) {
        ConnectionControl::break_with(
            self,
            match how {
                Connection::Close => Break::Close,
                Connection::Reset => Break::Reset,
                Connection::Hang => Break::Hang,
            },
        );
    }
}

/// Whether no step has anything to do for `serving`'s requests: one
/// region, no limiter, no fault rule, no data directory. A front door may
/// then run its operations directly.
pub fn nothing_around(serving: &Serving<'_>) -> bool {
    let account = serving.account;
    account.faults.is_empty()
        && account.limiter.is_none()
        && account.topology.names().len() == 1
        && account.store.journal().is_none()
}

/// Runs `call` with the steps around it. `connection`: the connection to
/// break when a rule or an outage says so (`None`: this front door
/// cannot, and the rule answers 500 saying so).
pub async fn around<R: Reply, C: Call<R>>(
    serving: &Serving<'_>,
    call: C,
    connection: Option<&dyn Breakable>,
) -> R {
    let account = serving.account;
    let quiet = account.faults.is_empty() && account.limiter.is_none();
    let single = account.topology.names().len() == 1;
    if quiet && single {
        return kept(serving, call).await;
    }
    let kind = call.target().kind;
    if kind == OperationKind::Control {
        return kept(serving, call).await;
    }
    let now = account.clock().now_millis();
    let write = kind.is_write();
    if !single {
        if let Some(outage) = account.topology.outage(serving.region, now) {
            return down(serving, outage, call, connection).await;
        }
        if write && !account.topology.takes_writes(serving.region) {
            return call.refuse(write_forbidden(serving).into()).await;
        }
    }
    let reply = throttled(serving, call, connection).await;
    if write && !single {
        // What a lagging replica will have applied, and when; for a write
        // to a container, the LSN its range reached (its session tokens
        // name that one).
        let store_lsn = account.store.session_lsn();
        account.topology.record(now, store_lsn);
        if let Some((rid, lsn)) = reply.container_lsn() {
            let range = reply.range().unwrap_or(0);
            account.topology.record_range(rid, range, store_lsn, lsn);
        }
    }
    reply
}

/// The operation, answered once what it changed is kept (`--data-dir`: its
/// commit written and, with `--sync always`, synced); a commit that could
/// not be written is answered 503, never a success the disk does not back.
async fn kept<R: Reply, C: Call<R>>(serving: &Serving<'_>, call: C) -> R {
    let store = &serving.account.store;
    let Some(journal) = store.journal() else {
        return call.run().await;
    };
    let (reply, committed) = journal.track(call.run()).await;
    match committed {
        crate::data::persist::Committed::Nothing => reply,
        crate::data::persist::Committed::Through(_) => {
            if store.compaction_due() {
                let store = Arc::clone(store);
                tokio::task::spawn_blocking(move || store.compact_if_due());
            }
            reply
        }
        crate::data::persist::Committed::Failed => {
            let failed = format!("a write to {} failed", journal.dir().path().display());
            R::from_response(crate::data::store::unavailable(&failed).into())
        }
    }
}

/// What a region that is down answers.
async fn down<R: Reply, C: Call<R>>(
    serving: &Serving<'_>,
    outage: Outage,
    call: C,
    connection: Option<&dyn Breakable>,
) -> R {
    let region = serving.account.topology.name(serving.region);
    let unavailable = || {
        Response::from(ApiError::new(
            Status::SERVICE_UNAVAILABLE,
            format!(
                "Service is currently unavailable: region '{region}' is down (POST \
                 /_emulator/regions/.../down)."
            ),
        ))
    };
    let broken = |how| match connection {
        Some(connection) => {
            connection.break_with(how);
            // Never reaches the client: the connection breaks as it is written.
            Response::empty(Status::SERVICE_UNAVAILABLE, Charge::ZERO)
        }
        None => unavailable(),
    };
    let answer = match outage {
        // Connections made before the listener closed: reset.
        Outage::Refuse | Outage::Reset => broken(Connection::Reset),
        Outage::Hang => broken(Connection::Hang),
        Outage::Unavailable => unavailable(),
        Outage::Removed => ApiError::new(
            Status::FORBIDDEN,
            format!(
                "Database Account not found in region '{region}' (taken down with \
                 POST /_emulator/regions/.../down)."
            ),
        )
        .with_substatus(DATABASE_ACCOUNT_NOT_FOUND)
        .into(),
    };
    call.refuse(answer).await
}

/// The 403/3 of a write sent to a region that takes none.
fn write_forbidden(serving: &Serving<'_>) -> ApiError {
    let topology = &serving.account.topology;
    ApiError::new(
        Status::FORBIDDEN,
        format!(
            "The requested operation cannot be performed at this region: '{}' is a read \
             region of this account; writes go to '{}' (the account document's \
             writableLocations).",
            topology.name(serving.region),
            topology.name(topology.write_region())
        ),
    )
    .with_substatus(WRITE_FORBIDDEN)
}

/// Admits or throttles a request (`--rate-limit`); an admitted one goes on
/// to the fault rules and the operation, then is charged what its answer
/// says it cost. Control requests and the account read spend nothing;
/// metadata requests spend the account's metadata budget.
async fn throttled<R: Reply, C: Call<R>>(
    serving: &Serving<'_>,
    call: C,
    connection: Option<&dyn Breakable>,
) -> R {
    let account = serving.account;
    let Some(limiter) = account.limiter.as_ref() else {
        return faulted(serving, call, connection).await;
    };
    let now_ms = account.clock().now_millis();
    let admitted = {
        let target = call.target();
        match (
            target.kind,
            target.database.as_deref(),
            target.container.as_deref(),
        ) {
            (OperationKind::Account, _, _) => None,
            (OperationKind::Metadata { .. }, _, _) | (_, None, _) | (_, _, None) => {
                Some(limiter.admit_metadata(now_ms).await)
            }
            (_, Some(db), Some(coll)) => {
                let options = target.options;
                let budget = account.store.partition_budget(
                    db,
                    coll,
                    options.partition_key(),
                    options.range_id(),
                );
                // A container that is not there: the operation says so, uncharged.
                match budget {
                    Err(_) => None,
                    Ok(budget) => {
                        let priority = match options.get(RequestOption::PriorityLevel) {
                            Some(level) if level.trim().eq_ignore_ascii_case("low") => {
                                Priority::Low
                            }
                            _ => Priority::High,
                        };
                        let mut partitions: Vec<PartitionId> = budget
                            .ranges
                            .iter()
                            .map(|range| (budget.owner.clone(), *range))
                            .collect();
                        let admitted = limiter
                            .admit(&mut partitions, budget.ru_per_partition, now_ms, priority)
                            .await;
                        Some(admitted)
                    }
                }
            }
        }
    };
    match admitted {
        None => faulted(serving, call, connection).await,
        Some(Ok(admission)) => {
            let reply = Box::pin(faulted(serving, call, connection)).await;
            admission.spend(reply.charge());
            reply
        }
        Some(Err(retry_after_ms)) => call.refuse(too_many_requests(retry_after_ms)).await,
    }
}

/// The service's 429: no change made, nothing charged, and always the
/// wait until the partition's budget refills.
pub fn too_many_requests(retry_after_ms: u64) -> Response {
    let mut response = Response::from(
        ApiError::new(
            Status::TOO_MANY_REQUESTS,
            "Message: {\"Errors\":[\"Request rate is large. More Request Units may be needed, so \
             no changes were made. Please retry this request later. Learn more: \
             http://aka.ms/cosmosdb-error-429\"]}",
        )
        .with_substatus(RU_BUDGET_EXCEEDED),
    );
    response.headers.retry_after_ms = Some(retry_after_ms);
    response.headers.charge = Some(Charge::ZERO);
    response
}

/// Applies the fault rules (`faults/`, the guide's faults.md): the first
/// rule that matches answers as the service would, delays the real
/// answer, or breaks the connection. A rule `after` the operation answers
/// only when the operation ran and succeeded ([`ran`]); otherwise the
/// request gets its own answer and the rule's hit is given back.
async fn faulted<R: Reply, C: Call<R>>(
    serving: &Serving<'_>,
    call: C,
    connection: Option<&dyn Breakable>,
) -> R {
    let account = serving.account;
    if account.faults.is_empty() {
        return kept(serving, call).await;
    }
    let rule = {
        let target = call.target();
        let fault_target = FaultTarget {
            region: account.topology.name(serving.region),
            operation: target.kind.name(),
            database: target.database.as_deref(),
            container: target.container.as_deref(),
            partition_key: target.options.partition_key(),
        };
        let now = account.clock().now_millis();
        account
            .faults
            .hit(&fault_target, now, || range_of(serving, &target))
    };
    let Some(rule) = rule else {
        return kept(serving, call).await;
    };
    let respond = &rule.respond;
    let faults = respond.status.is_some() || respond.connection.is_some();
    let delay = respond.delay_ms.map(Duration::from_millis);
    match rule.when {
        When::Before => {
            if let Some(delay) = delay {
                tokio::time::sleep(delay).await;
            }
            if !faults {
                return kept(serving, call).await;
            }
            let answer = fault_answer::<R>(serving, &rule, None, connection);
            call.refuse(answer).await
        }
        When::After => {
            let real = kept(serving, call).await;
            if !ran(real.status()) {
                // Refused or failed: nothing ran for the rule to answer
                // after, and no hit.
                account.faults.give_back(&rule);
                return real;
            }
            if let Some(delay) = delay {
                tokio::time::sleep(delay).await;
            }
            if !faults {
                return real;
            }
            R::from_response(fault_answer(serving, &rule, Some(&real), connection))
        }
    }
}

/// The partition key range a request addresses: the one it names (a feed
/// or query sent to one range), else the one that owns its partition key
/// (a point operation), else none.
fn range_of(serving: &Serving<'_>, target: &Target<'_>) -> Option<String> {
    let options = target.options;
    if let Some(range) = options.range_id_text() {
        // Some SDKs send `{collection rid},{range id}`.
        return range.rsplit(',').next().map(|r| r.trim().to_string());
    }
    let key = options.partition_key()?;
    let components = match serde_json::from_str(key).ok()? {
        serde_json::Value::Array(components) => components,
        single => vec![single],
    };
    let key = serde_json::Value::Array(components).to_string();
    let (database, container) = (target.database.as_deref()?, target.container.as_deref()?);
    serving
        .account
        .store
        .with_container(database, container, |c, _| Ok(c.range_of(&key)))
        .ok()
        .map(|range| range.to_string())
}

/// Whether an operation answered `status` ran and succeeded, so that a
/// rule `after` it may answer instead: a 2xx (its changes are committed),
/// or a change feed's 304 (it read, and found nothing new). Not a 207: a
/// transactional batch that answers it committed nothing, and a bulk
/// whose operation failed keeps its own per-operation answer.
pub fn ran(status: u16) -> bool {
    ((200..300).contains(&status) && status != 207) || status == 304
}

/// The rule's answer; `real` is the operation's own (a fault `after` it).
fn fault_answer<R: Reply>(
    serving: &Serving<'_>,
    rule: &Rule,
    real: Option<&R>,
    connection: Option<&dyn Breakable>,
) -> Response {
    let respond = &rule.respond;
    // After the operation: what it charged (the service charges what ran),
    // and the range its session token names. Before: the failure imitated.
    let (charge, range) = match real {
        Some(real) => (Charge::from_ru(real.charge()), real.range()),
        None => (serving.account.charges.failure(respond.status), None),
    };
    let mut answer = if let Some(how) = respond.connection {
        let Some(connection) = connection else {
            return ApiError::new(
                Status::INTERNAL_SERVER_ERROR,
                format!(
                    "Fault rule \"{}\" asks to break the connection, which this server cannot do.",
                    rule.id
                ),
            )
            .into();
        };
        connection.break_with(how);
        // Never reaches the client: the connection breaks as it is
        // written. Its charge is what the budget spends.
        Response::empty(Status::SERVICE_UNAVAILABLE, charge)
    } else {
        let status = respond
            .status
            .and_then(Status::from_u16)
            .unwrap_or(Status::INTERNAL_SERVER_ERROR);
        let outcome = match real {
            Some(_) => "the operation ran and its changes were kept",
            None => "the operation was not run",
        };
        let mut error = ApiError::new(
            status,
            format!(
                "Injected fault: fault rule \"{}\" (POST /_emulator/faults) answered this \
                 request; {outcome}.",
                rule.id
            ),
        );
        if let Some(substatus) = respond.sub_status {
            error = error.with_substatus(substatus);
        }
        let mut answer = Response::from(error);
        answer.headers.retry_after_ms = respond.retry_after_ms;
        answer.headers.charge = Some(charge);
        answer
    };
    answer.headers.range = range;
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_rule_after_may_answer_instead_of() {
        for status in [200, 201, 204, 304] {
            assert!(ran(status), "{status}");
        }
        for status in [207, 400, 404, 409, 412, 429, 500, 503] {
            assert!(!ran(status), "{status}");
        }
    }

    #[test]
    fn a_throttled_request_is_told_when_to_retry_and_charged_nothing() {
        let answer = too_many_requests(250);
        assert_eq!(answer.status, 429);
        assert_eq!(answer.headers.substatus, Some(3200));
        assert_eq!(answer.headers.retry_after_ms, Some(250));
        assert_eq!(answer.headers.charge.map(|c| c.ru()), Some(0.0));
    }
}
