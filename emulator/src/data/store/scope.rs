//! Which items a query, a read feed or a change feed reads
//! ([`ScopeRequest`], as the protocol names them): a partition key (a
//! whole key, or for a hierarchical key a prefix of its levels) and the
//! range of effective partition keys (EPK) that the SDKs send for a feed
//! range or a hierarchical prefix (`[start, end)`; over HTTP
//! `x-ms-start-epk` / `x-ms-end-epk`). One helper for every feed, so that
//! a range means the same everywhere, and the same as in Azure: each
//! item's EPK is computed with the service's hashing (see [`crate::protocol::epk`]).
//! A request may also name a physical range (over HTTP
//! `x-ms-documentdb-partitionkeyrangeid`, see `data/store/ranges.rs`): it then
//! reads only that range's part of the EPK range; an unknown range id is
//! 410 with substatus 1002, as the service answers for a range gone.

use std::cmp::Ordering;
use std::collections::HashMap;

use serde_json::Value;

use super::{Container, Range, RangeMap};
use crate::protocol::epk;
use crate::protocol::error::{ApiError, ApiResult, Status};
use crate::protocol::partition_key::{KeyScope, PartitionKeyDefinition};

/// What a request names of a container's items, each as sent (none:
/// the whole container).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScopeRequest<'r> {
    /// The partition key (its JSON array), whole or a hierarchical prefix.
    pub partition_key: Option<&'r str>,
    /// A physical partition key range's id.
    pub range_id: Option<&'r str>,
    /// The EPK range `[start, end)`, hex digits (an end alone starts at
    /// the minimum, a start alone ends at the maximum).
    pub start_epk: Option<&'r str>,
    pub end_epk: Option<&'r str>,
}

impl ScopeRequest<'_> {
    /// Whether it names less than every partition: a key, a range or an
    /// EPK range.
    pub fn names_part(&self) -> bool {
        self.partition_key.is_some()
            || self.range_id.is_some()
            || self.start_epk.is_some()
            || self.end_epk.is_some()
    }
}

/// A request's scope within one container.
pub struct FeedScope<'a> {
    /// The header's key or prefix; `None`: every partition. Scans read
    /// only its items (see `Container::live_items`).
    pub key: Option<KeyScope>,
    pub epk: EpkFilter<'a>,
    /// The physical range the request names, if it names one.
    pub range: Option<&'a Range>,
}

impl<'a> FeedScope<'a> {
    pub fn new(container: &'a Container, request: &ScopeRequest<'_>) -> ApiResult<Self> {
        let definition = container.partition_key();
        let key = request
            .partition_key
            .map(|h| definition.scope_from_header(h))
            .transpose()?;
        let mut epk = EpkFilter::new(definition, request)?;
        let range = match request.range_id {
            Some(id) => {
                let ranges = container.ranges();
                let range = ranges.by_id(id).ok_or_else(|| range_gone(id, ranges))?;
                epk.narrow_to((&range.min, &range.max));
                Some(range)
            }
            None => None,
        };
        Ok(FeedScope { key, epk, range })
    }

    /// Whether the item with the canonical partition key `pk` is in scope.
    pub fn contains(&mut self, pk: &str) -> bool {
        self.key.as_ref().is_none_or(|k| k.contains(pk)) && self.epk.contains(pk)
    }
}

/// The EPK range of a request, if it names less than the whole container.
#[derive(Clone)]
pub struct EpkFilter<'a> {
    definition: &'a PartitionKeyDefinition,
    /// `[start, end)`, upper-case hex as the SDKs send them.
    range: Option<(String, String)>,
    /// The verdict on each partition judged: feeds in write order meet
    /// partitions mixed, and each is hashed once per request rather than
    /// once per item.
    verdicts: HashMap<Box<str>, bool, foldhash::fast::RandomState>,
}

