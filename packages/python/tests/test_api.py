"""The module API: start, stop, where the binary comes from, and what a
failure to start says."""

from __future__ import annotations

import base64
import os
import signal
import socket
import stat
import sys
import sysconfig
from datetime import timedelta

import pytest
from azure.cosmos import PartitionKey, exceptions

import cosmos_emulator
from conftest import (
    BINARY_NAME,
    STOPPED_CODE,
    needs_linux,
    posix_only,
    process_alive,
    process_start_time,
    unique,
    wait_for,
)


def test_the_module_and_the_binary_come_from_the_installed_wheel(clean_env):
    binary = cosmos_emulator.find_binary()
    assert os.path.basename(binary) == BINARY_NAME
    if os.environ.get("COSMOS_EMULATOR_PACKAGE_TEST") == "1":
        # cargo xtask package --test: the wheel installed into a fresh venv.
        scripts = sysconfig.get_path("scripts")
        assert binary == os.path.join(scripts, BINARY_NAME)
        site = {os.path.realpath(sysconfig.get_path(p)) for p in ("purelib", "platlib")}
        package_dir = os.path.realpath(os.path.dirname(cosmos_emulator.__file__))
        assert os.path.dirname(package_dir) in site, package_dir
        assert cosmos_emulator.__version__ != "0+unknown"


def test_start_answers_at_once_and_stop_ends_the_process(clean_env):
    emulator = cosmos_emulator.start()
    try:
        assert emulator.endpoint.startswith("http://localhost:")
        assert emulator.endpoint.endswith("/")
        assert emulator.key == cosmos_emulator.WELL_KNOWN_KEY
        assert emulator.certificate is None
        assert emulator.clock == "manual"
        assert emulator.running
        now = emulator.now()
        assert emulator.advance(5) == now + 5
        assert emulator.advance(timedelta(minutes=1)) == now + 65
        assert emulator.advance(2.0) == now + 67
        # Fractions to the millisecond: `now` stays whole, the halves add up.
        assert emulator.advance(0.5) == now + 67
        assert emulator.advance(timedelta(milliseconds=500)) == now + 68
        assert emulator.advance(1.25) == now + 69
        with pytest.raises(ValueError, match="whole milliseconds"):
            emulator.advance(0.0001)
        assert emulator.set_clock(now + 1000) == now + 1000
        with pytest.raises(ValueError, match="whole seconds"):
            emulator.set_clock(now + 1000.5)
        assert emulator.now() == now + 1000
        with pytest.raises(cosmos_emulator.ControlError) as backwards:
            emulator.set_clock(now)
        assert backwards.value.status == 400 and "backwards" in backwards.value.message
    finally:
        emulator.stop()
    assert not emulator.running
    assert emulator.returncode == STOPPED_CODE  # SIGTERM: a clean stop (not on Windows)
    emulator.stop()  # again: nothing happens


def test_the_context_manager_stops_it(clean_env):
    with cosmos_emulator.start() as emulator:
        pid = emulator.pid
        assert emulator.running
    assert not emulator.running
    if sys.platform.startswith("linux"):
        assert process_start_time(pid) is None


def test_client_talks_to_it(clean_env):
    with cosmos_emulator.start() as emulator:
        client = emulator.client()
        db = client.create_database(unique("db"))
        container = db.create_container("c", PartitionKey("/pk"))
        container.create_item({"id": "1", "pk": "a", "n": 1})
        assert container.read_item("1", "a")["n"] == 1
        assert [d["id"] for d in client.list_databases()] == [db.id]


def test_key_is_the_one_requests_are_signed_with(clean_env):
    key = base64.b64encode(os.urandom(64)).decode()
    with cosmos_emulator.start(key=key) as emulator:
        assert emulator.key == key
        assert emulator.now() > 0  # control requests are signed with it
        emulator.client().create_database(unique("db"))
        with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
            list(emulator.client(credential=cosmos_emulator.WELL_KNOWN_KEY).list_databases())
        assert refused.value.status_code == 401


def test_ranges_give_every_container_that_many_partition_key_ranges(clean_env):
    with cosmos_emulator.start(ranges=4) as emulator:
        db = emulator.client().create_database(unique("db"))
        container = db.create_container("c", PartitionKey("/pk"))
        assert len(list(container.read_feed_ranges())) == 4


