//! Query metrics and index metrics, when a query asks for them, in the
//! service's formats so that the SDKs parse them. The values are this
//! emulator's: measured times, and counts of what the page returned. The
//! indexes reported are those the page used: the partition key's (a query
//! in one logical partition reads that partition's items by their key
//! order, reported as the service reports its use of `/pk/?`), and each
//! property index that found the documents (`index/`, e.g. `/n/?`).
//!
//! - [`RequestOption::PopulateQueryMetrics`] (HTTP's
//!   `x-ms-documentdb-populatequerymetrics: true`) → the query metrics
//!   (`x-ms-documentdb-query-metrics`), `name=value;` pairs (times in
//!   milliseconds), as JavaScript's `QueryMetrics.createFromDelimitedString`
//!   reads them.
//! - [`RequestOption::PopulateIndexMetrics`] (Python's
//!   `x-ms-cosmos-populateindexmetrics: true`) → the index utilization
//!   (`x-ms-cosmos-index-utilization`), base64 of the JSON;
//!   [`RequestOption::PopulateIndexMetricsV2`] (JavaScript's
//!   `x-ms-cosmos-populateindexmetrics-V2: true`) → the same, percent-encoded
//!   JSON (what each SDK decodes).
//!
//! The texts are the service's, whatever the protocol (Direct mode carries
//! the same values), so they are made here, encoded, and each front door
//! writes them under its own names.

use std::fmt::Write;
use std::time::Instant;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use bytes::Bytes;

use super::options::{RequestOption, RequestOptions};
use super::response::ResponseHeaders;
use crate::data::query::retrieved::Retrieved;

/// What a query page used: its documents, the stored documents it read to
/// make them (and the property indexes that found them), and the
/// partition key's index when it was scoped to one logical partition.
pub struct Used<'a> {
    pub documents: &'a [Bytes],
    pub retrieved: Retrieved,
    pub key_index: Option<&'a str>,
}

impl Used<'_> {
    /// The index specs the page used, the partition key's first.
    fn specs(&self) -> impl Iterator<Item = &str> {
        let properties = self.retrieved.indexes.iter().map(String::as_str);
        self.key_index.into_iter().chain(properties)
    }
}

/// Index utilization as the first version reports it (Python decodes it).
fn index_utilization_v1(used: &Used<'_>) -> String {
    let utilized: Vec<serde_json::Value> = used
        .specs()
        .map(|spec| {
            serde_json::json!({
                "FilterExpression": "", "IndexSpec": spec, "FilterPreciseSet": true,
                "IndexPreciseSet": true, "IndexImpactScore": "High",
            })
        })
        .collect();
    serde_json::json!({
        "UtilizedSingleIndexes": utilized, "PotentialSingleIndexes": [],
        "UtilizedCompositeIndexes": [], "PotentialCompositeIndexes": [],
    })
    .to_string()
}

/// And as the second (JavaScript asks for it).
fn index_utilization_v2(used: &Used<'_>) -> String {
    let utilized: Vec<serde_json::Value> = used
        .specs()
        .map(|spec| serde_json::json!({"IndexSpec": spec, "IndexImpactScore": "High"}))
        .collect();
    serde_json::json!({
        "UtilizedIndexes": {"SingleIndexes": utilized, "CompositeIndexes": []},
        "PotentialIndexes": {"SingleIndexes": [], "CompositeIndexes": []},
    })
    .to_string()
}

/// Whether the query asks for any metrics (then its run is timed).
pub fn wanted(options: &dyn RequestOptions) -> bool {
    options.flag(RequestOption::PopulateQueryMetrics)
        || options.flag(RequestOption::PopulateIndexMetrics)
        || options.flag(RequestOption::PopulateIndexMetricsV2)
}

/// Adds the metrics the request asked for to a query page's headers.
pub fn add(
    response: &mut ResponseHeaders,
    options: &dyn RequestOptions,
    used: &Used<'_>,
    started: Instant,
) {
    if options.flag(RequestOption::PopulateQueryMetrics) {
        response.query_metrics = Some(query_metrics(used, started));
    }
    response.index_utilization = if options.flag(RequestOption::PopulateIndexMetricsV2) {
        Some(
            percent_encoding::utf8_percent_encode(
                &index_utilization_v2(used),
                percent_encoding::NON_ALPHANUMERIC,
            )
            .to_string(),
        )
    } else if options.flag(RequestOption::PopulateIndexMetrics) {
        Some(BASE64.encode(index_utilization_v1(used)))
    } else {
        None
    };
}

/// The service's delimited query metrics for one page. The index
/// utilization ratio is the share of the documents read that the page
/// returned (1 when it read none).
fn query_metrics(used: &Used<'_>, started: Instant) -> String {
    let total_ms = started.elapsed().as_secs_f64() * 1000.0;
    let count = used.documents.len();
    let size: usize = used.documents.iter().map(Bytes::len).sum();
    let Retrieved {
        documents: retrieved,
        bytes: retrieved_size,
        ..
    } = used.retrieved;
    let ratio = if retrieved == 0 {
        1.0
    } else {
        (count as f64 / retrieved as f64).min(1.0)
    };
    let mut text = String::with_capacity(512);
    let _ = write!(
        text,
        "totalExecutionTimeInMs={total_ms:.2};queryCompileTimeInMs=0.00;\
         queryLogicalPlanBuildTimeInMs=0.00;queryPhysicalPlanBuildTimeInMs=0.00;\
         queryOptimizationTimeInMs=0.00;VMExecutionTimeInMs={total_ms:.2};\
         indexLookupTimeInMs=0.00;instructionCount=0;documentLoadTimeInMs=0.00;\
         systemFunctionExecuteTimeInMs=0.00;userFunctionExecuteTimeInMs=0.00;\
         retrievedDocumentCount={retrieved};retrievedDocumentSize={retrieved_size};\
         outputDocumentCount={count};outputDocumentSize={size};\
         writeOutputTimeInMs=0.00;indexUtilizationRatio={ratio:.2}"
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_metrics_are_name_value_pairs() {
        let docs = [Bytes::from_static(b"{\"id\":\"a\"}")];
        let used = Used {
            documents: &docs,
            retrieved: Retrieved {
                documents: 4,
                bytes: 40,
                indexes: Vec::new(),
            },
            key_index: None,
        };
        let text = query_metrics(&used, Instant::now());
        let pairs: Vec<(&str, &str)> = text
            .split(';')
            .map(|p| p.split_once('=').expect("name=value"))
            .collect();
        assert!(pairs.contains(&("retrievedDocumentCount", "4")));
        assert!(pairs.contains(&("retrievedDocumentSize", "40")));
        assert!(pairs.contains(&("indexUtilizationRatio", "0.25")));
        assert!(pairs.contains(&("outputDocumentSize", "10")));
        for (name, value) in pairs {
            assert!(value.parse::<f64>().is_ok(), "{name}={value}");
        }
    }
}
