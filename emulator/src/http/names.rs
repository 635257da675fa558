//! The Cosmos header names of the hot paths (every response, point reads
//! and writes), parsed once: a `&str` name is parsed, checked and looked up
//! in the standard table on every insert and lookup, which was a tenth of a
//! point read's CPU. Rarely used headers stay spelled where they are used.

use axum::http::HeaderName;

use crate::operations::RequestOption;

pub const ACTIVITY_ID: HeaderName = HeaderName::from_static("x-ms-activity-id");
pub const SESSION_TOKEN: HeaderName = HeaderName::from_static("x-ms-session-token");
pub const REQUEST_CHARGE: HeaderName = HeaderName::from_static("x-ms-request-charge");
pub const SCHEMA_VERSION: HeaderName = HeaderName::from_static("x-ms-schemaversion");
pub const SERVICE_VERSION: HeaderName = HeaderName::from_static("x-ms-serviceversion");
pub const GATEWAY_VERSION: HeaderName = HeaderName::from_static("x-ms-gatewayversion");

pub const CONTENT_PATH: HeaderName = HeaderName::from_static("x-ms-content-path");
pub const ALT_CONTENT_PATH: HeaderName = HeaderName::from_static("x-ms-alt-content-path");
pub const PARTITION_KEY_RANGE_ID: HeaderName =
    HeaderName::from_static("x-ms-documentdb-partitionkeyrangeid");
pub const GLOBAL_COMMITTED_LSN: HeaderName = HeaderName::from_static("x-ms-global-committed-lsn");
pub const LSN: HeaderName = HeaderName::from_static("lsn");
pub const ITEM_LSN: HeaderName = HeaderName::from_static("x-ms-item-lsn");

pub const DATE: HeaderName = HeaderName::from_static("x-ms-date");
pub const CONSISTENCY_LEVEL: HeaderName = HeaderName::from_static("x-ms-consistency-level");
pub const PARTITION_KEY: HeaderName = HeaderName::from_static("x-ms-documentdb-partitionkey");
pub const INTENDED_COLLECTION_RID: HeaderName =
    HeaderName::from_static("x-ms-cosmos-intended-collection-rid");
/// How long a throttled client should wait before retrying (on a 429).
pub const RETRY_AFTER_MS: HeaderName = HeaderName::from_static("x-ms-retry-after-ms");
/// `Low` or `High`: which requests are throttled first (`throttle.rs`).
pub const PRIORITY_LEVEL: HeaderName = HeaderName::from_static("x-ms-cosmos-priority-level");

const PREFER: HeaderName = HeaderName::from_static("prefer");
const IS_UPSERT: HeaderName = HeaderName::from_static("x-ms-documentdb-is-upsert");
const CONTINUATION: HeaderName = HeaderName::from_static("x-ms-continuation");
const MAX_ITEM_COUNT: HeaderName = HeaderName::from_static("x-ms-max-item-count");
const PRE_TRIGGERS: HeaderName = HeaderName::from_static("x-ms-documentdb-pre-trigger-include");
const SCRIPT_LOGGING: HeaderName = HeaderName::from_static("x-ms-documentdb-script-enable-logging");
const POST_TRIGGERS: HeaderName = HeaderName::from_static("x-ms-documentdb-post-trigger-include");
const OFFER_THROUGHPUT: HeaderName = HeaderName::from_static("x-ms-offer-throughput");
const AUTOSCALE_SETTINGS: HeaderName =
    HeaderName::from_static("x-ms-cosmos-offer-autopilot-settings");
const MIGRATE_TO_AUTOSCALE: HeaderName =
    HeaderName::from_static("x-ms-cosmos-migrate-offer-to-autopilot");
const MIGRATE_TO_MANUAL: HeaderName =
    HeaderName::from_static("x-ms-cosmos-migrate-offer-to-manual-throughput");
const POPULATE_PARTITION_STATISTICS: HeaderName =
    HeaderName::from_static("x-ms-documentdb-populatepartitionstatistics");
const POPULATE_QUOTA_INFO: HeaderName =
    HeaderName::from_static("x-ms-documentdb-populatequotainfo");
const EXPIRY_SECONDS: HeaderName = HeaderName::from_static("x-ms-documentdb-expiry-seconds");
const ENABLE_CROSS_PARTITION: HeaderName =
    HeaderName::from_static("x-ms-documentdb-query-enablecrosspartition");
