//! Databases and containers as requests create, read, replace and delete
//! them, and the container an item request addresses (the `Container`
//! itself is `container/`). Each takes the lock once; one that changes a
//! database, or a container's settings or ranges, marks the catalog's
//! metadata changed, so that the journal writes it with the operation.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::checks::check_if_match;
use super::{
    encryption_policy, item, offer, ranges, validate_name, Container, ContainerContext,
    ContainerSettings, Database, Range, RangeMap, SplitRefusal, Store, Throughput,
};
use crate::data::index::search_policy::check_vector_indexes_kept;
use crate::data::index::DocumentPath;
use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::rid;

impl Store {
    /// Creates a database, with the shared throughput the request asks for.
    pub fn create_database(
        &self,
        body: &Map<String, Value>,
        throughput: Option<Throughput>,
    ) -> ApiResult<Value> {
        let id = validate_name(body.get("id"))?.to_string();
        if self.serverless && throughput.is_some() {
            return Err(offer::serverless_refusal("database"));
        }
        let now = self.clock.now();
        let mut catalog = self.write()?;
        if catalog.databases.contains_key(&id) {
            return Err(ApiError::conflict());
        }
        catalog.next_database += 1;
        let number = catalog.next_database;
        let database = Database {
            rid: rid::database(number),
            id: id.clone(),
            number,
            ts: now,
            etag: item::new_etag(),
            containers: BTreeMap::new(),
            next_container: 0,
            users: BTreeMap::new(),
            next_user: 0,
            client_encryption_keys: BTreeMap::new(),
            next_client_encryption_key: 0,
        };
        let json = database.to_json();
        if let Some(throughput) = throughput {
            let (link, rid) = (format!("dbs/{}/", database.rid), database.rid.clone());
            catalog.offers.create(link, rid, throughput, now);
        }
        catalog.databases.insert(id, database);
        catalog.meta_changed();
        drop(catalog);
        self.wrote();
        Ok(json)
    }

    pub fn database(&self, id: &str) -> ApiResult<Value> {
        Ok(self.read().database(id)?.to_json())
    }

    pub fn databases(&self) -> Vec<Value> {
        self.read()
            .databases
            .values()
            .map(Database::to_json)
            .collect()
    }

    pub fn delete_database(&self, id: &str) -> ApiResult<()> {
        let mut catalog = self.write()?;
        let (name, rid) = {
            let db = catalog.database(id)?;
            (db.id.clone(), db.rid.clone())
        };
        catalog.databases.remove(&name);
        // Its offer and its containers' offers go with it.
        catalog.offers.remove_under(&format!("dbs/{rid}/"));
        catalog.meta_changed();
        drop(catalog);
        self.wrote();
        Ok(())
    }
}

impl Store {
    /// Creates a container with the dedicated throughput the request asks
    /// for; without any, 400 RU/s of its own unless its database shares
    /// throughput (see `offer.rs`).
    pub fn create_container(
        &self,
        database: &str,
        body: &Map<String, Value>,
        throughput: Option<Throughput>,
    ) -> ApiResult<Value> {
        let id = validate_name(body.get("id"))?.to_string();
        if self.serverless && throughput.is_some() {
            return Err(offer::serverless_refusal("container"));
        }
        let now = self.clock.now();
        let mut catalog = self.write()?;
        // The keys a clientEncryptionPolicy names must exist, a check the
        // service makes before the policy's other rules.
        catalog
            .database(database)?
            .check_keys_exist(&encryption_policy::key_ids(
                body.get("clientEncryptionPolicy"),
            ))?;
        let settings = ContainerSettings::parse(body)?;
        // Serverless containers have no offer; others share their
        // database's or get 400 RU/s of their own.
        let shared = self.serverless || catalog.offers.has_offer(&catalog.database(database)?.rid);
        let throughput =
            throughput.or((!shared).then_some(Throughput::Manual(offer::MIN_MANUAL_THROUGHPUT)));
        let db = catalog.database_mut(database)?;
        if db.containers.contains_key(&id) {
            return Err(ApiError::conflict());
        }
        db.next_container += 1;
        let mut container = Container::new(
            id.clone(),
            &db.id,
            db.number,
            db.next_container,
            settings,
            now,
            self.change_feed_retention,
        );
        // As many physical ranges as the container's own throughput takes
        // (a container sharing its database's throughput gets one), or
        // more if the emulator was started with --ranges-per-container.
        let count = throughput
            .as_ref()
            .map_or(1, |t| {
                RangeMap::count_for_throughput(
                    t.provisioned(),
                    matches!(t, Throughput::Autoscale { .. }),
                )
            })
            .max(self.min_ranges_per_container);
        container.set_ranges(RangeMap::even(container.partition_key(), count));
        container.attach(self.journal().cloned());
        let json = container.to_json(&db.rid);
        let (link, rid) = (
            format!("dbs/{}/colls/{}/", db.rid, container.rid),
            container.rid.clone(),
        );
        db.containers.insert(id, container);
        if let Some(throughput) = throughput {
            catalog.offers.create(link, rid, throughput, now);
        }
        catalog.meta_changed();
        drop(catalog);
        self.wrote();
        Ok(json)
    }

    /// The container resource and its live item count (for `x-ms-resource-usage`).
    pub fn container(&self, database: &str, id: &str) -> ApiResult<(Value, usize)> {
        let now = self.clock.now();
        let catalog = self.read();
        let db = catalog.database(database)?;
        let container = db.container(id)?;
        Ok((container.to_json(&db.rid), container.live_count(now)))
    }

