//! The `flood` step (rules T1-T7, `docs/src/reference/throughput-rules.md`):
//! how a flood ends, and the token it renders to.
//!
//! A flood writes one item after another in the case's partition, all in
//! one second of the target's test clock, until the first answer that is
//! not a 201 (the runner's `CaseTarget::flood` sends them). The token says
//! what that answer was and where it came in the second's budget:
//!
//! - `429/3200 after 400 RU`: a 429 with `x-ms-substatus: 3200`, a
//!   positive `x-ms-retry-after-ms` of at most 1000 (the budget refills
//!   each second), the code `TooManyRequests`; and the admitted writes'
//!   charges (`x-ms-request-charge`) add up to at least the budget while
//!   the last one began below it (`total - last < budget`);
//! - `within` instead of `after` when the step expects `within` and the
//!   last admitted write began below the budget, however little was spent;
//! - `before` (refused below the budget), `past` (a write admitted after the
//!   budget was spent), a wrong sub-status (`429/3092`, `429/(none)`) or the
//!   refusal's defects in brackets (`429/3200 (no x-ms-retry-after-ms)
//!   after 400 RU`);
//! - `write 3 answered 400 BadRequest`, `write 1 answered 201 without
//!   x-ms-request-charge`, `no refusal in 140 writes`: the flood never got
//!   its refusal.
//!
//! The charges are read from the headers, which carry two decimals, so
//! each comparison allows half a hundredth per admitted write.

use crate::client::{excerpt, Response};
use crate::fixtures::grammar::Bound;
use crate::outcome::{observe_error, Observed};

/// The most writes one flood sends.
pub const MAX_WRITES: usize = 5_000;
/// A flood that spent twice its budget without a refusal stops.
pub const BUDGETS_WITHOUT_REFUSAL: f64 = 2.0;
/// The longest wait a refusal may advertise: the budget refills each second.
pub const MAX_RETRY_AFTER_MS: u64 = 1_000;

/// How a flood ended.
#[derive(Debug, Clone, PartialEq)]
pub enum End {
    /// The first write refused with 429, and its id.
    Refused { id: String, response: Response },
    /// Write `n` answered something else than 201 or 429.
    Failed { n: usize, response: Response },
    /// Write `n` answered 201 without a charge.
    Uncharged { n: usize },
    /// No refusal after `writes` writes, which spent
    /// [`BUDGETS_WITHOUT_REFUSAL`] budgets (or [`MAX_WRITES`] were sent).
    NoRefusal { writes: usize },
}

/// A flood's result: the charges of the writes admitted, in order, and how
/// it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Flood {
    pub charges: Vec<f64>,
    pub end: End,
}

impl Flood {
    /// What the admitted writes spent.
    pub fn total(&self) -> f64 {
        self.charges.iter().sum()
    }

    /// Whether the flood may go on: it has not yet spent enough to say the
    /// target does not throttle.
    pub fn may_continue(&self, budget: u32) -> bool {
        self.charges.len() < MAX_WRITES
            && self.total() < BUDGETS_WITHOUT_REFUSAL * f64::from(budget)
    }

    /// Why the case cannot be judged, when its first flood shows the target
    /// has no throttling at all (no case has seen a refusal before): it
    /// never refused, or it does not meter request units.
    pub fn unsupported(&self, budget: u32) -> Option<String> {
        match self.end {
            End::NoRefusal { .. } => Some(format!(
                "the target does not throttle: in one second of its test clock it admitted writes worth twice the case's budget of {budget} RU without a refusal (an emulator without rate limiting, such as cosmos-emulator without --rate-limit)"
            )),
            End::Uncharged { n: 1 } => Some(
                "the target does not meter request units (its first write answered 201 without x-ms-request-charge), so it cannot throttle by them"
                    .to_string(),
            ),
            _ => None,
        }
    }

