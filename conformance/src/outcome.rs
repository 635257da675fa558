//! Outcomes: the short, stable text of what a step expected and observed,
//! and the verdict of a case. Both sides go through the same rendering, so
//! comparing a step is comparing two tokens.
//!
//! Matching rules (written down once: conformance/README.md, "Matching rules"):
//! - a write: the HTTP status, plus the error body's `code` for 4xx/5xx;
//!   a successful write must answer a JSON object (delete: any body);
//! - a read: 200 with a JSON object of the requested id is `visible`, 404
//!   is `absent`; `match` compares only the listed properties (so system
//!   properties and key order never matter), values by JSON equality;
//! - a query: the rows of all pages, each an object's `id` or the value as
//!   compact JSON, order ignored.
//!
//! A step's verdict is its TTL part ([`ttl_part`], in the expectation
//! grammar with the expected side's tokens): for a write, the status class
//! (any 2xx is `accepted`, an error is its status number; an upsert's 201
//! `created` and 200 `replaced`); for a read or a query, the whole token.
//! The rest of a write's token (the exact success status, the error
//! `code`, the body's shape) is protocol: a difference there is a protocol
//! note beside the verdict, never the verdict.

use crate::client::{excerpt, Response, TransportError};
use crate::fixtures::canonical::canonical;
use crate::fixtures::grammar::{normalize_rows, render_rows, ttl_part};
use serde_json::{Map, Value};

/// The token written for a step the runner did not get to.
pub const NOT_RUN: &str = "not run";
/// The token of a request that got no HTTP answer.
pub const NO_ANSWER: &str = "no answer";

/// One step's result.
#[derive(Debug, Clone, PartialEq)]
pub struct StepOutcome {
    pub at: u64,
    pub label: String,
    pub expected: String,
    pub observed: String,
    /// What a person needs to understand a mismatch (the server's message...).
    pub detail: Option<String>,
}

impl StepOutcome {
    /// Whether the whole tokens agree (TTL and protocol).
    pub fn matches(&self) -> bool {
        self.expected == self.observed
    }

    /// Whether the TTL parts agree: this decides the step.
    pub fn ttl_matches(&self) -> bool {
        ttl_part(&self.label, &self.expected, &self.expected)
            == ttl_part(&self.label, &self.expected, &self.observed)
    }

    /// `@1000 read a: expected absent, observed visible`, without details.
    pub fn mismatch(&self) -> String {
        format!(
            "@{} {}: expected {}, observed {}",
            self.at, self.label, self.expected, self.observed
        )
    }

    fn mismatch_with_detail(&self) -> String {
        match &self.detail {
            Some(detail) => format!("{} ({detail})", self.mismatch()),
            None => self.mismatch(),
        }
    }

    fn line(&self, token: &str) -> String {
        format!("@{} {}: {}", self.at, self.label, token)
    }
}

/// An observation: the token and, when useful, details.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    pub token: String,
    pub detail: Option<String>,
}

impl Observed {
    fn plain(token: impl Into<String>) -> Observed {
        Observed {
            token: token.into(),
            detail: None,
        }
    }

    pub fn no_answer(error: &TransportError) -> Observed {
        Observed {
            token: NO_ANSWER.to_string(),
            detail: Some(error.to_string()),
        }
    }
}

/// The token of a write's answer; `json_body` says whether success carries a JSON object.
pub fn observe_write(response: &Response, json_body: bool) -> Observed {
    if !(200..300).contains(&response.status) {
        return observe_error(response);
    }
    if json_body && !matches!(response.json(), Some(Value::Object(_))) {
        return Observed {
            token: format!("{} (body is not a JSON object)", response.status),
            detail: Some(format!("body: {}", excerpt(&response.body))),
        };
    }
    Observed::plain(response.status.to_string())
}

/// The token of an error answer: status and code, or why there is no code.
pub fn observe_error(response: &Response) -> Observed {
    match response.error() {
        Some((code, message)) => Observed {
            token: format!("{} {}", response.status, code),
            // The service's messages go on over several lines (activity
            // id, request URI...); the first says what was wrong.
            detail: message
                .lines()
                .map(str::trim)
                .find(|line| !line.is_empty())
                .map(|line| format!("message: {line}")),
        },
        None => Observed {
            token: format!("{} (no error code)", response.status),
            detail: Some(format!("body: {}", excerpt(&response.body))),
        },
    }
}

