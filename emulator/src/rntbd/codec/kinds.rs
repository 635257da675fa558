//! What a request frame addresses and asks: its resource type and its
//! operation type, the two `u16`s after the frame's length (the Java SDK
//! 4.81.0's `RntbdConstants.RntbdResourceType` and `RntbdOperationType`;
//! .NET has the same ids). An id no variant names is kept as its number
//! (`Other`), never refused here: the adapter answers what it does not
//! serve. See `docs/src/reference/rntbd.md#resource-and-operation-types`.

/// An enum of named wire ids with `Other(u16)` for the rest: `from_id`
/// gives a named variant for every id the table has, so `Other` only ever
/// holds ids it does not (`id` and `from_id` are inverses).
macro_rules! wire_ids {
    (
        $(#[$doc:meta])*
        pub enum $Name:ident { $( $(#[$vdoc:meta])* $Variant:ident = $id:literal, )+ }
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $Name {
            $( $(#[$vdoc])* $Variant, )+
            /// An id the table does not name.
            Other(u16),
        }

        impl $Name {
            pub const fn from_id(id: u16) -> $Name {
                match id {
                    $($id => $Name::$Variant,)+
                    other => $Name::Other(other),
                }
            }

            pub const fn id(self) -> u16 {
                match self {
                    $($Name::$Variant => $id,)+
                    $Name::Other(id) => id,
                }
            }
        }
    };
}

wire_ids! {
    /// The resource a request addresses.
    pub enum ResourceType {
        /// The context request's (with operation Connection).
        Connection = 0x0000,
        Database = 0x0001,
        /// A container.
        Collection = 0x0002,
        /// An item.
        Document = 0x0003,
        Attachment = 0x0004,
        User = 0x0005,
        Permission = 0x0006,
        StoredProcedure = 0x0007,
        Conflict = 0x0008,
        Trigger = 0x0009,
        UserDefinedFunction = 0x000A,
        Offer = 0x000F,
        MasterPartition = 0x0012,
        ServerPartition = 0x0013,
        DatabaseAccount = 0x0014,
        PartitionKeyRange = 0x0016,
        UserDefinedType = 0x001D,
    }
}

wire_ids! {
    /// What a request asks of its resource.
    pub enum OperationType {
        /// The context request's.
        Connection = 0x0000,
        Create = 0x0001,
        /// A JSON-patch body.
        Patch = 0x0002,
        Read = 0x0003,
        ReadFeed = 0x0004,
        Delete = 0x0005,
        Replace = 0x0006,
        /// A stored procedure's execution.
        ExecuteJavaScript = 0x0008,
        /// The body is raw SQL (a rare compatibility mode).
        SqlQuery = 0x0009,
        /// The body is `{"query", "parameters"}`.
        Query = 0x000F,
        /// A barrier on a container.
        Head = 0x0011,
        /// A barrier on the master partition.
        HeadFeed = 0x0012,
        Upsert = 0x0013,
        /// Transactional batch and bulk.
        Batch = 0x0025,
        /// .NET's query plan request.
        QueryPlan = 0x0042,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_round_trips_and_only_unnamed_ids_are_other() {
        for id in 0..=u16::MAX {
            let resource = ResourceType::from_id(id);
            assert_eq!(resource.id(), id);
            let operation = OperationType::from_id(id);
            assert_eq!(operation.id(), id);
        }
        assert_eq!(ResourceType::from_id(0x0003), ResourceType::Document);
        assert_eq!(ResourceType::from_id(0x0017), ResourceType::Other(0x0017));
        assert_eq!(OperationType::from_id(0x0013), OperationType::Upsert);
        assert_eq!(OperationType::from_id(0x0025), OperationType::Batch);
        assert_eq!(OperationType::from_id(0x0007), OperationType::Other(7));
        assert_eq!(OperationType::from_id(0xFFFF), OperationType::Other(0xFFFF));
    }
}
