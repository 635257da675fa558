"""The emulator processes never outlive this one: stopped at exit and on
SIGTERM, and on Linux killed by the kernel when this process dies, however
it dies (PR_SET_PDEATHSIG, besides the binary's own --parent-pid)."""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from typing import Any, Optional

__all__ = ["death_signal_preexec", "install_hooks", "track", "untrack"]

_live: "set[Any]" = set()
_live_lock = threading.RLock()
_atexit_registered = False
_sigterm_handled = False


def _stop_all() -> None:
    with _live_lock:
        # A process forked from this one (multiprocessing) has a copy of the
        # set: it stops only what it started itself.
        emulators = [e for e in _live if e._owner == os.getpid()]
    for emulator in emulators:
        try:
            emulator.stop(timeout=5.0)
        except Exception:  # noqa: BLE001 - at exit, stop what can be stopped
            pass


def _on_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM with no handler of the program's own: stop the emulators, then
    die of SIGTERM as the process would have without this handler."""
    _stop_all()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def install_hooks() -> None:
    global _atexit_registered, _sigterm_handled
    if not _atexit_registered:
        _atexit_registered = True
        atexit.register(_stop_all)
    # Signal handlers can only be set from the main thread: a first start
    # from another thread leaves it to a later one from the main thread.
    if not _sigterm_handled and os.name == "posix" and threading.current_thread() is threading.main_thread():
        _sigterm_handled = True
        try:
            if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
                signal.signal(signal.SIGTERM, _on_sigterm)
        except (ValueError, OSError):
            pass


def death_signal_preexec() -> Optional[Any]:
    """Linux: a preexec_fn that asks the kernel to SIGTERM the child when its
    parent dies (PR_SET_PDEATHSIG), even by SIGKILL. The kernel ties this to
    the thread that forks, so only a start from the main thread sets it (a
    worker thread's end would otherwise stop the emulator)."""
    if not sys.platform.startswith("linux"):
        return None
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()
    pr_set_pdeathsig = 1

    def preexec() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl
            os._exit(1)

    return preexec


def track(emulator: Any) -> None:
    """Stops ``emulator`` at exit and on SIGTERM, until :func:`untrack`."""
    with _live_lock:
        _live.add(emulator)


def untrack(emulator: Any) -> None:
    with _live_lock:
        _live.discard(emulator)
