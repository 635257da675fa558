//! When the `cosmos-emulator` process stops: on SIGINT or SIGTERM, and with
//! `--parent-pid PID` once PID is no longer its parent, so that an emulator
//! a test runner started never outlives it, even when the runner is
//! SIGKILLed and has no chance to stop it.
//!
//! On Linux the kernel sends SIGTERM when the parent dies
//! (`PR_SET_PDEATHSIG`); on every unix `getppid()` is also polled every
//! 250 ms, for the other systems and as a fallback (the kernel's signal
//! follows the parent *thread* that started the child). On other platforms
//! `--parent-pid` is accepted and has no effect.

use std::future::Future;
use std::io;
use std::time::Duration;

/// How often `getppid()` is compared with `--parent-pid`.
const PARENT_POLL: Duration = Duration::from_millis(250);

/// Whether the parent is still `pid`; asks the kernel to send SIGTERM when
/// it dies (Linux). Call first thing in `main`: if the parent is already
/// gone, the caller exits at once.
pub fn parent_at_start(pid: u32) -> Result<(), String> {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number and no memory.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
    }
    // After the prctl: a parent that dies from here on is signalled, one
    // that died before is seen here.
    match current_parent() {
        Some(parent) if parent != pid => Err(format!(
            "--parent-pid {pid}: the parent of this process is {parent}, not {pid} (it may have \
             exited already); stopping"
        )),
        _ => Ok(()),
    }
}

/// Registers SIGINT and SIGTERM now, and starts watching the parent; the
/// future completes on either signal, or once the parent is gone.
pub fn shutdown_signal(parent_pid: Option<u32>) -> io::Result<impl Future<Output = ()>> {
    let signals = signals()?;
    let parent_gone = parent_pid.map(|pid| tokio::spawn(parent_gone(pid)));
    Ok(async move {
        match parent_gone {
            Some(gone) => {
                tokio::select! {
                    _ = signals => {}
                    _ = gone => tracing::info!("the parent process is gone: stopping"),
                }
            }
            None => signals.await,
        }
    })
}

/// Completes once the parent is no longer `pid`; never where there is no
/// `getppid()`.
async fn parent_gone(pid: u32) {
    loop {
        match current_parent() {
            Some(parent) if parent != pid => return,
            Some(_) => tokio::time::sleep(PARENT_POLL).await,
            None => std::future::pending::<()>().await,
        }
    }
}

#[cfg(unix)]
fn current_parent() -> Option<u32> {
    // SAFETY: getppid takes nothing and cannot fail.
    let parent = unsafe { libc::getppid() };
    u32::try_from(parent).ok()
}

#[cfg(not(unix))]
fn current_parent() -> Option<u32> {
    None
}

#[cfg(unix)]
fn signals() -> io::Result<impl Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

#[cfg(not(unix))]
fn signals() -> io::Result<impl Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}
