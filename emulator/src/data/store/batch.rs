//! Transactional batch and bulk: several item operations in one container,
//! applied under the store's one write lock.
//!
//! - **Atomic** (a transactional batch, one logical partition): every
//!   operation is staged against an overlay of the container (what the batch
//!   has written so far over what is stored), so the container itself is not
//!   touched. The first failure ends the batch: that operation gets its own
//!   status, every other one 424, and the overlay is dropped, so no reader
//!   ever sees any of it (readers take the lock shared, after or before the
//!   whole batch). When all succeed, the staged writes are installed in
//!   order under **one LSN** of the container's change log (the service's
//!   `_lsn` "is a batch ID").
//! - **Bulk**: the operations are applied one by one, each staged and
//!   installed by itself under its own LSN, each with its own result; after a
//!   failure the rest are 424 unless the client asked to continue on error.
//!
//! TTL holds as for single writes (R5, R9): an expired item is absent to
//! every operation and its id free to create; when a write takes the id of an
//! expired item, that item's TTL delete is logged first, as a single write
//! does; an invalid `ttl` fails its operation with the single write's message.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::checks::{check_if_match, checked_partition_key, checked_write, edited};
use super::purging::live_or_discard;
use super::{Container, Item, Store, WriteMode, Written};
use crate::data::ttl::{self, Ttl};
use crate::protocol::error::{ApiError, ApiResult, Status};
use crate::protocol::item_key::ItemKey;

/// A patch as a batch carries it: the new body made of the current one
/// (its condition checked first).
pub type Edit = Box<dyn FnOnce(Map<String, Value>) -> ApiResult<Map<String, Value>> + Send>;

/// What one operation does.
pub enum Action {
    Create(Map<String, Value>),
    Upsert(Map<String, Value>),
    Read,
    Replace(Map<String, Value>),
    Delete,
    Patch(Edit),
}

/// One operation of a batch or bulk request.
pub struct Operation {
    pub action: Action,
    /// The id it addresses (read, replace, delete, patch).
    pub id: Option<String>,
    /// Its own partition key, as a header value (`["a"]`), if it names one.
    pub partition_key: Option<String>,
    pub if_match: Option<String>,
    pub if_none_match: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchMode {
    Atomic,
    Bulk { continue_on_error: bool },
}

/// One operation's result.
#[derive(Debug)]
pub struct Outcome {
    pub status: Status,
    /// The item read or written (none for a delete, a 304 or a failure).
    pub item: Option<Item>,
    /// Why it failed (none for a 424: another operation failed).
    pub error: Option<ApiError>,
}

impl Outcome {
    fn done(status: Status, item: Option<Item>) -> Self {
        Outcome {
            status,
            item,
            error: None,
        }
    }

    fn failed(error: ApiError) -> Self {
        Outcome {
            status: error.status,
            item: None,
            error: Some(error),
        }
    }

    fn failed_dependency() -> Self {
        Outcome::done(Status::FAILED_DEPENDENCY, None)
    }

