//! `/dbs/{db}/colls/{coll}/sprocs|triggers|udfs[/{id}]` on the wire: a
//! container's scripts as resources (`operations/scripts.rs`); a POST to
//! the feed is a query or a create. Running a stored procedure (`POST
//! .../sprocs/{id}`) is not routed here.

use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;

use super::request::{Body, CosmosHeaders, PathParams};
use super::response::from_operation;
use super::AppState;
use crate::data::store::ScriptKind;
use crate::operations::{scripts, ContainerPath, ScriptPath};

fn script<'a>(db: &'a str, coll: &'a str, kind: ScriptKind, id: &'a str) -> ScriptPath<'a> {
    ScriptPath {
        database: db,
        container: coll,
        kind,
        id,
    }
}

async fn list(
    state: AppState,
    (db, coll): (String, String),
    kind: ScriptKind,
    uri: Uri,
) -> Response {
    let container = ContainerPath {
        database: &db,
        container: &coll,
    };
    from_operation(scripts::list(&state.serving(), container, kind), &uri)
}

async fn create_or_query(
    state: AppState,
    (db, coll): (String, String),
    kind: ScriptKind,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let serving = state.serving();
    let container = ContainerPath {
        database: &db,
        container: &coll,
    };
    let answer = match headers.is_query() {
        true => scripts::query(&serving, container, kind, &body.0),
        false => scripts::create(&serving, container, kind, &headers, &body.0),
    };
    from_operation(answer, &uri)
}

async fn read(
    state: AppState,
    (db, coll, id): (String, String, String),
    kind: ScriptKind,
    uri: Uri,
) -> Response {
    let answer = scripts::read(&state.serving(), script(&db, &coll, kind, &id));
    from_operation(answer, &uri)
}

async fn replace(
    state: AppState,
    (db, coll, id): (String, String, String),
    kind: ScriptKind,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let script = script(&db, &coll, kind, &id);
    let answer = scripts::replace(&state.serving(), script, &headers, &body.0);
    from_operation(answer, &uri)
}

async fn delete(
    state: AppState,
    (db, coll, id): (String, String, String),
    kind: ScriptKind,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let answer = scripts::delete(&state.serving(), script(&db, &coll, kind, &id), &headers);
    from_operation(answer, &uri)
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
                move |State(state): State<AppState>, PathParams(path): PathParams<_>, uri: Uri| {
                    list(state, path, kind, uri)
                },
            )
            .post(
                move |State(state): State<AppState>,
                      PathParams(path): PathParams<_>,
                      uri: Uri,
                      headers: HeaderMap,
                      body: Body| {
                    create_or_query(state, path, kind, uri, headers, body)
                },
            ),
        )
        .route(
            &one,
            get(
                move |State(state): State<AppState>, PathParams(path): PathParams<_>, uri: Uri| {
                    read(state, path, kind, uri)
                },
            )
            .put(
                move |State(state): State<AppState>,
                      PathParams(path): PathParams<_>,
                      uri: Uri,
                      headers: HeaderMap,
                      body: Body| {
                    replace(state, path, kind, uri, headers, body)
                },
            )
            .delete(
                move |State(state): State<AppState>,
                      PathParams(path): PathParams<_>,
                      uri: Uri,
                      headers: HeaderMap| {
                    delete(state, path, kind, uri, headers)
                },
            ),
        )
}
