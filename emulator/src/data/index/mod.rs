//! Indexes: what the query engine reads instead of parsing every item,
//! defined here and kept by the store on every write
//! (`data/store/container/index.rs`). A leaf below the query engine and the
//! store, which both name it:
//!
//! - the path of the item an index reads ([`DocumentPath`],
//!   `document_path.rs`);
//! - the value index of a property path (this module: every item's value
//!   there, its [`IndexKey`] (`key.rs`), in the order `ORDER BY` sorts,
//!   ties in write order: by the item's number, the last part of its RID);
//! - the vector columns (`vectors.rs`), over the vectors' types and
//!   distances (`vector.rs`);
//! - the indexing policy (`indexing_policy.rs`) and the container's vector
//!   embedding and full-text policies (`search_policy.rs`).
//!
//! The spatial columns read the spatial functions' geometry, and stay
//! with it in the query engine (`data/query/spatial_column.rs`).
//!
//! A path's index answers an equality, a range,
//! `IN` or `STARTSWITH` finds its few candidates, and `ORDER BY` with a
//! bound walks the items in order until it has enough
//! (`data/query/access.rs` chooses, `data/query/mod.rs` runs).
//!
//! A path's index is built the first time a query can use it, and from
//! then on kept by `Container::install` and `Container::forget`, so every
//! write path (create, replace, upsert, patch, batch, bulk, delete, TTL
//! purge, journal replay) keeps it; a restore drops them all, to be built
//! again on demand, and a new indexing policy rebuilds the paths in use in
//! the background, reporting its progress (`reindex.rs`). The service indexes every
//! path of every item on write; building on demand gives the same answers
//! and costs memory only for the paths queries use (see the README).
//!
//! Expired items stay in the index until they are purged, as in the item
//! map: every candidate is looked up through the container, which treats
//! an expired item as absent, so the index never returns one.

pub mod document_path;
pub mod indexing_policy;
mod key;
pub mod search_policy;
pub mod vector;
pub mod vectors;

use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;

use bytes::Bytes;

pub use document_path::DocumentPath;
#[cfg(test)]
pub use key::Number;
pub use key::{IndexKey, KeyType};

use crate::protocol::item_key::ItemKey;
use document_path::ELEMENTS;

/// An item as an index gives it: its number (the last part of its RID,
/// its place in write order) and its key.
pub type Numbered<'a> = (u64, &'a ItemKey);

/// One path's index: (key, item number, item) entries, ordered by key,
/// then number: the items of equal values in write order, as a scan
/// meets them.
#[derive(Debug, Clone, Default)]
pub struct PathIndex {
    entries: BTreeSet<(IndexKey, u64, ItemKey)>,
}

impl PathIndex {
    fn insert(&mut self, key: IndexKey, number: u64, item: ItemKey) {
        self.entries.insert((key, number, item));
    }

    fn remove(&mut self, key: IndexKey, number: u64, item: &ItemKey) {
        // The entry is owned for the lookup; the item key is a shared string.
        self.entries.remove(&(key, number, item.clone()));
    }

    /// How many (key, item) pairs it holds, of live or expired items (an
    /// index of array elements holds an item once per distinct element).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The items whose key is within `(low, high)`, both bounds of one
    /// type (`Unbounded`: that type's edge), in the order of their keys,
    /// ties in write order.
    pub fn range<'a, 'b>(
        &'a self,
        key_type: KeyType,
        low: Bound<&'b IndexKey>,
        high: Bound<&'b IndexKey>,
    ) -> impl Iterator<Item = (&'a IndexKey, Numbered<'a>)> + 'b
    where
        'a: 'b,
    {
        let least = IndexKey::least_of(key_type);
        let start = match low {
            Bound::Included(k) | Bound::Excluded(k) => k.clone(),
            Bound::Unbounded => least,
        };
        self.entries
            .range((start, 0, ItemKey::least())..)
            .map(|(k, number, item)| (k, (*number, item)))
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
    ) -> impl Iterator<Item = (&'a IndexKey, Numbered<'a>)> + 'b
    where
        'a: 'b,
    {
        let start = IndexKey::String(prefix.into());
        self.entries
            .range((start, 0, ItemKey::least())..)
            .map(|(k, number, item)| (k, (*number, item)))
            .take_while(move |(k, _)| matches!(k, IndexKey::String(s) if s.starts_with(prefix)))
    }

