//! The container's index: for a property path, every item's value there
//! (its [`IndexKey`]) in the order `ORDER BY` sorts, ties in key order.
//! Queries read it instead of parsing every item: an equality, a range,
//! `IN` or `STARTSWITH` finds its few candidates, and `ORDER BY` with a
//! bound walks the items in order until it has enough
//! (`query/access.rs` chooses, `query/mod.rs` runs).
//!
//! A path's index is built the first time a query can use it, and from
//! then on kept by `Container::install` and `Container::forget`, so every
//! write path (create, replace, upsert, patch, batch, bulk, delete, TTL
//! purge, journal replay) keeps it; a restore or a new indexing policy
//! drops them all, to be built again on demand. The service indexes every
//! path of every item on write; building on demand gives the same answers
//! and costs memory only for the paths queries use (see the README).
//!
//! Expired items stay in the index until they are purged, as in the item
//! map: every candidate is looked up through the container, which treats
//! an expired item as absent, so the index never returns one.

mod key;

use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;

use bytes::Bytes;

pub use key::{IndexKey, KeyType, Number};

use super::item::ItemKey;

/// A path of property names from the document's root (`c.address.city`
/// is `["address", "city"]`).
pub type IndexPath = Vec<Box<str>>;

/// One path's index: (key, item) pairs, ordered by key, then item.
#[derive(Debug, Clone, Default)]
pub struct PathIndex {
    entries: BTreeSet<(IndexKey, ItemKey)>,
}

impl PathIndex {
    fn insert(&mut self, key: IndexKey, item: ItemKey) {
        self.entries.insert((key, item));
    }

    fn remove(&mut self, key: IndexKey, item: &ItemKey) {
        // The pair is owned for the lookup; the item key is a shared string.
        self.entries.remove(&(key, item.clone()));
    }

    /// How many items it holds (live or expired).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The items whose key is within `(low, high)`, both bounds of one
    /// type (`Unbounded`: that type's edge), in the order of their keys,
    /// ties in key order.
    pub fn range<'a, 'b>(
        &'a self,
        key_type: KeyType,
        low: Bound<&'b IndexKey>,
        high: Bound<&'b IndexKey>,
    ) -> impl Iterator<Item = (&'a IndexKey, &'a ItemKey)> + 'b
    where
        'a: 'b,
    {
        let least = IndexKey::least_of(key_type);
        let start = match low {
            Bound::Included(k) | Bound::Excluded(k) => k.clone(),
            Bound::Unbounded => least,
        };
        self.entries
            .range((start, ItemKey::least())..)
            .map(|(k, item)| (k, item))
            .skip_while(move |(k, _)| matches!(low, Bound::Excluded(low) if *k == low))
            .take_while(move |(k, _)| {
                k.key_type() == key_type
                    && match high {
                        Bound::Included(high) => *k <= high,
                        Bound::Excluded(high) => *k < high,
                        Bound::Unbounded => true,
                    }
            })
    }

    /// The items whose key is a string starting with `prefix`.
    pub fn with_prefix<'a, 'b>(
        &'a self,
        prefix: &'b str,
    ) -> impl Iterator<Item = (&'a IndexKey, &'a ItemKey)> + 'b
    where
        'a: 'b,
    {
        let start = IndexKey::String(prefix.into());
        self.entries
            .range((start, ItemKey::least())..)
            .map(|(k, item)| (k, item))
            .take_while(move |(k, _)| matches!(k, IndexKey::String(s) if s.starts_with(prefix)))
    }

    /// The runs of items with equal keys, in the order of the keys (each
    /// run in key order): what ORDER BY's first key sorts into.
    pub fn runs(&self, descending: bool) -> impl Iterator<Item = Vec<&ItemKey>> + '_ {
        let mut entries: Box<dyn Iterator<Item = &(IndexKey, ItemKey)>> = match descending {
            false => Box::new(self.entries.iter()),
            true => Box::new(self.entries.iter().rev()),
        };
        let mut next = entries.next();
        std::iter::from_fn(move || {
            let (key, item) = next.take()?;
            let mut run = vec![item];
            loop {
                next = entries.next();
                match next {
                    Some((k, item)) if k == key => run.push(item),
                    _ => break,
                }
            }
            if descending {
                run.reverse();
            }
            Some(run)
        })
    }
}

/// A container's path indexes, by path.
#[derive(Debug, Clone, Default)]
pub struct PathIndexes {
    by_path: HashMap<IndexPath, PathIndex, foldhash::fast::RandomState>,
}

impl PathIndexes {
    pub fn get(&self, path: &[Box<str>]) -> Option<&PathIndex> {
        self.by_path.get(path)
    }

    pub fn has(&self, path: &[Box<str>]) -> bool {
        self.by_path.contains_key(path)
    }

    /// Builds the index of `path` over `items` (every stored item).
    pub fn build<'a>(
        &mut self,
        path: IndexPath,
        items: impl Iterator<Item = (&'a ItemKey, &'a Bytes)>,
    ) {
        let mut index = PathIndex::default();
        for (key, body) in items {
            index.insert(IndexKey::at(body, &path), key.clone());
        }
        self.by_path.insert(path, index);
    }

    /// A new version of the item at `key`: `old` is the body it replaces.
    pub fn put(&mut self, key: &ItemKey, old: Option<&Bytes>, new: &Bytes) {
        for (path, index) in &mut self.by_path {
            let new_key = IndexKey::at(new, path);
            if let Some(old) = old {
                let old_key = IndexKey::at(old, path);
                if old_key == new_key {
                    continue;
                }
                index.remove(old_key, key);
            }
            index.insert(new_key, key.clone());
        }
    }

    /// The item at `key`, whose body was `body`, is gone.
    pub fn remove(&mut self, key: &ItemKey, body: &Bytes) {
        for (path, index) in &mut self.by_path {
            index.remove(IndexKey::at(body, path), key);
        }
    }

    /// Forgets every path (a new indexing policy, a restore): they are
    /// built again when a query needs them.
    pub fn clear(&mut self) {
        self.by_path.clear();
    }
}

#[cfg(test)]
mod tests;
