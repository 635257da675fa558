//! Transactional batch and bulk: a JSON array of operations on a
//! container's items (HTTP: `POST .../docs` with
//! `x-ms-cosmos-is-batch-request: true`;
//! `docs/src/reference/protocol.md#transactional-batch`), as the Python
//! SDK's `execute_item_batch` and the JavaScript SDK's `items.batch`,
//! `items.bulk` and `executeBulkOperations` send it. The options, named
//! below by their HTTP headers, are read by meaning ([`RequestOption`]).
//!
//! - `x-ms-cosmos-batch-atomic` absent or `true`: a transactional batch in
//!   the logical partition of `x-ms-documentdb-partitionkey`, all or nothing.
//! - `x-ms-cosmos-batch-atomic: false`: bulk, each operation by itself
//!   (in the partition its own `partitionKey` names), stopping at the first
//!   failure unless `x-ms-cosmos-batch-continue-on-error: true`.
//!
//! Operations: `{"operationType": "Create"|"Upsert"|"Read"|"Replace"|
//! "Delete"|"Patch", "id"?, "resourceBody"?, "partitionKey"?, "ifMatch"?,
//! "ifNoneMatch"?}`. The answer is an array of results in order,
//! `{"statusCode", "requestCharge", "eTag"?, "resourceBody"?}` (a failed
//! operation also has `message`, and `subStatusCode` when it has one), with
//! 200 when every operation succeeded and 207 Multi-Status otherwise, as the
//! SDKs read it (the Java and JavaScript SDKs look for the failed operation
//! in a 207).

use std::sync::Arc;

use bytes::{BufMut, BytesMut};
use serde_json::{Map, Value};

use super::options::{RequestOption, RequestOptions};
use super::response::{Answer, ContainerState, Response};
use super::{session, ContainerPath, Serving};
use crate::data::patch::PatchBody;
use crate::data::query::search::Policies;
use crate::data::store::{check_nesting, Action, BatchMode, Operation, Outcome};
use crate::protocol::error::{ApiError, ApiResult, Status};
use crate::protocol::json;
use crate::protocol::limits::{MAX_BATCH_OPERATIONS, MAX_NESTING_DEPTH};
use crate::protocol::request_units::{self, Charge, ChargeModel, WriteKind};

/// A batch (or bulk request) of the operations in `body`: 200 when each
/// succeeded, 207 when one failed, each result in the body.
pub fn execute(
    serving: &Serving<'_>,
    container: ContainerPath<'_>,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    let (db, coll) = (container.database, container.container);
    // A stale container reference is refused here too (400/1024).
    session::check(serving, db, coll, options, false)?;
    Ok(run(serving, db, coll, options, body)?)
}

fn run(
    serving: &Serving<'_>,
    db: &str,
    coll: &str,
    options: &dyn RequestOptions,
    body: &[u8],
) -> ApiResult<Response> {
    let account = serving.account;
    if let Some(id) = options.range_id_text() {
        // A batch the SDK grouped for a range that is gone (split): 410/1002,
        // and the SDK regroups its operations on the current ranges.
        account.store.with_container(db, coll, |c, _| {
            let ranges = c.ranges();
            match ranges.by_id(id) {
                Some(_) => Ok(()),
                None => Err(crate::data::store::range_gone(id, ranges)),
            }
        })?;
    }
    // A patch's condition reads the container's search policies: asked
    // for once, by the first patch that has one.
    let policies = std::cell::OnceCell::new();
    let policies = || -> ApiResult<Arc<Policies>> {
        if let Some(policies) = policies.get() {
            return Ok(Arc::clone(policies));
        }
        let found = account.store.search_policies(db, coll)?;
        Ok(Arc::clone(policies.get_or_init(|| found)))
    };
    let operations = operations(body, account.store.clock.now_millis(), &policies)?;
    let reads: Vec<bool> = operations
        .iter()
        .map(|o| matches!(o.action, Action::Read))
        .collect();
    let prices = Prices::of(serving, db, coll, options, &operations);
    let atomic = !options
        .get(RequestOption::BatchAtomic)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("false"));
    let mode = if atomic {
        BatchMode::Atomic
    } else {
        BatchMode::Bulk {
            continue_on_error: options.flag(RequestOption::BatchContinueOnError),
        }
    };
    let (outcomes, lsn) =
        account
            .store
            .batch(db, coll, options.partition_key(), operations, mode)?;
    // `Prefer: return=minimal` (JavaScript's `contentResponseOnWriteEnabled:
    // false`): writes answer without their item, reads still with theirs.
    let bodies = if options.prefer_minimal() {
        reads.clone()
    } else {
        vec![true; reads.len()]
    };
    let mut response = answer(&outcomes, &prices, &bodies);
    // Its container and range, as a point write names them (the session
    // token is the range's), and the LSN the batch committed at (its
    // writes share one), named as a point write names its own: `lsn`
    // (test_batch_lsn reads it).
    let context = account
        .store
        .container_context_at(db, coll, options.partition_key(), None)?;
    response.headers.range = Some(context.range);
    response.headers.container = Some(ContainerState {
        owner: context.owner,
        lsn: Some(lsn),
        item_lsn: None,
    });
    Ok(response)
}

