"""Helpers of the package's own tests. The cosmos_emulator plugin is NOT
imported here: it must come in through the installed wheel's pytest11 entry
point, as it does for users. pytester runs inner pytest sessions."""

from __future__ import annotations

import os
import sys
import time
import uuid
from typing import Callable, Optional

import pytest

pytest_plugins = ["pytester"]

# Generous: the machine running the suite may be slow and shared.
PATIENCE = 60.0


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def wait_for(condition: Callable[[], bool], timeout: float = PATIENCE, interval: float = 0.05) -> bool:
    """Polls until condition() holds; False if it still does not after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(interval)


def process_start_time(pid: int) -> Optional[str]:
    """Linux: the process's start time (field 22 of /proc/PID/stat), which
    tells it apart from a later process given the same pid; None if there is
    no such process or it is a zombie (exited, not yet reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    if fields[0] in ("Z", "X"):
        return None
    return fields[19]


def process_alive(pid: int, start_time: Optional[str]) -> bool:
    now = process_start_time(pid)
    return now is not None and now == start_time


needs_linux = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads /proc to see whether a process is alive"
)

# Windows (the release workflow's Windows runner runs this suite too): the
# wheel's script is cosmos-emulator.exe, and there are no POSIX signals, so
# stop() ends the emulator with TerminateProcess, whose exit code is 1.
ON_WINDOWS = os.name == "nt"
BINARY_NAME = "cosmos-emulator.exe" if ON_WINDOWS else "cosmos-emulator"
STOPPED_CODE = 1 if ON_WINDOWS else 0


def posix_only(why: str):
    """Skips a test on Windows, saying which POSIX feature it needs."""
    return pytest.mark.skipif(ON_WINDOWS, reason=f"not on Windows: {why}")


@pytest.fixture
def clean_env(monkeypatch):
    """No COSMOS_EMULATOR_BINARY: the tests find the installed binary as users do."""
    monkeypatch.delenv("COSMOS_EMULATOR_BINARY", raising=False)
    return os.environ
