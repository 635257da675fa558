//! What a request authenticated with a resource token may do: exactly what
//! the token's permission grants. The decision, whatever the protocol: a
//! front door verifies its own signature and says what the request is
//! ([`Access`]).
//!
//! - `Read` allows GET and HEAD, and queries (POST with the query headers);
//!   `All` also writes and deletes.
//! - A container permission covers its items; an item permission that item
//!   alone; a `resourcePartitionKey` only requests whose partition key
//!   header names that logical partition (a query without it, across
//!   partitions, is refused).
//! - Any permission in a container lets its holder read the container and
//!   its partition key ranges, which the SDKs read before items; any valid
//!   token reads the database account.
//! - `All` on a whole container (no item, script or partition key) also
//!   replaces and deletes the container itself ("read, write, and delete
//!   access to a resource").
//! - Databases, containers' creation, users, permissions and the
//!   emulator's control routes need the master key.
//!
//! Outside the grant: 403 with the service's message.

use percent_encoding::percent_decode_str;

use super::options::RequestOptions;
use crate::account::Account;
use crate::data::store::{Grant, PermissionMode, ScriptKind};
use crate::operations::resource_token::{self, Claims};
use crate::protocol::error::{ApiError, ApiResult, Status};

/// The verbs of the Cosmos REST API, which its signatures name and each
/// protocol maps its operations to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Get,
    Head,
    Post,
    Put,
    Patch,
    Delete,
}

/// What a request does, as the decision reads it.
pub struct Access<'a> {
    pub verb: Verb,
    /// Whether a POST is a query.
    pub query: bool,
    /// The resource's path (`/dbs/{db}/colls/{coll}/docs/{id}`), its
    /// segments percent-encoded as sent.
    pub path: &'a str,
    pub options: &'a dyn RequestOptions,
}

/// Authenticates a resource-token request (`token` is the `sig` part) and
/// checks that its permission covers it.
pub fn authorize(account: &Account, access: &Access<'_>, token: &str) -> ApiResult<()> {
    let Claims { grant, .. } = resource_token::verify(&account.key, token, account.clock().now())?;
    let (method, headers) = (access.verb, access.options);
    let segments: Vec<String> = access
        .path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| percent_decode_str(s).decode_utf8_lossy().into_owned())
        .collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let reads = method == Verb::Get || method == Verb::Head;
    let queries = method == Verb::Post && access.query;
    match segments.as_slice() {
        // The database account.
        [] if reads => Ok(()),
        ["dbs", db, "colls", coll, rest @ ..] => {
            let (db_rid, coll_rid) = account
                .store
                .container_rids(db, coll)
                .ok_or_else(|| forbidden(&grant, "names no container it covers"))?;
            if db_rid != grant.database_rid || coll_rid != grant.container_rid {
                return Err(forbidden(&grant, "is for another container"));
            }
            let needs = |mode_ok: bool| {
                if mode_ok {
                    Ok(())
                } else {
                    Err(forbidden(&grant, "writes, and the permission is Read"))
                }
            };
            let partition = || check_partition(account, &grant, db, coll, headers);
            let whole_container =
                grant.item_id.is_none() && grant.script.is_none() && grant.partition_key.is_none();
            match rest {
                // Container metadata the SDKs read before items.
                [] | ["pkranges"] if reads => Ok(()),
                // "The All mode provides read, write, and delete access to
                // a resource": All on the whole container replaces and
                // deletes it (the JavaScript SDK's authorization.spec.ts
                // deletes its container with such a token).
                [] if method == Verb::Put || method == Verb::Delete => {
                    if !whole_container {
                        return Err(forbidden(&grant, "changes the container it is inside"));
                    }
                    needs(grant.mode == PermissionMode::All)
                }
                ["docs", ..] | ["operations", ..] if grant.script.is_some() => Err(forbidden(
                    &grant,
                    "addresses items, and it covers one script",
                )),
                ["docs"] if grant.item_id.is_some() => Err(forbidden(
                    &grant,
                    "covers one item, not the container's feed",
                )),
                ["docs"] => {
                    needs(reads || queries || grant.mode == PermissionMode::All)?;
                    partition()
                }
                ["docs", id] => {
                    if let Some(granted) = &grant.item_id {
                        let id = account
                            .store
                            .item_id_by_rid(db, coll, id)
                            .unwrap_or_else(|| id.to_string());
                        if *granted != id {
                            return Err(forbidden(&grant, "is for another item"));
                        }
                    }
                    needs(reads || grant.mode == PermissionMode::All)?;
                    partition()
                }
                ["operations", "partitionkeydelete"] if grant.item_id.is_none() => {
                    needs(grant.mode == PermissionMode::All)?;
                    partition()
                }
                [segment, id @ ..] if id.len() <= 1 => match ScriptKind::from_segment(segment) {
                    Some(kind) => {
                        let request = ScriptRequest {
                            kind,
                            id: id.first().copied(),
                            reads: reads || (queries && id.is_empty()),
                            runs: kind == ScriptKind::StoredProcedure
                                && method == Verb::Post
                                && !id.is_empty(),
                        };
                        authorize_script(account, &grant, db, coll, headers, &request)
                    }
                    None => Err(master_key_only()),
                },
                _ => Err(master_key_only()),
            }
        }
        _ => Err(master_key_only()),
    }
}

