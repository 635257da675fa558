"""The pytest plugin of cosmos-emulator, on as soon as the package is installed
(its ``pytest11`` entry point). It starts nothing until a test asks for one
of its fixtures:

- ``cosmos_emulator`` (session): a running :class:`cosmos_emulator.Emulator`,
  with the manual test clock unless configured otherwise; stopped at the end
  of the session.
- ``cosmos_client`` (session): an ``azure.cosmos.CosmosClient`` for it.
- ``cosmos_database`` (function): a fresh database (an ``azure.cosmos``
  ``DatabaseProxy`` with a unique name) for each test, deleted after it,
  whether the test passed or failed.

Options: ``--cosmos-emulator-clock manual|system`` and ``--cosmos-emulator-tls``;
in an ini file: ``cosmos_emulator_clock`` and ``cosmos_emulator_tls``. The
command line wins.

The emulator never outlives the session: the fixture stops it at the end
(and on Ctrl-C, which pytest turns into a normal teardown), a SIGTERM to
pytest stops it before pytest dies, and if pytest is killed outright the
emulator stops by itself (on Linux the kernel signals it when its parent
dies; the binary also watches its parent process).
"""

from __future__ import annotations

import re
import uuid
from typing import Any, Iterator, Tuple

import pytest

from ._emulator import Emulator, start

CLOCKS = ("manual", "system")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cosmos-emulator", "cosmos-emulator (local Azure Cosmos DB)")
    group.addoption(
        "--cosmos-emulator-clock",
        dest="cosmos_emulator_clock",
        choices=CLOCKS,
        default=None,
        help="the clock of the emulator the cosmos_emulator fixture starts: manual (the default; "
        "time moves only with emulator.advance()) or system (the wall clock). "
        "Overrides the ini setting cosmos_emulator_clock.",
    )
    group.addoption(
        "--cosmos-emulator-tls",
        dest="cosmos_emulator_tls",
        action="store_true",
        default=None,
        help="serve HTTPS (clients trust emulator.certificate). Overrides the ini setting cosmos_emulator_tls.",
    )
    parser.addini(
        "cosmos_emulator_clock",
        help="the cosmos_emulator fixture's clock: manual (default) or system",
        default="manual",
    )
    parser.addini(
        "cosmos_emulator_tls",
        help="whether the cosmos_emulator fixture serves HTTPS (default false)",
        type="bool",
        default=False,
    )


def _settings(config: pytest.Config) -> Tuple[str, bool]:
    clock = config.getoption("cosmos_emulator_clock")
    if clock is None:
        clock = str(config.getini("cosmos_emulator_clock") or "manual").strip().lower()
        if clock not in CLOCKS:
            raise pytest.UsageError(
                f"ini setting cosmos_emulator_clock = {clock!r}: expected one of {', '.join(CLOCKS)}"
            )
    tls = config.getoption("cosmos_emulator_tls")
    if tls is None:
        try:
            tls = config.getini("cosmos_emulator_tls")
        except ValueError as error:
            raise pytest.UsageError(f"ini setting cosmos_emulator_tls: {error}") from None
    return clock, bool(tls)


def pytest_configure(config: pytest.Config) -> None:
    # Checks the settings up front (a typo fails the run at once); starts nothing.
    _settings(config)


@pytest.fixture(scope="session")
def cosmos_emulator(request: pytest.FixtureRequest) -> Iterator[Emulator]:
    """The session's emulator: manual clock (unless --cosmos-emulator-clock
    system), HTTP (unless --cosmos-emulator-tls)."""
    clock, tls = _settings(request.config)
    emulator = start(clock=clock, tls=tls)
    try:
        yield emulator
    finally:
        emulator.stop()


@pytest.fixture(scope="session")
def cosmos_client(cosmos_emulator: Emulator) -> Iterator[Any]:
    """An ``azure.cosmos.CosmosClient`` for the session's emulator (needs azure-cosmos)."""
    client = cosmos_emulator.client()
    yield client
    close = getattr(client, "close", None)
    if close is not None:
        close()


def _database_name(node_name: str) -> str:
    readable = re.sub(r"[^A-Za-z0-9_.-]+", "-", node_name).strip("-")[:60] or "test"
    return f"{readable}-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def cosmos_database(cosmos_client: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A new database (``DatabaseProxy``) named after the test, deleted after it."""
    from azure.cosmos import exceptions  # type: ignore[import-not-found]

    database = cosmos_client.create_database(_database_name(request.node.name))
    try:
        yield database
    finally:
        try:
            cosmos_client.delete_database(database.id)
        except exceptions.CosmosResourceNotFoundError:
            pass  # the test deleted it, or reset or restored the account
