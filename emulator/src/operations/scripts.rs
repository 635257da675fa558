//! A container's scripts as resources (stored procedures, triggers and
//! user-defined functions): list, query, create or upsert, read, replace,
//! delete. Running a stored procedure is another operation.
//!
//! Creates, reads and replaces state the container's script quota and
//! usage, as the service's do.

use super::options::RequestOptions;
use super::paths::ScriptPath;
use super::response::{Answer, Response};
use super::{body, resources, ContainerPath, Serving};
use crate::data::store::{ScriptCounts, ScriptKind, ScriptView};

/// The service's script quotas per container, as its answers state them.
pub const QUOTA: &str = "functions=25;storedProcedures=100;triggers=25;";

/// The usage of a container's script quotas, in the same form.
pub fn usage(counts: ScriptCounts) -> String {
    format!(
        "functions={};storedProcedures={};triggers={};",
        counts.user_defined_functions, counts.stored_procedures, counts.triggers
    )
}

/// A script, with its container's quota and usage.
fn with_quota(mut response: Response, view: &ScriptView) -> Response {
    response.headers.resource_quota = Some(QUOTA);
    response.headers.resource_usage = Some(usage(view.counts));
    response
}

/// Every script of a kind of a container.
pub fn list(serving: &Serving<'_>, container: ContainerPath<'_>, kind: ScriptKind) -> Answer {
    let (db, coll) = (container.database, container.container);
    let (rid, scripts) = serving.account.store.script_feed(db, coll, kind)?;
    Ok(resources::feed(&rid, kind.feed(), &scripts))
}

/// A query over a container's scripts of a kind.
pub fn query(
    serving: &Serving<'_>,
    container: ContainerPath<'_>,
    kind: ScriptKind,
    body: &[u8],
) -> Answer {
    let store = &serving.account.store;
    let (db, coll) = (container.database, container.container);
    let (rid, scripts) = store.script_feed(db, coll, kind)?;
    let now = store.clock.now_millis();
    Ok(resources::query(body, now, &rid, kind.feed(), scripts)?)
}

/// Creates a script, or replaces it when the request asks for an upsert.
pub fn create(
    serving: &Serving<'_>,
    container: ContainerPath<'_>,
    kind: ScriptKind,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    let (created, view) = serving.account.store.create_script(
        container.database,
        container.container,
        kind,
        &body::object(body)?,
        resources::create_mode(options),
    )?;
    Ok(with_quota(resources::written(created, &view.json), &view))
}

pub fn read(serving: &Serving<'_>, script: ScriptPath<'_>) -> Answer {
    let ScriptPath {
        database,
        container,
        kind,
        id,
    } = script;
    let view = serving
        .account
        .store
        .script_view(database, container, kind, id)?;
    Ok(with_quota(resources::read(&view.json), &view))
}

pub fn replace(
    serving: &Serving<'_>,
    script: ScriptPath<'_>,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    let ScriptPath {
        database,
        container,
        kind,
        id,
    } = script;
    let view = serving.account.store.replace_script(
        database,
        container,
        kind,
        id,
        &body::object(body)?,
        options.if_match(),
    )?;
    Ok(with_quota(resources::replaced(&view.json), &view))
}

pub fn delete(
    serving: &Serving<'_>,
    script: ScriptPath<'_>,
    options: &dyn RequestOptions,
) -> Answer {
    let ScriptPath {
        database,
        container,
        kind,
        id,
    } = script;
    serving
        .account
        .store
        .delete_script(database, container, kind, id, options.if_match())?;
    resources::deleted()
}
