//! Which steps of a case the wall clock cannot observe: a step too close
//! to an instant at which something in the case might expire (or whose
//! order against it the time scale would change) could land on either
//! side of it, so its case is skipped, never guessed.

use crate::clock::{WallClock, MAX_TTL};
use crate::fixtures::{Action, Case};
use serde_json::{json, Value};

/// A step of a case that the wall clock cannot observe reliably.
#[derive(Debug, Clone, PartialEq)]
pub struct Unobservable {
    pub at: u64,
    /// The nearest possible expiry instant, in fixture seconds.
    pub instant: u64,
}

/// The steps of `case` whose outcome the wall clock cannot decide: those
/// within the tolerance of any instant at which something in the case
/// might expire (any write time plus any TTL value of the case), or
/// whose order against such an instant the scaling would change. The
/// set is deliberately larger than what the documentation predicts, so
/// that the judgement does not depend on the rules under test.
pub fn steps(wall: &WallClock, case: &Case) -> Vec<Unobservable> {
    let values = ttl_values(case);
    let writes: Vec<u64> = case
        .steps
        .iter()
        .filter(|s| s.action.is_item_write())
        .map(|s| s.at)
        .collect();
    let mut found = Vec::new();
    for step in &case.steps {
        let nearest = writes
            .iter()
            .filter(|&&w| w <= step.at)
            .flat_map(|&w| values.iter().map(move |&v| (w, v)))
            .filter(|&(w, v)| !separates(wall, step.at, w, v))
            .map(|(w, v)| w + v)
            .min_by_key(|instant| instant.abs_diff(step.at));
        if let Some(instant) = nearest {
            found.push(Unobservable {
                at: step.at,
                instant,
            });
        }
    }
    found
}

/// Whether a step at `at` is reliably on the fixture's side of the
/// instant `write + value`.
fn separates(wall: &WallClock, at: u64, write: u64, value: u64) -> bool {
    let instant = write + value;
    if at == instant {
        return false;
    }
    let sent = wall.ttl(&json!(value)).as_u64().unwrap_or(value) as f64;
    let real = (at as f64 - write as f64) * wall.scale - sent;
    (real > 0.0) == (at > instant) && real.abs() >= wall.tolerance()
}

/// Every positive TTL value that appears anywhere in a case.
fn ttl_values(case: &Case) -> Vec<u64> {
    let mut values = Vec::new();
    let mut take = |value: Option<&Value>| {
        if let Some(v) = value
            .and_then(Value::as_u64)
            .filter(|v| *v > 0 && *v < MAX_TTL)
        {
            values.push(v);
        }
    };
    if let Some(container) = &case.container {
        take(container.get("defaultTtl"));
    }
    for step in &case.steps {
        match &step.action {
            Action::Create(body) | Action::Upsert(body) | Action::Replace(body) => {
                take(body.get("ttl"))
            }
            Action::CreateContainer(body) | Action::ReplaceContainer(body) => {
                take(body.get("defaultTtl"))
            }
            Action::Patch { operations, .. } => {
                for op in operations {
                    if op.get("path").and_then(Value::as_str) == Some("/ttl") {
                        take(op.get("value"));
                    }
                }
            }
            Action::Batch(operations) => {
                for value in crate::batch::written_ttls(operations) {
                    take(Some(value));
                }
            }
            Action::Sproc(sproc) => {
                for value in crate::sproc::written_ttls(sproc) {
                    take(Some(value));
                }
            }
            _ => {}
        }
    }
    values.sort_unstable();
    values.dedup();
    values
}

/// Why a case is skipped on the wall clock: the steps it cannot observe,
/// and the time scale that would observe them.
pub fn skip_reason(wall: &WallClock, unobservable: &[Unobservable]) -> String {
    let nearest = unobservable
        .iter()
        .map(|u| u.at.abs_diff(u.instant))
        .min()
        .unwrap_or(0);
    let mut at: Vec<String> = unobservable.iter().map(|u| format!("@{}", u.at)).collect();
    at.dedup();
    let hint = if nearest == 0 {
        "a step falls on an expiry instant: only a test clock can observe it".to_string()
    } else {
        format!(
            "needs --time-scale of about {:.3} or a test clock",
            wall.tolerance() / nearest as f64 * 1.05
        )
    };
    format!(
        "not observable on the wall clock at time scale {}: {} within {:.1} s of an expiry instant ({hint})",
        wall.scale,
        at.join(", "),
        wall.tolerance()
    )
}
