//! What a request asks for besides its address and body: its partition
//! key, session token, preconditions, paging... Each protocol carries
//! these its own way (HTTP as headers, Direct mode as tokens of its
//! frames), so an operation reads them through [`RequestOptions`], by
//! meaning ([`RequestOption`]), and the front door maps the names.

/// A request option, by what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RequestOption {
    /// The partition key as JSON text: `["a"]`, `[]` for none.
    PartitionKey,
    /// The partition key range a feed or query reads (`{range}` or
    /// `{container rid},{range}`).
    PartitionKeyRangeId,
    /// The session the client has seen: `0:-1#12`.
    SessionToken,
    /// The consistency level the request asks for (it may only relax the
    /// account's).
    ConsistencyLevel,
    /// The container RID the client holds (`400/1024` when it is stale).
    IntendedCollectionRid,
    /// Write only if the item's etag is this one.
    IfMatch,
    /// Answer 304 if the item's etag is this one.
    IfNoneMatch,
    /// `return=minimal`: no body in a write's answer.
    Prefer,
    /// A POST that creates an item (or user, script...) replaces it if it exists.
    Upsert,
    /// Where a feed or query continues.
    Continuation,
    /// The most items a page may hold.
    MaxItemCount,
    /// `Low` or `High`: which requests throttling sheds first.
    PriorityLevel,
    /// The stored procedure or trigger execution's options (pre- and
    /// post-triggers).
    PreTriggerInclude,
    PostTriggerInclude,
    /// Whether a stored procedure's `console.log` is sent back.
    ScriptLogging,
    // The metadata operations'.
    /// The manual throughput a database or container is created with.
    OfferThroughput,
    /// The autoscale settings it is created with, as JSON
    /// (`{"maxThroughput":4000}`).
    AutoscaleSettings,
    /// An offer's replace moves it to autoscale throughput.
    MigrateToAutoscale,
    /// An offer's replace moves it to manual throughput.
    MigrateToManual,
    /// A container's read adds its partitions' statistics.
    PopulatePartitionStatistics,
    /// A container's read adds its sizes to its usage, and how far its
    /// indexes' rebuild has come.
    PopulateQuotaInfo,
    /// How long the tokens of the permissions served stay valid, in seconds.
    ExpirySeconds,
    /// A query may read every partition.
    EnableCrossPartitionQuery,
    // The query's and the feeds'.
    /// The query features the client's pipeline supports (a query plan's).
    SupportedQueryFeatures,
    /// The start and end of a range of effective partition keys a feed or
    /// query reads (a feed range).
    StartEpk,
    EndEpk,
    /// A query page answers its query metrics.
    PopulateQueryMetrics,
    /// A query page answers its index metrics, in the first version
    /// (base64 JSON) or the second (percent-encoded JSON).
    PopulateIndexMetrics,
    PopulateIndexMetricsV2,
    /// The change feed's mode (`Incremental Feed`, `Full-Fidelity Feed`):
    /// a read of a container's items with it is a change feed read.
    ChangeFeedMode,
    /// The change feed's wire format (`2021-09-15`).
    ChangeFeedWireFormat,
    /// The change feed reads the changes since this date (RFC 1123).
    IfModifiedSince,
    // The batch's.
    /// `false`: bulk (each operation by itself); otherwise a transactional batch.
    BatchAtomic,
    /// A bulk request goes on past a failed operation.
    BatchContinueOnError,
}

/// A request's options, read by meaning. Implemented by each front door
/// over what it parsed (the HTTP adapter over the request's headers).
pub trait RequestOptions: Sync {
    /// The option's value as sent, if the request carries it.
    fn get(&self, option: RequestOption) -> Option<&str>;

    fn partition_key(&self) -> Option<&str> {
        self.get(RequestOption::PartitionKey)
    }

    /// The number of the partition key range the request names, if any.
    fn range_id(&self) -> Option<u32> {
        crate::data::store::parse_range_id(self.get(RequestOption::PartitionKeyRangeId)?)
    }

