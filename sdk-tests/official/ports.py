"""The loopback ports Microsoft's suites look for the emulator on: that they
are free before it starts, and that it listens once started. Shared by
`go_suite.py` and `js_suite.py` (standard library only)."""

from __future__ import annotations

import socket
import time


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def require_free(*ports: int) -> None:
    for port in ports:
        if listening(port):
            raise SystemExit(f"port {port} is taken: the tests look for the emulator there")


def wait_for(port: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if listening(port):
            return
        time.sleep(0.1)
    raise SystemExit(f"the emulator did not listen on port {port} within {seconds} s")
