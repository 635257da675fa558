"""The emulator's control API (``/_emulator/...``), one method per route.

:class:`Control` talks to any running emulator (one this package started,
a container, a binary started by hand); :class:`~cosmos_emulator.Emulator`
is a ``Control`` of the process it started. Every route of the emulator's
route table (``ROUTES`` in ``emulator/src/control/mod.rs``, described in
the guide's "The control API" page) has its method here: a test of the
emulator's repository fails when one is missing. Standard library only.
"""

from __future__ import annotations

import base64
import email.utils
import hashlib
import hmac
import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from datetime import timedelta
from typing import Any, Dict, List, Mapping, Optional, Union

from ._errors import ControlError, EmulatorError

__all__ = ["Control", "WELL_KNOWN_KEY"]

#: The key the emulator accepts unless started with another one (the same
#: well-known key as Microsoft's emulators).
WELL_KNOWN_KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

_API_VERSION = "2020-07-15"


def _control_headers(verb: str, key: str) -> Dict[str, str]:
    """Master-key headers as for the account read: verb, resource type "" and
    resource link "", which is how the emulator signs its control routes."""
    date = email.utils.formatdate(usegmt=True)
    payload = f"{verb.lower()}\n\n\n{date.lower()}\n\n"
    signature = base64.b64encode(
        hmac.new(base64.b64decode(key), payload.encode("utf-8"), hashlib.sha256).digest()
    ).decode()
    return {
        "authorization": urllib.parse.quote(f"type=master&ver=1.0&sig={signature}", safe=""),
        "x-ms-date": date,
        "x-ms-version": _API_VERSION,
    }


def _segment(name: str, what: str) -> str:
    """A name in a route's path (a snapshot, a fault rule, a region): the
    emulator validates it; quoting keeps a bad one from turning into
    another path."""
    if not isinstance(name, str):
        raise TypeError(f"a {what} is a string, not {name!r}")
    return urllib.parse.quote(name, safe="")


def _without_none(**fields: Any) -> Dict[str, Any]:
    return {name: value for name, value in fields.items() if value is not None}


