//! The container as a query's [`ContainerView`]: what the engine reads
//! beside the scan (a path's index, a vector or spatial column, an item's
//! body), within one request's scope.

use bytes::Bytes;

use super::Container;
use crate::data::index::vectors::VectorColumn;
use crate::data::index::{DocumentPath, PathIndex};
use crate::data::query::spatial_column::SpatialColumn;
use crate::data::query::view::ContainerView;
use crate::protocol::item_key::ItemKey;

/// A container within one request's scope: the items whose partition
/// key `in_scope` accepts, live at `now`, and (on a resumed page)
/// numbered after `after`. A request's scope is its `FeedScope` (`data/store/scope.rs`); the
/// tests', a logical partition or the whole container.
pub struct ScopedView<'c, S> {
    pub c: &'c Container,
    pub in_scope: S,
    pub after: Option<u64>,
    pub now: i64,
}

impl<'c, S: FnMut(&str) -> bool> ContainerView<'c> for ScopedView<'c, S> {
    fn vector_column(&self, path: &DocumentPath) -> Option<&'c VectorColumn> {
        // The columns are kept by the policy's path, as written (`/a/b`).
        self.c.vector_column(&path.to_string())
    }

    fn path_index(&self, path: &DocumentPath) -> Option<&'c PathIndex> {
        self.c.path_index(path)
    }

    fn spatial_column(&self, path: &DocumentPath) -> Option<&'c SpatialColumn> {
        self.c.spatial_column(path)
    }

    fn after(&self) -> Option<u64> {
        self.after
    }

    fn live_body(&mut self, key: &ItemKey) -> Option<(u64, &'c Bytes)> {
        let c = self.c;
        let after = self.after.unwrap_or(0);
        (self.in_scope)(key.pk())
            .then(|| c.get(key, self.now))
            .flatten()
            .filter(|item| item.number > after)
            .map(|item| (item.number, &item.body))
    }
}

#[cfg(test)]
mod tests;
