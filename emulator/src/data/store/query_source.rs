//! The store as a query's [`Source`] (`data/query/run/pipeline.rs`): one
//! container, in the scope one request names ([`ScopeRequest`]: its
//! partition key, range, feed range; or, across partitions, a walk over
//! the ranges, `range_walk.rs`). It hands the engine data only: the
//! container's settings, the bodies of its UDFs, its indexes built, its
//! live items in scope under the read lock.
//!
//! Also the checks a query across every partition meets before it runs
//! ([`Store::check_across_partitions`]), which read the container's
//! partition key definition.

use std::collections::HashMap;
use std::sync::Arc;

use super::range_walk::{self, Step};
use super::scope::{FeedScope, ScopeRequest};
use super::{ScopedView, ScriptKind, Store};
use crate::data::index::DocumentPath;
use crate::data::query::pipeline::{CalledUdfs, Scan, Scanned, Schema, Source};
use crate::data::query::search::Policies;
use crate::data::query::udf::missing;
use crate::data::query::{Continuation, PreparedQuery};
use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::partition_key::PartitionKeyDefinition;

/// One container of the store, in one request's scope.
pub struct QuerySource<'s, 'r> {
    store: &'s Store,
    db: &'r str,
    coll: &'r str,
    scope: ScopeRequest<'r>,
}

impl Store {
    /// The container `db`/`coll` as a query reads it, in `scope`.
    pub fn query_source<'s, 'r>(
        &'s self,
        (db, coll): (&'r str, &'r str),
        scope: ScopeRequest<'r>,
    ) -> QuerySource<'s, 'r> {
        QuerySource {
            store: self,
            db,
            coll,
            scope,
        }
    }

    /// The search policies of container `coll` (its vector embeddings and
    /// full-text languages), for an expression evaluated outside a query's
    /// page: a query plan, a patch's `condition`.
    pub fn search_policies(&self, db: &str, coll: &str) -> ApiResult<Arc<Policies>> {
        let policies = self.with_container(db, coll, |c, _| Ok(c.settings.search_policies()))?;
        Ok(Arc::new(policies))
    }

    /// A query in `scope` that names neither a partition key nor a range
    /// (nor a feed range's start) is over every partition: the gateway
    /// answers it if its filter pins the whole key (it routes to that
    /// partition), or, `declared` across partitions, if it needs no
    /// merging (the SDKs plan the others); undeclared, only on a container
    /// without a partition key.
    pub fn check_across_partitions(
        &self,
        (db, coll): (&str, &str),
        scope: &ScopeRequest<'_>,
        query: &PreparedQuery,
        declared: bool,
    ) -> ApiResult<()> {
        if scope.partition_key.is_some() || scope.range_id.is_some() || scope.start_epk.is_some() {
            return Ok(());
        }
        self.with_container(db, coll, |c, _| {
            let pinned = query.pins_partition_key(c.partition_key().paths());
            if declared {
                query.check_servable_across_partitions(pinned)
            } else if pinned {
                Ok(())
            } else {
                check_cross_partition_enabled(c.partition_key())
            }
        })
    }
}

/// A query of a partitioned container with neither a partition key nor a
/// range must say that it means every partition: the service refuses it
/// otherwise, whatever the number of physical partitions (the Python SDK's
/// `test_with_null_pk`, a query with `partition_key=None`).
pub fn check_cross_partition_enabled(definition: &PartitionKeyDefinition) -> ApiResult<()> {
    if definition.wire.is_null() {
        return Ok(());
    }
    Err(ApiError::bad_request(
        "Cross partition query is required but disabled. Please set \
         x-ms-documentdb-query-enablecrosspartition to true, specify \
         x-ms-documentdb-partitionkey, or revise your query to avoid this exception.",
    ))
}

impl Source for QuerySource<'_, '_> {
    type Walk = Step;

    fn schema(&self) -> ApiResult<Schema> {
        self.store.with_container(self.db, self.coll, |c, _| {
            Ok(Schema {
                computed: c.settings.computed_properties.clone(),
                indexing_policy: c.settings.indexing_policy.clone(),
                policies: Arc::new(c.settings.search_policies()),
                version: c.etag.clone(),
            })
        })
    }

    fn udfs(&self, names: Vec<String>) -> ApiResult<CalledUdfs> {
        let stored = self
            .store
            .scripts(self.db, self.coll, ScriptKind::UserDefinedFunction)?;
        let mut bodies = HashMap::new();
        let mut versions = Vec::new();
        for name in names {
            let Some(udf) = stored.iter().find(|u| u.id == name) else {
                return Err(missing(&name));
            };
            versions.push(format!("{}:{}", udf.id, udf.etag));
            bodies.insert(name, udf.body.clone());
        }
        Ok((bodies, versions))
    }

    fn build_indexes(&self, paths: &[DocumentPath]) -> ApiResult<()> {
        // A query with no path to look up (the read feed, `SELECT * FROM
        // c`) needs no look at the container.
        if paths.is_empty() {
            return Ok(());
        }
        let missing: Vec<DocumentPath> =
            self.store.with_container(self.db, self.coll, |c, _| {
                Ok(c.missing_indexes(paths).into_iter().cloned().collect())
            })?;
        self.store.ensure_indexes(self.db, self.coll, &missing);
        Ok(())
    }

    fn scan<T>(
        &self,
        version: &str,
        (streams, keyed): (bool, bool),
        continuation: Option<&Continuation>,
        read: impl FnOnce(Scan<'_, '_>) -> ApiResult<T>,
    ) -> ApiResult<Option<Scanned<T, Step>>> {
        let scope = &self.scope;
        self.store.with_container(self.db, self.coll, |c, now| {
            if c.etag != version {
                return Ok(None);
            }
            let FeedScope { key, mut epk, .. } = FeedScope::new(c, scope)?;
            // A query in one logical partition finds it by the key's order.
            let key_index = key.as_ref().and_then(|_| c.partition_key().index_spec());
            let walk = range_walk::step(c, scope, streams, continuation);
            let after = match (&walk, continuation) {
                (Some(step), _) => step.after,
                (None, Some(Continuation::After { after })) => Some(*after),
                _ => None,
            };
            if let Some(step) = &walk {
                epk.narrow_to((&step.min, &step.max));
            }
            let mut in_scope = FeedScope {
                key: key.clone(),
                epk: epk.clone(),
                range: None,
            };
            let mut view = ScopedView {
                c,
                in_scope: move |pk: &str| in_scope.contains(pk),
                after,
                now,
            };
            let mut items = c
                .live_items(key.as_ref(), after, now)
                .filter(move |(_, key, _)| epk.contains(key.pk()))
                .map(|(number, key, item)| (number, key, &item.body));
            // Everything the result depends on: a write, a settings
            // change, a second of the clock makes another key.
            let state = keyed.then(|| {
                format!(
                    "{}\n{}\n{}\n{now}\n{:?}",
                    c.rid,
                    c.etag,
                    c.log().last_lsn(),
                    scope,
                )
            });
            let value = read(Scan {
                items: &mut items,
                view: &mut view,
                state,
            })?;
            Ok(Some(Scanned {
                value,
                rid: c.rid.clone(),
                key_index,
                walk,
            }))
        })
    }

    fn walk_on(&self, walk: &Step, page: Option<Continuation>) -> ApiResult<Option<Continuation>> {
        self.store.with_container(self.db, self.coll, |c, _| {
            Ok(range_walk::next(c, walk, page))
        })
    }
}