class Control:
    """The control API of the emulator at ``endpoint`` (``http://localhost:8081/``),
    signed with ``key``; with TLS, ``certificate`` is the PEM file to trust.

    A refused request raises :class:`ControlError` (the status and the
    emulator's ``{"code", "message"}``); an unreachable emulator
    :class:`EmulatorError`.
    """

    endpoint: str
    key: str

    def __init__(
        self,
        endpoint: str,
        key: str = WELL_KNOWN_KEY,
        certificate: Optional[str] = None,
    ) -> None:
        self.endpoint = endpoint.rstrip("/") + "/"
        self.key = key
        self._ssl_context: Optional[ssl.SSLContext] = (
            ssl.create_default_context(cafile=certificate) if certificate else None
        )

    # -- the requests ----------------------------------------------------------

    def _unreachable(self, method: str, url: str, reason: Any) -> EmulatorError:
        """The error of a request that got no answer."""
        return EmulatorError(f"{method} {url}: {reason}")

    def _request(self, method: str, path: str, body: Optional[Mapping[str, Any]], timeout: float = 60.0) -> Any:
        url = self.endpoint + path
        headers = _control_headers(method, self.key)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["content-type"] = "application/json"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, context=self._ssl_context, timeout=timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                parsed = json.loads(raw)
                code, message = str(parsed.get("code", "")), str(parsed.get("message", ""))
            except (ValueError, AttributeError):
                code, message = "", raw.decode("utf-8", "replace")
            raise ControlError(method, "/" + path, error.code, code, message) from None
        except (urllib.error.URLError, OSError) as error:
            raise self._unreachable(method, url, getattr(error, "reason", error)) from None
        return json.loads(raw) if raw else None

    # -- the test clock (manual clock only) ------------------------------------

    def now(self) -> int:
        """The test clock, in epoch seconds (manual clock only)."""
        return int(self._request("GET", "_emulator/clock", None)["now"])

    def advance(self, seconds: Union[int, float, timedelta]) -> int:
        """Moves the test clock forward by seconds, a fraction to the
        millisecond included (``1.5``, or a timedelta), and returns the new
        time in whole epoch seconds (``_ts`` stays whole, as the service's).
        Everything that depends on time (TTL, the change feed's retention,
        fault windows) sees the new time at once; :meth:`purge` waits until
        expired items are gone. The clock never goes back, but :meth:`reset`
        with ``clock`` can set an earlier time."""
        return int(self._request("POST", "_emulator/clock", {"advance": _seconds(seconds)})["now"])

    def set_clock(self, epoch_seconds: Union[int, float]) -> int:
        """Sets the test clock to this epoch second, at or after its current
        time; returns it."""
        return int(self._request("POST", "_emulator/clock", {"set": _whole_seconds(epoch_seconds)})["now"])

    # -- what is stored --------------------------------------------------------

    def stats(self) -> Dict[str, Any]:
        """``{"now", "clock": "manual"|"system", "containers": [{"database",
        "container", "storedItems"}]}``: the items stored, expired ones not
        yet purged included."""
        return self._request("GET", "_emulator/stats", None)

    def lifetimes(
        self,
        database: str,
        container: str,
        continuation: Optional[str] = None,
        max_items: Optional[int] = None,
        order: Optional[str] = None,
    ) -> Dict[str, Any]:
        """A page of a container's stored items with their lifetimes
        explained (the rule, the TTL in force, when each expires); ``order``
        is ``"key"`` (the default) or ``"expiry"``; pass the answer's
        ``continuation`` back for the next page (``None`` on the last)."""
        body = _without_none(
            database=database, container=container, continuation=continuation, maxItems=max_items, order=order
        )
        return self._request("POST", "_emulator/lifetimes", body)

    # -- maintenance -----------------------------------------------------------

    def purge(self) -> int:
        """Purges every item whose TTL has run out at the emulator's time and
        returns how many; after it, their deletes are in the change feed."""
        return int(self._request("POST", "_emulator/purge", {})["purged"])

    def split(self, database: str, container: str, range_id: str) -> List[Dict[str, Any]]:
        """Splits the partition key range ``range_id`` of a container in two;
        returns the children as ``pkranges`` lists them."""
        body = {"database": database, "container": container, "range": str(range_id)}
        return list(self._request("POST", "_emulator/split", body)["PartitionKeyRanges"])

    def compact(self) -> Dict[str, Any]:
        """Writes a snapshot of the data directory now (``--data-dir``
        only): ``{"generation", "snapshotBytes", "logBytesBefore", "millis",
        "lockedMillis"}``."""
        return self._request("POST", "_emulator/compact", None)

    def reset(self, clock: Optional[Union[int, float]] = None) -> Dict[str, Any]:
        """Drops every database (containers, items, change feeds, offers,
        users), every fault rule and every region's condition. The test
        clock stays where it is unless ``clock`` (epoch seconds, manual clock
        only) is given. Named snapshots are kept. Returns ``{"databases":
        <dropped>, "now": <clock>}``."""
        body: Dict[str, Any] = {} if clock is None else {"clock": _whole_seconds(clock)}
        return self._request("POST", "_emulator/reset", body)

    # -- snapshots -------------------------------------------------------------

    def snapshot(self, name: str) -> Dict[str, Any]:
        """Keeps an in-memory copy of the whole account (and the manual
        clock) under ``name`` (1-128 of ``A-Z a-z 0-9 . _ -``), replacing one
        of that name. Returns ``{"name", "databases", "containers", "items", "now"}``."""
        return self._request("PUT", f"_emulator/snapshots/{_segment(name, 'snapshot name')}", {})

    def restore(self, name: str) -> Dict[str, Any]:
        """Makes the account exactly the snapshot ``name`` (clock included
        with the manual clock). ControlError with status 404 if there is none."""
        return self._request("POST", f"_emulator/snapshots/{_segment(name, 'snapshot name')}/restore", {})

    def snapshots(self) -> List[Dict[str, Any]]:
        """The snapshots kept: ``[{"name", "databases", "containers", "items", "now"}]``."""
        return list(self._request("GET", "_emulator/snapshots", None)["snapshots"])

    def delete_snapshot(self, name: str) -> None:
        """Forgets the snapshot ``name`` (ControlError 404 if there is none)."""
        self._request("DELETE", f"_emulator/snapshots/{_segment(name, 'snapshot name')}", None)

    # -- fault rules -----------------------------------------------------------

    def add_fault(self, rule: Mapping[str, Any]) -> Dict[str, Any]:
        """Adds a fault rule (``{"match", "respond", "when", "hits", ...}``);
        returns it as stored, with its ``id`` and ``hitCount``."""
        return self._request("POST", "_emulator/faults", dict(rule))

    def faults(self) -> List[Dict[str, Any]]:
        """Every fault rule in creation order, each with its ``hitCount``."""
        return list(self._request("GET", "_emulator/faults", None)["faults"])

    def fault(self, rule_id: str) -> Dict[str, Any]:
        """The fault rule ``rule_id``, with its ``hitCount``."""
        return self._request("GET", f"_emulator/faults/{_segment(rule_id, 'fault rule id')}", None)

    def delete_fault(self, rule_id: str) -> None:
        """Removes the fault rule ``rule_id``."""
        self._request("DELETE", f"_emulator/faults/{_segment(rule_id, 'fault rule id')}", None)

    def clear_faults(self) -> int:
        """Removes every fault rule; returns how many there were."""
        return int(self._request("DELETE", "_emulator/faults", None)["deleted"])

    # -- regions (--regions) ---------------------------------------------------

    def regions(self) -> List[Dict[str, Any]]:
        """Every region: ``[{"name", "endpoint", "writes", "down", "lagMs", "paused"}]``."""
        return list(self._request("GET", "_emulator/regions", None)["regions"])

    def take_down(self, region: str, mode: Optional[str] = None, for_ms: Optional[int] = None) -> List[Dict[str, Any]]:
        """Takes ``region`` down: ``mode`` ``"refuse"`` (the default),
        ``"reset"``, ``"hang"``, ``"503"`` or ``"403-1008"``, for ``for_ms``
        milliseconds of the emulator's clock (until :meth:`bring_up` if
        None). Returns the regions."""
        body = _without_none(mode=mode, forMs=for_ms)
        return list(self._request("POST", f"_emulator/regions/{_segment(region, 'region')}/down", body)["regions"])

    def bring_up(self, region: str) -> List[Dict[str, Any]]:
        """Brings ``region`` back; returns the regions."""
        return list(self._request("POST", f"_emulator/regions/{_segment(region, 'region')}/up", {})["regions"])

    def set_replication(
        self, region: str, lag_ms: Optional[int] = None, paused: Optional[bool] = None
    ) -> List[Dict[str, Any]]:
        """Makes ``region``'s replica apply writes ``lag_ms`` later on the
        emulator's clock, or pauses (``paused=True``) and resumes it."""
        body = _without_none(lagMs=lag_ms, paused=paused)
        name = _segment(region, "region")
        return list(self._request("POST", f"_emulator/regions/{name}/replication", body)["regions"])

    def fail_over(self, write_region: str) -> List[Dict[str, Any]]:
        """Makes ``write_region`` the region that takes writes; returns the regions."""
        return list(self._request("POST", "_emulator/failover", {"writeRegion": write_region})["regions"])


def _seconds(value: Union[int, float, timedelta]) -> Union[int, float]:
    """Seconds to the millisecond: whole ones as an int, else a float."""
    if isinstance(value, timedelta):
        # Whole milliseconds, exactly (total_seconds() is a float).
        millis, rest = divmod(value // timedelta(microseconds=1), 1000)
        if rest:
            raise ValueError(f"the test clock moves by whole milliseconds at the finest, not {value!r}")
        return millis // 1000 if millis % 1000 == 0 else millis / 1000
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected seconds as a number, not {value!r}")
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        if abs(value * 1000 - round(value * 1000)) > 1e-6:
            raise ValueError(f"the test clock moves by whole milliseconds at the finest, not {value!r}")
    return value


def _whole_seconds(value: Union[int, float, timedelta]) -> int:
    if isinstance(value, timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected seconds as a number, not {value!r}")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"the test clock moves in whole seconds, not {value!r}")
        value = int(value)
    return value
