"""Refusals: invalid ttl values (400) and a wrong key (401)."""

import pytest
from azure.cosmos import CosmosClient, PartitionKey
from azure.cosmos.exceptions import CosmosHttpResponseError, CosmosResourceNotFoundError

from conftest import unique

# 64 random bytes, base64: a well-formed key that is not the emulator's.
WRONG_KEY = "dGhpcyBpcyBub3QgdGhlIGVtdWxhdG9yIGtleSwgaXQgaXMganVzdCBzaXh0eSBmb3VyIGJ5dGVzIGxvbmchIQ=="


@pytest.fixture
def container(database):
    return database.create_container(unique("coll"), partition_key=PartitionKey(path="/pk"), default_ttl=100)


@pytest.mark.parametrize("ttl", [0, -2, 1.5, "10", 2147483648, None])
def test_invalid_item_ttl_on_create_is_400_and_stores_nothing(container, ttl):
    with pytest.raises(CosmosHttpResponseError) as e:
        container.create_item({"id": "bad", "pk": "p", "ttl": ttl})
    assert e.value.status_code == 400
    assert "ttl" in str(e.value.message).lower()
    with pytest.raises(CosmosResourceNotFoundError):
        container.read_item("bad", partition_key="p")


def test_invalid_item_ttl_on_replace_upsert_patch_changes_nothing(container):
    container.create_item({"id": "ok", "pk": "p", "ttl": 50, "v": 1})
    with pytest.raises(CosmosHttpResponseError) as e:
        container.replace_item("ok", {"id": "ok", "pk": "p", "ttl": 0, "v": 2})
    assert e.value.status_code == 400 and "ttl" in e.value.message.lower()
    with pytest.raises(CosmosHttpResponseError) as e:
        container.upsert_item({"id": "ok", "pk": "p", "ttl": -5, "v": 3})
    assert e.value.status_code == 400 and "ttl" in e.value.message.lower()
    with pytest.raises(CosmosHttpResponseError) as e:
        container.patch_item("ok", partition_key="p", patch_operations=[{"op": "set", "path": "/ttl", "value": 0}])
    assert e.value.status_code == 400 and "ttl" in e.value.message.lower()
    read = container.read_item("ok", partition_key="p")
    assert read["ttl"] == 50 and read["v"] == 1


def test_largest_ttl_is_accepted(container):
    assert container.create_item({"id": "max", "pk": "p", "ttl": 2147483647})["ttl"] == 2147483647


@pytest.mark.parametrize("default_ttl", [0, -2])
def test_invalid_container_default_ttl_is_400(database, default_ttl):
    name = unique("coll")
    with pytest.raises(CosmosHttpResponseError) as e:
        database.create_container(name, partition_key=PartitionKey(path="/pk"), default_ttl=default_ttl)
    assert e.value.status_code == 400 and "ttl" in e.value.message.lower()
    assert name not in [c["id"] for c in database.list_containers()]


def test_wrong_key_is_401(emulator, client):
    with pytest.raises(CosmosHttpResponseError) as e:
        bad = CosmosClient(emulator.endpoint, WRONG_KEY, **emulator.client_kwargs())
        list(bad.list_databases())
    assert e.value.status_code == 401
    # The right key still works.
    assert isinstance(list(client.list_databases()), list)
