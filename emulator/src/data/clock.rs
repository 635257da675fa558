//! The emulator's one source of time. `_ts`, expiry checks and the background
//! purge all read [`Clock::now`], so a manual clock moves all three together.
//!
//! A manual clock keeps milliseconds, so that it can move by a fraction of a
//! second (fault windows and region outages are in milliseconds); `now`,
//! and so `_ts` and every TTL instant, stays in whole seconds, as the
//! service's, the second that has begun.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::protocol::error::{ApiError, ApiResult};

/// How the emulator tells time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClockMode {
    /// The machine's wall clock.
    #[default]
    System,
    /// Time stands still until moved through the control API. `start` is the
    /// initial epoch second; `None` means "the wall clock at start-up".
    Manual { start: Option<i64> },
}

#[derive(Debug)]
pub struct Clock {
    /// `Some` for a manual clock: the current epoch millisecond.
    manual: Option<AtomicI64>,
    /// A manual clock's position at start, in milliseconds: a restart on a
    /// data directory never sets it earlier.
    start: i64,
}

/// Epoch seconds as milliseconds, saturating (instants this far away are
/// refused before they reach the clock).
fn millis(seconds: i64) -> i64 {
    seconds.saturating_mul(1000)
}

impl Clock {
    pub fn new(mode: ClockMode) -> Self {
        let start = match mode {
            ClockMode::System => 0,
            ClockMode::Manual { start } => millis(start.unwrap_or_else(wall_now)),
        };
        let manual = matches!(mode, ClockMode::Manual { .. }).then(|| AtomicI64::new(start));
        Clock { manual, start }
    }

    pub fn is_manual(&self) -> bool {
        self.manual.is_some()
    }

    /// The current time in whole epoch seconds.
    pub fn now(&self) -> i64 {
        match &self.manual {
            Some(now) => now.load(Ordering::Acquire).div_euclid(1000),
            None => wall_now(),
        }
    }

    /// The current time in epoch milliseconds, for the query functions
    /// `GetCurrent*`, fault windows and region outages.
    pub fn now_millis(&self) -> i64 {
        match &self.manual {
            Some(now) => now.load(Ordering::Acquire),
            None => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
                .unwrap_or(0),
        }
    }

    /// How long to sleep, on the wall clock, until epoch second `instant`.
    /// A manual clock never reaches an instant by itself: `None`.
    pub fn wall_time_until(&self, instant: i64) -> Option<Duration> {
        if self.is_manual() {
            return None;
        }
        let target = Duration::from_secs(instant.max(0) as u64);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Some(target.saturating_sub(now))
    }

    /// Moves a manual clock forward by whole `seconds`; answers the new
    /// time in epoch seconds.
    pub fn advance(&self, seconds: i64) -> ApiResult<i64> {
        if seconds < 0 {
            return Err(backwards(&seconds.to_string()));
        }
        let by = seconds
            .checked_mul(1000)
            .ok_or_else(|| ApiError::bad_request("'advance' would overflow the clock."))?;
        self.advance_millis(by)
    }

