//! The item operations: create (or upsert), read, replace, patch, delete,
//! and deleting a logical partition's items; a write that names triggers
//! runs with them in one transaction (`data/script/triggers.rs`). TTL is the
//! store's business: expired items are absent here on every path (R5).

use std::borrow::Cow;

use bytes::Bytes;
use serde_json::{Map, Value};

use super::options::{RequestOption, RequestOptions};
use super::response::{Answer, Response, ResponseEtag};
use super::{body, session, ContainerPath, ItemPath, Serving};
use crate::data::patch::PatchBody;
use crate::data::script::{named_trigger, TriggeredWrite, WriteKind};
use crate::data::store::{ContainerContext, Item, ItemAddress, ItemWrite, WriteMode, Written};
use crate::protocol::error::{ApiError, ApiResult, Status};
use crate::protocol::request_units::{self, Charge, WriteKind as Priced};

/// The (partition key, id) an item path addresses: as given for names,
/// looked up for RIDs.
fn address<'a>(
    serving: &Serving<'_>,
    item: ItemPath<'a>,
    options: &'a dyn RequestOptions,
) -> ApiResult<(Option<Cow<'a, str>>, Cow<'a, str>)> {
    // Only a path whose database segment looks like a RID can be RID-based;
    // name-based paths (nearly all) skip the lookup, and copy nothing.
    let given = || {
        let pk = options.partition_key().map(Cow::Borrowed);
        (pk, Cow::Borrowed(item.id))
    };
    if !crate::protocol::rid::looks_like_database_rid(item.database) {
        return Ok(given());
    }
    let found = serving.account.store.item_by_rid(
        item.database,
        item.container,
        item.id,
        options.partition_key(),
    )?;
    Ok(found.map_or_else(given, |(pk, id)| (Some(Cow::Owned(pk)), Cow::Owned(id))))
}

/// A point read: the hottest path. `304` when the client's etag
/// (`If-None-Match`) is the item's.
pub fn read(serving: &Serving<'_>, item: ItemPath<'_>, options: &dyn RequestOptions) -> Answer {
    let account = serving.account;
    let (pk, id) = address(serving, item, options)?;
    // One hold of the lock for the container's context and the item.
    let (context, found) =
        account
            .store
            .read_item_in_context(item.database, item.container, pk.as_deref(), &id)?;
    session::verify(serving, &context, options, true)?;
    let found = found?;
    let unchanged = options
        .if_none_match()
        .is_some_and(|tag| tag == found.etag.encode(&mut [0; 38]));
    let response = if unchanged {
        Response::empty(Status::NOT_MODIFIED, Charge::from_ru(1.0))
    } else {
        let quorum = account.reads_quorum(|| options.consistency_level());
        let charge = account.charges.read(found.body.len(), quorum);
        item_response(Status::OK, &found, charge)
    };
    Ok(response.about(&context, context.lsn, Some(found.range_lsn)))
}

/// A POST of an item: a create, or an upsert when the request says so.
pub async fn create(
    serving: &Serving<'_>,
    container: ContainerPath<'_>,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    let upsert = options.is_upsert();
    if options.has_triggers() {
        let kind = match upsert {
            true => WriteKind::Upsert,
            false => WriteKind::Create,
        };
        let pk = options.partition_key().map(str::to_owned);
        let body = Some(body::object(body)?);
        return triggered(serving, container, kind, None, pk, body, options).await;
    }
    let ContainerPath {
        database,
        container,
    } = container;
    let mut context = session::check(serving, database, container, options, false)?;
    let mode = match upsert {
        true => WriteMode::Upsert,
        false => WriteMode::Create,
    };
    let body = body::object(body)?;
    let terms = indexed_terms(&context, &body);
    let write = ItemWrite {
        mode,
        url_id: None,
        partition_key_header: options.partition_key(),
        if_match: options.if_match(),
        body,
    };
    let account = serving.account;
    let (done, stored, range) = account.store.write_item(database, container, write)?;
    context.range = range;
    let kind = match done {
        Written::Created => Priced::Insert,
        Written::Replaced => Priced::Replace,
    };
    let charge = account.charges.write(kind, stored.body.len(), terms);
    Ok(written(done.status(), &stored, charge, options, &context))
}