    /// The flood's token and details, for a step that expects `bound` of
    /// `budget` RU.
    pub fn observe(&self, budget: u32, bound: Bound) -> Observed {
        let total = self.total();
        let spent = format!(
            "{} writes admitted, {total:.2} RU{}",
            self.charges.len(),
            self.charges
                .last()
                .map(|last| format!(" (the last {last:.2})"))
                .unwrap_or_default()
        );
        match &self.end {
            End::Refused { id, response } => {
                let token = format!(
                    "{}{} {} {budget} RU",
                    head(response),
                    defects(response),
                    self.place(budget, bound)
                );
                Observed {
                    token,
                    detail: Some(format!(
                        "{spent}; {id} refused with x-ms-retry-after-ms {}: {}",
                        response.retry_after_ms.as_deref().unwrap_or("(none)"),
                        response
                            .error()
                            .map(|(_, message)| excerpt(&message))
                            .unwrap_or_else(|| excerpt(&response.body))
                    )),
                }
            }
            End::Failed { n, response } => {
                let answer = if (200..300).contains(&response.status) {
                    response.status.to_string()
                } else {
                    observe_error(response).token
                };
                Observed {
                    token: format!("write {n} answered {answer}"),
                    detail: Some(format!("{spent}; body: {}", excerpt(&response.body))),
                }
            }
            End::Uncharged { n } => Observed {
                token: format!("write {n} answered 201 without x-ms-request-charge"),
                detail: Some(spent),
            },
            End::NoRefusal { writes } => Observed {
                token: format!("no refusal in {writes} writes"),
                detail: Some(spent),
            },
        }
    }

    /// Where the refusal came in the budget (see the module's documentation).
    fn place(&self, budget: u32, bound: Bound) -> &'static str {
        let budget = f64::from(budget);
        let slack = 0.005 * self.charges.len() as f64 + 1e-9;
        let total = self.total();
        let before_last = total - self.charges.last().copied().unwrap_or(0.0);
        if before_last >= budget + slack {
            "past"
        } else if bound == Bound::Within {
            "within"
        } else if total + slack >= budget {
            "after"
        } else {
            "before"
        }
    }
}

/// `429/3200`, `429/3092`, `429/(none)`: the status and its sub-status.
fn head(response: &Response) -> String {
    let substatus = response
        .substatus
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .unwrap_or("(none)");
    format!("{}/{substatus}", response.status)
}