def test_data_dir_keeps_the_data_across_a_restart(clean_env, tmp_path):
    data = tmp_path / "data"
    with cosmos_emulator.start(data_dir=data) as first:
        db = first.client().create_database("kept")
        db.create_container("c", PartitionKey("/pk")).create_item({"id": "1", "pk": "a"})
        clock = first.advance(100)
    with cosmos_emulator.start(data_dir=data) as second:
        container = second.client().get_database_client("kept").get_container_client("c")
        assert container.read_item("1", "a")["id"] == "1"
        assert second.now() == clock


def test_system_clock_has_no_test_clock(clean_env):
    with cosmos_emulator.start(clock="system") as emulator:
        with pytest.raises(cosmos_emulator.ControlError) as error:
            emulator.advance(1)
        assert error.value.status == 404
        assert "--clock manual" in error.value.message
        assert "404" in str(error.value)


def test_bad_arguments_to_start_are_refused_before_anything_runs(clean_env):
    with pytest.raises(ValueError, match="clock"):
        cosmos_emulator.start(clock="wall")
    with pytest.raises(TypeError, match="ranges"):
        cosmos_emulator.start(ranges="4")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sequence"):
        cosmos_emulator.start(args="--tls")  # type: ignore[arg-type]


# --- failures to start say why ------------------------------------------------


def test_a_bad_flag_says_so_with_the_emulators_stderr(clean_env):
    with pytest.raises(cosmos_emulator.EmulatorError) as error:
        cosmos_emulator.start(args=["--no-such-flag"])
    message = str(error.value)
    assert error.value.returncode == 2
    assert "exited with code 2" in message
    assert "refused its arguments" in message
    assert "--no-such-flag" in error.value.stderr  # clap's own words, from stderr
    assert "stderr" in message and "unexpected argument" in message


def test_a_bad_value_says_so(clean_env):
    with pytest.raises(cosmos_emulator.EmulatorError) as error:
        cosmos_emulator.start(ranges=0)
    assert "ranges-per-container" in str(error.value)


def test_a_port_in_use_says_so(clean_env):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(cosmos_emulator.EmulatorError) as error:
            cosmos_emulator.start(port=port)
    message = str(error.value)
    assert f"port {port} on localhost is already in use" in message
    # The OS's words: Windows says "Only one usage of each socket address".
    assert "Address already in use" in error.value.stderr or "Only one usage" in error.value.stderr


def test_a_missing_binary_says_where_it_looked(clean_env, monkeypatch, tmp_path):
    with pytest.raises(cosmos_emulator.EmulatorError, match="does not exist"):
        cosmos_emulator.start(binary=tmp_path / "cosmos-emulator")
    monkeypatch.setenv("COSMOS_EMULATOR_BINARY", str(tmp_path / "nowhere"))
    with pytest.raises(cosmos_emulator.EmulatorError, match=r"\$COSMOS_EMULATOR_BINARY"):
        cosmos_emulator.start()
    monkeypatch.delenv("COSMOS_EMULATOR_BINARY")
    # Nothing installed anywhere: the message lists every place.
    from cosmos_emulator import _binary

    monkeypatch.setattr(_binary, "_scripts_dirs", lambda: [str(tmp_path / "bin")])
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(cosmos_emulator.EmulatorError) as error:
        cosmos_emulator.start()
    message = str(error.value)
    assert str(tmp_path / "bin" / "cosmos-emulator") in message
    assert "on PATH" in message and "pip install cosmos-emulator" in message


@posix_only("it has no executable bit (os.access X_OK holds for any file)")
def test_a_binary_that_is_not_executable_says_so(clean_env, tmp_path):
    fake = tmp_path / "cosmos-emulator"
    fake.write_text("not a program")
    fake.chmod(stat.S_IRUSR | stat.S_IWUSR)
    with pytest.raises(cosmos_emulator.EmulatorError, match="not an executable"):
        cosmos_emulator.start(binary=fake)