/// A PUT of an item: replaces it whole.
pub async fn replace(
    serving: &Serving<'_>,
    item: ItemPath<'_>,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    if options.has_triggers() {
        let (pk, id) = address(serving, item, options)?;
        let body = Some(body::object(body)?);
        let kind = WriteKind::Replace;
        let (id, pk) = (id.into_owned(), pk.map(|pk| pk.into_owned()));
        return triggered(serving, item.container(), kind, Some(id), pk, body, options).await;
    }
    let mut context = session::check(serving, item.database, item.container, options, false)?;
    let (pk, id) = address(serving, item, options)?;
    let body = body::object(body)?;
    let terms = indexed_terms(&context, &body);
    let write = ItemWrite {
        mode: WriteMode::Replace,
        url_id: Some(&id),
        partition_key_header: pk.as_deref(),
        if_match: options.if_match(),
        body,
    };
    let account = serving.account;
    let (_, stored, range) = account
        .store
        .write_item(item.database, item.container, write)?;
    context.range = range;
    let charge = account
        .charges
        .write(Priced::Replace, stored.body.len(), terms);
    Ok(written(Status::OK, &stored, charge, options, &context))
}

/// A PATCH of an item: its operations applied in order, all or none.
pub fn patch(
    serving: &Serving<'_>,
    item: ItemPath<'_>,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    if options.has_triggers() {
        return Err(ApiError::bad_request(
            "This emulator runs triggers on create, upsert, replace and delete, not on patch: \
             send a replace with the triggers, or patch without them.",
        )
        .into());
    }
    let account = serving.account;
    let mut context = session::check(serving, item.database, item.container, options, false)?;
    let patch = body::typed::<PatchBody>(body, "patch")?;
    let edit = patch.edit(account.clock().now_millis(), || {
        account.store.search_policies(item.database, item.container)
    })?;
    let (pk, id) = address(serving, item, options)?;
    let target = ItemAddress {
        database: item.database,
        container: item.container,
        partition_key: pk.as_deref(),
        id: &id,
        if_match: options.if_match(),
    };
    let (stored, range) = account.store.edit_item(target, edit)?;
    context.range = range;
    // A patch costs what a replace with its result costs.
    let terms = match context.indexes_writes {
        true => serde_json::from_slice(&stored.body)
            .map_or(0, |body| request_units::indexed_terms(&body)),
        false => 0,
    };
    let charge = account
        .charges
        .write(Priced::Replace, stored.body.len(), terms);
    Ok(written(Status::OK, &stored, charge, options, &context))
}

/// A DELETE of an item: `204`.
pub async fn delete(
    serving: &Serving<'_>,
    item: ItemPath<'_>,
    options: &dyn RequestOptions,
) -> Answer {
    if options.has_triggers() {
        let (pk, id) = address(serving, item, options)?;
        let kind = WriteKind::Delete;
        let (id, pk) = (id.into_owned(), pk.map(|pk| pk.into_owned()));
        return triggered(serving, item.container(), kind, Some(id), pk, None, options).await;
    }
    let mut context = session::check(serving, item.database, item.container, options, false)?;
    let (pk, id) = address(serving, item, options)?;
    let account = serving.account;
    let deleted = account.store.delete_item(ItemAddress {
        database: item.database,
        container: item.container,
        partition_key: pk.as_deref(),
        id: &id,
        if_match: options.if_match(),
    })?;
    context.range = deleted.range;
    let charge = account.charges.write(Priced::Delete, deleted.bytes, 0);
    Ok(Response::empty(Status::NO_CONTENT, charge).about(&context, deleted.lsn, None))
}

