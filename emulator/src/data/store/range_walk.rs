//! A query sent across partitions (no partition key, no range) that the
//! gateway answers itself, without a plan: on a container of several
//! physical ranges the service serves it one range at a time, each page
//! within one range and the continuation moving to the next, so a client
//! sees (and a response hook counts) one page per range at least. The
//! position is the range's EPK bounds as the walk found them, and the
//! number of the last item read (items come in write order within a range,
//! as the service returns them: `data/store/container/scan.rs`), so a split
//! between pages goes on over the same bounds (the children together, in
//! the parent's write order), and the next step starts where those bounds
//! end: every item once.

use super::scope::ScopeRequest;
use super::{Container, Range};
use crate::data::query::Continuation;

/// Where one page of the walk reads: the EPK bounds `[min, max)` of a
/// range, and the number of the item to resume after.
pub struct Step {
    pub min: String,
    pub max: String,
    pub after: Option<u64>,
}

/// The step a request is at, when its query walks the ranges: a query that
/// names neither a key nor a range, over several ranges, streaming in
/// write order (one that needs its whole result is planned by the SDK instead).
pub fn step(
    c: &Container,
    scope: &ScopeRequest<'_>,
    streams: bool,
    continuation: Option<&Continuation>,
) -> Option<Step> {
    let ranges = c.ranges();
    if scope.names_part() || !streams || ranges.count() < 2 {
        return None;
    }
    let bounds = |range: &Range| (range.min.clone(), range.max.clone());
    let ((min, max), after) = match continuation {
        Some(Continuation::InRange { range, end, after }) => {
            let bounds = match end {
                Some(end) => (range.clone(), end.clone()),
                None => bounds(ranges.range_of(range)),
            };
            (bounds, *after)
        }
        // A scan's continuation from before the container had several
        // ranges (one split since): what is left of the whole container,
        // in write order, as that single range's scan would have gone on.
        Some(Continuation::After { after }) => ((String::new(), "FF".to_string()), Some(*after)),
        _ => (bounds(&ranges.ranges()[0]), None),
    };
    Some(Step { min, max, after })
}

/// The continuation after a page of `step`: within its bounds while the
/// page was cut short, else the start of the range that follows them, else
/// none.
pub fn next(c: &Container, step: &Step, page: Option<Continuation>) -> Option<Continuation> {
    if let Some(Continuation::After { after }) = page {
        return Some(Continuation::InRange {
            range: step.min.clone(),
            end: Some(step.max.clone()),
            after: Some(after),
        });
    }
    if step.max.eq_ignore_ascii_case("FF") {
        return None;
    }
    let next = c.ranges().range_of(&step.max);
    Some(Continuation::InRange {
        range: next.min.clone(),
        end: Some(next.max.clone()),
        after: None,
    })
}
