//! The routes: each resource's path with the methods it serves, users',
//! scripts'. (The control API's, `/_emulator/...`, are `control/`'s.)

use axum::routing::{get, post};
use axum::Router;

use super::{
    account, addresses, client_encryption_keys, conflicts, containers, databases, items, offers,
    pkranges, script_runs, scripts, users, AppState,
};

/// The resources, each path with the methods it serves.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(account::read))
        .route(addresses::PATH, get(addresses::read))
        .route(
            "/dbs",
            get(databases::list).post(databases::create_or_query),
        )
        .route("/dbs/{db}", get(databases::read).delete(databases::delete))
        .route(
            "/dbs/{db}/colls",
            get(containers::list).post(containers::create_or_query),
        )
        .route(
            "/dbs/{db}/colls/{coll}",
            get(containers::read)
                .put(containers::replace)
                .delete(containers::delete),
        )
        .route(
            "/dbs/{db}/colls/{coll}/docs",
            get(items::read_feed).post(items::create_or_query),
        )
        .route(
            "/dbs/{db}/colls/{coll}/docs/{id}",
            get(items::read)
                .put(items::replace)
                .patch(items::patch)
                .delete(items::delete),
        )
        .route("/dbs/{db}/colls/{coll}/pkranges", get(pkranges::read))
        .merge(user_routes())
        .merge(script_routes())
        .route(
            "/dbs/{db}/clientencryptionkeys",
            get(client_encryption_keys::list).post(client_encryption_keys::create_or_query),
        )
        .route(
            "/dbs/{db}/clientencryptionkeys/{id}",
            get(client_encryption_keys::read)
                .put(client_encryption_keys::replace)
                .delete(client_encryption_keys::delete),
        )
        .route(
            "/dbs/{db}/colls/{coll}/conflicts",
            get(conflicts::read_feed).post(conflicts::query),
        )
        .route(
            "/dbs/{db}/colls/{coll}/conflicts/{id}",
            get(conflicts::read).delete(conflicts::read),
        )
        .route("/offers", get(offers::list).post(offers::query))
        .route("/offers/{rid}", get(offers::read).put(offers::replace))
        .route(
            "/offers/{rid}/{*rest}",
            get(offers::malformed).put(offers::malformed),
        )
        .route(
            "/dbs/{db}/colls/{coll}/operations/partitionkeydelete",
            post(items::delete_partition),
        )
}

/// Users and their permissions.
fn user_routes() -> Router<AppState> {
    Router::new()
        .route(
            "/dbs/{db}/users",
            get(users::list_users).post(users::create_or_query_users),
        )
        .route(
            "/dbs/{db}/users/{user}",
            get(users::read_user)
                .put(users::replace_user)
                .delete(users::delete_user),
        )
        .route(
            "/dbs/{db}/users/{user}/permissions",
            get(users::list_permissions).post(users::create_or_query_permissions),
        )
        .route(
            "/dbs/{db}/users/{user}/permissions/{id}",
            get(users::read_permission)
                .put(users::replace_permission)
                .delete(users::delete_permission),
        )
}

/// A container's stored procedures, triggers and user-defined functions.
fn script_routes() -> Router<AppState> {
    crate::data::store::ScriptKind::ALL
        .into_iter()
        .fold(Router::new(), |router, kind| {
            router.merge(scripts::routes(kind))
        })
        .route(
            "/dbs/{db}/colls/{coll}/sprocs/{id}",
            post(script_runs::execute),
        )
}