    /// The range the request names, as sent.
    fn range_id_text(&self) -> Option<&str> {
        self.get(RequestOption::PartitionKeyRangeId)
    }

    /// A session token, if one is sent and not empty.
    fn session_token(&self) -> Option<&str> {
        self.get(RequestOption::SessionToken)
            .filter(|t| !t.is_empty())
    }

    fn consistency_level(&self) -> Option<&str> {
        self.get(RequestOption::ConsistencyLevel)
    }

    fn intended_collection_rid(&self) -> Option<&str> {
        self.get(RequestOption::IntendedCollectionRid)
    }

    fn if_match(&self) -> Option<&str> {
        self.get(RequestOption::IfMatch)
    }

    fn if_none_match(&self) -> Option<&str> {
        self.get(RequestOption::IfNoneMatch)
    }

    /// Whether the client asked for no body on a write (`Prefer:
    /// return=minimal`: Python's `no_response`, JavaScript's
    /// `contentResponseOnWriteEnabled: false`).
    fn prefer_minimal(&self) -> bool {
        self.get(RequestOption::Prefer)
            .is_some_and(|p| p.trim().eq_ignore_ascii_case("return=minimal"))
    }

    fn is_upsert(&self) -> bool {
        self.flag(RequestOption::Upsert)
    }

    /// Whether a boolean option is `true` (in any case, spaces around it).
    fn flag(&self, option: RequestOption) -> bool {
        flag(self.get(option))
    }

    fn continuation(&self) -> Option<&str> {
        self.get(RequestOption::Continuation)
            .filter(|c| !c.is_empty())
    }

    fn max_item_count(&self) -> Option<&str> {
        self.get(RequestOption::MaxItemCount)
    }

    /// Whether the request runs triggers (either kind).
    fn has_triggers(&self) -> bool {
        [
            RequestOption::PreTriggerInclude,
            RequestOption::PostTriggerInclude,
        ]
        .into_iter()
        .any(|option| self.get(option).is_some_and(|v| !v.trim().is_empty()))
    }
}

/// A boolean option: `true` in any case, with spaces around it.
fn flag(value: Option<&str>) -> bool {
    value.is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// Options given as pairs: what a front door without a header map of its
/// own (the in-process API, tests) passes.
#[derive(Debug, Clone, Copy, Default)]
pub struct GivenOptions<'a>(pub &'a [(RequestOption, &'a str)]);

impl RequestOptions for GivenOptions<'_> {
    fn get(&self, option: RequestOption) -> Option<&str> {
        self.0
            .iter()
            .find(|(named, _)| *named == option)
            .map(|(_, value)| *value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use RequestOption::*;

    #[test]
    fn typed_readings_of_the_options() {
        let options = GivenOptions(&[
            (PartitionKey, "[\"a\"]"),
            (PartitionKeyRangeId, "3"),
            (SessionToken, ""),
            (Prefer, " Return=Minimal "),
            (Upsert, "True"),
            (Continuation, ""),
            (PreTriggerInclude, " "),
            (PopulateQuotaInfo, " TRUE "),
            (MigrateToManual, "false"),
        ]);
        assert_eq!(options.partition_key(), Some("[\"a\"]"));
        assert_eq!(options.range_id(), Some(3));
        assert_eq!(options.session_token(), None, "an empty token is none");
        assert!(options.prefer_minimal());
        assert!(options.is_upsert());
        assert_eq!(options.continuation(), None);
        assert!(!options.has_triggers(), "a blank trigger list runs none");
        assert!(options.flag(PopulateQuotaInfo), "a flag in any case");
        assert!(!options.flag(MigrateToManual) && !options.flag(MigrateToAutoscale));
        let none = GivenOptions::default();
        assert!(!none.prefer_minimal() && !none.is_upsert());
        assert_eq!(none.range_id(), None);
    }
}
