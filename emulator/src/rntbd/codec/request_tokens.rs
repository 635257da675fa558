//! The request tokens the emulator reads, with the types the SDKs write
//! them with (the Java SDK 4.81.0's `RntbdConstants.RntbdRequestHeader`,
//! filled by `RntbdRequestHeaders`; .NET uses the same ids). Where HTTP has
//! a header for one, its doc names it. Any other id is skipped by its wire
//! type. PayloadPresent (0x0002) is the frame's own (`frame.rs`), not a row
//! here. See `docs/src/reference/rntbd.md#request-tokens`.

use super::table::token_table;

token_table! {
    /// A request token the emulator knows.
    pub enum RequestToken;
    /// The known tokens of one request, each at most once.
    pub struct RequestTokens;

    /// The resource's RID bytes (`_rid` in base64, `-` for `/`); on
    /// name-based item requests, the container's.
    ResourceId = 0x0000, Bytes, resource_id, set_resource_id;
    /// `authorization`, URL-encoded as over HTTP.
    AuthorizationToken = 0x0001, String, authorization_token, set_authorization_token;
    /// `x-ms-date`, the date the signature signs.
    Date = 0x0003, SmallString, date, set_date;
    /// `x-ms-max-item-count`; -1 arrives as 0xFFFFFFFF.
    PageSize = 0x0004, ULong, page_size, set_page_size;
    /// `x-ms-session-token`, partition-local (`0:-1#5`).
    SessionToken = 0x0005, String, session_token, set_session_token;
    /// `x-ms-continuation`.
    ContinuationToken = 0x0006, String, continuation_token, set_continuation_token;
    /// `x-ms-indexing-directive`: 0 Default, 1 Include, 2 Exclude.
    IndexingDirective = 0x0007, Byte, indexing_directive, set_indexing_directive;
    /// `if-none-match` on Read and ReadFeed, `if-match` on the others.
    Match = 0x0008, String, match_condition, set_match_condition;
    /// `x-ms-documentdb-pre-trigger-include`.
    PreTriggerInclude = 0x0009, String, pre_trigger_include, set_pre_trigger_include;
    /// `x-ms-documentdb-post-trigger-include`.
    PostTriggerInclude = 0x000A, String, post_trigger_include, set_post_trigger_include;
    /// `x-ms-documentdb-pre-trigger-exclude`.
    PreTriggerExclude = 0x000E, String, pre_trigger_exclude, set_pre_trigger_exclude;
    /// `x-ms-documentdb-post-trigger-exclude`.
    PostTriggerExclude = 0x000F, String, post_trigger_exclude, set_post_trigger_exclude;
    /// `x-ms-consistency-level`: 0 Strong, 1 Bounded, 2 Session, 3
    /// Eventual, 4 ConsistentPrefix.
    ConsistencyLevel = 0x0010, Byte, consistency_level, set_consistency_level;
    /// The replica's path (its address's path, no trailing `/`).
    ReplicaPath = 0x0013, String, replica_path, set_replica_path;
    DatabaseName = 0x0015, String, database_name, set_database_name;
    CollectionName = 0x0016, String, collection_name, set_collection_name;
    DocumentName = 0x0017, String, document_name, set_document_name;
    AttachmentName = 0x0018, String, attachment_name, set_attachment_name;
    UserName = 0x0019, String, user_name, set_user_name;
    PermissionName = 0x001A, String, permission_name, set_permission_name;
    StoredProcedureName = 0x001B, String, stored_procedure_name, set_stored_procedure_name;
    UserDefinedFunctionName = 0x001C, String, user_defined_function_name, set_user_defined_function_name;
    TriggerName = 0x001D, String, trigger_name, set_trigger_name;
    ConflictName = 0x0020, String, conflict_name, set_conflict_name;
    /// `x-ms-version`; usually absent (the context request's applies).
    ClientVersion = 0x0028, SmallString, client_version, set_client_version;
    /// `x-ms-documentdb-partitionkey`, a JSON array (`["pk1"]`).
    PartitionKey = 0x002B, String, partition_key, set_partition_key;
    /// `x-ms-documentdb-partitionkeyrangeid`: `0`, or `<collRid>,0`.
    PartitionKeyRangeId = 0x002C, String, partition_key_range_id, set_partition_key_range_id;
    /// The container's RID (ignorable: the names say the same).
    CollectionRid = 0x0035, String, collection_rid, set_collection_rid;
    PartitionKeyRangeName = 0x0036, String, partition_key_range_name, set_partition_key_range_name;
    SchemaName = 0x003A, String, schema_name, set_schema_name;
    /// `x-ms-documentdb-script-enable-logging`.
    EnableLogging = 0x003E, Byte, enable_logging, set_enable_logging;
    /// `a-im` (`Incremental Feed`: the change feed).
    AIm = 0x003F, String, a_im, set_a_im;
    /// `x-ms-documentdb-populatequotainfo`.
    PopulateQuotaInfo = 0x0040, Byte, populate_quota_info, set_populate_quota_info;
    /// `x-ms-documentdb-populatequerymetrics`.
    PopulateQueryMetrics = 0x0042, Byte, populate_query_metrics, set_populate_query_metrics;
    /// `if-modified-since` (RFC 1123).
    IfModifiedSince = 0x0047, String, if_modified_since, set_if_modified_since;
    /// A barrier's LSN to reach.
    TargetLsn = 0x004B, LongLong, target_lsn, set_target_lsn;
    /// A barrier's global committed LSN to reach.
    TargetGlobalCommittedLsn = 0x004C, LongLong, target_global_committed_lsn, set_target_global_committed_lsn;
    /// The client's counter, echoed in the answer's TransportRequestID.
    TransportRequestId = 0x004D, ULong, transport_request_id, set_transport_request_id;
    /// `x-ms-is-readonly-script`.
    IsReadOnlyScript = 0x0052, Byte, is_read_only_script, set_is_read_only_script;
    UserDefinedTypeName = 0x005C, String, user_defined_type_name, set_user_defined_type_name;
    /// `x-ms-start-epk`, the hex string's UTF-8 bytes.
    StartEpk = 0x0062, Bytes, start_epk, set_start_epk;
    /// `x-ms-end-epk`, likewise.
    EndEpk = 0x0063, Bytes, end_epk, set_end_epk;
    /// `x-ms-read-key-type`: 1 ResourceId, 2 EPK, 3 EPK range.
    ReadFeedKeyType = 0x0064, Byte, read_feed_key_type, set_read_feed_key_type;
    /// `x-ms-documentdb-content-serialization-format`: 0 JSON, 1 binary.
    ContentSerializationFormat = 0x0065, Byte, content_serialization_format, set_content_serialization_format;
    /// `x-ms-cosmos-batch-atomic`.
    IsBatchAtomic = 0x0073, Byte, is_batch_atomic, set_is_batch_atomic;
    /// `x-ms-cosmos-batch-continue-on-error`.
    ShouldBatchContinueOnError = 0x0074, Byte, should_batch_continue_on_error, set_should_batch_continue_on_error;
    /// `x-ms-cosmos-batch-ordered`.
    IsBatchOrdered = 0x0075, Byte, is_batch_ordered, set_is_batch_ordered;
    /// 1 for `prefer: return=minimal`.
    ReturnPreference = 0x0082, Byte, return_preference, set_return_preference;
    /// `x-ms-cosmos-sdk-supportedcapabilities`.
    SdkSupportedCapabilities = 0x00A2, ULong, sdk_supported_capabilities, set_sdk_supported_capabilities;
    /// `x-ms-cosmos-populateindexmetrics`.
    PopulateIndexMetrics = 0x00A9, Byte, populate_index_metrics, set_populate_index_metrics;
    /// `x-ms-cosmos-correlated-activityid`.
    CorrelatedActivityId = 0x00B0, Guid, correlated_activity_id, set_correlated_activity_id;
    /// `x-ms-cosmos-changefeed-wire-format-version`.
    ChangeFeedWireFormatVersion = 0x00B2, String, change_feed_wire_format_version, set_change_feed_wire_format_version;
    /// `x-ms-cosmos-priority-level`.
    PriorityLevel = 0x00BF, Byte, priority_level, set_priority_level;
    /// 1 Eventual, 2 Session, 3 LatestCommitted, 4 GlobalStrong.
    ReadConsistencyStrategy = 0x00FE, Byte, read_consistency_strategy, set_read_consistency_strategy;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rntbd::codec::token_type::TokenType;

    /// The table, as `RntbdConstants.RntbdRequestHeader` (4.81.0) declares
    /// each of these ids, written out a second time: a typo in either
    /// fails here.
    const DECLARED: &[(u16, TokenType)] = &[
        (0x0000, TokenType::Bytes),
        (0x0001, TokenType::String),
        (0x0003, TokenType::SmallString),
        (0x0004, TokenType::ULong),
        (0x0005, TokenType::String),
        (0x0006, TokenType::String),
        (0x0007, TokenType::Byte),
        (0x0008, TokenType::String),
        (0x0009, TokenType::String),
        (0x000A, TokenType::String),
        (0x000E, TokenType::String),
        (0x000F, TokenType::String),
        (0x0010, TokenType::Byte),
        (0x0013, TokenType::String),
        (0x0015, TokenType::String),
        (0x0016, TokenType::String),
        (0x0017, TokenType::String),
        (0x0018, TokenType::String),
        (0x0019, TokenType::String),
        (0x001A, TokenType::String),
        (0x001B, TokenType::String),
        (0x001C, TokenType::String),
        (0x001D, TokenType::String),
        (0x0020, TokenType::String),
        (0x0028, TokenType::SmallString),
        (0x002B, TokenType::String),
        (0x002C, TokenType::String),
        (0x0035, TokenType::String),
        (0x0036, TokenType::String),
        (0x003A, TokenType::String),
        (0x003E, TokenType::Byte),
        (0x003F, TokenType::String),
        (0x0040, TokenType::Byte),
        (0x0042, TokenType::Byte),
        (0x0047, TokenType::String),
        (0x004B, TokenType::LongLong),
        (0x004C, TokenType::LongLong),
        (0x004D, TokenType::ULong),
        (0x0052, TokenType::Byte),
        (0x005C, TokenType::String),
        (0x0062, TokenType::Bytes),
        (0x0063, TokenType::Bytes),
        (0x0064, TokenType::Byte),
        (0x0065, TokenType::Byte),
        (0x0073, TokenType::Byte),
        (0x0074, TokenType::Byte),
        (0x0075, TokenType::Byte),
        (0x0082, TokenType::Byte),
        (0x00A2, TokenType::ULong),
        (0x00A9, TokenType::Byte),
        (0x00B0, TokenType::Guid),
        (0x00B2, TokenType::String),
        (0x00BF, TokenType::Byte),
        (0x00FE, TokenType::Byte),
    ];

    #[test]
    fn the_table_declares_what_the_sdk_declares_in_ascending_order() {
        let table: Vec<(u16, TokenType)> = RequestToken::ALL
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
        assert_eq!(RequestToken::from_id(0x0002), None);
    }

    #[test]
    fn every_id_finds_its_token_and_no_other() {
        for token in RequestToken::ALL {
            assert_eq!(RequestToken::from_id(token.id()), Some(*token));
        }
        let known = (0..=u16::MAX).filter(|id| RequestToken::from_id(*id).is_some());
        assert_eq!(known.count(), RequestToken::COUNT);
    }

    #[test]
    fn typed_setters_and_getters_agree_and_the_generic_setter_checks_the_type() {
        let mut tokens = RequestTokens::new();
        tokens
            .set_page_size(u32::MAX)
            .set_partition_key(r#"["pk1"]"#);
        assert_eq!(tokens.page_size(), Some(u32::MAX));
        assert_eq!(tokens.partition_key(), Some(r#"["pk1"]"#));
        assert_eq!(tokens.session_token(), None);
        assert_eq!(
            tokens
                .set(
                    RequestToken::PageSize,
                    crate::rntbd::codec::TokenValue::Byte(1)
                )
                .err(),
            Some(TokenType::ULong)
        );
        assert_eq!(
            tokens.page_size(),
            Some(u32::MAX),
            "a refused value changes nothing"
        );
        assert_eq!(
            tokens.remove(RequestToken::PageSize),
            Some(crate::rntbd::codec::TokenValue::ULong(u32::MAX))
        );
        assert_eq!(tokens.iter().count(), 1);
    }
}