/// The operations of a request body, each checked up to what needs the
/// container; a malformed one refuses the whole request (nothing is applied).
fn operations(
    bytes: &[u8],
    now_millis: i64,
    policies: &dyn Fn() -> ApiResult<Arc<Policies>>,
) -> ApiResult<Vec<Operation>> {
    // An item sits three levels down (the array, the operation, its
    // `resourceBody`): allow for the two above it, then check each item.
    let depth = json::nesting_depth(bytes);
    if depth > MAX_NESTING_DEPTH + 2 {
        return Err(ApiError::bad_request(format!(
            "The batch body nests objects and arrays {depth} levels deep: an item may nest at most \
             {MAX_NESTING_DEPTH} levels (the item itself is the first). Flatten the documents."
        )));
    }
    let value: Value = json::parse_unguarded(bytes)
        .map_err(|e| ApiError::bad_request(format!("The batch body is invalid: {e}.")))?;
    let Value::Array(values) = value else {
        return Err(ApiError::bad_request(
            "A batch request's body must be a JSON array of operations, e.g. \
             [{\"operationType\": \"Create\", \"resourceBody\": {...}}].",
        ));
    };
    if values.is_empty() {
        return Err(ApiError::bad_request("Batch request has no operations."));
    }
    if values.len() > MAX_BATCH_OPERATIONS {
        return Err(ApiError::bad_request(format!(
            "Batch request has more operations than what is supported. It has {} operations; \
             at most {MAX_BATCH_OPERATIONS} go in one request.",
            values.len()
        )));
    }
    values
        .into_iter()
        .enumerate()
        .map(|(index, value)| {
            operation(value, now_millis, policies).map_err(|e| {
                let message = format!("Operation {index} of the batch: {}", e.message);
                e.with_message(message)
            })
        })
        .collect()
}

fn operation(
    value: Value,
    now_millis: i64,
    policies: &dyn Fn() -> ApiResult<Arc<Policies>>,
) -> ApiResult<Operation> {
    let Value::Object(mut fields) = value else {
        return Err(ApiError::bad_request(
            "each operation must be a JSON object with an 'operationType'.",
        ));
    };
    let text = |fields: &mut Map<String, Value>, name: &str| -> ApiResult<Option<String>> {
        match fields.remove(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(ApiError::bad_request(format!(
                "'{name}' must be a string, got {other}."
            ))),
        }
    };
    let kind = text(&mut fields, "operationType")?.unwrap_or_default();
    let id = text(&mut fields, "id")?;
    let if_match = text(&mut fields, "ifMatch")?;
    let if_none_match = text(&mut fields, "ifNoneMatch")?;
    // The JavaScript SDK sends it as JSON text (`"[\"a\"]"`); an array is
    // taken as its JSON.
    let partition_key = match fields.remove("partitionKey") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(other) => Some(other.to_string()),
    };
    let body = fields.remove("resourceBody");
    let item = |body: Option<Value>| -> ApiResult<Map<String, Value>> {
        match body {
            Some(Value::Object(item)) => {
                check_nesting(&item)?;
                Ok(item)
            }
            _ => Err(ApiError::bad_request(format!(
                "a {kind} operation needs the item as a JSON object in 'resourceBody'."
            ))),
        }
    };
    let action = match kind.to_ascii_lowercase().as_str() {
        "create" => Action::Create(item(body)?),
        "upsert" => Action::Upsert(item(body)?),
        "replace" => Action::Replace(item(body)?),
        "read" => Action::Read,
        "delete" => Action::Delete,
        "patch" => {
            let request: PatchBody = serde_json::from_value(body.unwrap_or_default())
                .map_err(|e| ApiError::bad_request(format!("the patch is invalid: {e}.")))?;
            Action::Patch(request.edit(now_millis, policies)?)
        }
        _ => {
            return Err(ApiError::bad_request(format!(
                "the operationType '{kind}' is not one of Create, Upsert, Read, Replace, Delete, Patch."
            )))
        }
    };
    Ok(Operation {
        action,
        id,
        partition_key,
        if_match,
        if_none_match,
    })
}

