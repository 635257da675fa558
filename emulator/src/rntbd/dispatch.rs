//! Direct mode's requests answered: one whole request frame in, the whole
//! response frame out ([`answer`]). The frame's resource type, operation
//! type and name tokens become the operation layer's typed address, its
//! tokens its options (`options.rs`); the request is authenticated as over
//! HTTP (`names.rs`), runs through the same steps (`operations::around`)
//! and the same operation the HTTP adapter calls, and its answer is
//! written back as tokens (`answer.rs`). The connections that call it are
//! `net/`'s. See `docs/src/reference/rntbd.md#operations`.

mod answer;
mod names;
mod options;
#[cfg(test)]
mod tests;

use std::any::Any;
use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::FutureExt;
use uuid::Uuid;

use self::answer::About;
use self::names::Names;
use self::options::TokenOptions;
use crate::account::Account;
use crate::data::store::range_gone;
use crate::operations::{
    self, batch, change_feed, containers, databases, items, query, stored_procedures, users,
    Breakable, Call, ContainerPath, DatabasePath, ItemPath, OperationKind, PermissionPath, Reply,
    RequestOptions, Response, Serving, Target, UserPath,
};
use crate::protocol::error::{ApiError, Status};
use crate::protocol::request_units::Charge;
use crate::protocol::rid;
use crate::rntbd::codec::{OperationType, RequestFrame, ResourceType};

/// Answers one request frame (already known to decode) of a client of
/// `account`'s region `region`, on `connection`, which a fault rule
/// (`connection: reset`...) or a region's outage may break: the response
/// frame, whatever happens (a frame that does not decode after all is a
/// 400; a panic in the operation a 500).
pub(crate) async fn answer(
    account: Arc<Account>,
    region: usize,
    request: Bytes,
    connection: impl Breakable + 'static,
) -> Bytes {
    let serving = Serving::new(&account, region);
    let frame = match RequestFrame::decode(&request) {
        Ok(Some((frame, _))) => frame,
        Ok(None) => return refused(&serving, "The request frame is incomplete."),
        Err(error) => {
            return refused(
                &serving,
                &format!("The request frame is malformed: {error}."),
            )
        }
    };
    let transport = frame.tokens.transport_request_id();
    let names = Names::of(&frame);
    let options = TokenOptions::new(&frame.tokens, frame.operation_type);
    let request = Request {
        serving,
        frame: &frame,
        names,
        options: &options,
    };
    let served = AssertUnwindSafe(async move {
        match request.admit() {
            Ok(()) if operations::nothing_around(&serving) => request.run().await,
            Ok(()) => {
                operations::around(&serving, request, Some(&connection as &dyn Breakable)).await
            }
            Err(refusal) => refusal.into(),
        }
    });
    let response = served.catch_unwind().await.unwrap_or_else(|cause| {
        let cause = panic_message(cause.as_ref());
        // Never a dropped request: the 500 the HTTP adapter answers.
        tracing::error!(activity_id = %frame.activity_id, %cause, "a Direct-mode request panicked");
        ApiError::new(
            Status::INTERNAL_SERVER_ERROR,
            format!(
                "The emulator failed while serving this request, which may not have been \
                 applied. This is a bug in the emulator: please report it with the request and \
                 its ActivityId {}.",
                frame.activity_id
            ),
        )
        .into()
    });
    let database_read = (frame.resource_type, frame.operation_type)
        == (ResourceType::Database, OperationType::Read);
    let about = about(&serving, &names, &options, &response, database_read);
    answer::frame(&serving, frame.activity_id, transport, response, about)
}

/// What a panic said, if it said anything.
fn panic_message(cause: &(dyn Any + Send)) -> &str {
    match cause.downcast_ref::<String>() {
        Some(text) => text,
        None => cause
            .downcast_ref::<&str>()
            .copied()
            .unwrap_or("a panic without a message"),
    }
}