/// The token of a point read (item or container).
///
/// `id` is the id the answer must carry (`None`: not checked), `sent` the
/// `match` as sent to the target (scaled on the wall clock) and `written`
/// the fixture's own `match`, used for the text when they agree.
pub fn observe_read(
    response: &Response,
    id: Option<&str>,
    sent: Option<&Map<String, Value>>,
    written: Option<&Map<String, Value>>,
) -> Observed {
    match response.status {
        404 => return Observed::plain("absent"),
        200 => {}
        _ => return observe_error(response),
    }
    let body = match response.json() {
        Some(Value::Object(body)) => body,
        _ => {
            return Observed {
                token: "200 (body is not a JSON object)".to_string(),
                detail: Some(format!("body: {}", excerpt(&response.body))),
            }
        }
    };
    if let Some(id) = id {
        if body.get("id").and_then(Value::as_str) != Some(id) {
            return Observed {
                token: "200 (another item)".to_string(),
                detail: Some(format!(
                    "asked for id {id:?}, got {}",
                    excerpt(&Value::Object(body).to_string())
                )),
            };
        }
    }
    let (Some(sent), Some(written)) = (sent, written) else {
        return Observed::plain("visible");
    };
    let seen: Map<String, Value> = sent
        .keys()
        .filter_map(|key| body.get(key).map(|v| (key.clone(), v.clone())))
        .collect();
    if &seen == sent {
        Observed::plain(format!(
            "visible {}",
            canonical(&Value::Object(written.clone()))
        ))
    } else {
        Observed::plain(format!("visible {}", canonical(&Value::Object(seen))))
    }
}

/// The token of a query's rows (all pages gathered by the runner).
pub fn observe_rows(rows: &[Value]) -> Observed {
    let rows = rows
        .iter()
        .map(|row| match row.get("id").and_then(Value::as_str) {
            Some(id) if row.is_object() => id.to_string(),
            _ => canonical(row),
        })
        .collect();
    Observed::plain(render_rows(&normalize_rows(rows)))
}

/// What became of a case, before expectations are applied.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Passed,
    Failed(String),
    Skipped(String),
}

/// A case's run: its steps, or why they did not run.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseRun {
    pub id: String,
    pub steps: Vec<StepOutcome>,
    /// Set when the case could not be set up (container, clock, ...).
    pub setup_error: Option<String>,
    /// Set when the case was not run at all (wall clock too coarse).
    pub skipped: Option<String>,
}

impl CaseRun {
    /// The expected outcome text, e.g. `@0 read a: visible; @1000 read a: absent`.
    pub fn expected_text(&self) -> String {
        join(self.steps.iter().map(|s| s.line(&s.expected)))
    }

    /// The observed outcome text, in the same form.
    pub fn observed_text(&self) -> String {
        if let Some(reason) = &self.skipped {
            return format!("skipped: {reason}");
        }
        let steps = join(self.steps.iter().map(|s| s.line(&s.observed)));
        match &self.setup_error {
            Some(error) => format!("setup failed: {error}"),
            None => steps,
        }
    }

    /// The case's verdict: TTL decides; protocol notes are appended to a
    /// failure's message and reported beside a pass ([`Self::protocol_notes`]).
    pub fn verdict(&self) -> Verdict {
        if let Some(reason) = &self.skipped {
            return Verdict::Skipped(reason.clone());
        }
        if let Some(error) = &self.setup_error {
            return Verdict::Failed(format!("setup failed: {error}"));
        }
        let mut lines: Vec<String> = self
            .steps
            .iter()
            .filter(|s| !s.ttl_matches())
            .map(StepOutcome::mismatch_with_detail)
            .collect();
        if lines.is_empty() {
            return Verdict::Passed;
        }
        lines.extend(
            self.protocol_notes()
                .iter()
                .map(|n| format!("protocol: {n}")),
        );
        Verdict::Failed(lines.join("\n"))
    }

    /// The steps whose TTL part differs, without details: what an
    /// expectations entry records so that it matches only this failure.
    pub fn ttl_mismatches(&self) -> Vec<String> {
        self.steps
            .iter()
            .filter(|s| !s.ttl_matches())
            .map(StepOutcome::mismatch)
            .collect()
    }

    /// Steps whose TTL part agrees but whose token does not: the protocol
    /// deviations, e.g. `@0 replace a: expected 200, observed 201`.
    pub fn protocol_notes(&self) -> Vec<String> {
        if self.skipped.is_some() || self.setup_error.is_some() {
            return Vec::new();
        }
        self.steps
            .iter()
            .filter(|s| s.ttl_matches() && !s.matches())
            .map(StepOutcome::mismatch_with_detail)
            .collect()
    }

    /// What the change feed steps that waited for the purge say about it,
    /// e.g. `@2500 changes all-versions after purge: waited 41.0 s for the
    /// TTL deletes of a, b (bound 300 s)`.
    pub fn waits(&self) -> Vec<String> {
        self.steps
            .iter()
            .filter(|s| s.label.ends_with(" after purge"))
            .filter_map(|s| {
                s.detail
                    .as_ref()
                    .map(|d| format!("@{} {}: {d}", s.at, s.label))
            })
            .collect()
    }

    /// Whether every step got an answer: no setup failure, no step left
    /// unanswered or not run. Only such a case can be an expected failure.
    pub fn ran_fully(&self) -> bool {
        self.skipped.is_none()
            && self.setup_error.is_none()
            && self
                .steps
                .iter()
                .all(|s| s.observed != NO_ANSWER && s.observed != NOT_RUN)
    }
}

fn join(lines: impl Iterator<Item = String>) -> String {
    lines.collect::<Vec<_>>().join("; ")
}
