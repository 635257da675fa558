//! Running scripts over HTTP: `POST .../sprocs/{id}` executes a stored
//! procedure in the request's logical partition; an item write that names
//! triggers (`x-ms-documentdb-pre-trigger-include`, `-post-`) runs with
//! them in one transaction (`script/triggers.rs`).

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::{Map, Value};

use super::container_context::{self, decorate, Refusal};
use super::names;
use super::request::{Body, CosmosHeaders, PathParams};
use super::response::{charge_value, item_written, no_content};
use super::AppState;
use crate::error::{ApiError, Status};
use crate::request_units::WriteKind as Priced;
use crate::request_units::{Charge, ChargeModel};
use crate::script::{named_trigger, SprocCall, TriggeredWrite, WriteKind};
use crate::store::{ScriptKind, ScriptWork};

type Reply = Result<Response, Refusal>;

/// What a stored procedure's execution costs: a query's base and what its
/// queries and feeds loaded, then each item it read and wrote priced as
/// the point operation would be (at their average size). The fixed model
/// charges 5 RU, as before.
fn script_charge(state: &AppState, headers: &HeaderMap, work: ScriptWork) -> Charge {
    let model = state.charges;
    if model == ChargeModel::Fixed {
        return crate::request_units::SCRIPT_EXECUTION;
    }
    let quorum = state.reads_quorum(headers);
    let average = |bytes: usize, count: usize| bytes / count.max(1);
    let writes = work.inserts + work.replaces;
    let written = average(work.written_bytes, writes);
    let each = |charge: Charge, count: usize| Charge::from_ru(charge.ru() * count as f64);
    model.query(work.loaded, work.loaded_bytes, 0, quorum)
        + each(
            model.read(average(work.read_bytes, work.reads), quorum),
            work.reads,
        )
        + each(model.write(Priced::Insert, written, 0), work.inserts)
        + each(model.write(Priced::Replace, written, 0), work.replaces)
        + each(model.write(Priced::Delete, 0, 0), work.deletes)
}

const LOG_RESULTS: &str = "x-ms-documentdb-script-log-results";

/// What the log header escapes: all but RFC 3986's unreserved characters
/// (.NET's `Uri.EscapeDataString`, which the SDKs' tests decode).
const LOG_ESCAPED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

pub async fn execute(
    State(state): State<AppState>,
    PathParams((db, coll, id)): PathParams<(String, String, String)>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Reply {
    let mut context = container_context::check(&state, &db, &coll, &headers, false)?;
    let script = state
        .store
        .script(&db, &coll, ScriptKind::StoredProcedure, &id)?;
    let arguments = match body.0.iter().all(u8::is_ascii_whitespace) {
        true => None,
        false => Some(String::from_utf8(body.0.to_vec()).map_err(|_| {
            ApiError::bad_request("The stored procedure's arguments must be UTF-8 JSON.")
        })?),
    };
    let logging = headers.flag("x-ms-documentdb-script-enable-logging");
    let call = SprocCall {
        database: db,
        container: coll,
        source: script.body,
        partition_key: headers.partition_key().map(str::to_owned),
        arguments,
        logging,
    };
    let result = state
        .scripts
        .execute_stored_procedure(&state.store, call)
        .await?;
    let mut response = (
        StatusCode::OK,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        result.body,
    )
        .into_response();
    let out = response.headers_mut();
    out.insert(
        names::REQUEST_CHARGE,
        charge_value(script_charge(&state, &headers, result.committed.work)),
    );
    if let Some(log) = result.log {
        // URL-encoded, as the service sends it (the SDKs decode it).
        let encoded = utf8_percent_encode(&log, LOG_ESCAPED).to_string();
        if let Ok(value) = HeaderValue::from_str(&encoded) {
            out.insert(LOG_RESULTS, value);
        }
    }
    context.range = result.committed.range;
    let lsn = result.committed.lsn;
    decorate(&mut response, &context, lsn, None, &uri);
    Ok(response)
}

/// The headers that name a write's pre- and post-trigger.
const PRE_TRIGGERS: &str = "x-ms-documentdb-pre-trigger-include";
const POST_TRIGGERS: &str = "x-ms-documentdb-post-trigger-include";

/// The triggers an item write names, if any.
pub(super) fn named_triggers(
    headers: &HeaderMap,
) -> Result<(Option<String>, Option<String>), ApiError> {
    Ok((
        named_trigger(headers.text(PRE_TRIGGERS), "pre")?,
        named_trigger(headers.text(POST_TRIGGERS), "post")?,
    ))
}

/// Whether a write names any trigger.
pub(super) fn has_triggers(headers: &HeaderMap) -> bool {
    [PRE_TRIGGERS, POST_TRIGGERS]
        .into_iter()
        .any(|name| headers.text(name).is_some_and(|v| !v.trim().is_empty()))
}

/// An item write with its triggers, answered as the write alone would be.
#[allow(clippy::too_many_arguments)]
pub(super) async fn write(
    state: &AppState,
    db: &str,
    coll: &str,
    kind: WriteKind,
    url_id: Option<String>,
    partition_key: Option<String>,
    body: Option<Map<String, Value>>,
    headers: &HeaderMap,
    uri: &Uri,
) -> Reply {
    let mut context = container_context::check(state, db, coll, headers, false)?;
    let (pre, post) = named_triggers(headers)?;
    let write = TriggeredWrite {
        database: db.to_string(),
        container: coll.to_string(),
        kind,
        partition_key,
        url_id,
        if_match: headers.if_match().map(str::to_owned),
        body,
        pre,
        post,
    };
    let result = state
        .scripts
        .write_with_triggers(&state.store, write)
        .await?;
    context.range = result.committed.range;
    let lsn = result.committed.lsn;
    // Priced as the write alone: the triggers' own reads and writes are
    // not modelled (`request_units`).
    let priced = match (kind, result.status) {
        (WriteKind::Create, _) => Priced::Insert,
        (WriteKind::Upsert, Status::CREATED) => Priced::Insert,
        (WriteKind::Delete, _) => Priced::Delete,
        _ => Priced::Replace,
    };
    let bytes = result.item.as_ref().map_or(0, |item| item.body.len());
    let charge = state.charges.write(priced, bytes, 0);
    let mut response = match &result.item {
        Some(item) => item_written(result.status.into(), item, charge, headers.return_minimal()),
        None => no_content(charge),
    };
    decorate(
        &mut response,
        &context,
        lsn,
        result.item.as_ref().map(|i| i.range_lsn),
        uri,
    );
    Ok(response)
}