@posix_only("a #!/bin/sh script stands in for the binary")
def test_a_binary_that_dies_at_start_says_how(clean_env, tmp_path):
    fake = tmp_path / "cosmos-emulator"
    fake.write_text("#!/bin/sh\necho 'cannot open the data directory: disk on fire' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(cosmos_emulator.EmulatorError) as error:
        cosmos_emulator.start(binary=fake)
    assert "exited with code 3" in str(error.value)
    assert "disk on fire" in str(error.value)


@posix_only("a #!/bin/sh script stands in for the binary")
def test_a_binary_that_never_listens_times_out_and_is_stopped(clean_env, tmp_path):
    fake = tmp_path / "cosmos-emulator"
    fake.write_text("#!/bin/sh\n[ \"$1\" = --help ] && exit 0\necho 'thinking' >&2\nexec sleep 600\n")
    fake.chmod(0o755)
    with pytest.raises(cosmos_emulator.EmulatorError) as error:
        cosmos_emulator.start(binary=fake, timeout=1.0)
    assert "no 'listening on <url>' line within 1 s" in str(error.value)
    assert "thinking" in str(error.value)


@needs_linux
def test_the_container_variables_of_the_shell_do_not_leak_into_it(clean_env, monkeypatch):
    # PROTOCOL=https would turn TLS on, PORT would move it: start()'s
    # arguments are the whole configuration.
    monkeypatch.setenv("PROTOCOL", "https")
    monkeypatch.setenv("PORT", "1")
    monkeypatch.setenv("AZURE_COSMOS_EMULATOR_PARTITION_COUNT", "7")
    monkeypatch.setenv("COSMOS_EMULATOR_PROTOCOL", "https")
    monkeypatch.setenv("COSMOS_EMULATOR_DEFAULT_DATA_DIR", "/proc/no-such-dir")
    with cosmos_emulator.start() as emulator:
        assert emulator.endpoint.startswith("http://")
        with open(f"/proc/{emulator.pid}/environ", "rb") as f:
            names = {entry.split(b"=", 1)[0] for entry in f.read().split(b"\0") if entry}
        assert not names & {
            b"PROTOCOL",
            b"PORT",
            b"AZURE_COSMOS_EMULATOR_PARTITION_COUNT",
            b"COSMOS_EMULATOR_PROTOCOL",
            b"COSMOS_EMULATOR_DEFAULT_DATA_DIR",
        }


@needs_linux
def test_the_binary_is_told_its_parent_when_it_knows_the_flag(clean_env):
    with cosmos_emulator.start() as emulator:
        with open(f"/proc/{emulator.pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
        supported = cosmos_emulator._binary.supports_parent_pid(emulator.binary)
        if os.environ.get("COSMOS_EMULATOR_PACKAGE_TEST") == "1":
            assert supported, "the wheel's binary must have --parent-pid"
        if supported:
            assert argv[argv.index(b"--parent-pid") + 1] == str(os.getpid()).encode()
        else:
            assert b"--parent-pid" not in argv


@needs_linux
def test_stop_kills_what_does_not_stop_on_sigterm(clean_env):
    emulator = cosmos_emulator.start()
    os.kill(emulator.pid, signal.SIGSTOP)  # SIGTERM now waits; SIGKILL does not
    emulator.stop(timeout=1.0)
    assert emulator.returncode == -signal.SIGKILL


def test_process_helpers_see_a_stopped_emulator_as_gone(clean_env):
    emulator = cosmos_emulator.start()
    pid = emulator.pid
    started = process_start_time(pid) if sys.platform.startswith("linux") else None
    emulator.stop()
    if started is not None:
        assert wait_for(lambda: not process_alive(pid, started), timeout=10)


def test_python_dash_m_runs_the_binary(clean_env):
    import subprocess

    out = subprocess.run(
        [sys.executable, "-m", "cosmos_emulator", "--version"], stdout=subprocess.PIPE, timeout=60, check=True
    ).stdout.decode()
    assert out.startswith("cosmos-emulator ")
    if cosmos_emulator.__version__ != "0+unknown":
        assert out.split()[1] == cosmos_emulator.__version__


def test_an_emulator_started_from_another_thread_runs_until_stopped(clean_env):
    import subprocess
    import threading

    started = []
    worker = threading.Thread(target=lambda: started.append(cosmos_emulator.start()))
    worker.start()
    worker.join(timeout=120)
    emulator = started[0]
    try:
        # The thread that started it has ended; the emulator goes on (on
        # Linux the parent-death signal would follow that thread, so it is
        # not set for a start outside the main thread).
        # A death signal tied to the ended thread arrives within milliseconds;
        # three seconds without an exit is a pass (a slow machine can only
        # make this pass wrongly, never fail wrongly).
        with pytest.raises(subprocess.TimeoutExpired):
            emulator._process.wait(timeout=3)
        assert emulator.advance(1) > 0
    finally:
        emulator.stop()
    assert emulator.returncode == STOPPED_CODE
