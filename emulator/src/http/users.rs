//! `/dbs/{db}/users[/{user}]` and `.../users/{user}/permissions[/{id}]` on
//! the wire: the user and permission operations (`operations/users.rs`); a
//! POST is a query or a create.

use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;

use super::request::{Body, CosmosHeaders, PathParams};
use super::response::from_operation;
use super::AppState;
use crate::operations::{users, DatabasePath, PermissionPath, UserPath};

type UserParams = PathParams<(String, String)>;
type PermissionParams = PathParams<(String, String, String)>;

fn user<'a>(db: &'a str, user: &'a str) -> UserPath<'a> {
    UserPath { database: db, user }
}

fn permission<'a>(db: &'a str, user: &'a str, id: &'a str) -> PermissionPath<'a> {
    PermissionPath {
        database: db,
        user,
        id,
    }
}

// ---- users ---------------------------------------------------------------

pub async fn list_users(
    State(state): State<AppState>,
    PathParams(db): PathParams<String>,
    uri: Uri,
) -> Response {
    let database = DatabasePath { database: &db };
    from_operation(users::list_users(&state.serving(), database), &uri)
}

pub async fn create_or_query_users(
    State(state): State<AppState>,
    PathParams(db): PathParams<String>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let (serving, database) = (state.serving(), DatabasePath { database: &db });
    let answer = match headers.is_query() {
        true => users::query_users(&serving, database, &body.0),
        false => users::create_user(&serving, database, &headers, &body.0),
    };
    from_operation(answer, &uri)
}

pub async fn read_user(
    State(state): State<AppState>,
    PathParams((db, id)): UserParams,
    uri: Uri,
) -> Response {
    from_operation(users::read_user(&state.serving(), user(&db, &id)), &uri)
}

pub async fn replace_user(
    State(state): State<AppState>,
    PathParams((db, id)): UserParams,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let answer = users::replace_user(&state.serving(), user(&db, &id), &headers, &body.0);
    from_operation(answer, &uri)
}

pub async fn delete_user(
    State(state): State<AppState>,
    PathParams((db, id)): UserParams,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let answer = users::delete_user(&state.serving(), user(&db, &id), &headers);
    from_operation(answer, &uri)
}

// ---- permissions -----------------------------------------------------------

pub async fn list_permissions(
    State(state): State<AppState>,
    PathParams((db, id)): UserParams,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let answer = users::list_permissions(&state.serving(), user(&db, &id), &headers);
    from_operation(answer, &uri)
}

pub async fn create_or_query_permissions(
    State(state): State<AppState>,
    PathParams((db, id)): UserParams,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let (serving, user) = (state.serving(), user(&db, &id));
    let answer = match headers.is_query() {
        true => users::query_permissions(&serving, user, &headers, &body.0),
        false => users::create_permission(&serving, user, &headers, &body.0),
    };
    from_operation(answer, &uri)
}

pub async fn read_permission(
    State(state): State<AppState>,
    PathParams((db, user, id)): PermissionParams,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let permission = permission(&db, &user, &id);
    let answer = users::read_permission(&state.serving(), permission, &headers);
    from_operation(answer, &uri)
}

pub async fn replace_permission(
    State(state): State<AppState>,
    PathParams((db, user, id)): PermissionParams,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let permission = permission(&db, &user, &id);
    let answer = users::replace_permission(&state.serving(), permission, &headers, &body.0);
    from_operation(answer, &uri)
}

pub async fn delete_permission(
    State(state): State<AppState>,
    PathParams((db, user, id)): PermissionParams,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let permission = permission(&db, &user, &id);
    let answer = users::delete_permission(&state.serving(), permission, &headers);
    from_operation(answer, &uri)
}
