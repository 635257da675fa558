//! The kinds of operation the steps around every operation tell apart, in
//! the words of the service's operation types: a point read, a query, a
//! create... Fault rules match on them (`faults/`), throttling spends by
//! them, a read region refuses the writes among them. Each front door
//! says which kind a request is (HTTP from its method, path and headers:
//! `http/operation.rs`).

/// What kind of operation a request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OperationKind {
    /// A point read or an item read feed.
    Read,
    /// A query over items (or a query plan request).
    Query,
    Create,
    Upsert,
    Replace,
    Patch,
    /// A point delete, or deleting a partition key's items.
    Delete,
    /// A transactional batch or a bulk request.
    Batch,
    /// A read of the change feed.
    ChangeFeed,
    /// A stored procedure's execution.
    Script,
    /// The account read.
    Account,
    /// Every other resource: databases, containers, partition key ranges,
    /// offers, users, permissions, scripts' definitions, conflicts, client
    /// encryption keys, and queries over those. `changes` says whether it
    /// changes the account (a create, replace or delete) or reads it.
    Metadata {
        changes: bool,
    },
    /// The emulator's own control API: never faulted, throttled or refused
    /// by a region.
    Control,
}

impl OperationKind {
    /// The name fault rules use (`faults::OPERATIONS`).
    pub fn name(self) -> &'static str {
        match self {
            OperationKind::Read => "read",
            OperationKind::Query => "query",
            OperationKind::Create => "create",
            OperationKind::Upsert => "upsert",
            OperationKind::Replace => "replace",
            OperationKind::Patch => "patch",
            OperationKind::Delete => "delete",
            OperationKind::Batch => "batch",
            OperationKind::ChangeFeed => "changeFeed",
            OperationKind::Script => "script",
            OperationKind::Account => "account",
            OperationKind::Metadata { .. } => "metadata",
            OperationKind::Control => "control",
        }
    }

    /// Whether it changes the account: what a read region refuses.
    pub fn is_write(self) -> bool {
        match self {
            OperationKind::Create
            | OperationKind::Upsert
            | OperationKind::Replace
            | OperationKind::Patch
            | OperationKind::Delete
            | OperationKind::Batch
            | OperationKind::Script => true,
            OperationKind::Metadata { changes } => changes,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::OperationKind::*;

    #[test]
    fn writes_are_the_operations_that_change_the_account() {
        for kind in [Create, Upsert, Replace, Patch, Delete, Batch, Script] {
            assert!(kind.is_write(), "{kind:?}");
        }
        let metadata_write = Metadata { changes: true };
        assert!(metadata_write.is_write());
        for kind in [Read, Query, ChangeFeed, Account, Control] {
            assert!(!kind.is_write(), "{kind:?}");
        }
        assert!(!Metadata { changes: false }.is_write());
    }

    #[test]
    fn the_names_are_the_fault_rules_names() {
        let named = [
            Read,
            Query,
            Create,
            Upsert,
            Replace,
            Patch,
            Delete,
            Batch,
            ChangeFeed,
            Script,
            Account,
            Metadata { changes: false },
        ];
        let names: Vec<_> = named.iter().map(|o| o.name()).collect();
        assert_eq!(names, crate::account::faults::OPERATIONS);
    }
}
