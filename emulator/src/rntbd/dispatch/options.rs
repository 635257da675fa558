//! A request frame's tokens read as the operation layer's options
//! (`operations::RequestOptions`), where HTTP reads headers: each token
//! turned once into the text the header would carry (a byte's level into
//! its name, PageSize 0xFFFFFFFF into `-1`, ReturnPreference 1 into
//! `return=minimal`, Match into `If-None-Match` on Read and ReadFeed and
//! `If-Match` on the others). See `docs/src/reference/rntbd.md#request-tokens`.

use std::borrow::Cow;

use crate::operations::{RequestOption, RequestOptions};
use crate::rntbd::codec::{OperationType, RequestTokens};

/// The options of one request frame.
pub struct TokenOptions<'a> {
    values: Vec<(RequestOption, Cow<'a, str>)>,
}

/// The names of the consistency levels, by the ConsistencyLevel token's byte.
const LEVELS: [&str; 5] = [
    "Strong",
    "BoundedStaleness",
    "Session",
    "Eventual",
    "ConsistentPrefix",
];

impl<'a> TokenOptions<'a> {
    pub fn new(tokens: &RequestTokens<'a>, operation: OperationType) -> Self {
        use RequestOption::*;
        let mut values: Vec<(RequestOption, Cow<'a, str>)> = Vec::with_capacity(8);
        let mut text = |option, value: Option<&'a str>| {
            if let Some(value) = value {
                values.push((option, Cow::Borrowed(value)));
            }
        };
        text(PartitionKey, tokens.partition_key());
        text(SessionToken, tokens.session_token());
        text(Continuation, tokens.continuation_token());
        text(PreTriggerInclude, tokens.pre_trigger_include());
        text(PostTriggerInclude, tokens.post_trigger_include());
        text(ChangeFeedMode, tokens.a_im());
        text(IfModifiedSince, tokens.if_modified_since());
        text(
            ChangeFeedWireFormat,
            tokens.change_feed_wire_format_version(),
        );
        // `0`, or `{collection rid},0`: the range is what follows the last comma.
        text(
            PartitionKeyRangeId,
            tokens
                .partition_key_range_id()
                .map(|r| r.rsplit(',').next().unwrap_or(r).trim()),
        );
        let reads = matches!(operation, OperationType::Read | OperationType::ReadFeed);
        text(
            if reads { IfNoneMatch } else { IfMatch },
            tokens.match_condition(),
        );
        let epk = |bytes: Option<&'a [u8]>| bytes.and_then(|b| std::str::from_utf8(b).ok());
        text(StartEpk, epk(tokens.start_epk()));
        text(EndEpk, epk(tokens.end_epk()));
        if let Some(level) = tokens.consistency_level() {
            if let Some(name) = LEVELS.get(usize::from(level)) {
                values.push((ConsistencyLevel, Cow::Borrowed(*name)));
            }
        }
        if let Some(size) = tokens.page_size() {
            // -1 (no limit) arrives as 0xFFFFFFFF.
            let size = match size {
                u32::MAX => Cow::Borrowed("-1"),
                n => Cow::Owned(n.to_string()),
            };
            values.push((MaxItemCount, size));
        }
        if tokens.return_preference() == Some(1) {
            values.push((Prefer, Cow::Borrowed("return=minimal")));
        }
        let flag =
            |value: Option<u8>| value.map(|v| Cow::Borrowed(if v != 0 { "true" } else { "false" }));
        for (option, value) in [
            (ScriptLogging, flag(tokens.enable_logging())),
            (BatchAtomic, flag(tokens.is_batch_atomic())),
            (
                BatchContinueOnError,
                flag(tokens.should_batch_continue_on_error()),
            ),
            (PopulateQueryMetrics, flag(tokens.populate_query_metrics())),
            (PopulateIndexMetrics, flag(tokens.populate_index_metrics())),
            (PopulateQuotaInfo, flag(tokens.populate_quota_info())),
        ] {
            if let Some(value) = value {
                values.push((option, value));
            }
        }
        if let Some(priority) = tokens.priority_level() {
            // 1 High, 2 Low (JAVA `models.PriorityLevel`: HIGH is (byte) 1, LOW (byte) 2).
            let level = if priority == 2 { "Low" } else { "High" };
            values.push((PriorityLevel, Cow::Borrowed(level)));
        }
        if operation == OperationType::Upsert {
            values.push((Upsert, Cow::Borrowed("true")));
        }
        TokenOptions { values }
    }
}

impl RequestOptions for TokenOptions<'_> {
    fn get(&self, option: RequestOption) -> Option<&str> {
        self.values
            .iter()
            .find(|(named, _)| *named == option)
            .map(|(_, value)| &**value)
    }
}
