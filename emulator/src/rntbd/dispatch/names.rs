//! What a request frame addresses, from its name tokens (DatabaseName,
//! CollectionName, DocumentName, StoredProcedureName...), and the checks of
//! who sent it: the link the client signed, rebuilt from those names as
//! over HTTP (verb by operation, resource type segment, link), verified
//! with the account's key, a resource token's permission asked of
//! `operations::authorization`, or a Microsoft Entra token checked as
//! `protocol::entra_token` checks it. See `docs/src/reference/rntbd.md#signature`.

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use super::options::TokenOptions;
use crate::account::Account;
use crate::operations::authorization::{self, Access, Verb};
use crate::operations::resource_token;
use crate::protocol::auth;
use crate::protocol::entra_token;
use crate::protocol::error::{ApiError, ApiResult};
use crate::rntbd::codec::{OperationType, RequestFrame, ResourceType};

/// The names a request frame carries (ids verbatim, not URL-encoded).
#[derive(Debug, Clone, Copy, Default)]
pub struct Names<'a> {
    pub database: Option<&'a str>,
    pub container: Option<&'a str>,
    pub document: Option<&'a str>,
    pub stored_procedure: Option<&'a str>,
    pub user: Option<&'a str>,
    pub permission: Option<&'a str>,
}

impl<'a> Names<'a> {
    pub fn of(frame: &RequestFrame<'a>) -> Self {
        let tokens = &frame.tokens;
        Names {
            database: tokens.database_name(),
            container: tokens.collection_name(),
            document: tokens.document_name(),
            stored_procedure: tokens.stored_procedure_name(),
            user: tokens.user_name(),
            permission: tokens.permission_name(),
        }
    }
}

/// What a path segment escapes: all but RFC 3986's unreserved characters,
/// so that decoding each segment once gives the name back.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The REST path the request stands for (`/dbs/db/colls/c/docs/a`, a
/// feed's `/dbs/db/colls/c/docs`), each name percent-encoded: the path
/// whose signature the client sent, for `protocol::auth`.
pub fn rest_path(frame: &RequestFrame<'_>, names: &Names<'_>) -> Option<String> {
    let mut path = String::with_capacity(64);
    let mut push = |segment: &str, name: Option<&str>| -> Option<()> {
        path.push('/');
        path.push_str(segment);
        if let Some(name) = name {
            path.push('/');
            path.extend(utf8_percent_encode(name, SEGMENT));
        }
        Some(())
    };
    let item = !matches!(
        frame.operation_type,
        OperationType::Create
            | OperationType::Upsert
            | OperationType::Query
            | OperationType::SqlQuery
            | OperationType::ReadFeed
            | OperationType::Batch
            | OperationType::HeadFeed
    );
    match frame.resource_type {
        ResourceType::Database if item => push("dbs", Some(names.database?))?,
        ResourceType::Database => push("dbs", None)?,
        ResourceType::Collection => {
            push("dbs", Some(names.database?))?;
            push("colls", if item { Some(names.container?) } else { None })?;
        }
        ResourceType::Document => {
            push("dbs", Some(names.database?))?;
            push("colls", Some(names.container?))?;
            push("docs", if item { Some(names.document?) } else { None })?;
        }
        ResourceType::StoredProcedure => {
            push("dbs", Some(names.database?))?;
            push("colls", Some(names.container?))?;
            let sproc = match item {
                true => Some(names.stored_procedure?),
                false => None,
            };
            push("sprocs", sproc)?;
        }
        ResourceType::User => {
            push("dbs", Some(names.database?))?;
            push("users", if item { Some(names.user?) } else { None })?;
        }
        ResourceType::Permission => {
            push("dbs", Some(names.database?))?;
            push("users", Some(names.user?))?;
            push(
                "permissions",
                if item { Some(names.permission?) } else { None },
            )?;
        }
        _ => return None,
    }
    Some(path)
}

/// The verb a client signs for an operation (as the Java SDK's
/// `RxDocumentClientImpl` maps it to its HTTP method).
pub fn verb(operation: OperationType) -> Verb {
    match operation {
        OperationType::Create
        | OperationType::Upsert
        | OperationType::Query
        | OperationType::SqlQuery
        | OperationType::ExecuteJavaScript
        | OperationType::Batch
        | OperationType::QueryPlan => Verb::Post,
        OperationType::Replace => Verb::Put,
        OperationType::Delete => Verb::Delete,
        OperationType::Patch => Verb::Patch,
        OperationType::Head | OperationType::HeadFeed => Verb::Head,
        _ => Verb::Get,
    }
}

fn verb_text(verb: Verb) -> &'static str {
    match verb {
        Verb::Get => "GET",
        Verb::Head => "HEAD",
        Verb::Post => "POST",
        Verb::Put => "PUT",
        Verb::Patch => "PATCH",
        Verb::Delete => "DELETE",
    }
}

/// Checks the request's AuthorizationToken against the link rebuilt from
/// its names and its Date token: a master-key signature with the key, a
/// resource token by its permission. A bad signature is a 401, as over HTTP.
pub fn authenticate(
    account: &Account,
    frame: &RequestFrame<'_>,
    path: &str,
    options: &TokenOptions<'_>,
) -> ApiResult<()> {
    let authorization = frame.tokens.authorization_token();
    let verb = verb(frame.operation_type);
    let query = matches!(
        frame.operation_type,
        OperationType::Query | OperationType::SqlQuery
    );
    if let Some(token) = resource_token::signature(authorization) {
        let access = Access {
            verb,
            query,
            path,
            options,
        };
        return authorization::authorize(account, &access, &token);
    }
    if let Some(jwt) = entra_token::token(authorization) {
        // A token credential's (Microsoft Entra ID), as over HTTP: the
        // data plane only.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        return entra_token::verify(&account.key, &jwt, (verb_text(verb), path, query), now);
    }
    if authorization.is_none() {
        return Err(ApiError::unauthorized(
            "Required token AuthorizationToken (0x0001) is missing: sign the request as over \
             HTTP (verb, resource type, resource link, date).",
        ));
    }
    // The names are each decoded once, as signed: the compute gateway's
    // reading (the routing gateway's quirks belong to URLs, not names).
    auth::verify_at(
        auth::Gateway::Compute,
        &account.key,
        &auth::SignedRequest {
            verb: verb_text(verb),
            path,
            authorization,
            x_ms_date: frame.tokens.date(),
            date: None,
        },
        std::time::SystemTime::now(),
    )
}
