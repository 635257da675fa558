//! A script's transaction: the item writes of one stored procedure or
//! trigger execution, in one logical partition, staged outside the store
//! and installed together, or not at all.
//!
//! A script runs for up to the service's time bound, so it holds no lock
//! while it runs: each of its operations takes the lock shared for itself
//! and applies to the container *as the transaction sees it* (the stored
//! items under what the transaction has written so far, `batch::Staged`).
//! Nothing staged is visible to anyone else. The commit takes the lock
//! exclusively once and installs every write under one LSN of the change
//! log (one change feed entry, as a batch), provided that nothing else
//! wrote to the container since the transaction began; otherwise it is a
//! [`Conflict`] and the caller runs the script again (optimistic
//! concurrency: serializable, and no reader ever sees part of it).
//!
//! TTL holds as on every other path: expired items are absent to the
//! transaction, its items take the commit's `_ts` (and expire from it),
//! and a purge cannot delete what is only staged.

use serde_json::{Map, Value};

use super::batch::{commit, Outcome, Stage, Staged};
use super::{Container, Item, Operation, Store, Written};
use crate::data::query::search;
use crate::protocol::error::ApiResult;
use crate::protocol::json;
use crate::protocol::partition_key::KeyScope;

/// One execution's staged writes and what they were staged against.
pub struct Transaction {
    database: String,
    container: String,
    /// The canonical partition key of the request (`["a"]`).
    pk: String,
    /// The transaction's instant: what is expired, and its writes' `_ts`.
    now: i64,
    /// The container's last LSN and next item number when it began: if
    /// either moved, someone else wrote meanwhile.
    base_lsn: u64,
    base_number: u64,
    staged: Option<Staged>,
    /// What its operations read and wrote so far.
    work: ScriptWork,
}

/// What a script's operations read and wrote, for its charge
/// (`http/script_runs.rs` prices it): the service charges a stored
/// procedure for the work it does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScriptWork {
    /// Items read by id, and their bytes.
    pub reads: usize,
    pub read_bytes: usize,
    /// Items its queries and feeds loaded, and their bytes.
    pub loaded: usize,
    pub loaded_bytes: usize,
    /// Items created (an upsert that created counts), replaced (and
    /// patched, and upserted over), deleted; and the bytes written.
    pub inserts: usize,
    pub replaces: usize,
    pub deletes: usize,
    pub written_bytes: usize,
}

/// The container changed while the transaction ran: run it again.
#[derive(Debug)]
pub struct Conflict;

/// What a commit did.
#[derive(Debug, Clone, Copy)]
pub struct Committed {
    /// The container's last LSN after it (the session token's).
    pub lsn: u64,
    /// The range of the transaction's partition.
    pub range: u32,
    /// How many writes it installed.
    pub writes: usize,
    /// What the execution read and wrote (its charge).
    pub work: ScriptWork,
}

impl Transaction {
    /// The canonical partition key it is scoped to.
    pub fn partition_key(&self) -> &str {
        &self.pk
    }

    pub fn now(&self) -> i64 {
        self.now
    }

    /// How many writes are staged.
    pub fn write_count(&self) -> usize {
        self.staged.as_ref().map_or(0, |s| s.writes.len())
    }
}

/// A container's database and its own name and RID, as a script's links
/// name them.
#[derive(Debug, Clone)]
pub struct ContainerNames {
    pub database: String,
    pub database_rid: String,
    pub container: String,
    pub container_rid: String,
}

impl Store {
    /// The names and RIDs of a container addressed by either.
    pub fn container_names(&self, database: &str, container: &str) -> ApiResult<ContainerNames> {
        let catalog = self.read();
        let db = catalog.database(database)?;
        let c = db.container(container)?;
        Ok(ContainerNames {
            database: db.id.clone(),
            database_rid: db.rid.clone(),
            container: c.id.clone(),
            container_rid: c.rid.clone(),
        })
    }

    /// Begins a transaction in the logical partition the header names
    /// (required when the container is partitioned, as for a point read).
    pub fn begin_transaction(
        &self,
        database: &str,
        container: &str,
        partition_key_header: Option<&str>,
    ) -> ApiResult<Transaction> {
        self.with_container(database, container, |c, now| {
            let key = Self::key_from_header(c, partition_key_header, "-")?;
            Ok(Transaction {
                database: database.to_string(),
                container: container.to_string(),
                pk: key.pk().to_string(),
                now,
                base_lsn: c.log().last_lsn(),
                base_number: c.next_number(),
                staged: Some(Staged::new(c)),
                work: ScriptWork::default(),
            })
        })
    }

    /// Begins the transaction of an item write: in the partition the header
    /// names or, without one, the item's own (as a create without the
    /// header is routed).
    pub fn begin_transaction_for(
        &self,
        database: &str,
        container: &str,
        partition_key_header: Option<&str>,
        item: Option<&Map<String, Value>>,
    ) -> ApiResult<Transaction> {
        let derived = match (partition_key_header, item) {
            (None, Some(item)) => Some(self.with_container(database, container, |c, _| {
                Ok(c.partition_key().key_of(item))
            })?),
            _ => None,
        };
        self.begin_transaction(
            database,
            container,
            partition_key_header.or(derived.as_deref()),
        )
    }

