//! How many stored documents a query read, and their bytes: the service's
//! `retrievedDocumentCount` and `retrievedDocumentSize` query metrics. A
//! document counts once, when the query first looks at its bytes (the
//! prefilter of a WHERE, or parsing it); a query that reads no property of
//! the documents (`SELECT VALUE COUNT(1) FROM c` in one partition) counts
//! them by key alone and retrieves none, as the service answers it from
//! its index. Also which property indexes found the documents
//! (`store/index`), for the index metrics. Thread-local, as `budget.rs`:
//! a page runs on one thread.

use std::cell::{Cell, RefCell};

thread_local! {
    static RETRIEVED: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
    static INDEXES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Documents and bytes retrieved since the last [`take`], and the index
/// specs (`/a/b/?`) that found them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Retrieved {
    pub documents: usize,
    pub bytes: usize,
    pub indexes: Vec<String>,
}

/// Counts one document of `bytes` bytes read.
pub(super) fn read(bytes: usize) {
    let (documents, total) = RETRIEVED.get();
    RETRIEVED.set((documents + 1, total + bytes));
}

/// Records that the index of `path` found the documents read.
pub(super) fn used_index(path: &[Box<str>]) {
    let spec: String = path
        .iter()
        .map(|step| format!("/{step}"))
        .collect::<String>()
        + "/?";
    INDEXES.with_borrow_mut(|specs| {
        if !specs.contains(&spec) {
            specs.push(spec);
        }
    });
}

/// What was read since the last call, and starts again from zero.
pub fn take() -> Retrieved {
    let (documents, bytes) = RETRIEVED.replace((0, 0));
    let indexes = INDEXES.take();
    Retrieved {
        documents,
        bytes,
        indexes,
    }
}
