//! A container's path indexes (`store/index`): kept by `install` and
//! `forget`, built on demand, read by queries through `ContainerView`.

use super::Container;
use crate::store::index::{IndexPath, PathIndex};
use crate::store::indexing;

impl Container {
    /// The index of `path`, if it has been built.
    pub fn path_index(&self, path: &[Box<str>]) -> Option<&PathIndex> {
        self.indexes.get(path)
    }

    /// The paths of `wanted` that the indexing policy indexes and that
    /// have no index yet.
    pub fn missing_indexes<'p>(&self, wanted: &'p [IndexPath]) -> Vec<&'p IndexPath> {
        wanted
            .iter()
            .filter(|p| self.policy_indexes(p) && !self.indexes.has(p))
            .collect()
    }

    /// Builds the index of `path` over every stored item, if the
    /// indexing policy indexes it (a query on any other path scans).
    pub fn build_index(&mut self, path: IndexPath) {
        if !self.policy_indexes(&path) || self.indexes.has(&path) {
            return;
        }
        let items = self.items.iter().map(|(key, item)| (key, &item.body));
        self.indexes.build(path, items);
    }

    fn policy_indexes(&self, path: &[Box<str>]) -> bool {
        indexing::indexes(&self.settings.indexing_policy, path)
    }

    /// Drops every path index, for a new indexing policy or a restore.
    pub(super) fn drop_indexes(&mut self) {
        self.indexes.clear();
    }
}