/// A 400 for bytes that are no request frame.
fn refused(serving: &Serving<'_>, message: &str) -> Bytes {
    let response = ApiError::bad_request(message).into();
    let about = About {
        lsn: serving.account.store.session_lsn(),
        ..About::default()
    };
    answer::frame(serving, Uuid::nil(), None, response, about)
}

/// The state an answer names when its operation named none (a refusal, a
/// master resource): the addressed container's range and LSN if it is
/// there, else the store's LSN.
fn about(
    serving: &Serving<'_>,
    names: &Names<'_>,
    options: &TokenOptions<'_>,
    response: &Response,
    database_read: bool,
) -> About {
    let store = &serving.account.store;
    // A refusal may name its container without an LSN (no operation ran).
    let named_lsn = response.headers.container.as_ref().and_then(|c| c.lsn);
    if named_lsn.is_none() {
        if let (Some(db), Some(coll)) = (names.database, names.container) {
            let context = store.container_context_at(
                db,
                coll,
                options.partition_key(),
                options.range_id_text(),
            );
            if let Ok(context) = context {
                let owner = (
                    String::from_utf8_lossy(&context.owner.rid).into_owned(),
                    String::from_utf8_lossy(&context.owner.path).into_owned(),
                );
                return About {
                    lsn: context.lsn,
                    range: context.range,
                    owner: Some(owner),
                };
            }
        }
    }
    // A database's read: its RID and link, from its body.
    let owner = names.database.filter(|_| database_read).and_then(|db| {
        let body: serde_json::Value = serde_json::from_slice(&response.body).ok()?;
        Some((body["_rid"].as_str()?.to_owned(), format!("dbs/{db}")))
    });
    About {
        lsn: store.session_lsn(),
        range: 0,
        owner,
    }
}

/// One request, as the steps around it and its operation read it.
struct Request<'r> {
    serving: Serving<'r>,
    frame: &'r RequestFrame<'r>,
    names: Names<'r>,
    options: &'r TokenOptions<'r>,
}

impl<'r> Request<'r> {
    /// The checks before any step: the signature, the consistency level a
    /// request may ask (only relaxing the account's), and the range a
    /// request aimed at a replica of (410/1002 once it is split).
    fn admit(&self) -> Result<(), ApiError> {
        let account = self.serving.account;
        let Some(path) = names::rest_path(self.frame, &self.names) else {
            return Err(unserved(self.frame));
        };
        names::authenticate(account, self.frame, &path, self.options)?;
        if self.frame.resource_type == ResourceType::Document {
            if let Some(level) = self.options.consistency_level() {
                account.consistency.check_request(level)?;
            }
        }
        if let (Some(db), Some(coll)) = (self.names.database, self.names.container) {
            let aimed = self
                .options
                .range_id_text()
                .map(str::to_owned)
                .or_else(|| self.frame.tokens.replica_path().and_then(replica_range));
            let believed = self.believed_container_rid();
            if aimed.is_none() && believed.is_none() {
                return Ok(());
            }
            let refused = account.store.with_container(db, coll, |c, _| {
                if let Some(believed) = believed.filter(|rid| !rid::is_text_of(&c.rid, rid)) {
                    let believed = rid::from_bytes(&believed);
                    return Ok(Some(name_cache_is_stale(db, coll, &believed, &c.rid)));
                }
                let gone = aimed
                    .filter(|range| c.ranges().by_id(range).is_none())
                    .map(|range| range_gone(&range, c.ranges()));
                Ok(gone.map(|gone| match self.is_point_operation() {
                    true => splitting(gone),
                    false => gone,
                }))
            });
            // A container that is not there: the operation says so.
            if let Ok(Some(refusal)) = refused {
                return Err(refusal);
            }
        }
        Ok(())
    }

