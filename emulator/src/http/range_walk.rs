//! A query sent across partitions (no partition key, no range) that the
//! gateway answers itself, without a plan: on a container of several
//! physical ranges the service serves it one range at a time, each page
//! within one range and the continuation moving to the next, so a client
//! sees (and a response hook counts) one page per range at least. The
//! position is the EPK where the range starts, so a split between pages
//! resumes in the child that starts there.

use axum::http::HeaderMap;

use super::request::CosmosHeaders;
use crate::query::Continuation;
use crate::store::{Container, ItemKey, Range};

/// Where one page of the walk reads: its range, and the item to resume after.
pub struct Step<'c> {
    pub range: &'c Range,
    pub after: Option<ItemKey>,
}

/// The step a request is at, when its query walks the ranges: a query that
/// names neither a key nor a range, over several ranges, streaming in key
/// order (one that needs its whole result is planned by the SDK instead).
pub fn step<'c>(
    c: &'c Container,
    headers: &HeaderMap,
    streams: bool,
    continuation: Option<&Continuation>,
) -> Option<Step<'c>> {
    let ranges = c.ranges();
    let scoped = headers.partition_key().is_some()
        || headers
            .text("x-ms-documentdb-partitionkeyrangeid")
            .is_some()
        || headers.text("x-ms-start-epk").is_some()
        || headers.text("x-ms-end-epk").is_some();
    if scoped || !streams || ranges.count() < 2 {
        return None;
    }
    match continuation {
        Some(Continuation::InRange { range, pk, id }) => Some(Step {
            range: ranges.range_of(range),
            after: pk
                .as_ref()
                .zip(id.as_ref())
                .map(|(pk, id)| ItemKey::new(pk, id)),
        }),
        _ => Some(Step {
            range: &ranges.ranges()[0],
            after: None,
        }),
    }
}

/// The continuation after a page of `step`: within its range while the
/// page was cut short, else the next range's start, else none.
pub fn next(c: &Container, step: &Step<'_>, page: Option<Continuation>) -> Option<Continuation> {
    if let Some(Continuation::After { pk, id }) = page {
        return Some(Continuation::InRange {
            range: step.range.min.clone(),
            pk: Some(pk),
            id: Some(id),
        });
    }
    let ranges = c.ranges().ranges();
    let at = ranges.iter().position(|r| r.id == step.range.id)?;
    ranges.get(at + 1).map(|next| Continuation::InRange {
        range: next.min.clone(),
        pk: None,
        id: None,
    })
}
