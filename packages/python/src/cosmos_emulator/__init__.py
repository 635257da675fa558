"""cosmos-emulator: a local Azure Cosmos DB (NoSQL) emulator for tests.

    import cosmos_emulator

    with cosmos_emulator.start() as emulator:      # manual test clock, HTTP
        client = emulator.client()                  # azure.cosmos.CosmosClient
        ...
        emulator.advance(60)                        # a minute passes for TTL

The binary ``cosmos-emulator`` comes with the wheel; this module needs only
the standard library (azure-cosmos only for :meth:`Emulator.client`). With
pytest, the fixtures ``cosmos_emulator`` and ``cosmos_database`` are there
once the package is installed (see :mod:`cosmos_emulator.pytest_plugin`).
:class:`Control` drives the control API of an emulator started elsewhere
(a container, a binary started by hand).
"""

from ._emulator import (
    BINARY_ENV,
    WELL_KNOWN_KEY,
    Control,
    ControlError,
    Emulator,
    EmulatorError,
    find_binary,
    start,
)

try:
    from importlib.metadata import PackageNotFoundError, version

    try:
        __version__ = version("cosmos-emulator")
    except PackageNotFoundError:  # imported from a source tree
        __version__ = "0+unknown"
except ImportError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "BINARY_ENV",
    "Control",
    "ControlError",
    "Emulator",
    "EmulatorError",
    "WELL_KNOWN_KEY",
    "__version__",
    "find_binary",
    "start",
]
