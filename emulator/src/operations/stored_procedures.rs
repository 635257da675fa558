//! Executing a stored procedure in the request's logical partition
//! (`script/`): its answer, what it logged, and its charge.

use super::options::{RequestOption, RequestOptions};
use super::response::{Answer, Response};
use super::{session, ItemPath, Serving};
use crate::data::script::SprocCall;
use crate::data::store::{ScriptKind, ScriptWork};
use crate::protocol::error::{ApiError, Status};
use crate::protocol::request_units::{self, Charge, ChargeModel, WriteKind as Priced};

/// Runs the stored procedure `sproc.id` of container `sproc` with the
/// arguments `body` (a JSON array, or empty for none).
pub async fn execute(
    serving: &Serving<'_>,
    sproc: ItemPath<'_>,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    let (db, coll) = (sproc.database, sproc.container);
    let account = serving.account;
    let mut context = session::check(serving, db, coll, options, false)?;
    let script = account
        .store
        .script(db, coll, ScriptKind::StoredProcedure, sproc.id)?;
    let arguments = match body.iter().all(u8::is_ascii_whitespace) {
        true => None,
        false => Some(String::from_utf8(body.to_vec()).map_err(|_| {
            ApiError::bad_request("The stored procedure's arguments must be UTF-8 JSON.")
        })?),
    };
    let logging = options
        .get(RequestOption::ScriptLogging)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    let call = SprocCall {
        database: db.to_string(),
        container: coll.to_string(),
        source: script.body,
        partition_key: options.partition_key().map(str::to_owned),
        arguments,
        logging,
    };
    let result = account
        .scripts
        .execute_stored_procedure(&account.store, call)
        .await?;
    let charge = charge(serving, options, result.committed.work);
    let mut response = Response::json(Status::OK, result.body, charge);
    response.headers.script_log = result.log;
    context.range = result.committed.range;
    Ok(response.about(&context, result.committed.lsn, None))
}

/// What an execution costs: a query's base and what its queries and feeds
/// loaded, then each item it read and wrote priced as the point operation
/// would be (at their average size). The fixed model charges 5 RU.
fn charge(serving: &Serving<'_>, options: &dyn RequestOptions, work: ScriptWork) -> Charge {
    let account = serving.account;
    let model = account.charges;
    if model == ChargeModel::Fixed {
        return request_units::SCRIPT_EXECUTION;
    }
    let quorum = account.reads_quorum(|| options.consistency_level());
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