    /// Applies one item operation within the transaction; an `Err` is that
    /// operation's failure and leaves the transaction as it was.
    pub fn transact(&self, tx: &mut Transaction, operation: Operation) -> ApiResult<Outcome> {
        let catalog = self.read();
        let c = catalog.database(&tx.database)?.container(&tx.container)?;
        let staged = tx.staged.take().unwrap_or_else(|| Staged::new(c));
        let mut stage = Stage::resume(c, tx.now, staged);
        let reads = matches!(operation.action, super::Action::Read);
        let deletes = matches!(operation.action, super::Action::Delete);
        let outcome = stage.apply(&tx.pk, operation);
        tx.staged = Some(stage.suspend());
        if let Ok(done) = &outcome {
            let bytes = done.item.as_ref().map_or(0, |item| item.body.len());
            let work = &mut tx.work;
            if reads {
                work.reads += 1;
                work.read_bytes += bytes;
            } else if deletes {
                work.deletes += 1;
            } else {
                // A create, or an upsert that created.
                match done.status == Written::Created.status() {
                    true => work.inserts += 1,
                    false => work.replaces += 1,
                }
                work.written_bytes += bytes;
            }
        }
        outcome
    }

    /// The live items of the transaction's partition as it sees them, in
    /// write order (by item number; those it created last), parsed (for
    /// its queries and feeds).
    pub fn transaction_items(&self, tx: &mut Transaction) -> ApiResult<Vec<Value>> {
        let catalog = self.read();
        let c = catalog.database(&tx.database)?.container(&tx.container)?;
        let scope = KeyScope::Exact(tx.pk.clone());
        let mut items: Vec<(u64, &[u8])> = Vec::new();
        let staged = tx.staged.as_ref();
        for (number, key, item) in c.live_items(Some(&scope), None, tx.now) {
            if staged.and_then(|s| s.staged(key)).is_none() {
                items.push((number, &item.body));
            }
        }
        if let Some(staged) = staged {
            items.extend(
                staged
                    .staged_in(&tx.pk)
                    .map(|(_, i)| (i.number, &i.body[..])),
            );
            items.sort_by_key(|(number, _)| *number);
        }
        tx.work.loaded += items.len();
        tx.work.loaded_bytes += items.iter().map(|(_, body)| body.len()).sum::<usize>();
        Ok(items
            .into_iter()
            .map(|(_, body)| json::parse_unguarded(body).expect("stored items are JSON"))
            .collect())
    }

    /// The search policies of the transaction's container, which its
    /// queries read.
    pub fn transaction_search_policies(&self, tx: &Transaction) -> ApiResult<search::Policies> {
        let catalog = self.read();
        let c = catalog.database(&tx.database)?.container(&tx.container)?;
        Ok(c.settings.search_policies())
    }

    /// The id of the item with this RID in the transaction's partition, as
    /// it sees it (a link built from `_self`).
    pub fn transaction_id_by_rid(&self, tx: &Transaction, item_rid: &str) -> Option<String> {
        let (_, _, rid) = crate::protocol::rid::parse_item(item_rid)?;
        if let Some((key, _)) = tx
            .staged
            .as_ref()
            .and_then(|s| s.staged_in(&tx.pk).find(|(_, item)| item.rid == rid))
        {
            return Some(key.id().to_string());
        }
        let catalog = self.read();
        let c = catalog
            .database(&tx.database)
            .ok()?
            .container(&tx.container)
            .ok()?;
        c.key_by_rid(item_rid)
            .filter(|key| key.pk() == tx.pk)
            .map(|key| key.id().to_string())
    }

    /// Installs the transaction's writes under one LSN, or refuses with a
    /// [`Conflict`] if the container was written since it began (nothing
    /// is installed then). A transaction that wrote nothing commits as is.
    pub fn commit_transaction(&self, tx: Transaction) -> ApiResult<Result<Committed, Conflict>> {
        let work = tx.work;
        let writes = tx.staged.map(|s| s.writes).unwrap_or_default();
        if writes.is_empty() {
            return self.with_container(&tx.database, &tx.container, |c, _| {
                Ok(Ok(committed(c, &tx.pk, 0, work)))
            });
        }
        let mut catalog = self.write()?;
        let c = catalog
            .database_mut(&tx.database)?
            .container_mut(&tx.container)?;
        if c.log().last_lsn() != tx.base_lsn || c.next_number() != tx.base_number {
            return Ok(Err(Conflict));
        }
        let count = writes.len();
        // Its items are written now: their `_ts`, from which they expire,
        // is the commit's (the clock may have moved while the script ran).
        let now = self.clock.now();
        let writes = writes
            .into_iter()
            .map(|(key, item)| (key, item.map(|item| restamped(item, now))))
            .collect();
        let written = commit(c, writes, now);
        let done = committed(c, &tx.pk, count, work);
        drop(catalog);
        if let Some(expires) = written {
            self.item_written(expires);
        }
        Ok(Ok(done))
    }
}

/// `item` as written at `now` (unchanged if it was).
fn restamped(mut item: Item, now: i64) -> Item {
    if item.ts == now {
        return item;
    }
    let mut body: Map<String, Value> =
        json::parse_unguarded(&item.body).expect("a staged item is JSON");
    body.insert("_ts".into(), Value::from(now));
    item.body = serde_json::to_vec(&body)
        .expect("a JSON map serialises")
        .into();
    item.ts = now;
    item
}

fn committed(c: &Container, pk: &str, writes: usize, work: ScriptWork) -> Committed {
    let range = c.range_of(pk);
    Committed {
        lsn: c.range_lsn(range),
        range,
        writes,
        work,
    }
}