    pub fn is_failure(&self) -> bool {
        self.status.is_failure()
    }
}

/// What a commit wrote: `Some(earliest expiry)` when anything was written.
type CommitExpiry = Option<Option<i64>>;

impl Store {
    /// Runs a transactional batch (`BatchMode::Atomic`, all in the partition
    /// `partition_key_header`) or a bulk request; one result per operation,
    /// in order, and its range's LSN once it ran (the one a batch's writes
    /// share). A request-level refusal (the container, the partition
    /// key, an operation for another partition) is an `Err` and changes
    /// nothing.
    pub fn batch(
        &self,
        database: &str,
        container: &str,
        partition_key_header: Option<&str>,
        operations: Vec<Operation>,
        mode: BatchMode,
    ) -> ApiResult<(Vec<Outcome>, u64)> {
        let now = self.clock.now();
        let mut catalog = self.write()?;
        let c = catalog.database_mut(database)?.container_mut(container)?;
        let (outcomes, written) = match mode {
            BatchMode::Atomic => atomic(c, partition_key_header, operations, now)?,
            BatchMode::Bulk { continue_on_error } => {
                bulk(c, partition_key_header, operations, continue_on_error, now)
            }
        };
        // The LSN of the batch's range (a bulk request's may span several:
        // the highest).
        let key = partition_key_header.and_then(|h| c.partition_key().key_from_header(h).ok());
        let lsn = match key {
            Some(pk) => c.range_lsn(c.range_of(&pk)),
            None => c.ranges().highest_lsn(),
        };
        drop(catalog);
        if let Some(expires) = written {
            self.item_written(expires);
        }
        Ok((outcomes, lsn))
    }
}

fn atomic(
    c: &mut Container,
    header: Option<&str>,
    operations: Vec<Operation>,
    now: i64,
) -> ApiResult<(Vec<Outcome>, CommitExpiry)> {
    let pk = Store::key_from_header(c, header, "-")?.pk().to_string();
    check_one_partition(c, &pk, &operations)?;
    let count = operations.len();
    let mut stage = Stage::new(c, now);
    let mut outcomes = Vec::with_capacity(count);
    for (index, operation) in operations.into_iter().enumerate() {
        match stage.apply(&pk, operation) {
            Ok(outcome) => outcomes.push(outcome),
            Err(error) => {
                // Rolled back: the stage is dropped, the container untouched.
                let mut outcomes: Vec<Outcome> =
                    (0..count).map(|_| Outcome::failed_dependency()).collect();
                outcomes[index] = Outcome::failed(error);
                return Ok((outcomes, None));
            }
        }
    }
    let writes = stage.writes;
    Ok((outcomes, commit(c, writes, now)))
}

/// The service refuses a whole batch in which an operation names another
/// logical partition than the request's. An item body of another partition
/// fails its own operation instead (400, the others 424), as the Python
/// SDK's `test_batch_create` sees it.
fn check_one_partition(c: &Container, pk: &str, operations: &[Operation]) -> ApiResult<()> {
    for operation in operations {
        if let Some(own) = &operation.partition_key {
            if c.partition_key().key_from_header(own)? != pk {
                return Err(ApiError::bad_request(
                    "One or more operations within the batch request have a different partition key value than the request.",
                ));
            }
        }
    }
    Ok(())
}

fn bulk(
    c: &mut Container,
    header: Option<&str>,
    operations: Vec<Operation>,
    continue_on_error: bool,
    now: i64,
) -> (Vec<Outcome>, CommitExpiry) {
    let mut outcomes = Vec::with_capacity(operations.len());
    let mut written: CommitExpiry = None;
    let mut stopped = false;
    for operation in operations {
        if stopped {
            outcomes.push(Outcome::failed_dependency());
            continue;
        }
        let staged = operation_partition(c, header, &operation).and_then(|pk| {
            let mut stage = Stage::new(c, now);
            let outcome = stage.apply(&pk, operation)?;
            Ok((outcome, stage.writes))
        });
        match staged {
            Ok((outcome, writes)) => {
                if let Some(expires) = commit(c, writes, now) {
                    written = Some(earliest(written.flatten(), expires));
                }
                outcomes.push(outcome);
            }
            Err(error) => {
                outcomes.push(Outcome::failed(error));
                stopped = !continue_on_error;
            }
        }
    }
    (outcomes, written)
}

/// A bulk operation's partition: its own, else the request's, else (create
/// and upsert) its body's.
fn operation_partition(
    c: &Container,
    header: Option<&str>,
    operation: &Operation,
) -> ApiResult<String> {
    if let Some(given) = operation.partition_key.as_deref().or(header) {
        return c.partition_key().key_from_header(given);
    }
    match &operation.action {
        Action::Create(body) | Action::Upsert(body) => Ok(c.partition_key().key_of(body)),
        _ => Ok(Store::key_from_header(c, None, "-")?.pk().to_string()),
    }
}

fn earliest(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Installs staged writes in order under one new LSN. An expired item whose
/// id a write takes has its TTL delete logged first (as a single write does).
pub(super) fn commit(
    c: &mut Container,
    writes: Vec<(ItemKey, Option<Item>)>,
    now: i64,
) -> CommitExpiry {
    if writes.is_empty() {
        return None;
    }
    for (key, _) in &writes {
        live_or_discard(c, key, now);
    }
    // One logical partition (a batch's, a script's): one range.
    let lsns = c.next_lsn(writes[0].0.pk());
    let mut expires = None;
    for (key, version) in writes {
        match version {
            Some(mut item) => {
                item.stamp(lsns);
                expires = earliest(expires, ttl::expires_at(c.default_ttl(), item.ttl, item.ts));
                c.install(key, item);
            }
            None => {
                c.remove_under(&key, now, lsns);
            }
        }
    }
    Some(expires)
}

/// What a stage has written so far, apart from the container it overlays:
/// a batch drops it or commits it under one hold of the lock; a script's
/// transaction (`transaction.rs`) keeps it between holds.
pub(super) struct Staged {
    /// Each key the stage wrote: its new version, or `None` once deleted.
    overlay: HashMap<ItemKey, Option<Item>>,
    /// The writes in order, to install on commit.
    pub(super) writes: Vec<(ItemKey, Option<Item>)>,
    /// The number the next new item gets (the last part of its RID).
    next_number: u64,
    /// The unique key entries of each item the stage wrote (see
    /// `unique_keys.rs`); empty without a unique key policy.
    staged_unique: HashMap<ItemKey, Vec<String>>,
}

impl Staged {
    pub(super) fn new(c: &Container) -> Self {
        Staged {
            overlay: HashMap::new(),
            writes: Vec::new(),
            next_number: c.next_number(),
            staged_unique: HashMap::new(),
        }
    }

    /// The version staged at `key`: `Some(None)` once deleted, `None` if untouched.
    pub(super) fn staged(&self, key: &ItemKey) -> Option<Option<&Item>> {
        self.overlay.get(key).map(Option::as_ref)
    }

    /// The live versions staged in the partition `pk`.
    pub(super) fn staged_in<'a>(
        &'a self,
        pk: &'a str,
    ) -> impl Iterator<Item = (&'a ItemKey, &'a Item)> + 'a {
        self.overlay
            .iter()
            .filter(move |(key, _)| key.pk() == pk)
            .filter_map(|(key, item)| item.as_ref().map(|item| (key, item)))
    }
}

