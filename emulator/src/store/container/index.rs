//! A container's path indexes (`store/index`): kept by `install` and
//! `forget`, built on demand, read by queries through `ContainerView`.

use super::Container;
use crate::store::index::{IndexPath, PathIndex};

impl Container {
    /// The index of `path`, if it has been built.
    pub fn path_index(&self, path: &[Box<str>]) -> Option<&PathIndex> {
        self.indexes.get(path)
    }

    /// Whether a query may be answered from an index (not so under
    /// `indexingMode: none`, where the service keeps none).
    pub fn keeps_indexes(&self) -> bool {
        !crate::store::indexing::is_mode_none(&self.settings.indexing_policy)
    }

    /// The paths of `wanted` that have no index yet.
    pub fn missing_indexes<'p>(&self, wanted: &'p [IndexPath]) -> Vec<&'p IndexPath> {
        match self.keeps_indexes() {
            true => wanted.iter().filter(|p| !self.indexes.has(p)).collect(),
            false => Vec::new(),
        }
    }

    /// Builds the index of `path` over every stored item.
    pub fn build_index(&mut self, path: IndexPath) {
        if !self.keeps_indexes() || self.indexes.has(&path) {
            return;
        }
        let items = self.items.iter().map(|(key, item)| (key, &item.body));
        self.indexes.build(path, items);
    }

    /// Drops every path index, for a new indexing policy or a restore.
    pub(super) fn drop_indexes(&mut self) {
        self.indexes.clear();
    }
}
