//! How many stored documents a query read, and their bytes: the service's
//! `retrievedDocumentCount` and `retrievedDocumentSize` query metrics. A
//! document counts once, when the query first looks at its bytes (the
//! prefilter of a WHERE, or parsing it); a query that reads no property of
//! the documents (`SELECT VALUE COUNT(1) FROM c` in one partition) counts
//! them by key alone and retrieves none, as the service answers it from
//! its index. Also which property indexes found the documents
//! (`index/`), for the index metrics. Counted in the run's context
//! (`context.rs`), which gives them back when the run is over.

use std::cell::{Cell, RefCell};

/// Documents and bytes a run retrieved, and the index specs (`/a/b/?`)
/// that found them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Retrieved {
    pub documents: usize,
    pub bytes: usize,
    pub indexes: Vec<String>,
}

impl Retrieved {
    /// The part of this retrieval that `len` results from `offset` on, of
    /// `total`, account for: cumulative shares, so that the pages of one
    /// result add up to exactly the whole. A result of no rows is one page,
    /// which takes it all.
    pub fn share(&self, offset: usize, len: usize, total: usize) -> Retrieved {
        let part = |whole: usize| {
            if total == 0 {
                return if offset == 0 { whole } else { 0 };
            }
            let upto = |n: usize| (whole as u128 * n.min(total) as u128 / total as u128) as usize;
            upto(offset + len) - upto(offset)
        };
        Retrieved {
            documents: part(self.documents),
            bytes: part(self.bytes),
            indexes: self.indexes.clone(),
        }
    }
}

/// The counts of one run, kept as it goes.
#[derive(Debug, Default)]
pub(super) struct Counter {
    read: Cell<(usize, usize)>,
    indexes: RefCell<Vec<String>>,
}

impl Counter {
    /// Counts one document of `bytes` bytes read.
    pub fn read(&self, bytes: usize) {
        let (documents, total) = self.read.get();
        self.read.set((documents + 1, total + bytes));
    }

    /// Records that the index of `path` found the documents read.
    pub fn used_index(&self, path: &[Box<str>]) {
        let spec: String = path
            .iter()
            .map(|step| format!("/{step}"))
            .collect::<String>()
            + "/?";
        let mut specs = self.indexes.borrow_mut();
        if !specs.contains(&spec) {
            specs.push(spec);
        }
    }

    /// What was read so far, and starts again from zero.
    pub fn take(&self) -> Retrieved {
        let (documents, bytes) = self.read.replace((0, 0));
        Retrieved {
            documents,
            bytes,
            indexes: self.indexes.take(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shares_of_a_result_add_up_to_the_whole() {
        let whole = Retrieved {
            documents: 7,
            bytes: 1001,
            indexes: vec!["/n/?".into()],
        };
        for page in 1..=5 {
            let (mut documents, mut bytes) = (0, 0);
            for offset in (0..3).step_by(page) {
                let share = whole.share(offset, page.min(3 - offset), 3);
                assert_eq!(share.indexes, whole.indexes);
                documents += share.documents;
                bytes += share.bytes;
            }
            assert_eq!((documents, bytes), (7, 1001), "pages of {page}");
        }
        assert_eq!(whole.share(0, 0, 0).documents, 7, "no rows: one page");
        assert_eq!(whole.share(1, 1, 3).documents, 7 * 2 / 3 - 7 / 3);
    }
}