    /// Moves a manual clock forward by `by` milliseconds (a fraction of a
    /// second included); answers the new time in epoch seconds.
    pub fn advance_millis(&self, by: i64) -> ApiResult<i64> {
        if by < 0 {
            return Err(backwards(&format!("{} s", by as f64 / 1000.0)));
        }
        let now = self.manual_clock()?;
        let previous = now
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| t.checked_add(by))
            .map_err(|_| ApiError::bad_request("'advance' would overflow the clock."))?;
        Ok((previous + by).div_euclid(1000))
    }

    /// Sets a manual clock to epoch second `instant`, which must not be in
    /// its past (the second under way counts as the present).
    pub fn set(&self, instant: i64) -> ApiResult<i64> {
        let now = self.manual_clock()?;
        now.fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
            (instant >= t.div_euclid(1000)).then_some(millis(instant).max(t))
        })
        .map_err(|current| {
            ApiError::bad_request(format!(
                "The clock cannot move backwards: 'set' must be at or after the current time {}, got {instant}.",
                current.div_euclid(1000)
            ))
        })?;
        Ok(instant)
    }

    /// Restarting on a data directory: a manual clock starts no earlier
    /// than epoch second `instant` (time never goes backwards across a
    /// restart; what was kept is whole seconds).
    pub fn resume_at(&self, instant: i64) {
        if let Some(now) = &self.manual {
            now.fetch_max(millis(instant), Ordering::AcqRel);
        }
    }

    /// Sets a manual clock to epoch second `instant`, earlier or later:
    /// only a reset or a restore of the whole account may move time back,
    /// since nothing written at a later time is left.
    pub fn rewind_to(&self, instant: i64) -> ApiResult<i64> {
        self.manual_clock()?
            .store(millis(instant), Ordering::Release);
        Ok(instant)
    }

    /// Replaying a reset or a restore on a data directory: the clock it
    /// set, but no earlier than the clock's start.
    pub fn restart_at(&self, instant: i64) {
        if let Some(now) = &self.manual {
            now.store(millis(instant).max(self.start), Ordering::Release);
        }
    }

    fn manual_clock(&self) -> ApiResult<&AtomicI64> {
        self.manual.as_ref().ok_or_else(|| {
            ApiError::not_found()
                .with_message("The test clock is off: start the emulator with --clock manual.")
        })
    }
}

/// The refusal of a move backwards (`by`: the amount asked, as written).
fn backwards(by: &str) -> ApiError {
    ApiError::bad_request(format!(
        "The clock cannot move backwards: 'advance' must be zero or a positive number of seconds, got {by}."
    ))
}

fn wall_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::error::Status;

    #[test]
    fn manual_clock_moves_only_when_told_and_never_backwards() {
        let clock = Clock::new(ClockMode::Manual { start: Some(1_000) });
        assert_eq!(clock.now(), 1_000);
        assert_eq!(clock.now_millis(), 1_000_000);
        assert_eq!(clock.advance(5).unwrap(), 1_005);
        assert_eq!(clock.set(2_000).unwrap(), 2_000);
        assert_eq!(clock.now(), 2_000);
        assert!(clock.set(1_999).is_err());
        assert!(clock.advance(-1).is_err());
        assert_eq!(clock.now(), 2_000);
    }

    #[test]
    fn manual_clock_moves_by_fractions_and_tells_whole_seconds() {
        let clock = Clock::new(ClockMode::Manual { start: Some(1_000) });
        assert_eq!(clock.advance_millis(1_500).unwrap(), 1_001);
        assert_eq!(clock.now(), 1_001);
        assert_eq!(clock.now_millis(), 1_001_500);
        assert_eq!(clock.advance_millis(499).unwrap(), 1_001);
        assert_eq!(clock.advance_millis(1).unwrap(), 1_002);
        assert_eq!(clock.now_millis(), 1_002_000);
        // The second under way is the present: set to it keeps the fraction,
        // to the one before is backwards.
        clock.advance_millis(250).unwrap();
        assert_eq!(clock.set(1_002).unwrap(), 1_002);
        assert_eq!(clock.now_millis(), 1_002_250);
        assert!(clock.set(1_001).is_err());
        assert_eq!(clock.set(1_003).unwrap(), 1_003);
        assert_eq!(clock.now_millis(), 1_003_000);
        assert!(clock.advance_millis(-1).is_err());
        assert!(clock.advance(i64::MAX).is_err());
        assert_eq!(clock.now(), 1_003);
        // A restart resumes at the whole second kept.
        clock.resume_at(1_010);
        assert_eq!(clock.now_millis(), 1_010_000);
        assert_eq!(clock.rewind_to(5).unwrap(), 5);
        assert_eq!(clock.now_millis(), 5_000);
    }

    #[test]
    fn system_clock_refuses_to_be_moved() {
        let clock = Clock::new(ClockMode::System);
        let err = clock.advance(1).unwrap_err();
        assert_eq!(err.status, Status::NOT_FOUND);
    }

    #[test]
    fn system_clock_tells_milliseconds() {
        let clock = Clock::new(ClockMode::System);
        let (before, millis, after) = (clock.now(), clock.now_millis(), clock.now());
        assert!((before * 1000..(after + 1) * 1000).contains(&millis));
    }
}
