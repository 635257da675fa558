//! Pages of results: where a page starts (the continuation token the
//! client passes back), how much it may hold, and what it holds.

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::error::{ApiError, ApiResult};

/// Where a page of results starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Continuation {
    /// A query across partitions that the gateway serves itself walks the
    /// physical ranges one at a time: it resumes in the EPK range
    /// `[range, end)` (a range as it was when the walk reached it), after the
    /// item numbered `after` if it names one. (First: the variants are told
    /// apart by their fields, and this one's `range` is what the others lack.)
    InRange {
        range: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        end: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<u64>,
    },
    /// Scans, in write order, resume after the number (the last part of
    /// the RID) of the last item visited.
    After { after: u64 },
    /// Whole-result queries (ORDER BY, aggregates, ...) resume at an offset.
    Offset { offset: usize },
}

impl Continuation {
    /// The page a token starts. A token in the service's own backend form
    /// (`-RID:~...#RT:1#TRC:2...`, which this emulator never gives out, so
    /// it names no item here) starts from the beginning, as the service
    /// treats a token whose RID it does not hold (the Python SDK's
    /// `test_query_with_static_continuation`).
    pub fn parse(token: &str) -> ApiResult<Option<Self>> {
        if is_service_backend_token(token) {
            return Ok(None);
        }
        serde_json::from_str(token).map(Some).map_err(|_| {
            ApiError::bad_request(format!(
                "Invalid Continuation Token: '{token}' is not a token this emulator gave out. \
                 Pass back the x-ms-continuation value of the previous page unchanged."
            ))
        })
    }

    pub fn to_token(&self) -> String {
        serde_json::to_string(self).expect("serialises")
    }
}

/// `-RID:~{base64}#RT:{n}...`: the service's backend continuation.
fn is_service_backend_token(token: &str) -> bool {
    token
        .strip_prefix("-RID:")
        .is_some_and(|rest| rest.contains("#RT:"))
}

/// One page of results, each document already serialised.
#[derive(Debug, Default)]
pub struct Page {
    pub documents: Vec<Bytes>,
    pub continuation: Option<Continuation>,
}

/// How many results a page may hold (`x-ms-max-item-count`), and its byte budget.
#[derive(Debug, Clone, Copy)]
pub struct PageLimit {
    pub items: usize,
    pub bytes: usize,
}

impl PageLimit {
    /// The service's defaults: 100 items, or as many as fit 4 MB for `-1`.
    pub fn from_header(max_item_count: Option<&str>) -> ApiResult<Self> {
        let items = match max_item_count.map(str::trim) {
            None | Some("") => 100,
            Some(v) => match v.parse::<i64>() {
                Ok(-1) => usize::MAX,
                Ok(n) if n > 0 => n as usize,
                _ => {
                    return Err(ApiError::bad_request(format!(
                        "The x-ms-max-item-count header '{v}' is invalid: use a positive number of items, or -1 for as many as fit a page."
                    )))
                }
            },
        };
        Ok(PageLimit {
            items,
            bytes: 4 * 1024 * 1024,
        })
    }
}

pub(super) fn page_of_values(results: Vec<Value>, offset: usize, limit: PageLimit) -> Page {
    let total = results.len();
    let encoded = results.into_iter().skip(offset).map(|v| encode(&v));
    fill(encoded, offset, total, limit)
}

/// A page of a whole result kept between pages (`results.rs`), from
/// `offset` (the one its continuation names).
pub fn page_of_encoded(results: &[Bytes], offset: usize, limit: PageLimit) -> Page {
    fill(
        results.iter().skip(offset).cloned(),
        offset,
        results.len(),
        limit,
    )
}

/// A document as a page carries it.
pub fn encode(value: &Value) -> Bytes {
    Bytes::from(serde_json::to_vec(value).expect("serialises"))
}

/// Up to a page of `documents`, the results from `offset` on of `total`.
fn fill(
    documents: impl Iterator<Item = Bytes>,
    offset: usize,
    total: usize,
    limit: PageLimit,
) -> Page {
    let mut page = Page::default();
    let mut bytes = 0;
    for encoded in documents {
        bytes += encoded.len();
        page.documents.push(encoded);
        if page.documents.len() >= limit.items || bytes >= limit.bytes {
            break;
        }
    }
    let next = offset + page.documents.len();
    if next < total {
        page.continuation = Some(Continuation::Offset { offset: next });
    }
    page
}