    /// The runs of items with equal keys, in the order of the keys (each
    /// run in write order): what ORDER BY's first key sorts into.
    pub fn runs(&self, descending: bool) -> impl Iterator<Item = Vec<Numbered<'_>>> + '_ {
        self.keyed_runs(descending).map(|(_, run)| run)
    }

    /// [`PathIndex::runs`], each with its key.
    pub fn keyed_runs(
        &self,
        descending: bool,
    ) -> impl Iterator<Item = (&IndexKey, Vec<Numbered<'_>>)> + '_ {
        let mut entries: Box<dyn Iterator<Item = &(IndexKey, u64, ItemKey)>> = match descending {
            false => Box::new(self.entries.iter()),
            true => Box::new(self.entries.iter().rev()),
        };
        let mut next = entries.next();
        std::iter::from_fn(move || {
            let (key, number, item) = next.take()?;
            let mut run = vec![(*number, item)];
            loop {
                next = entries.next();
                match next {
                    Some((k, number, item)) if k == key => run.push((*number, item)),
                    _ => break,
                }
            }
            if descending {
                run.reverse();
            }
            Some((key, run))
        })
    }
}

/// A container's path indexes, by path: those ready for queries, and
/// those a new indexing policy is rebuilding in the background.
#[derive(Debug, Clone, Default)]
pub struct PathIndexes {
    by_path: HashMap<DocumentPath, PathIndex, foldhash::fast::RandomState>,
    rebuild: Option<Rebuild>,
}

/// The service's index transformation: after a policy change, the paths
/// queries were using are indexed again, a chunk of items at a time in
/// write order (by item number), so that no hold of the store's lock is long. Writes meanwhile
/// keep the partial indexes (an item beyond the cursor is put twice, which
/// changes nothing); queries scan those paths until the last chunk.
#[derive(Debug, Clone)]
struct Rebuild {
    by_path: HashMap<DocumentPath, PathIndex, foldhash::fast::RandomState>,
    /// The number of the last item indexed; `None` before the first chunk.
    after: Option<u64>,
    /// Items indexed so far, of the `total` stored when it began.
    done: usize,
    total: usize,
}

impl PathIndexes {
    /// The index of `path`, if it is ready.
    pub fn get(&self, path: &[Box<str>]) -> Option<&PathIndex> {
        self.by_path.get(path)
    }

    /// Whether `path` has an index, ready or being rebuilt.
    pub fn has(&self, path: &[Box<str>]) -> bool {
        self.by_path.contains_key(path)
            || self
                .rebuild
                .as_ref()
                .is_some_and(|r| r.by_path.contains_key(path))
    }

    /// Builds the index of `path` over `items` (every stored item, with
    /// its number).
    pub fn build<'a>(
        &mut self,
        path: DocumentPath,
        items: impl Iterator<Item = (u64, &'a ItemKey, &'a Bytes)>,
    ) {
        let mut index = PathIndex::default();
        for (number, key, body) in items {
            IndexKey::each_at(body, &path, |k| index.insert(k, number, key.clone()));
        }
        self.by_path.insert(path, index);
    }

    /// Every index, ready or being rebuilt: what a write must keep.
    fn all_mut(&mut self) -> impl Iterator<Item = (&DocumentPath, &mut PathIndex)> {
        let rebuilding = self.rebuild.iter_mut().flat_map(|r| r.by_path.iter_mut());
        self.by_path.iter_mut().chain(rebuilding)
    }