/// ` (no x-ms-retry-after-ms, code Foo)`: what the refusal lacks, or
/// nothing.
fn defects(response: &Response) -> String {
    let mut defects = Vec::new();
    match response.retry_after_ms.as_deref().map(str::trim) {
        None => defects.push("no x-ms-retry-after-ms".to_string()),
        Some(value) => {
            let fits = value
                .parse::<u64>()
                .is_ok_and(|ms| (1..=MAX_RETRY_AFTER_MS).contains(&ms));
            if !fits {
                defects.push(format!("x-ms-retry-after-ms {value}"));
            }
        }
    }
    match response.error() {
        Some((code, _)) if code == "TooManyRequests" => {}
        Some((code, _)) => defects.push(format!("code {code}")),
        None => defects.push("no error code".to_string()),
    }
    if defects.is_empty() {
        String::new()
    } else {
        format!(" ({})", defects.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(substatus: Option<&str>, retry: Option<&str>, body: &str) -> End {
        End::Refused {
            id: "f.9".into(),
            response: Response {
                status: 429,
                body: body.to_string(),
                substatus: substatus.map(str::to_string),
                retry_after_ms: retry.map(str::to_string),
                ..Response::default()
            },
        }
    }

    const SERVICE: &str = r#"{"code": "TooManyRequests", "message": "Request rate is large. More Request Units may be needed, so no changes were made."}"#;

    fn flood(charges: &[f64], end: End) -> Flood {
        Flood {
            charges: charges.to_vec(),
            end,
        }
    }

    #[test]
    fn a_refusal_once_the_budget_is_spent_is_after_it() {
        let ok = || refusal(Some("3200"), Some("1000"), SERVICE);
        // 100 + 100 + 100 + 150 = 450: the last began at 300 < 400.
        let f = flood(&[100.0, 100.0, 100.0, 150.0], ok());
        assert_eq!(f.observe(400, Bound::After).token, "429/3200 after 400 RU");
        assert_eq!(
            f.observe(400, Bound::Within).token,
            "429/3200 within 400 RU"
        );
        // Refused at 300: before the budget.
        let early = flood(&[100.0, 100.0, 100.0], ok());
        assert_eq!(
            early.observe(400, Bound::After).token,
            "429/3200 before 400 RU"
        );
        assert_eq!(
            early.observe(400, Bound::Within).token,
            "429/3200 within 400 RU"
        );
        // A write admitted at 410: past it, whatever was expected.
        let late = flood(&[200.0, 210.0, 10.0], ok());
        assert_eq!(
            late.observe(400, Bound::After).token,
            "429/3200 past 400 RU"
        );
        assert_eq!(
            late.observe(400, Bound::Within).token,
            "429/3200 past 400 RU"
        );
        // Two decimals per header: half a hundredth each is allowed.
        let rounded = flood(&[133.33, 133.33, 133.33, 5.0], ok());
        assert_eq!(
            rounded.observe(400, Bound::After).token,
            "429/3200 after 400 RU"
        );
    }

    #[test]
    fn the_refusal_must_have_the_services_shape() {
        let charges = [300.0, 150.0];
        let token = |end| flood(&charges, end).observe(400, Bound::After).token;
        assert_eq!(
            token(refusal(None, Some("1000"), SERVICE)),
            "429/(none) after 400 RU"
        );
        assert_eq!(
            token(refusal(Some("3092"), Some("1000"), SERVICE)),
            "429/3092 after 400 RU"
        );
        assert_eq!(
            token(refusal(Some("3200"), None, SERVICE)),
            "429/3200 (no x-ms-retry-after-ms) after 400 RU"
        );
        for wait in ["0", "1001", "-5", "soon"] {
            assert_eq!(
                token(refusal(Some("3200"), Some(wait), SERVICE)),
                format!("429/3200 (x-ms-retry-after-ms {wait}) after 400 RU")
            );
        }
        assert_eq!(
            token(refusal(Some("3200"), Some("1"), r#"{"code": "Throttled"}"#)),
            "429/3200 (code Throttled) after 400 RU"
        );
        assert_eq!(
            token(refusal(Some("3200"), Some("250"), "slow down")),
            "429/3200 (no error code) after 400 RU"
        );
    }

    #[test]
    fn a_flood_without_a_refusal_says_how_it_ended() {
        let no_refusal = flood(&[400.0, 400.0], End::NoRefusal { writes: 2 });
        assert_eq!(
            no_refusal.observe(400, Bound::After).token,
            "no refusal in 2 writes"
        );
        assert!(no_refusal
            .unsupported(400)
            .unwrap()
            .contains("does not throttle"));
        let unmetered = flood(&[], End::Uncharged { n: 1 });
        assert!(unmetered
            .unsupported(400)
            .unwrap()
            .contains("does not meter"));
        let late_unmetered = flood(&[5.0], End::Uncharged { n: 2 });
        assert_eq!(late_unmetered.unsupported(400), None);
        assert_eq!(
            late_unmetered.observe(400, Bound::After).token,
            "write 2 answered 201 without x-ms-request-charge"
        );
        let failed = flood(
            &[5.0],
            End::Failed {
                n: 2,
                response: Response {
                    status: 400,
                    body: r#"{"code": "BadRequest", "message": "no"}"#.into(),
                    ..Response::default()
                },
            },
        );
        assert_eq!(
            failed.observe(400, Bound::After).token,
            "write 2 answered 400 BadRequest"
        );
        assert_eq!(failed.unsupported(400), None);
        assert!(!flood(&[800.0], End::NoRefusal { writes: 1 }).may_continue(400));
        assert!(flood(&[799.0], End::NoRefusal { writes: 1 }).may_continue(400));
    }
}