/// 200 with every result, or 207 Multi-Status when an operation failed.
/// `with_body[i]`: whether the i-th result carries its item.
fn answer(outcomes: &[Outcome], prices: &Prices, with_body: &[bool]) -> Response {
    let status = if outcomes.iter().any(Outcome::is_failure) {
        Status::MULTI_STATUS
    } else {
        Status::OK
    };
    let mut total = Charge::ZERO;
    let mut body = BytesMut::new();
    body.put_u8(b'[');
    for (index, outcome) in outcomes.iter().enumerate() {
        if index > 0 {
            body.put_u8(b',');
        }
        let charge = prices.charge(index, outcome);
        total = total + charge;
        body.put_slice(
            format!(
                "{{\"statusCode\":{},\"requestCharge\":{}",
                outcome.status.as_u16(),
                charge.to_text()
            )
            .as_bytes(),
        );
        if let Some(error) = &outcome.error {
            if let Some(substatus) = error.substatus {
                body.put_slice(format!(",\"subStatusCode\":{substatus}").as_bytes());
            }
            body.put_slice(
                format!(",\"message\":{}", Value::from(error.message.clone())).as_bytes(),
            );
        }
        if let Some(item) = &outcome.item {
            body.put_slice(format!(",\"eTag\":{}", Value::from(item.etag.to_string())).as_bytes());
            if with_body.get(index).copied().unwrap_or(true) {
                body.put_slice(b",\"resourceBody\":");
                body.put_slice(&item.body);
            }
        }
        body.put_u8(b'}');
    }
    body.put_u8(b']');
    Response::json(status, body.freeze(), total)
}

/// What each operation of a batch costs: a write's charge when a write
/// ran (priced by what it wrote), a read's for a read or a failure, nothing
/// when it did not run (424).
struct Prices {
    model: ChargeModel,
    quorum: bool,
    /// Per operation: the write it asks for (`None`: a read) and the values
    /// its body indexes.
    operations: Vec<(Option<WriteKind>, usize)>,
}

impl Prices {
    fn of(
        serving: &Serving<'_>,
        db: &str,
        coll: &str,
        options: &dyn RequestOptions,
        operations: &[Operation],
    ) -> Prices {
        let account = serving.account;
        let indexes = account.charges == ChargeModel::Documented
            && account
                .store
                .container_context(db, coll)
                .is_ok_and(|c| c.indexes_writes);
        let terms = |body: &Map<String, Value>| match indexes {
            true => request_units::indexed_terms(body),
            false => 0,
        };
        let operations = operations
            .iter()
            .map(|o| match &o.action {
                Action::Read => (None, 0),
                Action::Create(body) | Action::Upsert(body) => {
                    (Some(WriteKind::Insert), terms(body))
                }
                Action::Replace(body) => (Some(WriteKind::Replace), terms(body)),
                // A patch's terms are its result's, unknown here: its
                // size carries its price.
                Action::Patch(_) => (Some(WriteKind::Replace), 0),
                Action::Delete => (Some(WriteKind::Delete), 0),
            })
            .collect();
        Prices {
            model: account.charges,
            quorum: account.reads_quorum(|| options.consistency_level()),
            operations,
        }
    }

    fn charge(&self, index: usize, outcome: &Outcome) -> Charge {
        let bytes = outcome.item.as_ref().map_or(0, |item| item.body.len());
        let (kind, terms) = self.operations.get(index).copied().unwrap_or((None, 0));
        match (outcome.status, &outcome.error, kind) {
            (Status::FAILED_DEPENDENCY, None, _) => Charge::ZERO,
            (_, Some(_), _) | (_, None, None) => self.model.read(bytes, self.quorum),
            // An upsert that replaced costs a replace.
            (Status::OK, None, Some(WriteKind::Insert)) => {
                self.model.write(WriteKind::Replace, bytes, terms)
            }
            (_, None, Some(kind)) => self.model.write(kind, bytes, terms),
        }
    }
}
