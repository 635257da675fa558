"""Start the cosmos-emulator binary as a child process; its control API is
the :class:`~cosmos_emulator.Control` it inherits (``_control.py``).

Standard library only: the official SDK (azure-cosmos) is imported by
Emulator.client() alone, when it is called.
"""

from __future__ import annotations

import collections
import os
import shutil
import signal
import ssl
import subprocess
import tempfile
import threading
import time
from typing import Any, Deque, Dict, List, Optional, Sequence, Union

from ._binary import BINARY_ENV, find_binary, supports_parent_pid
from ._control import WELL_KNOWN_KEY, Control
from ._errors import ControlError, EmulatorError
from ._lifetime import death_signal_preexec, install_hooks, track, untrack

__all__ = [
    "BINARY_ENV",
    "Control",
    "ControlError",
    "Emulator",
    "EmulatorError",
    "WELL_KNOWN_KEY",
    "find_binary",
    "start",
]

_LISTENING = "listening on "

# The binary reads these when a flag is absent (the conventions of container
# images, and its own COSMOS_EMULATOR_* for every flag). The arguments of
# start() are the whole configuration here, so they are not passed on:
# PROTOCOL=https in a developer's shell must not turn TLS on, nor
# COSMOS_EMULATOR_DEFAULT_DATA_DIR keep the data.
_CONTAINER_VARIABLES = (
    "PORT",
    "PROTOCOL",
    "KEY_FILE",
    "DATA_PATH",
    "LOG_LEVEL",
    "ENABLE_EXPLORER",
    "ENABLE_TELEMETRY",
)
_CONTAINER_PREFIXES = ("AZURE_COSMOS_EMULATOR_", "COSMOS_EMULATOR_")


# --- the emulator --------------------------------------------------------------


