"""Start cosmos-emulator as a child process and drive its test clock.

Shared by conftest.py and the tests; standard library only.
"""

from __future__ import annotations

import base64
import email.utils
import hashlib
import hmac
import json
import os
import selectors
import signal
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Optional, Sequence

KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
REPO = Path(__file__).resolve().parents[2]
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
    def clock(self) -> "Clock":
        return Clock(self.endpoint, KEY, self.ssl_context())

    def control(self, method: str, route: str, body: Optional[dict] = None) -> tuple:
        """A signed request to /_emulator/{route}: (status, parsed JSON body or None).
        Errors are answers here, not exceptions (a refusal is something to assert)."""
        headers = master_key_headers(method, "", "", KEY)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["content-type"] = "application/json"
        url = self.endpoint.rstrip("/") + "/_emulator/" + route
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, context=self.ssl_context(), timeout=30) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read()
        return status, (json.loads(raw) if raw else None)

    def add_fault(self, rule: dict) -> dict:
        """POST /_emulator/faults: the rule as stored, with its id."""
        status, body = self.control("POST", "faults", rule)
        assert status == 201, (status, body)
        return body

    def faults(self) -> list:
        """GET /_emulator/faults: every rule, with its hitCount."""
        status, body = self.control("GET", "faults")
        assert status == 200, (status, body)
        return body["faults"]

    def clear_faults(self) -> None:
        """DELETE /_emulator/faults: no rule left."""
        status, body = self.control("DELETE", "faults")
        assert status == 200, (status, body)


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


class Clock:
    """The emulator's test clock: GET/POST /_emulator/clock, signed like the account read."""

    def __init__(self, endpoint: str, key: str, context: Optional[ssl.SSLContext]):
        self.url = endpoint.rstrip("/") + "/_emulator/clock"
        self.key = key
        self.context = context

    def _call(self, method: str, body: Optional[dict] = None) -> int:
        headers = master_key_headers(method, "", "", self.key)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["content-type"] = "application/json"
        req = urllib.request.Request(self.url, data=data, method=method, headers=headers)
        with urllib.request.urlopen(req, context=self.context, timeout=10) as resp:
            now = json.loads(resp.read())["now"]
        assert isinstance(now, int), now
        return now

    def now(self) -> int:
        return self._call("GET")

    def advance(self, seconds: int) -> int:
        return self._call("POST", {"advance": seconds})

    def set(self, epoch_seconds: int) -> int:
        return self._call("POST", {"set": epoch_seconds})

    def purge(self) -> int:
        """POST /_emulator/purge: returns once every item due now is purged
        (its TTL delete in the change feed); the number purged."""
        headers = master_key_headers("POST", "", "", self.key)
        headers["content-type"] = "application/json"
        url = self.url.rsplit("/", 1)[0] + "/purge"
        req = urllib.request.Request(url, data=b"{}", method="POST", headers=headers)
        with urllib.request.urlopen(req, context=self.context, timeout=30) as resp:
            return json.loads(resp.read())["purged"]


    def split(self, database: str, container: str, range_id: str) -> list:
        """POST /_emulator/split: splits the range in two; the children as pkranges lists them."""
        headers = master_key_headers("POST", "", "", self.key)
        headers["content-type"] = "application/json"
        url = self.url.rsplit("/", 1)[0] + "/split"
        body = json.dumps({"database": database, "container": container, "range": range_id})
        req = urllib.request.Request(url, data=body.encode(), method="POST", headers=headers)
        with urllib.request.urlopen(req, context=self.context, timeout=30) as resp:
            return json.loads(resp.read())["PartitionKeyRanges"]


def new_workdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="cosmos-sdk-tests-"))