    /// The RID of the container the client resolved the names to, when it
    /// sent one: a name-based request's ResourceId is its container's (an
    /// item's or a script's RID begins with it), which is how a replica
    /// tells a client whose cache still holds a container deleted and
    /// created again under the same name.
    fn believed_container_rid(&self) -> Option<[u8; 8]> {
        let under_a_container = matches!(
            self.frame.resource_type,
            ResourceType::Document | ResourceType::StoredProcedure
        );
        let bytes = self.frame.tokens.resource_id()?;
        let container = bytes.get(..8)?.try_into().ok()?;
        under_a_container.then_some(container)
    }

    /// An operation on one item or one partition key (not a feed): the
    /// Java SDK's direct stack retries none of these on 410/1002 (only its
    /// query and change feed fetchers re-read the ranges), but retries a
    /// 410/1007 after refreshing them (`GoneAndRetryWithRetryPolicy`).
    fn is_point_operation(&self) -> bool {
        matches!(
            self.frame.operation_type,
            OperationType::Create
                | OperationType::Upsert
                | OperationType::Read
                | OperationType::Replace
                | OperationType::Delete
                | OperationType::Patch
                | OperationType::Batch
                | OperationType::ExecuteJavaScript
        )
    }

    fn container(&self) -> Result<ContainerPath<'r>, ApiError> {
        Ok(ContainerPath {
            database: self
                .names
                .database
                .ok_or_else(|| missing("DatabaseName (0x0015)"))?,
            container: self
                .names
                .container
                .ok_or_else(|| missing("CollectionName (0x0016)"))?,
        })
    }

    fn database(&self) -> Result<DatabasePath<'r>, ApiError> {
        let database = self.names.database;
        Ok(DatabasePath {
            database: database.ok_or_else(|| missing("DatabaseName (0x0015)"))?,
        })
    }

    fn user(&self) -> Result<UserPath<'r>, ApiError> {
        Ok(UserPath {
            database: self.database()?.database,
            user: self
                .names
                .user
                .ok_or_else(|| missing("UserName (0x0019)"))?,
        })
    }

    fn permission(&self) -> Result<PermissionPath<'r>, ApiError> {
        let user = self.user()?;
        Ok(PermissionPath {
            database: user.database,
            user: user.user,
            id: self
                .names
                .permission
                .ok_or_else(|| missing("PermissionName (0x001A)"))?,
        })
    }

    fn item(&self, id: Option<&'r str>, which: &str) -> Result<ItemPath<'r>, ApiError> {
        let container = self.container()?;
        Ok(ItemPath {
            database: container.database,
            container: container.container,
            id: id.ok_or_else(|| missing(which))?,
        })
    }

    /// The operation the frame asks for, as the HTTP adapter calls it.
    async fn operate(&self) -> Result<Response, ApiError> {
        let serving = &self.serving;
        let options: &dyn RequestOptions = self.options;
        let body = self.frame.payload.unwrap_or_default();
        let document = || self.item(self.names.document, "DocumentName (0x0017)");
        let answer = match (self.frame.resource_type, self.frame.operation_type) {
            (ResourceType::Document, OperationType::Create | OperationType::Upsert) => {
                items::create(serving, self.container()?, options, body).await
            }
            (ResourceType::Document, OperationType::Read) => {
                items::read(serving, document()?, options)
            }
            (ResourceType::Document, OperationType::Replace) => {
                items::replace(serving, document()?, options, body).await
            }
            (ResourceType::Document, OperationType::Patch) => {
                items::patch(serving, document()?, options, body)
            }
            (ResourceType::Document, OperationType::Delete) => {
                items::delete(serving, document()?, options).await
            }
            (ResourceType::Document, OperationType::Query) => {
                query::query(serving, self.container()?, options, body).await
            }
            (ResourceType::Document, OperationType::SqlQuery) => {
                // The body is the SQL text itself.
                let sql = String::from_utf8_lossy(body);
                let body = serde_json::json!({ "query": sql, "parameters": [] }).to_string();
                query::query(serving, self.container()?, options, body.as_bytes()).await
            }
            (ResourceType::Document, OperationType::ReadFeed) => {
                if options
                    .get(operations::RequestOption::ChangeFeedMode)
                    .is_some()
                {
                    change_feed::read(serving, self.container()?, options)
                } else {
                    query::read_feed(serving, self.container()?, options).await
                }
            }
            (ResourceType::Document, OperationType::Batch) => {
                batch::execute(serving, self.container()?, options, body)
            }
            (ResourceType::StoredProcedure, OperationType::ExecuteJavaScript) => {
                let sproc =
                    self.item(self.names.stored_procedure, "StoredProcedureName (0x001B)")?;
                stored_procedures::execute(serving, sproc, options, body).await
            }
            (ResourceType::Database, OperationType::Read) => {
                databases::read(serving, self.database()?)
            }
            (ResourceType::Database, OperationType::ReadFeed) => databases::list(serving),
            (ResourceType::Database, OperationType::Query) => databases::query(serving, body),
            (ResourceType::Collection, OperationType::Read) => {
                containers::read(serving, self.container()?, options)
            }
            (ResourceType::Collection, OperationType::ReadFeed) => {
                containers::list(serving, self.database()?)
            }
            (ResourceType::Collection, OperationType::Query) => {
                containers::query(serving, self.database()?, body)
            }
            (ResourceType::User, OperationType::Read) => users::read_user(serving, self.user()?),
            (ResourceType::User, OperationType::Replace) => {
                users::replace_user(serving, self.user()?, options, body)
            }
            (ResourceType::User, OperationType::ReadFeed) => {
                users::list_users(serving, self.database()?)
            }
            (ResourceType::User, OperationType::Query) => {
                users::query_users(serving, self.database()?, body)
            }
            (ResourceType::Permission, OperationType::Read) => {
                users::read_permission(serving, self.permission()?, options)
            }
            (ResourceType::Permission, OperationType::Replace) => {
                users::replace_permission(serving, self.permission()?, options, body)
            }
            (ResourceType::Permission, OperationType::Delete) => {
                users::delete_permission(serving, self.permission()?, options)
            }
            (ResourceType::Permission, OperationType::ReadFeed) => {
                users::list_permissions(serving, self.user()?, options)
            }
            (ResourceType::Permission, OperationType::Query) => {
                users::query_permissions(serving, self.user()?, options, body)
            }
            (ResourceType::Collection, OperationType::Head) => return self.barrier(),
            (ResourceType::Database, OperationType::HeadFeed) => {
                return Ok(Response::empty(Status::OK, Charge::ZERO))
            }
            _ => return Err(unserved(self.frame)),
        };
        Ok(operations::answered(answer))
    }

    /// A barrier on a container: `200`, no body, its current LSNs (every
    /// replica is the one store: whatever LSN the client waits for is there).
    fn barrier(&self) -> Result<Response, ApiError> {
        let ContainerPath {
            database,
            container,
        } = self.container()?;
        let context = self.serving.account.store.container_context_at(
            database,
            container,
            None,
            self.options.range_id_text(),
        )?;
        let lsn = context.lsn;
        Ok(Response::empty(Status::OK, Charge::ZERO).about(&context, lsn, None))
    }

    async fn run(&self) -> Response {
        self.operate().await.unwrap_or_else(Response::from)
    }

    /// What the steps know of the request: its kind.
    fn kind(&self) -> OperationKind {
        match (self.frame.resource_type, self.frame.operation_type) {
            (ResourceType::Document, op) => match op {
                OperationType::Create => OperationKind::Create,
                OperationType::Upsert => OperationKind::Upsert,
                OperationType::Replace => OperationKind::Replace,
                OperationType::Patch => OperationKind::Patch,
                OperationType::Delete => OperationKind::Delete,
                OperationType::Batch => OperationKind::Batch,
                OperationType::Query | OperationType::SqlQuery => OperationKind::Query,
                OperationType::ReadFeed
                    if self
                        .options
                        .get(operations::RequestOption::ChangeFeedMode)
                        .is_some() =>
                {
                    OperationKind::ChangeFeed
                }
                OperationType::ReadFeed => OperationKind::Query,
                _ => OperationKind::Read,
            },
            (ResourceType::StoredProcedure, OperationType::ExecuteJavaScript) => {
                OperationKind::Script
            }
            (_, OperationType::Replace | OperationType::Delete) => {
                OperationKind::Metadata { changes: true }
            }
            _ => OperationKind::Metadata { changes: false },
        }
    }
}

