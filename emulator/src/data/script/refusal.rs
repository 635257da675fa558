//! What an execution that did not end well answers, in the service's
//! words: a compile error, a thrown value (its `number` the substatus), the
//! time bound, the memory bound. The execution paths (`mod.rs`, `bound.rs`,
//! `triggers.rs`, `udf.rs`) all end in it.

use super::engine::{Ending, Limits, Thrown};
use crate::protocol::error::{ApiError, Status};

/// The refusal an ending that is not success becomes, in the service's words.
pub fn failure(ending: Ending) -> ApiError {
    match ending {
        Ending::Done { .. } => unreachable!("success is not a failure"),
        Ending::Compile(message) => ApiError::bad_request(format!(
            "Encountered exception while compiling Javascript. Exception = {message}"
        )),
        Ending::Threw(thrown) => threw(&thrown),
        Ending::TimedOut => ApiError::new(
            Status::REQUEST_TIMEOUT,
            "The requested operation exceeded maximum alloted time.",
        ),
        Ending::OutOfMemory => ApiError::bad_request(format!(
            "Encountered exception while executing function. Exception = InternalError: out of memory \
             (a script may use at most {} MB); nothing it wrote was kept.",
            Limits::SERVICE.memory >> 20
        )),
    }
}

/// A thrown value: 400, its `number` as the substatus.
fn threw(thrown: &Thrown) -> ApiError {
    let exception = if thrown.error {
        let name = thrown.name.as_deref().unwrap_or("Error");
        let mut text = format!("{name}: {}", thrown.message);
        if let Some(stack) = thrown.stack.as_deref().filter(|s| !s.trim().is_empty()) {
            text.push_str("\r\nStack trace: ");
            text.push_str(stack.trim_end());
        }
        text
    } else {
        thrown.message.clone()
    };
    let error = ApiError::bad_request(format!(
        "Encountered exception while executing function. Exception = {exception}"
    ));
    match thrown.number {
        Some(n) if n.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&n) => {
            error.with_substatus(n as u32)
        }
        _ => error,
    }
}
