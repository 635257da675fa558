"""Start cosmos-emulator as a child process and drive its control API (the
Python package's client, ``cosmos_emulator.Control``, from this tree:
packages/python/src/cosmos_emulator/_control.py).

Shared by conftest.py and the tests; standard library only.
"""

from __future__ import annotations

import base64
import email.utils
import hashlib
import hmac
import os
import selectors
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Optional, Sequence

KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
REPO = Path(__file__).resolve().parents[2]

# The package's own client, from this tree (not a release's): standard
# library only, so its source directory is enough.
sys.path.insert(0, str(REPO / "packages" / "python" / "src"))
from cosmos_emulator import Control  # noqa: E402
# A fixed start keeps every run identical; it is far from the wall clock on
# purpose: the manual clock must not leak into anything else (certificates).
CLOCK_START = 1_700_000_000
STARTUP_TIMEOUT = 30.0


def emulator_binary() -> str:
    return os.environ.get("COSMOS_EMULATOR_BIN", str(REPO / "target" / "debug" / "cosmos-emulator"))


class Emulator:
    """One emulator process, HTTP or HTTPS, with a manual clock."""

    def __init__(self, tls: bool, workdir: Path, extra_args: Sequence[str] = ()):
        self.tls = tls
        self.cert_path: Optional[Path] = workdir / "cert.pem" if tls else None
        self._stderr = open(workdir / "stderr.log", "w+b")  # noqa: SIM115 - closed in stop()
        args = [emulator_binary(), "--port", "0", "--clock", "manual", "--clock-start", str(CLOCK_START)]
        if tls:
            args += ["--tls", "--cert-out", str(self.cert_path)]
        args += list(extra_args)
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self._stderr)
        self.endpoint = self._wait_for_listening_line()
        scheme = "https://" if tls else "http://"
        if not self.endpoint.startswith(scheme):
            self.stop()
            raise RuntimeError(f"expected an {scheme} endpoint, the emulator printed {self.endpoint!r}")
        if tls and not (self.cert_path.exists() and self.cert_path.stat().st_size > 0):
            self.stop()
            raise RuntimeError(f"--cert-out {self.cert_path} did not write a certificate")

    def _wait_for_listening_line(self) -> str:
        assert self.proc.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + STARTUP_TIMEOUT
        buf = b""
        while b"\n" not in buf:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not sel.select(remaining):
                self.stop()
                raise RuntimeError(f"no 'listening on' line within {STARTUP_TIMEOUT}s{self._stderr_tail()}")
            chunk = os.read(self.proc.stdout.fileno(), 4096)
            if not chunk:
                self.proc.wait(timeout=5)
                raise RuntimeError(
                    f"emulator exited with {self.proc.returncode} before listening: "
                    f"{' '.join(self.proc.args)}{self._stderr_tail()}"
                )
            buf += chunk
        line = buf.split(b"\n", 1)[0].decode().strip()
        prefix = "listening on "
        if not line.startswith(prefix):
            self.stop()
            raise RuntimeError(f"unexpected first stdout line {line!r}")
        return line[len(prefix):].rstrip("/") + "/"

    def _stderr_tail(self) -> str:
        self._stderr.flush()
        self._stderr.seek(0)
        tail = self._stderr.read()[-2000:].decode(errors="replace")
        return f"\n--- emulator stderr ---\n{tail}" if tail else ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        self._stderr.close()

    def kill(self) -> None:
        """SIGKILL, as a crash: no clean stop."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.stop()

    # --- client side helpers -------------------------------------------------

    def ssl_context(self) -> Optional[ssl.SSLContext]:
        """A context that trusts exactly the emulator's certificate (verification on)."""
        if not self.tls:
            return None
        return ssl.create_default_context(cafile=str(self.cert_path))

    def client_kwargs(self) -> dict:
        """CosmosClient keywords that make the SDK verify against the emulator's certificate.

        azure-cosmos (4.17) turns verification OFF for the hosts localhost and
        127.0.0.1 unless an ssl_config is given (_synchronized_request.py,
        is_ssl_enabled); connection_verify alone is ignored there. With
        ssl_config, connection_verify becomes its SSLCaCerts and is used.
        """
        if not self.tls:
            return {}
        from azure.cosmos import SSLConfiguration

        return {"connection_verify": str(self.cert_path), "ssl_config": SSLConfiguration()}

    @property
    def control(self) -> Control:
        """The control API: clock, purge, split, fault rules, regions... (a
        refusal raises ``cosmos_emulator.ControlError`` with its status)."""
        return Control(self.endpoint, KEY, str(self.cert_path) if self.tls else None)

    @property
    def clock(self) -> Control:
        return self.control


def master_key_headers(verb: str, resource_type: str, resource_link: str, key: str = KEY) -> dict:
    date = email.utils.formatdate(usegmt=True)
    payload = f"{verb.lower()}\n{resource_type.lower()}\n{resource_link}\n{date.lower()}\n\n"
    sig = base64.b64encode(
        hmac.new(base64.b64decode(key), payload.encode("utf-8"), hashlib.sha256).digest()
    ).decode()
    return {
        "authorization": urllib.parse.quote(f"type=master&ver=1.0&sig={sig}", safe=""),
        "x-ms-date": date,
        "x-ms-version": "2020-07-15",
    }


def new_workdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="cosmos-sdk-tests-"))
