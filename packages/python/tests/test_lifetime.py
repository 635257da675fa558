"""The emulator never outlives the pytest session that started it: after a
normal end, Ctrl-C (SIGINT), SIGTERM and SIGKILL of pytest. Each case runs
an inner pytest (python -m pytest in a subprocess) whose test uses the
cosmos_emulator fixture and prints the emulator's pid, then ends or is
signalled; the emulator's process must be gone afterwards."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
from typing import List, Optional

import pytest

import cosmos_emulator
from conftest import PATIENCE, needs_linux, process_alive, process_start_time, wait_for

pytestmark = needs_linux

INNER_TEST = """
import os
import time

import pytest

@pytest.fixture
def probe(cosmos_emulator, cosmos_database):
    yield
    # Teardown, also after Ctrl-C: the emulator still serves until the
    # session's end, so cosmos_database can delete its database after this.
    print(f"TEARDOWN running={cosmos_emulator.running} now={cosmos_emulator.now()}", flush=True)

def test_holds_an_emulator(cosmos_emulator, probe):
    print(f"EMULATOR_PID={cosmos_emulator.pid}", flush=True)
    assert cosmos_emulator.advance(1) > 0
    if os.environ.get("INNER_WAIT") == "1":
        print("WAITING", flush=True)
        time.sleep(3600)  # until the outer test signals this pytest
"""


def _as_a_terminal_job() -> None:
    """In the inner pytest, before exec: SIGINT as a terminal's job has it.
    A shell runs background commands with SIGINT ignored, and Python keeps
    an ignored SIGINT ignored: run from such a job (`cargo xtask ... &`),
    the Ctrl-C cases would wait forever."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


_started: "List[Inner]" = []


@pytest.fixture(autouse=True)
def _no_inner_pytest_left():
    """A failing case still leaves no inner pytest (and so no emulator) behind."""
    yield
    while _started:
        inner = _started.pop()
        if inner.process.poll() is None:
            try:
                os.killpg(inner.process.pid, signal.SIGKILL)
            except OSError:
                pass
            inner.process.wait()


