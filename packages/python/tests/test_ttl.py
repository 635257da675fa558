"""TTL through the test clock, with the plugin's fixtures: the session's
emulator (manual clock) and a fresh database per test."""

from __future__ import annotations

import pytest
from azure.cosmos import PartitionKey, exceptions


def ids(container):
    return sorted(item["id"] for item in container.query_items("SELECT c.id FROM c", enable_cross_partition_query=True))


def test_an_item_with_ttl_10_is_gone_after_10_seconds(cosmos_emulator, cosmos_database):
    container = cosmos_database.create_container("items", PartitionKey("/pk"), default_ttl=-1)
    container.create_item({"id": "short", "pk": "a", "ttl": 10})
    container.create_item({"id": "forever", "pk": "a"})

    cosmos_emulator.advance(9)
    assert container.read_item("short", "a")["ttl"] == 10
    assert ids(container) == ["forever", "short"]

    cosmos_emulator.advance(1)
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        container.read_item("short", "a")
    assert ids(container) == ["forever"]
    cosmos_emulator.purge()  # the delete is in the store now, not only hidden
    assert ids(container) == ["forever"]
    assert container.read_item("forever", "a")["id"] == "forever"


def test_a_containers_default_ttl(cosmos_emulator, cosmos_database):
    container = cosmos_database.create_container("items", PartitionKey("/pk"), default_ttl=5)
    container.create_item({"id": "1", "pk": "a"})
    container.create_item({"id": "2", "pk": "b", "ttl": -1})  # never expires

    cosmos_emulator.advance(4)
    assert ids(container) == ["1", "2"]
    cosmos_emulator.advance(1)
    assert ids(container) == ["2"]
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        container.read_item("1", "a")


def test_an_update_starts_the_ttl_again(cosmos_emulator, cosmos_database):
    container = cosmos_database.create_container("items", PartitionKey("/pk"), default_ttl=10)
    container.create_item({"id": "1", "pk": "a", "v": 1})
    cosmos_emulator.advance(8)
    container.upsert_item({"id": "1", "pk": "a", "v": 2})
    cosmos_emulator.advance(8)
    assert container.read_item("1", "a")["v"] == 2
    cosmos_emulator.advance(2)
    assert ids(container) == []
