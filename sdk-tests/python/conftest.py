"""Fixtures: one emulator process per scheme (http, https), a client, a fresh database per test."""

from __future__ import annotations

import uuid

import pytest
from azure.cosmos import CosmosClient

from emulator import KEY, Emulator, new_workdir


@pytest.fixture(scope="session", params=["http", "https"])
def emulator(request):
    """The emulator binary ($COSMOS_EMULATOR_BIN), started with --port 0 --clock manual;
    the https one also with --tls --cert-out <tmp>/cert.pem. SIGTERM at the end."""
    emu = Emulator(tls=request.param == "https", workdir=new_workdir())
    yield emu
    emu.stop()


@pytest.fixture(scope="session")
def client(emulator):
    # Endpoint discovery stays on (the default): later requests go to the
    # locations the account document advertises.
    return CosmosClient(emulator.endpoint, KEY, **emulator.client_kwargs())


@pytest.fixture
def clock(emulator):
    return emulator.clock


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def database(client):
    db = client.create_database(unique("db"))
    yield db
    client.delete_database(db.id)


def pytest_configure(config):
    config.addinivalue_line("markers", "https_only: run only against the HTTPS emulator")


def pytest_collection_modifyitems(config, items):
    """Tests marked https_only exist only in their [https] variant."""
    keep, drop = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        scheme = callspec.params.get("emulator") if callspec else None
        (drop if item.get_closest_marker("https_only") and scheme != "https" else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
