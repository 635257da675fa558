//! How many stored documents a query read, and their bytes: the service's
//! `retrievedDocumentCount` and `retrievedDocumentSize` query metrics. A
//! document counts once, when the query first looks at its bytes (the
//! prefilter of a WHERE, or parsing it); a query that reads no property of
//! the documents (`SELECT VALUE COUNT(1) FROM c` in one partition) counts
//! them by key alone and retrieves none, as the service answers it from
//! its index. Also which property indexes found the documents
//! (`query/index/`), for the index metrics. Counted in the run's context
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
