//! The time bound as the client sees it. QuickJS's interrupt handler stops
//! a script's own code at the bound, but not a native call that loops in C
//! (`new Array(1e9).join('x')` runs for tens of seconds before it runs out
//! of memory; `sort` of such an array completes after as long). So an
//! execution runs on a blocking thread and the request is answered at the
//! bound (plus a grace) whatever the thread is doing; a [`Gate`] makes sure
//! that an execution answered 408 never commits afterwards, and that one
//! that has begun to commit is waited for (its answer is its commit).

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::engine::Ending;
use super::failure;
use crate::protocol::error::{ApiError, ApiResult, Status};

/// How long after the bound a stuck execution is answered 408.
const GRACE: Duration = Duration::from_millis(500);

const RUNNING: u8 = 0;
const COMMITTING: u8 = 1;
const ABANDONED: u8 = 2;

/// Who decides an execution's fate: its thread, by committing, or the
/// request, by answering 408 first.
#[derive(Clone, Default)]
pub struct Gate(Arc<AtomicU8>);

impl Gate {
    /// The thread is about to commit: false if the request already gave up.
    pub fn begin_commit(&self) -> bool {
        self.0
            .compare_exchange(RUNNING, COMMITTING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// The commit conflicted: the script runs again.
    pub fn resume(&self) {
        let _ = self
            .0
            .compare_exchange(COMMITTING, RUNNING, Ordering::AcqRel, Ordering::Acquire);
    }

    /// The request gives up: false if the thread is committing.
    fn abandon(&self) -> bool {
        self.0
            .compare_exchange(RUNNING, ABANDONED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

/// The 408 of an execution past the bound.
pub fn timed_out() -> ApiError {
    failure(Ending::TimedOut)
}

/// Runs `work` on a blocking thread and answers by `bound` + the grace.
pub async fn run<T: Send + 'static>(
    bound: Duration,
    work: impl FnOnce(&Gate) -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    let gate = Gate::default();
    let thread_gate = gate.clone();
    let mut task = tokio::task::spawn_blocking(move || work(&thread_gate));
    let joined = match tokio::time::timeout(bound + GRACE, &mut task).await {
        Ok(joined) => joined,
        Err(_) if gate.abandon() => return Err(timed_out()),
        // It is committing: its commit is the answer.
        Err(_) => task.await,
    };
    joined.unwrap_or_else(|_| {
        Err(ApiError::new(
            Status::INTERNAL_SERVER_ERROR,
            "The script's execution failed inside the emulator; nothing it wrote was kept.",
        ))
    })
}

/// Takes `lock` (a container's executions, one at a time) if it comes free
/// within `bound`; otherwise goes on without it: an execution still stuck
/// in a native call must not stall the next ones, and commits stay correct
/// without the lock (each checks that nothing was written meanwhile).
pub fn lock_within(lock: &Mutex<()>, bound: Duration) -> Option<MutexGuard<'_, ()>> {
    let until = Instant::now() + bound;
    loop {
        match lock.try_lock() {
            Ok(guard) => return Some(guard),
            Err(std::sync::TryLockError::Poisoned(e)) => return Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) if Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(std::sync::TryLockError::WouldBlock) => return None,
        }
    }
}