class Emulator(Control):
    """One running cosmos-emulator process. Made by :func:`start`. Its
    control API (clock, purge, reset, snapshots, fault rules, regions...)
    is :class:`~cosmos_emulator.Control`'s.

    ``endpoint`` (``http://localhost:PORT/``, https with TLS), ``key`` and
    ``certificate`` (the PEM file to trust with TLS, else None) are what a
    client needs; :meth:`client` makes an ``azure.cosmos.CosmosClient`` with
    them. A context manager: ``with start() as emulator: ...`` stops it at the
    end.
    """

    endpoint: str
    key: str
    certificate: Optional[str]
    clock: str
    tls: bool

    def __init__(
        self,
        clock: str = "manual",
        tls: bool = False,
        data_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
        ranges: Optional[int] = None,
        key: Optional[str] = None,
        *,
        port: int = 0,
        host: str = "localhost",
        binary: Optional[Union[str, "os.PathLike[str]"]] = None,
        args: Sequence[str] = (),
        timeout: float = 30.0,
    ) -> None:
        if clock not in ("manual", "system"):
            raise ValueError(f"clock must be 'manual' or 'system', not {clock!r}")
        if ranges is not None and (not isinstance(ranges, int) or isinstance(ranges, bool)):
            raise TypeError(f"ranges must be an int (partition key ranges per container), not {ranges!r}")
        if isinstance(args, (str, bytes)):
            raise TypeError("args must be a sequence of arguments, not one string")
        self.clock = clock
        self.tls = bool(tls)
        self.key = key if key is not None else WELL_KNOWN_KEY
        self.data_dir = os.fspath(data_dir) if data_dir is not None else None
        self._stopped = False
        self._owner = os.getpid()
        self._stop_lock = threading.RLock()  # re-entered by the SIGTERM handler
        self._stdout_lines: Deque[str] = collections.deque(maxlen=50)
        self._first_line: Optional[str] = None
        self._first_line_seen = threading.Event()
        self._ssl_context: Optional[ssl.SSLContext] = None

        self.binary = find_binary(binary)
        self._workdir = tempfile.mkdtemp(prefix="cosmos-emulator-")
        self.certificate = os.path.join(self._workdir, "emulator.pem") if self.tls else None
        self._stderr_path = os.path.join(self._workdir, "stderr.log")

        argv = [self.binary, "--host", host, "--port", str(int(port)), "--clock", clock]
        if key is not None:
            argv += ["--key", key]
        if self.tls:
            argv += ["--tls", "--cert-out", self.certificate]  # type: ignore[list-item]
        if self.data_dir is not None:
            argv += ["--data-dir", self.data_dir]
        if ranges is not None:
            argv += ["--ranges-per-container", str(ranges)]
        on_main_thread = threading.current_thread() is threading.main_thread()
        if on_main_thread and supports_parent_pid(self.binary):
            argv += ["--parent-pid", str(os.getpid())]
        argv += [os.fspath(a) for a in args]
        self.args: List[str] = argv

        env = {
            name: value
            for name, value in os.environ.items()
            if name not in _CONTAINER_VARIABLES and not name.startswith(_CONTAINER_PREFIXES)
        }
        install_hooks()
        self._stderr = open(self._stderr_path, "w+b")  # noqa: SIM115 - closed in stop()
        try:
            self._process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,  # closed when this process dies, whatever kills it
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=env,
                close_fds=True,
                # Its own session: a Ctrl-C in the terminal reaches pytest (or
                # the program), which stops the emulator after its teardown,
                # instead of stopping the emulator under the teardown's feet.
                start_new_session=os.name == "posix",
                preexec_fn=death_signal_preexec(),  # noqa: PLW1509 - async-signal-safe enough: one prctl
            )
        except OSError as error:
            self._stderr.close()
            shutil.rmtree(self._workdir, ignore_errors=True)
            raise EmulatorError(f"cannot run {self.binary!r}: {error}") from error
        track(self)
        self._reader = threading.Thread(
            target=self._read_stdout, name=f"cosmos-emulator-{self._process.pid}-stdout", daemon=True
        )
        self._reader.start()
        try:
            self.endpoint = self._wait_until_ready(host, int(port), timeout)
        except BaseException:
            self.stop(timeout=5.0)
            raise

    # -- start-up ------------------------------------------------------------

    def _read_stdout(self) -> None:
        """Reads every stdout line for as long as the process runs: the first
        one is the endpoint; the rest are drained so that a full pipe never
        blocks the emulator."""
        stream = self._process.stdout
        assert stream is not None
        try:
            for raw in stream:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                self._stdout_lines.append(line)
                if self._first_line is None:
                    self._first_line = line
                    self._first_line_seen.set()
        except (OSError, ValueError):
            pass
        finally:
            self._first_line_seen.set()

    def _exited_error(self, what: str, host: str, port: int) -> EmulatorError:
        code = self._process.returncode
        tail = self._stderr_tail()
        reason = ""
        lowered = tail.lower()
        # The OS's words: glibc and macOS say "Address already in use", musl
        # "Address in use", Windows "Only one usage of each socket address".
        if any(
            words in lowered
            for words in ("address already in use", "address in use", "addrinuse", "only one usage of each socket address")
        ):
            reason = f" (port {port} on {host} is already in use)"
        elif "address not available" in lowered or "cannot assign requested address" in lowered:
            reason = f" (cannot listen on host {host!r})"
        elif code == 2 and ("error:" in lowered or "usage:" in lowered):
            reason = " (it refused its arguments)"
        elif code is not None and code < 0:
            try:
                reason = f" (killed by {signal.Signals(-code).name})"
            except ValueError:
                reason = f" (killed by signal {-code})"
        return EmulatorError(
            f"cosmos-emulator {what}: exited with code {code}{reason}\n  command: "
            + subprocess.list2cmdline(self.args),
            returncode=code,
            stderr=tail,
        )

    def _wait_until_ready(self, host: str, port: int, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while not self._first_line_seen.wait(0.05):
            if self._process.poll() is not None:
                self._first_line_seen.wait(1.0)
                break
            if time.monotonic() > deadline:
                raise EmulatorError(
                    f"cosmos-emulator printed no '{_LISTENING}<url>' line within {timeout:g} s\n  command: "
                    + subprocess.list2cmdline(self.args),
                    stderr=self._stderr_tail(),
                )
        line = self._first_line
        if line is None:
            try:
                self._process.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            raise self._exited_error("did not start", host, port)
        if not line.startswith(_LISTENING):
            raise EmulatorError(
                f"cosmos-emulator printed {line!r} where '{_LISTENING}<url>' was expected",
                stderr=self._stderr_tail(),
            )
        endpoint = line[len(_LISTENING) :].strip().rstrip("/") + "/"
        expected = "https://" if self.tls else "http://"
        if not endpoint.startswith(expected):
            raise EmulatorError(f"cosmos-emulator listens on {endpoint}, expected an {expected} endpoint")
        if self.tls and not (self.certificate and os.path.getsize(self.certificate) > 0):
            raise EmulatorError(f"cosmos-emulator wrote no certificate to {self.certificate}")
        self.endpoint = endpoint
        self._ssl_context = ssl.create_default_context(cafile=self.certificate) if self.tls else None
        # The line is printed once the socket is bound; the account read
        # proves that requests are served and that the key is the one given.
        last: Optional[BaseException] = None
        while True:
            if self._process.poll() is not None:
                raise self._exited_error("stopped while starting", host, port)
            try:
                self._request("GET", "", None, timeout=max(0.5, min(10.0, deadline - time.monotonic())))
                return endpoint
            except ControlError as error:
                if error.status in (401, 403):
                    raise
                last = error
            except EmulatorError as error:
                last = error
            if time.monotonic() > deadline:
                raise EmulatorError(
                    f"cosmos-emulator at {endpoint} did not answer within {timeout:g} s: {last}",
                    stderr=self._stderr_tail(),
                )
            time.sleep(0.05)

    def _stderr_tail(self, limit: int = 4000) -> str:
        try:
            with open(self._stderr_path, "rb") as log:
                log.seek(0, os.SEEK_END)
                size = log.tell()
                log.seek(max(0, size - limit))
                return log.read().decode("utf-8", "replace")
        except OSError:
            return ""

    # -- the process ---------------------------------------------------------

    @property
    def pid(self) -> int:
        """The emulator process's id."""
        return self._process.pid

    @property
    def returncode(self) -> Optional[int]:
        """None while it runs; its exit code once it has stopped."""
        return self._process.poll()

    @property
    def running(self) -> bool:
        return self._process.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        """Stops the emulator: SIGTERM (a clean stop, data flushed), then
        SIGKILL after ``timeout`` seconds. Calling it again does nothing."""
        with self._stop_lock:
            if self._stopped:
                return
            self._stopped = True
        process = self._process
        if process.poll() is None:
            try:
                process.terminate()
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            except OSError:
                pass
        # The reader sees the end of stdout once the process has exited.
        reader = getattr(self, "_reader", None)
        if reader is not None and reader is not threading.current_thread():
            reader.join(timeout=5.0)
        for stream in (process.stdin, process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        self._stderr.close()
        untrack(self)
        shutil.rmtree(self._workdir, ignore_errors=True)

    def __enter__(self) -> "Emulator":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else f"exited {self.returncode}"
        endpoint = getattr(self, "endpoint", "?")
        return f"<cosmos_emulator.Emulator {endpoint} pid={self.pid} clock={self.clock} {state}>"

    # -- the control API -----------------------------------------------------

    def _unreachable(self, method: str, url: str, reason: Any) -> EmulatorError:
        exited = self._process.poll()
        if exited is not None:
            return EmulatorError(
                f"{method} {url}: the emulator has exited (code {exited})",
                returncode=exited,
                stderr=self._stderr_tail(),
            )
        return super()._unreachable(method, url, reason)

    # -- the official SDK ----------------------------------------------------

    def client_options(self) -> Dict[str, Any]:
        """The ``CosmosClient`` keywords this emulator needs: with TLS, verify
        the server against exactly :attr:`certificate`."""
        if not self.tls:
            return {}
        try:
            from azure.cosmos import SSLConfiguration  # type: ignore[import-not-found]
        except ImportError:  # older releases keep it in documents
            from azure.cosmos.documents import SSLConfiguration  # type: ignore[import-not-found]
        # azure-cosmos turns verification off for localhost and 127.0.0.1
        # unless an ssl_config is given (connection_verify alone is ignored
        # there); with ssl_config, connection_verify is the CA file it uses.
        ssl_config = SSLConfiguration()
        ssl_config.SSLCaCerts = self.certificate
        return {"connection_verify": self.certificate, "ssl_config": ssl_config}

    def client(self, **kwargs: Any) -> Any:
        """An ``azure.cosmos.CosmosClient`` for this emulator (endpoint, key
        and, with TLS, the certificate); ``kwargs`` go to CosmosClient and win.
        Needs azure-cosmos: ``pip install azure-cosmos``."""
        try:
            from azure.cosmos import CosmosClient  # type: ignore[import-not-found]
        except ImportError as error:
            raise ImportError(
                "Emulator.client() needs the official SDK, azure-cosmos, which is not installed: "
                "pip install azure-cosmos (or pip install 'cosmos-emulator[client]')"
            ) from error
        options: Dict[str, Any] = {"url": self.endpoint, "credential": self.key}
        options.update(self.client_options())
        options.update(kwargs)
        return CosmosClient(**options)


def start(
    clock: str = "manual",
    tls: bool = False,
    data_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
    ranges: Optional[int] = None,
    key: Optional[str] = None,
    *,
    port: int = 0,
    host: str = "localhost",
    binary: Optional[Union[str, "os.PathLike[str]"]] = None,
    args: Sequence[str] = (),
    timeout: float = 30.0,
) -> Emulator:
    """Starts cosmos-emulator and returns once it serves requests.

    - ``clock``: ``"manual"`` (the default: time stands still until
      :meth:`Emulator.advance`) or ``"system"`` (the wall clock).
    - ``tls``: serve HTTPS with a certificate made at start, written to
      :attr:`Emulator.certificate` for clients to trust.
    - ``data_dir``: keep the data in this directory across restarts
      (default: in memory only).
    - ``ranges``: partition key ranges per new container (1-1000).
    - ``key``: the base64 master key (default: the well-known emulator key).
    - ``port`` (0: a free one), ``host``, ``binary`` (see :func:`find_binary`),
      ``args`` (more command-line flags), ``timeout`` (seconds to wait).

    Raises EmulatorError saying why it could not start, with the end of the
    emulator's stderr.
    """
    return Emulator(
        clock,
        tls,
        data_dir,
        ranges,
        key,
        port=port,
        host=host,
        binary=binary,
        args=args,
        timeout=timeout,
    )
