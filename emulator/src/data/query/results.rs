//! Whole results of the queries that cannot stream in write order (ORDER BY,
//! aggregates, DISTINCT, TOP, OFFSET, GROUP BY), kept between the pages a
//! client reads of them.
//!
//! Such a query's continuation is an offset into its whole result, so each
//! page used to run the query again over every item: the SDKs read an
//! ORDER BY over 100k items in 100 pages, a minute of work. An entry is
//! keyed by everything its result depends on (the container and its state:
//! RID, settings etag, last LSN; the emulator's second, which decides what
//! has expired; the query and its parameters; the scope headers), so a hit
//! is exactly what running the query again would give, and any write or
//! clock move makes a new key. Small and bounded: a few recent results, at
//! most [`MAX_BYTES`] together; a larger result is not kept.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::page::{page_of_encoded, Continuation, Page, PageLimit};
use super::retrieved::Retrieved;

/// The bytes of serialised results kept at most, all entries together.
pub const MAX_BYTES: usize = 64 * 1024 * 1024;
/// How many results are kept at most (the most recently used).
const MAX_ENTRIES: usize = 16;

/// One query's whole result, each document serialised, and what computing
/// it retrieved.
#[derive(Debug, Default)]
pub struct Whole {
    pub documents: Vec<Bytes>,
    pub retrieved: Retrieved,
}

/// A whole result as the cache shares it.
pub type Results = Arc<Whole>;

impl Whole {
    /// The page `continuation` starts, with its share of what the whole
    /// result retrieved. The service reads such a query's documents page by
    /// page; the emulator computes the result once, so each page is charged
    /// its part, in proportion to the results it holds (all of it for a
    /// result of no rows): the pages' charges add up to the same whatever
    /// their size, whichever page computed the result and whether the
    /// cache kept it (`fetchAll` and `fetchNext` agree, as the JavaScript
    /// SDK's own tests require).
    pub fn page(&self, continuation: Option<&Continuation>, limit: PageLimit) -> (Page, Retrieved) {
        let offset = match continuation {
            Some(Continuation::Offset { offset }) => *offset,
            _ => 0,
        };
        let page = page_of_encoded(&self.documents, offset, limit);
        let retrieved = self
            .retrieved
            .share(offset, page.documents.len(), self.documents.len());
        (page, retrieved)
    }
}

#[derive(Debug, Default)]
pub struct ResultCache {
    /// Most recently used last.
    entries: Mutex<VecDeque<Entry>>,
}

#[derive(Debug)]
struct Entry {
    key: String,
    results: Results,
    bytes: usize,
}

impl ResultCache {
    /// Forgets every result (the account was reset or restored: keys name
    /// containers by RID and LSN, which a restore can give another state).
    pub fn clear(&self) {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// The result kept under `key`, if any.
    pub fn get(&self, key: &str) -> Option<Results> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let index = entries.iter().position(|e| e.key == key)?;
        let entry = entries.remove(index).expect("found");
        let results = entry.results.clone();
        entries.push_back(entry);
        Some(results)
    }

    /// Keeps `results` under `key`, dropping the least recently used beyond
    /// the bounds; a result over [`MAX_BYTES`] alone is not kept.
    pub fn insert(&self, key: String, results: Results) {
        let bytes: usize = results.documents.iter().map(Bytes::len).sum::<usize>() + key.len();
        if bytes > MAX_BYTES {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.retain(|e| e.key != key);
        entries.push_back(Entry {
            key,
            results,
            bytes,
        });
        let mut total: usize = entries.iter().map(|e| e.bytes).sum();
        while entries.len() > MAX_ENTRIES || total > MAX_BYTES {
            let dropped = entries.pop_front().expect("over a bound, so not empty");
            total -= dropped.bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(n: usize, size: usize) -> Results {
        Arc::new(Whole {
            documents: (0..n).map(|_| Bytes::from(vec![b'1'; size])).collect(),
            retrieved: Retrieved::default(),
        })
    }

    #[test]
    fn keeps_the_most_recent_within_the_bounds() {
        let cache = ResultCache::default();
        for i in 0..MAX_ENTRIES + 2 {
            cache.insert(format!("q{i}"), results(1, 10));
        }
        assert!(
            cache.get("q0").is_none(),
            "the least recently used went first"
        );
        assert!(cache.get("q1").is_none());
        assert_eq!(cache.get("q2").unwrap().documents.len(), 1);
        // q2 was used: q3 goes before it.
        cache.insert("new".into(), results(2, 10));
        assert!(cache.get("q3").is_none());
        assert!(cache.get("q2").is_some());
        assert_eq!(cache.get("new").unwrap().documents.len(), 2);
    }

    #[test]
    fn bytes_are_bounded_and_a_huge_result_is_not_kept() {
        let cache = ResultCache::default();
        cache.insert("huge".into(), results(1, MAX_BYTES + 1));
        assert!(cache.get("huge").is_none());
        let half = MAX_BYTES / 2;
        cache.insert("a".into(), results(1, half));
        cache.insert("b".into(), results(1, half));
        assert!(
            cache.get("a").is_none(),
            "two halves and their keys exceed the bound"
        );
        assert!(cache.get("b").is_some());
    }
}