/// Deletes every item of the logical partition the request's partition key
/// names, or of every partition under a hierarchical key's prefix. The
/// service runs it in the background but hides the items at once; here
/// they are gone at once. `200` with no body, as the service answers.
pub fn delete_partition(
    serving: &Serving<'_>,
    container: ContainerPath<'_>,
    options: &dyn RequestOptions,
) -> Answer {
    let (db, coll) = (container.database, container.container);
    let deleted = serving
        .account
        .store
        .delete_partition(db, coll, options.partition_key())?;
    tracing::debug!(db, coll, deleted, "deleted by partition key");
    // The service charges the request alone.
    Ok(Response::empty(Status::OK, request_units::METADATA_WRITE))
}

/// An item write with its triggers, answered as the write alone would be.
async fn triggered(
    serving: &Serving<'_>,
    container: ContainerPath<'_>,
    kind: WriteKind,
    url_id: Option<String>,
    partition_key: Option<String>,
    body: Option<Map<String, Value>>,
    options: &dyn RequestOptions,
) -> Answer {
    let (database, coll) = (container.database, container.container);
    let mut context = session::check(serving, database, coll, options, false)?;
    let pre = named_trigger(options.get(RequestOption::PreTriggerInclude), "pre")?;
    let post = named_trigger(options.get(RequestOption::PostTriggerInclude), "post")?;
    let write = TriggeredWrite {
        database: database.to_string(),
        container: coll.to_string(),
        kind,
        partition_key,
        url_id,
        if_match: options.if_match().map(str::to_owned),
        body,
        pre,
        post,
    };
    let account = serving.account;
    let result = account
        .scripts
        .write_with_triggers(&account.store, write)
        .await?;
    context.range = result.committed.range;
    let status = result.status;
    // Priced as the write alone: the triggers' own reads and writes are
    // not modelled (`request_units`).
    let priced = match (kind, status) {
        (WriteKind::Create, _) | (WriteKind::Upsert, Status::CREATED) => Priced::Insert,
        (WriteKind::Delete, _) => Priced::Delete,
        _ => Priced::Replace,
    };
    let bytes = result.item.as_ref().map_or(0, |item| item.body.len());
    let charge = account.charges.write(priced, bytes, 0);
    let lsn = result.committed.lsn;
    let response = match &result.item {
        Some(item) => written_body(status, item, charge, options),
        None => Response::empty(Status::NO_CONTENT, charge),
    };
    let item_lsn = result.item.as_ref().map(|i| i.range_lsn);
    Ok(response.about(&context, lsn, item_lsn))
}

/// The values a write of `body` indexes: none when the container's
/// indexing is off.
fn indexed_terms(context: &ContainerContext, body: &Map<String, Value>) -> usize {
    match context.indexes_writes {
        true => request_units::indexed_terms(body),
        false => 0,
    }
}

/// An item, served as stored, with its etag.
fn item_response(status: Status, item: &Item, charge: Charge) -> Response {
    let mut response = Response::json(status, item.body.clone(), charge);
    response.headers.etag = Some(ResponseEtag::Item(item.etag));
    response
}

/// An item a write stored: served whole, or (the client asked for
/// `return=minimal`) as the service does, the same status and headers
/// with no body.
fn written_body(
    status: Status,
    stored: &Item,
    charge: Charge,
    options: &dyn RequestOptions,
) -> Response {
    let mut response = item_response(status, stored, charge);
    if options.prefer_minimal() {
        response.body = Bytes::new();
    }
    response
}

/// A write's answer: the LSN its item's range reached is both the
/// answer's and the item's.
fn written(
    status: Status,
    stored: &Item,
    charge: Charge,
    options: &dyn RequestOptions,
    context: &ContainerContext,
) -> Response {
    let lsn = stored.range_lsn;
    written_body(status, stored, charge, options).about(context, lsn, Some(lsn))
}