    pub fn containers(&self, database: &str) -> ApiResult<Vec<Value>> {
        let catalog = self.read();
        let db = catalog.database(database)?;
        Ok(db.containers().map(|c| c.to_json(&db.rid)).collect())
    }

    pub fn replace_container(
        &self,
        database: &str,
        id: &str,
        body: &Map<String, Value>,
        if_match: Option<&str>,
    ) -> ApiResult<Value> {
        let body_id = validate_name(body.get("id"))?;
        let now = self.clock.now();
        let mut catalog = self.write()?;
        let db = catalog.database_mut(database)?;
        let db_rid = db.rid.clone();
        let container = db.container_mut(id)?;
        // The service judges a changed vector index against the container
        // before the body's own policies (a replace that sends only the
        // indexing policy hears that its index cannot change, as
        // @azure/cosmos's vector tests record).
        check_vector_indexes_kept(
            &container.settings.indexing_policy,
            body.get("indexingPolicy").unwrap_or(&Value::Null),
        )?;
        let settings = ContainerSettings::parse(body)?;
        if body_id != container.id {
            return Err(ApiError::bad_request(format!(
                "The id '{body_id}' in the body does not match the container '{}' addressed by the URL.",
                container.id
            )));
        }
        check_if_match(if_match, &container.etag)?;
        let reindex = container.replace_settings(settings, now, self.change_feed_retention)?;
        let json = container.to_json(&db_rid);
        catalog.meta_changed();
        self.wrote();
        drop(catalog);
        // The default may have moved expiry instants earlier.
        self.purge_wakeup.notify_one();
        if reindex {
            self.reindex_wakeup.notify_one();
        }
        Ok(json)
    }

    pub fn delete_container(&self, database: &str, id: &str) -> ApiResult<()> {
        let mut catalog = self.write()?;
        let db = catalog.database_mut(database)?;
        let name = db.resolve_container(id)?;
        let link = format!("dbs/{}/colls/{}/", db.rid, db.containers[&name].rid);
        db.containers.remove(&name);
        catalog.offers.remove_under(&link);
        catalog.meta_changed();
        drop(catalog);
        self.wrote();
        Ok(())
    }

    /// The container an item request addresses, as its responses name it,
    /// with its first range's LSN: the state a read from now on sees at
    /// least (the session token).
    pub fn container_context(
        &self,
        database: &str,
        container: &str,
    ) -> ApiResult<ContainerContext> {
        self.container_context_at(database, container, None, None)
    }

    /// [`Self::container_context`] naming the range a request addresses:
    /// the range `range_id` (`x-ms-documentdb-partitionkeyrangeid`) if the
    /// container has it, else the range of the partition key header
    /// `partition_key`, else its first range.
    pub fn container_context_at(
        &self,
        database: &str,
        container: &str,
        partition_key: Option<&str>,
        range_id: Option<&str>,
    ) -> ApiResult<ContainerContext> {
        self.with_container(database, container, |c, _| {
            let named = range_id.and_then(|id| c.ranges().by_id(id)).map(|r| r.id);
            let key = || partition_key.and_then(|h| c.partition_key().key_from_header(h).ok());
            let range = named
                .or_else(|| key().map(|k| c.range_of(&k)))
                .unwrap_or(c.ranges().ranges()[0].id);
            Ok(ContainerContext {
                owner: c.owner.clone(),
                lsn: c.range_lsn(range),
                range,
                indexes_writes: c.indexes_writes(),
            })
        })
    }

    /// Runs `f` on a container under the shared lock.
    pub fn with_container<T>(
        &self,
        database: &str,
        container: &str,
        f: impl FnOnce(&Container, i64) -> ApiResult<T>,
    ) -> ApiResult<T> {
        let now = self.clock.now();
        let catalog = self.read();
        f(catalog.database(database)?.container(container)?, now)
    }

    /// Builds a container's indexes of `paths` (`index/`) under the
    /// write lock, those it lacks; queries then read them under the read
    /// lock. Nothing is built if the store cannot be written (a failed
    /// data directory): the query scans.
    pub fn ensure_indexes(&self, database: &str, container: &str, paths: &[DocumentPath]) {
        if paths.is_empty() {
            return;
        }
        let Ok(mut catalog) = self.write() else {
            return;
        };
        if let Ok(c) = catalog
            .database_mut(database)
            .and_then(|d| d.container_mut(container))
        {
            for path in paths {
                c.build_index(path.clone());
            }
        }
    }

    /// Splits a container's range in two (`POST /_emulator/split`); returns
    /// the children. The items stay; requests naming the parent are 410.
    pub fn split_range(
        &self,
        database: &str,
        container: &str,
        range: &str,
    ) -> ApiResult<[Range; 2]> {
        let mut catalog = self.write()?;
        let c = catalog.database_mut(database)?.container_mut(container)?;
        let split = c.split_range(range);
        if split.is_ok() {
            catalog.meta_changed();
        }
        split.map_err(|refusal| match refusal {
            SplitRefusal::Unknown => ApiError::not_found().with_message(format!(
                "The partition key range '{range}' does not exist in container '{container}': \
                 send the id of one of its current ranges (GET .../pkranges)."
            )),
            SplitRefusal::TooNarrow => ApiError::bad_request(format!(
                "The partition key range '{range}' cannot be split: it spans a single hash value."
            )),
            SplitRefusal::TooMany => ApiError::bad_request(format!(
                "The partition key range '{range}' cannot be split: the container has {} ranges, \
                 the most this emulator keeps.",
                ranges::MAX_RANGES
            )),
        })
    }
}