class Inner:
    """An inner `python -m pytest` with its stdout read line by line."""

    def __init__(self, directory, wait: bool):
        (directory / "test_inner.py").write_text(textwrap.dedent(INNER_TEST))
        env = dict(os.environ, INNER_WAIT="1" if wait else "0")
        env.pop("PYTEST_ADDOPTS", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-s", "-q", "-p", "no:cacheprovider", "test_inner.py"],
            cwd=directory,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, as a terminal's job
            preexec_fn=_as_a_terminal_job,
        )
        _started.append(self)
        self.lines: "queue.Queue[Optional[str]]" = queue.Queue()
        self.output: List[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self.lines.put(raw.decode("utf-8", "replace").rstrip("\n"))
        self.lines.put(None)

    def wait_for_line(self, prefix: str) -> str:
        while True:
            try:
                line = self.lines.get(timeout=PATIENCE)
            except queue.Empty:
                raise AssertionError(
                    f"no line {prefix!r} within {PATIENCE} s; so far:\n" + "\n".join(self.output)
                ) from None
            if line is None:
                raise AssertionError(f"the inner pytest ended without {prefix!r}:\n" + "\n".join(self.output))
            self.output.append(line)
            if line.startswith(prefix):
                return line

    def finish(self) -> int:
        code = self.process.wait(timeout=PATIENCE)
        while True:
            try:
                line = self.lines.get(timeout=PATIENCE)
            except queue.Empty:
                break
            if line is None:
                break
            self.output.append(line)
        return code


def emulator_of(inner: Inner):
    pid = int(inner.wait_for_line("EMULATOR_PID=").split("=", 1)[1])
    started = process_start_time(pid)
    assert started is not None, f"the emulator {pid} is not running"
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        assert b"cosmos-emulator" in f.read()
    return pid, started


def assert_gone(pid: int, started: str, inner: Inner) -> None:
    try:
        gone = wait_for(lambda: not process_alive(pid, started), timeout=PATIENCE)
    finally:
        if process_alive(pid, started):  # never leave it behind, even when failing
            os.kill(pid, signal.SIGKILL)
    assert gone, f"the emulator (pid {pid}) outlived pytest; pytest said:\n" + "\n".join(inner.output)


def test_after_a_normal_end(tmp_path):
    inner = Inner(tmp_path, wait=False)
    pid, started = emulator_of(inner)
    assert inner.finish() == 0, "\n".join(inner.output)
    assert any("1 passed" in line for line in inner.output)
    assert_gone(pid, started, inner)


def test_after_ctrl_c(tmp_path):
    inner = Inner(tmp_path, wait=True)
    pid, started = emulator_of(inner)
    inner.wait_for_line("WAITING")
    inner.process.send_signal(signal.SIGINT)
    assert inner.finish() == pytest.ExitCode.INTERRUPTED, "\n".join(inner.output)
    assert_gone(pid, started, inner)


def test_after_ctrl_c_in_a_terminal(tmp_path):
    """A terminal's Ctrl-C signals the whole foreground process group: the
    emulator is in its own session, so it still serves pytest's teardown
    (the database is deleted), and only then is it stopped."""
    inner = Inner(tmp_path, wait=True)
    pid, started = emulator_of(inner)
    inner.wait_for_line("WAITING")
    os.killpg(inner.process.pid, signal.SIGINT)
    assert inner.finish() == pytest.ExitCode.INTERRUPTED, "\n".join(inner.output)
    assert any(line.startswith("TEARDOWN running=True now=") for line in inner.output), "\n".join(inner.output)
    assert not any("Error" in line for line in inner.output), "\n".join(inner.output)
    assert_gone(pid, started, inner)


def test_after_sigterm_to_pytest(tmp_path):
    inner = Inner(tmp_path, wait=True)
    pid, started = emulator_of(inner)
    inner.wait_for_line("WAITING")
    inner.process.send_signal(signal.SIGTERM)
    # pytest still dies of SIGTERM, as without the plugin.
    assert inner.finish() == -signal.SIGTERM, "\n".join(inner.output)
    assert_gone(pid, started, inner)


def test_after_sigkill_of_pytest(tmp_path):
    inner = Inner(tmp_path, wait=True)
    pid, started = emulator_of(inner)
    inner.wait_for_line("WAITING")
    inner.process.kill()  # no handler, no atexit, no teardown runs
    assert inner.finish() == -signal.SIGKILL
    assert_gone(pid, started, inner)


PARENT_ONLY = """
import os, subprocess, sys
child = subprocess.Popen(
    [sys.argv[1], "--port", "0", "--clock", "manual", "--parent-pid", str(os.getpid())],
    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
)
print(child.stdout.readline().decode().strip(), flush=True)
print(f"EMULATOR_PID={child.pid}", flush=True)
print("WAITING", flush=True)
import time
time.sleep(3600)
"""


def test_the_binary_alone_dies_with_its_parent(tmp_path):
    """--parent-pid by itself (no PR_SET_PDEATHSIG from Python): what covers
    a parent that is SIGKILLed when the Python side could not set anything."""
    binary = cosmos_emulator.find_binary()
    if not cosmos_emulator._binary.supports_parent_pid(binary):
        pytest.fail(f"{binary} has no --parent-pid flag (cosmos-emulator --help does not list it)")
    script = tmp_path / "parent.py"
    script.write_text(PARENT_ONLY)
    process = subprocess.Popen([sys.executable, str(script), binary], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    inner = Inner.__new__(Inner)
    inner.process = process
    inner.lines = queue.Queue()
    inner.output = []
    threading.Thread(target=inner._read, daemon=True).start()
    inner.wait_for_line("listening on ")
    pid, started = emulator_of(inner)
    inner.wait_for_line("WAITING")
    process.kill()
    process.wait(timeout=PATIENCE)
    assert_gone(pid, started, inner)
