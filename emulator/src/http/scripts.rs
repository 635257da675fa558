//! `/dbs/{db}/colls/{coll}/sprocs|triggers|udfs[/{id}]`: a container's
//! scripts as resources (create, upsert, read, read feed, query, replace,
//! delete). Running a stored procedure (`POST .../sprocs/{id}`) is not
//! routed here.
//!
//! Creates, reads and replaces carry the container's script quota and
//! usage, as the service's do (`x-ms-resource-quota`,
//! `x-ms-resource-usage`).

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;

use super::request::{create_mode, Body, CosmosHeaders, PathParams};
use super::response::{
    no_content, resource, value_feed, value_query, written_status, METADATA_READ, METADATA_WRITE,
};
use super::AppState;
use crate::error::ApiResult;
use crate::store::{ScriptCounts, ScriptKind, ScriptView};

/// The service's script quotas per container, as its responses state them.
pub const QUOTA: &str = "functions=25;storedProcedures=100;triggers=25;";

/// The usage part of `x-ms-resource-usage` for a container's scripts.
pub fn usage(counts: ScriptCounts) -> String {
    format!(
        "functions={};storedProcedures={};triggers={};",
        counts.user_defined_functions, counts.stored_procedures, counts.triggers
    )
}

/// A script response with the quota headers.
fn with_quota(
    status: StatusCode,
    view: &ScriptView,
    charge: crate::request_units::Charge,
) -> Response {
    let mut response = resource(status, &view.json, charge);
    let headers = response.headers_mut();
    headers.insert("x-ms-resource-quota", HeaderValue::from_static(QUOTA));
    if let Ok(usage) = HeaderValue::from_str(&usage(view.counts)) {
        headers.insert("x-ms-resource-usage", usage);
    }
    response
}

pub async fn list(
    state: AppState,
    (db, coll): (String, String),
    kind: ScriptKind,
) -> ApiResult<Response> {
    let (rid, scripts) = state.account.store.script_feed(&db, &coll, kind)?;
    Ok(value_feed(&rid, kind.feed(), &scripts))
}

pub async fn create_or_query(
    state: AppState,
    (db, coll): (String, String),
    kind: ScriptKind,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    if headers.is_query() {
        let (rid, scripts) = state.account.store.script_feed(&db, &coll, kind)?;
        let now = state.account.store.clock.now_millis();
        return value_query(&body, now, &rid, kind.feed(), scripts);
    }
    let (created, view) = state.account.store.create_script(
        &db,
        &coll,
        kind,
        &body.object()?,
        create_mode(&headers),
    )?;
    Ok(with_quota(written_status(created), &view, METADATA_WRITE))
}

pub async fn read(
    state: AppState,
    (db, coll, id): (String, String, String),
    kind: ScriptKind,
) -> ApiResult<Response> {
    let view = state.account.store.script_view(&db, &coll, kind, &id)?;
    Ok(with_quota(StatusCode::OK, &view, METADATA_READ))
}

pub async fn replace(
    state: AppState,
    (db, coll, id): (String, String, String),
    kind: ScriptKind,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let view = state.account.store.replace_script(
        &db,
        &coll,
        kind,
        &id,
        &body.object()?,
        headers.if_match(),
    )?;
    Ok(with_quota(StatusCode::OK, &view, METADATA_WRITE))
}

pub async fn delete(
    state: AppState,
    (db, coll, id): (String, String, String),
    kind: ScriptKind,
    headers: HeaderMap,
) -> ApiResult<Response> {
    state
        .account
        .store
        .delete_script(&db, &coll, kind, &id, headers.if_match())?;
    Ok(no_content(METADATA_WRITE))
}

/// The routes of one kind of script: each handler is told its kind.
pub fn routes(kind: ScriptKind) -> axum::Router<AppState> {
    use axum::routing::get;
    let feed = format!("/dbs/{{db}}/colls/{{coll}}/{}", kind.segment());
    let one = format!("{feed}/{{id}}");
    axum::Router::new()
        .route(
            &feed,
            get(
                move |State(state): State<AppState>, PathParams(path): PathParams<_>| {
                    list(state, path, kind)
                },
            )
            .post(
                move |State(state): State<AppState>,
                      PathParams(path): PathParams<_>,
                      headers: HeaderMap,
                      body: Body| {
                    create_or_query(state, path, kind, headers, body)
                },
            ),
        )
        .route(
            &one,
            get(
                move |State(state): State<AppState>, PathParams(path): PathParams<_>| {
                    read(state, path, kind)
                },
            )
            .put(
                move |State(state): State<AppState>,
                      PathParams(path): PathParams<_>,
                      headers: HeaderMap,
                      body: Body| { replace(state, path, kind, headers, body) },
            )
            .delete(
                move |State(state): State<AppState>,
                      PathParams(path): PathParams<_>,
                      headers: HeaderMap| { delete(state, path, kind, headers) },
            ),
        )
}