const SUPPORTED_QUERY_FEATURES: HeaderName =
    HeaderName::from_static("x-ms-cosmos-supported-query-features");
const START_EPK: HeaderName = HeaderName::from_static("x-ms-start-epk");
const END_EPK: HeaderName = HeaderName::from_static("x-ms-end-epk");
const POPULATE_QUERY_METRICS: HeaderName =
    HeaderName::from_static("x-ms-documentdb-populatequerymetrics");
const POPULATE_INDEX_METRICS: HeaderName =
    HeaderName::from_static("x-ms-cosmos-populateindexmetrics");
const POPULATE_INDEX_METRICS_V2: HeaderName =
    HeaderName::from_static("x-ms-cosmos-populateindexmetrics-v2");
/// `A-IM`: the change feed's mode.
pub const A_IM: HeaderName = HeaderName::from_static("a-im");
const CHANGE_FEED_WIRE_FORMAT: HeaderName =
    HeaderName::from_static("x-ms-cosmos-changefeed-wire-format-version");
const BATCH_ATOMIC: HeaderName = HeaderName::from_static("x-ms-cosmos-batch-atomic");
const BATCH_CONTINUE_ON_ERROR: HeaderName =
    HeaderName::from_static("x-ms-cosmos-batch-continue-on-error");

/// The header that carries each request option (`operations/options.rs`).
pub fn of_option(option: RequestOption) -> HeaderName {
    use axum::http::header::{IF_MATCH, IF_MODIFIED_SINCE, IF_NONE_MATCH};
    match option {
        RequestOption::PartitionKey => PARTITION_KEY,
        RequestOption::PartitionKeyRangeId => PARTITION_KEY_RANGE_ID,
        RequestOption::SessionToken => SESSION_TOKEN,
        RequestOption::ConsistencyLevel => CONSISTENCY_LEVEL,
        RequestOption::IntendedCollectionRid => INTENDED_COLLECTION_RID,
        RequestOption::IfMatch => IF_MATCH,
        RequestOption::IfNoneMatch => IF_NONE_MATCH,
        RequestOption::Prefer => PREFER,
        RequestOption::Upsert => IS_UPSERT,
        RequestOption::Continuation => CONTINUATION,
        RequestOption::MaxItemCount => MAX_ITEM_COUNT,
        RequestOption::PriorityLevel => PRIORITY_LEVEL,
        RequestOption::PreTriggerInclude => PRE_TRIGGERS,
        RequestOption::PostTriggerInclude => POST_TRIGGERS,
        RequestOption::ScriptLogging => SCRIPT_LOGGING,
        RequestOption::OfferThroughput => OFFER_THROUGHPUT,
        RequestOption::AutoscaleSettings => AUTOSCALE_SETTINGS,
        RequestOption::MigrateToAutoscale => MIGRATE_TO_AUTOSCALE,
        RequestOption::MigrateToManual => MIGRATE_TO_MANUAL,
        RequestOption::PopulatePartitionStatistics => POPULATE_PARTITION_STATISTICS,
        RequestOption::PopulateQuotaInfo => POPULATE_QUOTA_INFO,
        RequestOption::ExpirySeconds => EXPIRY_SECONDS,
        RequestOption::EnableCrossPartitionQuery => ENABLE_CROSS_PARTITION,
        RequestOption::SupportedQueryFeatures => SUPPORTED_QUERY_FEATURES,
        RequestOption::StartEpk => START_EPK,
        RequestOption::EndEpk => END_EPK,
        RequestOption::PopulateQueryMetrics => POPULATE_QUERY_METRICS,
        RequestOption::PopulateIndexMetrics => POPULATE_INDEX_METRICS,
        RequestOption::PopulateIndexMetricsV2 => POPULATE_INDEX_METRICS_V2,
        RequestOption::ChangeFeedMode => A_IM,
        RequestOption::ChangeFeedWireFormat => CHANGE_FEED_WIRE_FORMAT,
        RequestOption::IfModifiedSince => IF_MODIFIED_SINCE,
        RequestOption::BatchAtomic => BATCH_ATOMIC,
        RequestOption::BatchContinueOnError => BATCH_CONTINUE_ON_ERROR,
    }
}