/// Operations applied to an overlay of a container, which stays untouched.
pub(super) struct Stage<'c> {
    c: &'c Container,
    now: i64,
    overlay: HashMap<ItemKey, Option<Item>>,
    writes: Vec<(ItemKey, Option<Item>)>,
    next_number: u64,
    staged_unique: HashMap<ItemKey, Vec<String>>,
}

impl<'c> Stage<'c> {
    fn new(c: &'c Container, now: i64) -> Self {
        Self::resume(c, now, Staged::new(c))
    }

    /// A stage over `c` that goes on from what `staged` holds.
    pub(super) fn resume(c: &'c Container, now: i64, staged: Staged) -> Self {
        let Staged {
            overlay,
            writes,
            next_number,
            staged_unique,
        } = staged;
        Stage {
            c,
            now,
            overlay,
            writes,
            next_number,
            staged_unique,
        }
    }

    /// What the stage holds, to resume it under a later hold of the lock.
    pub(super) fn suspend(self) -> Staged {
        Staged {
            overlay: self.overlay,
            writes: self.writes,
            next_number: self.next_number,
            staged_unique: self.staged_unique,
        }
    }

    /// The live item at `key` as the batch sees it so far; expired items
    /// are absent (R5).
    fn current(&self, key: &ItemKey) -> Option<&Item> {
        match self.overlay.get(key) {
            Some(staged) => staged.as_ref(),
            None => self.c.get(key, self.now),
        }
    }

    /// The live item at `key`, once `If-Match` holds; absent is a 404.
    fn existing(&self, key: &ItemKey, if_match: Option<&str>) -> ApiResult<&Item> {
        let item = self.current(key).ok_or_else(ApiError::not_found)?;
        check_if_match(if_match, item.etag)?;
        Ok(item)
    }

    fn put(&mut self, key: ItemKey, body: Map<String, Value>, ttl: Option<Ttl>) -> ApiResult<Item> {
        // A stage writes one logical partition, so one physical partition:
        // its new items take that range's next RID counters in turn, one
        // for each number it gave before. (A script's stage outlives a hold
        // of the lock: if the container took new items meanwhile, the
        // commit is refused, and these RIDs are never stored.)
        let staged_before = self.next_number.saturating_sub(self.c.next_number());
        let numbers = match self.current(&key) {
            Some(item) => (item.number, item.rid),
            None => (self.next_number, self.c.next_rid(&key) + staged_before),
        };
        let number = numbers.0;
        let entries = self.check_unique(&key, &body)?;
        let item = self.c.version(numbers, body, ttl, self.now)?;
        // Checked and built: from here on nothing fails.
        if number == self.next_number {
            self.next_number += 1;
        }
        if !entries.is_empty() {
            self.staged_unique.insert(key.clone(), entries);
        }
        self.overlay.insert(key.clone(), Some(item.clone()));
        self.writes.push((key, Some(item.clone())));
        Ok(item)
    }

    /// The unique key entries of `body` as the item at `key`, refused (409)
    /// when another live item as the batch sees it holds one: one the stage
    /// wrote, or a stored one the stage has not rewritten or deleted.
    fn check_unique(&self, key: &ItemKey, body: &Map<String, Value>) -> ApiResult<Vec<String>> {
        let entries = self.c.unique_entries(key, body);
        for entry in &entries {
            let staged = self
                .staged_unique
                .iter()
                .any(|(other, held)| other != key && held.contains(entry));
            let stored = self
                .c
                .unique_holder(entry, key, self.now)
                .is_some_and(|holder| !self.overlay.contains_key(holder));
            if staged || stored {
                return Err(self.c.unique_conflict(entry));
            }
        }
        Ok(entries)
    }

