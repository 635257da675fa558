//! How many stored documents a query read, and their bytes: the service's
//! `retrievedDocumentCount` and `retrievedDocumentSize` query metrics. A
//! document counts once, when the query first looks at its bytes (the
//! prefilter of a WHERE, or parsing it); a query that reads no property of
//! the documents (`SELECT VALUE COUNT(1) FROM c` in one partition) counts
//! them by key alone and retrieves none, as the service answers it from
//! its index. Thread-local, as `budget.rs`: a page runs on one thread.

use std::cell::Cell;

thread_local! {
    static RETRIEVED: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// Documents and bytes retrieved since the last [`take`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retrieved {
    pub documents: usize,
    pub bytes: usize,
}

/// Counts one document of `bytes` bytes read.
pub(super) fn read(bytes: usize) {
    let (documents, total) = RETRIEVED.get();
    RETRIEVED.set((documents + 1, total + bytes));
}

/// What was read since the last call, and starts again from zero.
pub fn take() -> Retrieved {
    let (documents, bytes) = RETRIEVED.replace((0, 0));
    Retrieved { documents, bytes }
}
