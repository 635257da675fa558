//! What a query reads of its container beside the scan, through a view
//! the HTTP layer builds for the request's scope: the executor never
//! reaches into the store's maps.

use bytes::Bytes;

use crate::store::index::PathIndex;
use crate::store::spatial::SpatialColumn;
use crate::store::vectors::VectorColumn;
use crate::store::{Container, ItemKey};

/// A container as one request's query sees it. References live as long
/// as the container (`'c`), not the view.
pub trait ContainerView<'c> {
    /// The float32 column of the embedding at `path`, if the container
    /// keeps one (expired items not yet purged included).
    fn vector_column(&self, path: &str) -> Option<&'c VectorColumn>;
    /// The index of a property path, if the container has built it
    /// (`store/index`; expired items not yet purged included).
    fn path_index(&self, path: &[Box<str>]) -> Option<&'c PathIndex>;
    /// The spatial index of a property path, if the container's policy
    /// has one (`store/spatial.rs`; expired items not yet purged included).
    fn spatial_column(&self, path: &[Box<str>]) -> Option<&'c SpatialColumn>;
    /// The stored body of the item at `key`, if it is live, in the
    /// query's scope, and after the key a resumed page starts after.
    fn live_body(&mut self, key: &ItemKey) -> Option<&'c Bytes>;
}

/// A container within one request's scope: the items whose partition
/// key `in_scope` accepts, live at `now`, and (on a resumed page) after
/// `after`. The HTTP layer's scope is its `FeedScope`; the tests', a
/// logical partition or the whole container.
pub struct ScopedView<'c, S> {
    pub c: &'c Container,
    pub in_scope: S,
    pub after: Option<ItemKey>,
    pub now: i64,
}

impl<'c, S: FnMut(&str) -> bool> ContainerView<'c> for ScopedView<'c, S> {
    fn vector_column(&self, path: &str) -> Option<&'c VectorColumn> {
        self.c.vector_column(path)
    }

    fn path_index(&self, path: &[Box<str>]) -> Option<&'c PathIndex> {
        self.c.path_index(path)
    }

    fn spatial_column(&self, path: &[Box<str>]) -> Option<&'c SpatialColumn> {
        self.c.spatial_column(path)
    }

    fn live_body(&mut self, key: &ItemKey) -> Option<&'c Bytes> {
        let c = self.c;
        let after = self.after.as_ref();
        (after.is_none_or(|after| key > after) && (self.in_scope)(key.pk()))
            .then(|| c.get(key, self.now))
            .flatten()
            .map(|item| &item.body)
    }
}
