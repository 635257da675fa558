//! What a query reads of its container beside the scan, through a view
//! the store implements for one request's scope (`data/store/container/view.rs`):
//! the executor never reaches into the store's maps.

use bytes::Bytes;

use super::spatial_column::SpatialColumn;
use crate::data::index::vectors::VectorColumn;
use crate::data::index::{DocumentPath, PathIndex};
use crate::protocol::item_key::ItemKey;

/// A stored item as a query reads it: (its number, the last part of its
/// RID, which orders items as they were first written; its key; its
/// stored JSON).
pub type Row<'a> = (u64, &'a ItemKey, &'a Bytes);

/// A container as one request's query sees it. References live as long
/// as the container (`'c`), not the view.
pub trait ContainerView<'c> {
    /// The float32 column of the embedding at `path`, if the container
    /// keeps one (expired items not yet purged included).
    fn vector_column(&self, path: &DocumentPath) -> Option<&'c VectorColumn>;
    /// The index of a property path, if the container has built it
    /// (`index/`; expired items not yet purged included).
    fn path_index(&self, path: &DocumentPath) -> Option<&'c PathIndex>;
    /// The spatial index of a property path, if the container's policy
    /// has one (`data/query/spatial_column.rs`; expired items not yet purged included).
    fn spatial_column(&self, path: &DocumentPath) -> Option<&'c SpatialColumn>;
    /// The number of the item a resumed page starts after: it reads only
    /// items numbered above it (later in write order).
    fn after(&self) -> Option<u64>;
    /// The stored body of the item at `key` and its number, if it is
    /// live, in the query's scope, and after the item a resumed page
    /// starts after.
    fn live_body(&mut self, key: &ItemKey) -> Option<(u64, &'c Bytes)>;
}
