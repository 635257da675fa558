//! The manual clock's moves, recorded in the journal (with `--data-dir`)
//! before they are acknowledged, so that time never goes back across a
//! restart; each wakes what waits on time (the purge).

use super::super::records::Record;
use super::super::Store;
use crate::protocol::error::ApiResult;

impl Store {
    /// Moves the manual clock forward by `seconds` and records it (see
    /// [`Store::clock_moved`]); the new time. What `POST /_emulator/clock`
    /// and `Emulator::advance` do.
    pub fn advance_clock(&self, seconds: i64) -> ApiResult<i64> {
        let now = self.clock.advance(seconds)?;
        self.clock_moved()?;
        Ok(now)
    }

    /// Moves the manual clock forward by `by` milliseconds (a fraction of
    /// a second included) and records it, as [`Self::advance_clock`].
    pub fn advance_clock_millis(&self, by: i64) -> ApiResult<i64> {
        let now = self.clock.advance_millis(by)?;
        self.clock_moved()?;
        Ok(now)
    }

    /// Sets the manual clock to `instant` (never earlier) and records it.
    pub fn set_clock(&self, instant: i64) -> ApiResult<i64> {
        let now = self.clock.set(instant)?;
        self.clock_moved()?;
        Ok(now)
    }

    /// Records the manual clock's position (after a move), durably before
    /// the move is acknowledged, and wakes what waits on time (the purge).
    pub fn clock_moved(&self) -> ApiResult<()> {
        if let Some(durable) = self.durable.as_ref().filter(|_| self.clock.is_manual()) {
            let now = self.clock.now();
            let catalog = self.write()?;
            durable.journal.record(|out| Record::Clock(now).encode(out));
            drop(catalog);
        }
        self.time_moved();
        Ok(())
    }
}