impl Call<Response> for Request<'_> {
    fn target(&self) -> Target<'_> {
        Target {
            kind: self.kind(),
            database: self.names.database.map(Cow::Borrowed),
            container: self.names.container.map(Cow::Borrowed),
            options: self.options,
        }
    }

    async fn run(self) -> Response {
        Request::run(&self).await
    }

    async fn refuse(self, answer: Response) -> Response {
        answer
    }
}

impl Reply for Response {
    fn status(&self) -> u16 {
        self.status.as_u16()
    }

    fn charge(&self) -> f64 {
        self.headers.charge.map_or(0.0, Charge::ru)
    }

    fn range(&self) -> Option<u32> {
        self.headers.range
    }

    fn container_lsn(&self) -> Option<(&[u8], u64)> {
        let state = self.headers.container.as_ref()?;
        Some((&state.owner.rid[..], state.lsn?))
    }

    fn from_response(response: Response) -> Self {
        response
    }
}

/// The range id in a replica's path (`.../partitions/{range}/replicas/...`).
fn replica_range(path: &str) -> Option<String> {
    let mut segments = path.split('/');
    segments.find(|s| *s == "partitions")?;
    let range = segments.next()?;
    range.parse::<u32>().ok().map(|r| r.to_string())
}

fn missing(token: &str) -> ApiError {
    ApiError::bad_request(format!(
        "The request lacks the token {token}: Direct mode requests address resources by name."
    ))
}

