//! A bound on the bytes one evaluation copies, so that a short query cannot
//! exhaust memory: `[c, c, c, ...]` or `c.big || c.big || ...` over a 2 MB
//! item would otherwise copy the item thousands of times for one row.
//!
//! Every value an expression copies out of the item, a parameter or a
//! concatenation is charged; each row (a filter, a projection, a sort key,
//! an aggregate) starts with [`MAX_EVALUATION_BYTES`]. Past it, evaluation
//! yields undefined and the query as a whole is refused by [`scope`]. The
//! budget lives in a thread-local because evaluation is synchronous: a
//! query runs on one thread from start to end of a page.

use std::cell::Cell;

use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::limits::{MAX_EVALUATION_BYTES, MAX_JOIN_ROWS};

thread_local! {
    static REMAINING: Cell<usize> = const { Cell::new(MAX_EVALUATION_BYTES) };
    static EXCEEDED: Cell<bool> = const { Cell::new(false) };
    /// Rows JOINs may still make for the current item.
    static ROWS: Cell<usize> = const { Cell::new(MAX_JOIN_ROWS) };
    static TOO_MANY_ROWS: Cell<bool> = const { Cell::new(false) };
    /// A result held NaN or an infinity, which JSON cannot hold.
    static NON_FINITE: Cell<bool> = const { Cell::new(false) };
}

/// Runs a query (or part of one); a refusal if any row went over budget.
pub fn scope<T>(run: impl FnOnce() -> T) -> ApiResult<T> {
    EXCEEDED.set(false);
    ROWS.set(MAX_JOIN_ROWS);
    TOO_MANY_ROWS.set(false);
    NON_FINITE.set(false);
    next_row();
    let result = run();
    if NON_FINITE.replace(false) {
        EXCEEDED.set(false);
        TOO_MANY_ROWS.set(false);
        return Err(ApiError::bad_request(
            "The query's result holds a number that cannot be represented in JSON (NaN or an \
             infinity, e.g. from a division by zero or SQRT of a negative number). Guard the \
             expression, e.g. with IS_FINITE_NUMBER.",
        )
        .with_substatus(4001));
    }
    if TOO_MANY_ROWS.replace(false) {
        EXCEEDED.set(false);
        return Err(ApiError::bad_request(format!(
            "The query's JOINs make more than {MAX_JOIN_ROWS} rows of one item; the emulator \
             refuses it rather than run for hours. Filter the arrays joined (a JOIN over a \
             subquery with WHERE), or join fewer."
        )));
    }
    if EXCEEDED.replace(false) {
        return Err(ApiError::bad_request(format!(
            "Evaluating the query for one item copies more than {} MB of values (an item or a \
             parameter repeated many times in an array, an object, a projection or a \
             concatenation); the emulator refuses it rather than run out of memory. Select the \
             value once.",
            MAX_EVALUATION_BYTES / (1024 * 1024)
        )));
    }
    Ok(result)
}

/// Counts one row made by a JOIN; false once the scope has made too many.
pub fn charge_row() -> bool {
    let left = ROWS.get();
    if left == 0 {
        TOO_MANY_ROWS.set(true);
        EXCEEDED.set(true);
        return false;
    }
    ROWS.set(left - 1);
    true
}

/// Records that a result holds NaN or an infinity: the scope fails.
pub fn found_non_finite() {
    NON_FINITE.set(true);
}

/// A fresh count of JOIN rows for the next item: the bound is on what one
/// item can make, so that a large container is never refused for its size.
pub fn next_item() {
    ROWS.set(MAX_JOIN_ROWS);
}

/// Whether a row of the current scope went over budget (the scope will fail).
pub fn exceeded() -> bool {
    EXCEEDED.get()
}

/// A fresh budget for the next row.
pub fn next_row() {
    REMAINING.set(MAX_EVALUATION_BYTES);
}

/// Charges the copy of `value`; false once the row's budget is spent.
pub fn charge(value: &Value) -> bool {
    charge_bytes(weight(value))
}

pub fn charge_bytes(bytes: usize) -> bool {
    let remaining = REMAINING.get();
    if bytes > remaining {
        REMAINING.set(0);
        EXCEEDED.set(true);
        return false;
    }
    REMAINING.set(remaining - bytes);
    true
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
    fn a_row_over_budget_fails_the_scope_and_the_next_scope_starts_afresh() {
        let big = json!("x".repeat(1024 * 1024));
        let spent = scope(|| (0..100).all(|_| charge(&big)));
        assert!(spent.is_err(), "100 MB over a 64 MB budget");
        let fine = scope(|| {
            (0..100).all(|_| {
                next_row();
                charge(&big)
            })
        });
        assert!(fine.unwrap(), "1 MB a row is within budget");
    }
}