    /// A new version of the item numbered `number` at `key`: `old` is the
    /// body it replaces (a rewrite keeps the item's number).
    pub fn put(&mut self, number: u64, key: &ItemKey, old: Option<&Bytes>, new: &Bytes) {
        for (path, index) in self.all_mut() {
            if let Some((_, array)) = path.split_last().filter(|(last, _)| &***last == ELEMENTS) {
                let old_keys = old.map(|o| IndexKey::elements_at(o, array));
                let new_keys = IndexKey::elements_at(new, array);
                if old_keys.as_ref() == Some(&new_keys) {
                    continue;
                }
                for old_key in old_keys.into_iter().flatten() {
                    index.remove(old_key, number, key);
                }
                for new_key in new_keys {
                    index.insert(new_key, number, key.clone());
                }
                continue;
            }
            let new_key = IndexKey::at(new, path);
            if let Some(old) = old {
                let old_key = IndexKey::at(old, path);
                if old_key == new_key {
                    continue;
                }
                index.remove(old_key, number, key);
            }
            index.insert(new_key, number, key.clone());
        }
    }

    /// The item numbered `number` at `key`, whose body was `body`, is gone.
    pub fn remove(&mut self, number: u64, key: &ItemKey, body: &Bytes) {
        for (path, index) in self.all_mut() {
            IndexKey::each_at(body, path, |k| index.remove(k, number, key));
        }
    }

    /// Forgets every path (a restore): they are built again when a query
    /// needs them.
    pub fn clear(&mut self) {
        self.by_path.clear();
        self.rebuild = None;
    }

    /// A new indexing policy: the paths that had an index and that `keep`
    /// (the new policy indexes them) are rebuilt over the `total` stored
    /// items in the background ([`PathIndexes::rebuild_chunk`]); the others
    /// are dropped. Returns whether there is anything to rebuild.
    pub fn start_rebuild(&mut self, keep: impl Fn(&[Box<str>]) -> bool, total: usize) -> bool {
        let mut paths: Vec<DocumentPath> = self.by_path.drain().map(|(path, _)| path).collect();
        if let Some(rebuild) = self.rebuild.take() {
            paths.extend(rebuild.by_path.into_keys());
        }
        let by_path: HashMap<_, _, _> = paths
            .into_iter()
            .filter(|p| keep(p))
            .map(|p| (p, PathIndex::default()))
            .collect();
        if by_path.is_empty() {
            return false;
        }
        self.rebuild = Some(Rebuild {
            by_path,
            after: None,
            done: 0,
            total,
        });
        true
    }

    /// Where the rebuild's next chunk starts: after the item with this
    /// number (`None`: at the first). `None` overall when nothing is being
    /// rebuilt.
    pub fn rebuild_cursor(&self) -> Option<Option<u64>> {
        self.rebuild.as_ref().map(|r| r.after)
    }

    /// Indexes the next chunk of the rebuild: `items`, the stored items
    /// after [`PathIndexes::rebuild_cursor`] in write order (by number),
    /// at most `chunk`. Fewer than `chunk` means the last ones: the rebuilt
    /// indexes are then ready. Returns whether the rebuild goes on.
    pub fn rebuild_chunk<'a>(
        &mut self,
        items: impl Iterator<Item = (u64, &'a ItemKey, &'a Bytes)>,
        chunk: usize,
    ) -> bool {
        let Some(rebuild) = self.rebuild.as_mut() else {
            return false;
        };
        let mut indexed = 0;
        for (number, key, body) in items.take(chunk) {
            for (path, index) in &mut rebuild.by_path {
                IndexKey::each_at(body, path, |k| index.insert(k, number, key.clone()));
            }
            rebuild.after = Some(number);
            indexed += 1;
        }
        rebuild.done += indexed;
        if indexed == chunk {
            return true;
        }
        let finished = self.rebuild.take().expect("checked above");
        self.by_path.extend(finished.by_path);
        false
    }

    /// The index transformation's progress in percent, as the service
    /// reports it: 100 when nothing is being rebuilt; below 100 until the
    /// last chunk.
    pub fn progress(&self) -> u8 {
        match &self.rebuild {
            None => 100,
            Some(r) if r.total == 0 => 99,
            Some(r) => (r.done.saturating_mul(100) / r.total).min(99) as u8,
        }
    }
}

#[cfg(test)]
mod tests;