/// The refusal of a request this emulator does not serve over Direct mode.
fn unserved(frame: &RequestFrame<'_>) -> ApiError {
    ApiError::new(
        Status::BAD_REQUEST,
        format!(
            "This emulator does not serve operation type {:#06x} on resource type {:#06x} over \
             Direct mode (RNTBD), or the request lacks the names that address it; send it \
             through the gateway (Gateway mode) instead.",
            frame.operation_type.id(),
            frame.resource_type.id()
        ),
    )
}

/// Substatus 1000, NameCacheIsStale: what a replica answers a request
/// whose container RID is not the one its names now name (JAVA
/// `RntbdRequestManager` makes it an `InvalidPartitionException`, and
/// `StaleResourceRetryPolicy` re-reads the container and retries).
const NAME_CACHE_IS_STALE: u32 = 1000;

fn name_cache_is_stale(db: &str, coll: &str, believed: &str, now: &str) -> ApiError {
    ApiError::new(
        Status::GONE,
        format!(
            "The container '{coll}' of database '{db}' has the RID {now}, not {believed}: it was \
             deleted and created again since the client resolved its name. Read the container \
             again (the SDKs do, and retry)."
        ),
    )
    .with_substatus(NAME_CACHE_IS_STALE)
}

/// Substatus 1007, PartitionKeyRangeIsSplitting: what a point operation
/// aimed at a split range is answered, so that the SDK refreshes its
/// ranges and retries on the child that now holds the key.
const PARTITION_KEY_RANGE_IS_SPLITTING: u32 = 1007;

/// `gone` (410/1002) as a point operation is told it: 410/1007.
fn splitting(gone: ApiError) -> ApiError {
    gone.with_substatus(PARTITION_KEY_RANGE_IS_SPLITTING)
}
