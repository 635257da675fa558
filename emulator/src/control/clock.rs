//! The test clock (`docs/src/clock.md`): `GET /_emulator/clock` →
//! `{"now": s}`; `POST` `{"advance": s}` (a fraction of a second too, to
//! the millisecond) or `{"set": s}` (whole epoch seconds) → `{"now": s}`;
//! both 404 unless started with `--clock manual`.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use crate::http::{AppState, Body};
use crate::protocol::error::{ApiError, ApiResult};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClockChange {
    advance: Option<serde_json::Number>,
    set: Option<serde_json::Number>,
}

/// `advance`'s seconds in milliseconds: a whole number, or a fraction to
/// the millisecond (`1.5`; `_ts` stays in whole seconds, as the service's).
/// A negative amount passes, for the clock to refuse as a move backwards.
fn advance_millis(seconds: &serde_json::Number) -> ApiResult<i64> {
    let overflow = || ApiError::bad_request("'advance' would overflow the clock.");
    if let Some(whole) = seconds.as_i64() {
        return whole.checked_mul(1000).ok_or_else(overflow);
    }
    if seconds.is_u64() {
        return Err(overflow());
    }
    let millis = seconds.as_f64().unwrap_or(f64::NAN) * 1000.0;
    let whole = millis.round();
    // Finer than a millisecond would be rounded away unseen: refused.
    if !whole.is_finite() || (millis - whole).abs() > 1e-6 {
        return Err(ApiError::bad_request(format!(
            "'advance' is in seconds, to the millisecond at the finest (such as 60 or 1.5), \
             got {seconds}."
        )));
    }
    if whole.abs() >= i64::MAX as f64 {
        return Err(overflow());
    }
    Ok(whole as i64)
}

/// `set`'s epoch second: whole, as `_ts` is.
fn set_seconds(instant: &serde_json::Number) -> ApiResult<i64> {
    instant.as_i64().ok_or_else(|| {
        ApiError::bad_request(format!(
            "'set' must be whole epoch seconds (such as 1700000000), got {instant}."
        ))
    })
}

fn manual_only(state: &AppState) -> ApiResult<()> {
    if state.account.store.clock.is_manual() {
        Ok(())
    } else {
        Err(ApiError::not_found().with_message(
            "The test clock is off: start the emulator with --clock manual to move time through /_emulator/clock.",
        ))
    }
}

/// `GET /_emulator/clock`.
pub async fn read(State(state): State<AppState>) -> ApiResult<Response> {
    manual_only(&state)?;
    Ok(Json(json!({"now": state.account.store.clock.now()})).into_response())
}

/// `POST /_emulator/clock`.
pub async fn update(State(state): State<AppState>, body: Body) -> ApiResult<Response> {
    manual_only(&state)?;
    let change: ClockChange = body.typed("clock")?;
    let now = match (&change.advance, &change.set) {
        // Each kept before it is acknowledged: time never goes backwards across a restart.
        (Some(seconds), None) => state
            .account
            .store
            .advance_clock_millis(advance_millis(seconds)?)?,
        (None, Some(instant)) => state.account.store.set_clock(set_seconds(instant)?)?,
        _ => {
            return Err(ApiError::bad_request(
                "Send exactly one of {\"advance\": <seconds>} or {\"set\": <epoch seconds>}.",
            ))
        }
    };
    // A region whose outage the move ended listens again before the answer.
    super::regions::settled(&state).await;
    Ok(Json(json!({"now": now})).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(text: &str) -> serde_json::Number {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn advance_takes_seconds_to_the_millisecond() {
        for (text, millis) in [
            ("0", 0),
            ("60", 60_000),
            ("1.5", 1_500),
            ("0.001", 1),
            ("2.25", 2_250),
            ("1e3", 1_000_000),
            ("-1", -1_000),
            ("-0.5", -500),
        ] {
            assert_eq!(advance_millis(&number(text)).unwrap(), millis, "{text}");
        }
        for text in [
            "0.0001",
            "1.0005",
            "1e300",
            "9223372036854775807",
            "18446744073709551615",
        ] {
            let refused = advance_millis(&number(text)).unwrap_err();
            assert_eq!(
                refused.status,
                crate::protocol::error::Status::BAD_REQUEST,
                "{text}"
            );
        }
        let message = advance_millis(&number("0.0001")).unwrap_err().message;
        assert!(message.contains("millisecond"), "{message}");
    }

    #[test]
    fn set_takes_whole_epoch_seconds() {
        assert_eq!(set_seconds(&number("1700000000")).unwrap(), 1_700_000_000);
        let message = set_seconds(&number("1700000000.5")).unwrap_err().message;
        assert!(message.contains("whole epoch seconds"), "{message}");
    }
}