    /// A create, upsert or replace (of the item `url_id`), as a single write.
    fn write(
        &mut self,
        pk: &str,
        mode: WriteMode,
        url_id: Option<&str>,
        mut body: Map<String, Value>,
        if_match: Option<&str>,
    ) -> ApiResult<Outcome> {
        let (id, item_ttl) = checked_write(&mut body)?;
        if checked_partition_key(self.c, &body, None)? != pk {
            return Err(ApiError::bad_request(
                "PartitionKey extracted from document doesn't match the one specified in the header.",
            ));
        }
        let key = ItemKey::new(pk, &id);
        if let Some(old_id) = url_id.filter(|url_id| *url_id != id) {
            return self.rename(ItemKey::new(pk, old_id), key, body, item_ttl, if_match);
        }
        let existing = self.current(&key).map(|item| item.etag);
        let written = match (mode, existing) {
            (WriteMode::Create, Some(_)) => return Err(ApiError::conflict()),
            (WriteMode::Replace, None) => return Err(ApiError::not_found()),
            (_, Some(etag)) => {
                check_if_match(if_match, etag)?;
                Written::Replaced
            }
            (_, None) => Written::Created,
        };
        let item = self.put(key, body, item_ttl)?;
        Ok(Outcome::done(written.status(), Some(item)))
    }

    /// A replace whose body names a new id, as a single write does it: the
    /// item at `from` is deleted and written anew at `to`.
    fn rename(
        &mut self,
        from: ItemKey,
        to: ItemKey,
        body: Map<String, Value>,
        item_ttl: Option<Ttl>,
        if_match: Option<&str>,
    ) -> ApiResult<Outcome> {
        self.existing(&from, if_match)?;
        if self.current(&to).is_some() {
            return Err(ApiError::conflict());
        }
        // The old item leaves first (its unique values are free to the new
        // one); if the new one is refused, the stage is as it was, as a
        // script's transaction goes on after a failed operation.
        let unique = self.staged_unique.remove(&from);
        let previous = self.overlay.insert(from.clone(), None);
        self.writes.push((from.clone(), None));
        match self.put(to, body, item_ttl) {
            Ok(item) => Ok(Outcome::done(Written::Replaced.status(), Some(item))),
            Err(error) => {
                self.writes.pop();
                match previous {
                    Some(version) => self.overlay.insert(from.clone(), version),
                    None => self.overlay.remove(&from),
                };
                if let Some(unique) = unique {
                    self.staged_unique.insert(from, unique);
                }
                Err(error)
            }
        }
    }

    /// Applies one operation in the partition `pk`; an `Err` is its failure.
    pub(super) fn apply(&mut self, pk: &str, operation: Operation) -> ApiResult<Outcome> {
        let Operation {
            action,
            id,
            if_match,
            if_none_match,
            ..
        } = operation;
        let if_match = if_match.as_deref();
        let key = |id: &str| ItemKey::new(pk, id);
        let addressed = || {
            id.clone().ok_or_else(|| {
                ApiError::bad_request("The operation must name the item it addresses: send 'id'.")
            })
        };
        match action {
            Action::Create(body) => self.write(pk, WriteMode::Create, None, body, if_match),
            Action::Upsert(body) => self.write(pk, WriteMode::Upsert, None, body, if_match),
            Action::Replace(body) => {
                let id = addressed()?;
                self.write(pk, WriteMode::Replace, Some(&id), body, if_match)
            }
            Action::Read => {
                let item = self.existing(&key(&addressed()?), if_match)?;
                if if_none_match.as_deref() == Some(item.etag.to_string().as_str()) {
                    return Ok(Outcome::done(Status::NOT_MODIFIED, None));
                }
                Ok(Outcome::done(Status::OK, Some(item.clone())))
            }
            Action::Delete => {
                let key = key(&addressed()?);
                self.existing(&key, if_match)?;
                self.staged_unique.remove(&key);
                self.overlay.insert(key.clone(), None);
                self.writes.push((key, None));
                Ok(Outcome::done(Status::NO_CONTENT, None))
            }
            Action::Patch(edit) => {
                let id = addressed()?;
                let key = key(&id);
                let current = self.existing(&key, if_match)?;
                let (body, item_ttl) = edited(self.c, &key, &id, current, edit)?;
                let item = self.put(key, body, item_ttl)?;
                Ok(Outcome::done(Written::Replaced.status(), Some(item)))
            }
        }
    }
}