impl<'a> EpkFilter<'a> {
    fn new(definition: &'a PartitionKeyDefinition, request: &ScopeRequest<'_>) -> ApiResult<Self> {
        let start = request.start_epk.map(str::trim);
        let end = request.end_epk.map(str::trim);
        for (name, value) in [("x-ms-start-epk", start), ("x-ms-end-epk", end)] {
            if let Some(value) = value.filter(|v| !v.bytes().all(|b| b.is_ascii_hexdigit())) {
                return Err(ApiError::bad_request(format!(
                    "The {name} header '{value}' is not an effective partition key: send hex \
                     digits, e.g. '' (the minimum) or 'FF' (the maximum), as the SDKs compute \
                     them for a feed range."
                )));
            }
        }
        let range = match (start, end) {
            (None, None) => None,
            (start, end) => {
                let (start, end) = (start.unwrap_or(""), end.unwrap_or("FF"));
                // The whole container: nothing to filter.
                (!(start.is_empty() && end.eq_ignore_ascii_case("FF")))
                    .then(|| (start.to_ascii_uppercase(), end.to_ascii_uppercase()))
            }
        };
        Ok(EpkFilter {
            definition,
            range,
            verdicts: HashMap::default(),
        })
    }

    /// Keeps only the part of the range inside `[min, max)`, a physical
    /// range's bounds: a request names a range id, and may name a part of
    /// it by EPK (a feed range narrower than the physical range).
    pub fn narrow_to(&mut self, (min, max): (&str, &str)) {
        let (start, end) = self
            .range
            .take()
            .unwrap_or_else(|| (String::new(), "FF".to_string()));
        let start = if epk::compare(&start, min) == Ordering::Less {
            min.to_string()
        } else {
            start
        };
        let end = if epk::compare(max, &end) == Ordering::Less {
            max.to_string()
        } else {
            end
        };
        self.range =
            (!(start.is_empty() && end.eq_ignore_ascii_case("FF"))).then_some((start, end));
    }

    /// Whether the range reaches into `[min, max)` (a physical range's
    /// bounds); the whole container reaches every range.
    pub fn overlaps(&self, min: &str, max: &str) -> bool {
        self.range.as_ref().is_none_or(|(start, end)| {
            epk::compare(start, max) == Ordering::Less && epk::compare(min, end) == Ordering::Less
        })
    }

    /// Whether the canonical partition key `pk` hashes into the range.
    pub fn contains(&mut self, pk: &str) -> bool {
        let Some((start, end)) = &self.range else {
            return true;
        };
        if let Some(verdict) = self.verdicts.get(pk) {
            return *verdict;
        }
        let components: Value = serde_json::from_str(pk).unwrap_or_default();
        let key = epk::effective_partition_key(self.definition, &components);
        let verdict = epk::in_range(&key, start, end);
        self.verdicts.insert(pk.into(), verdict);
        verdict
    }
}

/// 410 with substatus 1002: the range a request names is gone (split) or
/// never was (the SDKs then read `pkranges` again and retry on the ranges
/// they find).
pub fn range_gone(id: &str, ranges: &RangeMap) -> ApiError {
    let message = if ranges.was_split(id) {
        format!(
            "The partition key range '{id}' is gone: it was split. Read the partition key \
             ranges again (GET .../pkranges) and address its children."
        )
    } else {
        let mut ids: Vec<String> = ranges.ranges().iter().map(|r| r.id.to_string()).collect();
        if ids.len() > 8 {
            ids.truncate(8);
            ids.push("...".into());
        }
        format!(
            "The partition key range '{id}' is gone: this container has no such range (its \
             ranges are {}). Read the partition key ranges again.",
            ids.join(", ")
        )
    };
    ApiError::new(Status::GONE, message).with_substatus(PARTITION_KEY_RANGE_GONE)
}

/// The substatus of 410 for a partition key range that is gone.
pub const PARTITION_KEY_RANGE_GONE: u32 = 1002;