/// What a request does with a script.
struct ScriptRequest<'a> {
    kind: ScriptKind,
    /// `None`: the feed (a list, a query or a create).
    id: Option<&'a str>,
    /// A read, a read feed or a query.
    reads: bool,
    /// Runs a stored procedure (`POST .../sprocs/{id}`).
    runs: bool,
}

/// Whether the grant covers a request for a container's script.
fn authorize_script(
    account: &Account,
    grant: &Grant,
    db: &str,
    coll: &str,
    headers: &dyn RequestOptions,
    request: &ScriptRequest<'_>,
) -> ApiResult<()> {
    let all = grant.mode == PermissionMode::All;
    if grant.item_id.is_some() {
        return Err(forbidden(
            grant,
            "addresses a script, and it covers one item",
        ));
    }
    if let Some(granted) = &grant.script {
        let Some(id) = request.id else {
            return Err(forbidden(
                grant,
                "addresses a script feed, and it covers one script",
            ));
        };
        let rid = account
            .store
            .script(db, coll, request.kind, id)
            .map(|s| s.rid)
            .ok();
        if granted.kind != request.kind || rid.as_deref() != Some(granted.rid.as_str()) {
            return Err(forbidden(grant, "is for another script"));
        }
        return match (request.reads, request.runs) {
            (true, _) => Ok(()),
            (_, true) => Err(forbidden(
                grant,
                "runs a stored procedure, which needs a permission with All on its container",
            )),
            _ if all => Ok(()),
            _ => Err(forbidden(grant, "writes, and the permission is Read")),
        };
    }
    if request.reads {
        return Ok(());
    }
    if !all {
        return Err(forbidden(grant, "writes, and the permission is Read"));
    }
    if request.runs {
        return check_partition(account, grant, db, coll, headers);
    }
    if grant.partition_key.is_some() {
        return Err(forbidden(
            grant,
            "writes a script, which belongs to the whole container, and the permission covers \
             one partition key",
        ));
    }
    Ok(())
}

/// A `resourcePartitionKey` grant: the request must name that partition.
fn check_partition(
    account: &Account,
    grant: &Grant,
    db: &str,
    coll: &str,
    headers: &dyn RequestOptions,
) -> ApiResult<()> {
    let Some(granted) = &grant.partition_key else {
        return Ok(());
    };
    let named = headers
        .partition_key()
        .and_then(|h| account.store.canonical_partition_key(db, coll, h));
    match named {
        Some(key) if key == *granted => Ok(()),
        Some(_) => Err(forbidden(grant, "is for another partition key")),
        None => Err(forbidden(
            grant,
            "is restricted to one partition key, and the request does not send it in \
             x-ms-documentdb-partitionkey (a query across partitions is refused)",
        )),
    }
}

const INSUFFICIENT: &str = "Insufficient permissions provided in the authorization header for \
     the corresponding request. Please retry with another authorization header.";

fn forbidden(grant: &Grant, why: &str) -> ApiError {
    let container = &grant.container_rid;
    let scope = match (&grant.script, &grant.item_id, &grant.partition_key) {
        (Some(script), _, _) => format!(
            "the {} {} of the container {container}",
            script.kind.noun(),
            script.rid
        ),
        (None, Some(id), _) => format!("the item '{id}' of the container {container}"),
        (None, None, Some(pk)) => format!("the partition key {pk} of the container {container}"),
        (None, None, None) => format!("the container {container}"),
    };
    ApiError::new(
        Status::FORBIDDEN,
        format!(
            "{INSUFFICIENT} The resource token grants {:?} on {scope}; this request {why}.",
            grant.mode
        ),
    )
}

fn master_key_only() -> ApiError {
    ApiError::new(
        Status::FORBIDDEN,
        format!(
            "{INSUFFICIENT} A resource token gives access to a container's or an item's data; \
             this request needs the master key."
        ),
    )
}
