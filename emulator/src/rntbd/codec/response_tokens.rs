//! The response tokens the emulator writes, each with the type the client
//! declares for its id (the Java SDK 4.81.0's
//! `RntbdConstants.RntbdResponseHeader`): the client slices a known id's
//! value with its own declared type, whatever type byte came with it
//! (`RntbdTokenStream.decode`), so a token written with another type
//! would corrupt every token after it. The typed setters make that
//! impossible. Each doc names the HTTP header the client turns the token
//! into (`RntbdResponseHeaders`). PayloadPresent (0x0000) is the frame's
//! own (`frame.rs`). See `docs/src/reference/rntbd.md#response-tokens`.

use super::table::token_table;

token_table! {
    /// A response token the emulator writes.
    pub enum ResponseToken;
    /// The tokens of one response, each at most once.
    pub struct ResponseTokens;

    /// `x-ms-continuation`.
    ContinuationToken = 0x0003, String, continuation_token, set_continuation_token;
    /// `etag` (also the change feed's continuation).
    ETag = 0x0004, String, etag, set_etag;
    /// `x-ms-retry-after-ms` (429).
    RetryAfterMilliseconds = 0x000C, ULong, retry_after_milliseconds, set_retry_after_milliseconds;
    /// `x-ms-resource-quota`.
    StorageMaxResoureQuota = 0x000E, String, resource_quota, set_resource_quota;
    /// `x-ms-resource-usage`.
    StorageResourceQuotaUsage = 0x000F, String, resource_usage, set_resource_usage;
    /// `x-ms-schemaversion`.
    SchemaVersion = 0x0010, SmallString, schema_version, set_schema_version;
    /// `lsn`.
    Lsn = 0x0013, LongLong, lsn, set_lsn;
    /// `x-ms-item-count`.
    ItemCount = 0x0014, ULong, item_count, set_item_count;
    /// `x-ms-request-charge`.
    RequestCharge = 0x0015, Double, request_charge, set_request_charge;
    /// `x-ms-alt-content-path`.
    OwnerFullName = 0x0017, String, owner_full_name, set_owner_full_name;
    /// `x-ms-content-path`: the container's RID, which session capture needs.
    OwnerId = 0x0018, String, owner_id, set_owner_id;
    /// `x-ms-quorum-acked-lsn`.
    QuorumAckedLsn = 0x001A, LongLong, quorum_acked_lsn, set_quorum_acked_lsn;
    /// `x-ms-substatus`.
    SubStatus = 0x001C, ULong, sub_status, set_sub_status;
    /// `x-ms-current-write-quorum`.
    CurrentWriteQuorum = 0x001E, ULong, current_write_quorum, set_current_write_quorum;
    /// `x-ms-current-replica-set-size`.
    CurrentReplicaSetSize = 0x001F, ULong, current_replica_set_size, set_current_replica_set_size;
    /// `x-ms-documentdb-partitionkeyrangeid`; also the session token's prefix.
    PartitionKeyRangeId = 0x0021, String, partition_key_range_id, set_partition_key_range_id;
    /// `x-ms-documentdb-script-log-results`.
    LogResults = 0x0025, String, log_results, set_log_results;
    /// `x-ms-documentdb-query-metrics`.
    QueryMetrics = 0x0028, String, query_metrics, set_query_metrics;
    /// `x-ms-global-Committed-lsn`.
    GlobalCommittedLsn = 0x0029, LongLong, global_committed_lsn, set_global_committed_lsn;
    /// `x-ms-number-of-read-regions`.
    NumberOfReadRegions = 0x0030, ULong, number_of_read_regions, set_number_of_read_regions;
    /// `x-ms-item-lsn`.
    ItemLsn = 0x0032, LongLong, item_lsn, set_item_lsn;
    /// The request's TransportRequestID, echoed: an answer without it is dropped.
    TransportRequestId = 0x0035, ULong, transport_request_id, set_transport_request_id;
    /// `x-ms-date`.
    ServerDateTimeUtc = 0x0039, SmallString, server_date_time_utc, set_server_date_time_utc;
    /// `x-ms-cosmos-llsn` (multi-write accounts).
    LocalLsn = 0x003A, LongLong, local_lsn, set_local_lsn;
    /// `x-ms-cosmos-quorum-acked-llsn`.
    QuorumAckedLocalLsn = 0x003B, LongLong, quorum_acked_local_lsn, set_quorum_acked_local_lsn;
    /// `x-ms-cosmos-item-llsn`.
    ItemLocalLsn = 0x003C, LongLong, item_local_lsn, set_item_local_lsn;
    /// The session token without its range (`-1#6`); the client prefixes
    /// PartitionKeyRangeId and a colon.
    SessionToken = 0x003E, String, session_token, set_session_token;
    /// `x-ms-cosmos-index-utilization`.
    IndexUtilization = 0x0044, String, index_utilization, set_index_utilization;
    /// `x-ms-cosmos-query-execution-info`.
    QueryExecutionInfo = 0x0045, String, query_execution_info, set_query_execution_info;
    /// `x-ms-request-duration-ms`.
    BackendRequestDurationMilliseconds = 0x0051, Double, backend_request_duration_milliseconds, set_backend_request_duration_milliseconds;
    /// `x-ms-cosmos-correlated-activityid`.
    CorrelatedActivityId = 0x0052, Guid, correlated_activity_id, set_correlated_activity_id;
    /// `x-ms-cosmos-global-nregion-committed-glsn`.
    GlobalNRegionCommittedGlsn = 0x0078, LongLong, global_n_region_committed_glsn, set_global_n_region_committed_glsn;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rntbd::codec::token_type::TokenType;

    /// What `RntbdConstants.RntbdResponseHeader` (4.81.0) declares for
    /// these ids, written out a second time: the client reads each id with
    /// this type, so a typo in the table fails here rather than in a client.
    const DECLARED: &[(u16, TokenType)] = &[
        (0x0003, TokenType::String),
        (0x0004, TokenType::String),
        (0x000C, TokenType::ULong),
        (0x000E, TokenType::String),
        (0x000F, TokenType::String),
        (0x0010, TokenType::SmallString),
        (0x0013, TokenType::LongLong),
        (0x0014, TokenType::ULong),
        (0x0015, TokenType::Double),
        (0x0017, TokenType::String),
        (0x0018, TokenType::String),
        (0x001A, TokenType::LongLong),
        (0x001C, TokenType::ULong),
        (0x001E, TokenType::ULong),
        (0x001F, TokenType::ULong),
        (0x0021, TokenType::String),
        (0x0025, TokenType::String),
        (0x0028, TokenType::String),
        (0x0029, TokenType::LongLong),
        (0x0030, TokenType::ULong),
        (0x0032, TokenType::LongLong),
        (0x0035, TokenType::ULong),
        (0x0039, TokenType::SmallString),
        (0x003A, TokenType::LongLong),
        (0x003B, TokenType::LongLong),
        (0x003C, TokenType::LongLong),
        (0x003E, TokenType::String),
        (0x0044, TokenType::String),
        (0x0045, TokenType::String),
        (0x0051, TokenType::Double),
        (0x0052, TokenType::Guid),
        (0x0078, TokenType::LongLong),
    ];

    #[test]
    fn the_table_declares_what_the_client_declares_in_ascending_order() {
        let table: Vec<(u16, TokenType)> = ResponseToken::ALL
            .iter()
            .map(|t| (t.id(), t.token_type()))
            .collect();
        assert_eq!(table, DECLARED);
        assert!(
            table.windows(2).all(|w| w[0].0 < w[1].0),
            "ascending, unique"
        );
    }

    #[test]
    fn payload_present_is_the_frames_own_not_a_row() {
        assert_eq!(ResponseToken::from_id(0x0000), None);
    }

    #[test]
    fn a_setter_writes_the_declared_type() {
        let mut tokens = ResponseTokens::new();
        tokens
            .set_lsn(6)
            .set_request_charge(5.71)
            .set_session_token("-1#6");
        let types: Vec<TokenType> = tokens.iter().map(|(_, v)| v.token_type()).collect();
        assert_eq!(
            types,
            [TokenType::LongLong, TokenType::Double, TokenType::String]
        );
        for (token, value) in tokens.iter() {
            assert_eq!(value.token_type(), token.token_type(), "{}", token.name());
        }
    }
}
