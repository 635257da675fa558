//! A container's path indexes (`index/`) and spatial index
//! (`data/query/spatial_column.rs`): kept by `install` and `forget`, read by queries
//! through `ContainerView`.

use super::Container;
use crate::data::index::indexing_policy;
use crate::data::index::DocumentPath;
use crate::data::index::PathIndex;
use crate::data::query::spatial_column::{SpatialColumn, SpatialColumns};

impl Container {
    /// The index of `path`, if it has been built.
    pub fn path_index(&self, path: &[Box<str>]) -> Option<&PathIndex> {
        self.indexes.get(path)
    }

    /// The paths of `wanted` that the indexing policy indexes and that
    /// have no index yet.
    pub fn missing_indexes<'p>(&self, wanted: &'p [DocumentPath]) -> Vec<&'p DocumentPath> {
        wanted
            .iter()
            .filter(|p| self.policy_indexes(p) && !self.indexes.has(p))
            .collect()
    }

    /// Builds the index of `path` over every stored item, if the
    /// indexing policy indexes it (a query on any other path scans).
    pub fn build_index(&mut self, path: DocumentPath) {
        if !self.policy_indexes(&path) || self.indexes.has(&path) {
            return;
        }
        let items = self
            .items
            .iter()
            .map(|(key, item)| (item.number, key, &item.body));
        self.indexes.build(path, items);
    }

    fn policy_indexes(&self, path: &[Box<str>]) -> bool {
        indexing_policy::indexes(&self.settings.indexing_policy, path)
    }

    /// The spatial index of `path`, if the policy has one there.
    pub fn spatial_column(&self, path: &[Box<str>]) -> Option<&SpatialColumn> {
        self.spatial.get(path)
    }

    /// Builds the spatial index again, for a new indexing policy.
    pub(super) fn rebuild_spatial(&mut self) {
        let mut spatial = SpatialColumns::for_policy(&self.settings.indexing_policy);
        for (key, item) in &self.items {
            spatial.put(item.number, key, &item.body);
        }
        self.spatial = spatial;
    }

    /// Drops every path index, for a restore.
    pub(super) fn drop_indexes(&mut self) {
        self.indexes.clear();
    }

    /// A new indexing policy: the paths in use that it still indexes are
    /// rebuilt in the background (`reindex.rs` calls
    /// [`Container::reindex_chunk`]); the others are dropped. Returns
    /// whether a rebuild began.
    pub(super) fn start_reindex(&mut self) -> bool {
        let policy = &self.settings.indexing_policy;
        let keep = |path: &[Box<str>]| indexing_policy::indexes(policy, path);
        self.indexes.start_rebuild(keep, self.items.len())
    }

    /// Indexes the next `chunk` items of a rebuild in write order (by
    /// number: a rewrite keeps an item's place, so none is missed);
    /// returns whether one goes on.
    pub fn reindex_chunk(&mut self, chunk: usize) -> bool {
        let Some(after) = self.indexes.rebuild_cursor() else {
            return false;
        };
        let items = &self.items;
        let next = self
            .by_number
            .after(after.unwrap_or(0))
            .map(|(number, key)| (number, key, &items[key].body));
        self.indexes.rebuild_chunk(next, chunk)
    }

    /// `x-ms-documentdb-collection-index-transformation-progress`: the
    /// percentage of items a rebuild has indexed, 100 when none runs.
    pub fn index_transformation_progress(&self) -> u8 {
        self.indexes.progress()
    }
}
