//! A bound on the bytes one evaluation copies, so that a short query cannot
//! exhaust memory: `[c, c, c, ...]` or `c.big || c.big || ...` over a 2 MB
//! item would otherwise copy the item thousands of times for one row.
//!
//! Every value an expression copies out of the item, a parameter or a
//! concatenation is charged; each row (a filter, a projection, a sort key,
//! an aggregate) starts with [`MAX_EVALUATION_BYTES`]. Past it, evaluation
//! yields undefined and the query as a whole is refused
//! ([`Budget::verdict`]). The budget is a part of the run's context
//! (`context.rs`), which the evaluator is handed.

use std::cell::Cell;

use serde_json::Value;

use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::limits::{MAX_EVALUATION_BYTES, MAX_JOIN_ROWS};

/// The budget of one run (a part of its [`RunContext`](super::RunContext)).
#[derive(Debug)]
pub struct Budget {
    /// Bytes the current row may still copy.
    remaining: Cell<usize>,
    exceeded: Cell<bool>,
    /// Rows JOINs may still make for the current item.
    rows: Cell<usize>,
    too_many_rows: Cell<bool>,
    /// A result held NaN or an infinity, which JSON cannot hold.
    non_finite: Cell<bool>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            remaining: Cell::new(MAX_EVALUATION_BYTES),
            exceeded: Cell::new(false),
            rows: Cell::new(MAX_JOIN_ROWS),
            too_many_rows: Cell::new(false),
            non_finite: Cell::new(false),
        }
    }
}

impl Budget {
    /// The run's verdict once it is over: a refusal if any row went over
    /// budget or a result held a number JSON cannot hold. Starts afresh.
    pub fn verdict(&self) -> ApiResult<()> {
        let (exceeded, too_many_rows, non_finite) = (
            self.exceeded.replace(false),
            self.too_many_rows.replace(false),
            self.non_finite.replace(false),
        );
        self.rows.set(MAX_JOIN_ROWS);
        self.next_row();
        if non_finite {
            return Err(ApiError::bad_request(
                "The query's result holds a number that cannot be represented in JSON (NaN or an \
                 infinity, e.g. from a division by zero or SQRT of a negative number). Guard the \
                 expression, e.g. with IS_FINITE_NUMBER.",
            )
            .with_substatus(4001));
        }
        if too_many_rows {
            return Err(ApiError::bad_request(format!(
                "The query's JOINs make more than {MAX_JOIN_ROWS} rows of one item; the emulator \
                 refuses it rather than run for hours. Filter the arrays joined (a JOIN over a \
                 subquery with WHERE), or join fewer."
            )));
        }
        if exceeded {
            return Err(ApiError::bad_request(format!(
                "Evaluating the query for one item copies more than {} MB of values (an item or a \
                 parameter repeated many times in an array, an object, a projection or a \
                 concatenation); the emulator refuses it rather than run out of memory. Select the \
                 value once.",
                MAX_EVALUATION_BYTES / (1024 * 1024)
            )));
        }
        Ok(())
    }

    /// Counts one row made by a JOIN; false once the item has made too many.
    pub fn charge_row(&self) -> bool {
        let left = self.rows.get();
        if left == 0 {
            self.too_many_rows.set(true);
            self.exceeded.set(true);
            return false;
        }
        self.rows.set(left - 1);
        true
    }

    /// Records that a result holds NaN or an infinity: the run fails.
    pub fn found_non_finite(&self) {
        self.non_finite.set(true);
    }

    /// A fresh count of JOIN rows for the next item: the bound is on what one
    /// item can make, so that a large container is never refused for its size.
    pub fn next_item(&self) {
        self.rows.set(MAX_JOIN_ROWS);
    }

    /// Whether a row of the run went over budget (the run will fail).
    pub fn exceeded(&self) -> bool {
        self.exceeded.get()
    }

    /// A fresh budget for the next row.
    pub fn next_row(&self) {
        self.remaining.set(MAX_EVALUATION_BYTES);
    }

    /// Charges the copy of `value`; false once the row's budget is spent.
    pub fn charge(&self, value: &Value) -> bool {
        self.charge_bytes(weight(value))
    }

    pub fn charge_bytes(&self, bytes: usize) -> bool {
        let remaining = self.remaining.get();
        if bytes > remaining {
            self.remaining.set(0);
            self.exceeded.set(true);
            return false;
        }
        self.remaining.set(remaining - bytes);
        true
    }
}

/// About what a copy of `value` allocates. Scalars and strings, what
/// filters mostly read, are counted without a walk or an allocation.
fn weight(value: &Value) -> usize {
    const NODE: usize = 16;
    match value {
        Value::Array(_) | Value::Object(_) => {}
        Value::String(s) => return NODE + s.len(),
        _ => return NODE,
    }
    let mut total = 0;
    let mut pending = vec![value];
    while let Some(v) = pending.pop() {
        total += NODE;
        match v {
            Value::String(s) => total += s.len(),
            Value::Array(items) => pending.extend(items),
            Value::Object(fields) => {
                for (k, v) in fields {
                    total += k.len();
                    pending.push(v);
                }
            }
            _ => {}
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_row_over_budget_fails_the_run_and_the_verdict_starts_afresh() {
        let budget = Budget::default();
        let big = json!("x".repeat(1024 * 1024));
        assert!(!(0..100).all(|_| budget.charge(&big)));
        assert!(budget.verdict().is_err(), "100 MB over a 64 MB budget");
        let fine = (0..100).all(|_| {
            budget.next_row();
            budget.charge(&big)
        });
        assert!(fine, "1 MB a row is within budget");
        assert!(budget.verdict().is_ok());
    }
}
