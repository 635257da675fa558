//! The spatial index: for each property a container's indexing policy
//! names in `spatialIndexes`, what every item's geography there is to the
//! spatial functions (`query::Reach`): a point (its unit normal and
//! position), or another shape. A filter `ST_DISTANCE(c.path, point) < r`,
//! `ST_WITHIN(c.path, shape)` or `ST_INTERSECTS(c.path, shape)` then reads
//! the items whose point may lie in its region (`query::Region`), and
//! every other shape, instead of parsing every item; the executor filters
//! them exactly as the scan.
//!
//! Kept like the vector columns (`vectors.rs`): by `install` and `forget`
//! on every write path, and built again when the policy changes or a
//! snapshot is restored. Expired items stay until purged; every candidate
//! is read through the container, which treats them as absent.

use std::collections::HashMap;

use serde_json::Value;

use crate::data::index::document_path::DocumentPath;
use crate::data::index::indexing_policy;
use crate::data::index::Numbered;
use crate::data::query::{Reach, Region};
use crate::protocol::item_key::ItemKey;

/// One spatial path's items: those whose value there `ST_DISTANCE` can
/// measure (an item whose value it cannot is never within any distance).
#[derive(Debug, Clone, Default)]
pub struct SpatialColumn {
    /// Each item's number (its place in write order) and reach.
    reach: HashMap<ItemKey, (u64, Reach), foldhash::fast::RandomState>,
}

impl SpatialColumn {
    /// The items that may lie in `region`, with their numbers, in no order.
    pub fn within<'c, 'r>(&'c self, region: &'r Region) -> impl Iterator<Item = Numbered<'c>> + 'r
    where
        'c: 'r,
    {
        self.reach
            .iter()
            .filter(move |(_, (_, reach))| reach.may_be_in(region))
            .map(|(key, (number, _))| (*number, key))
    }

    pub fn len(&self) -> usize {
        self.reach.len()
    }

    pub fn is_empty(&self) -> bool {
        self.reach.is_empty()
    }
}

/// A container's spatial columns, one per path of its policy.
#[derive(Debug, Clone, Default)]
pub struct SpatialColumns(Vec<(DocumentPath, SpatialColumn)>);

impl SpatialColumns {
    /// Empty columns for the spatial indexes of `policy` (normalised).
    pub fn for_policy(policy: &Value) -> Self {
        SpatialColumns(
            indexing_policy::spatial_paths(policy)
                .into_iter()
                .map(|path| (path, SpatialColumn::default()))
                .collect(),
        )
    }

    pub fn get(&self, path: &[Box<str>]) -> Option<&SpatialColumn> {
        self.0.iter().find(|(p, _)| **p == *path).map(|(_, c)| c)
    }

    /// The item numbered `number` at `key` now has `body`.
    pub fn put(&mut self, number: u64, key: &ItemKey, body: &[u8]) {
        if self.0.is_empty() {
            return;
        }
        let Ok(document) = crate::protocol::json::parse_unguarded::<Value>(body) else {
            return;
        };
        for (path, column) in &mut self.0 {
            let value = path.iter().try_fold(&document, |v, step| v.get(&**step));
            match value.and_then(Reach::of) {
                Some(reach) => column.reach.insert(key.clone(), (number, reach)),
                None => column.reach.remove(key),
            };
        }
    }

    pub fn remove(&mut self, key: &ItemKey) {
        for (_, column) in &mut self.0 {
            column.reach.remove(key);
        }
    }
}
