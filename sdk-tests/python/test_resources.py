"""Databases and containers: create, read, list, replace, delete."""

import pytest
from azure.cosmos import PartitionKey
from azure.cosmos.exceptions import CosmosResourceExistsError, CosmosResourceNotFoundError

from conftest import unique


def test_database_create_read_list_delete(client):
    name = unique("db")
    created = client.create_database(name)
    try:
        props = created.read()
        assert props["id"] == name
        for field in ("_rid", "_self", "_etag", "_ts"):
            assert field in props, field
        assert isinstance(props["_ts"], int)

        assert name in [d["id"] for d in client.list_databases()]
        found = list(client.query_databases(
            query="SELECT * FROM r WHERE r.id = @id", parameters=[{"name": "@id", "value": name}]))
        assert [d["id"] for d in found] == [name]

        with pytest.raises(CosmosResourceExistsError):
            client.create_database(name)
    finally:
        client.delete_database(name)

    assert name not in [d["id"] for d in client.list_databases()]
    with pytest.raises(CosmosResourceNotFoundError):
        client.get_database_client(name).read()
    with pytest.raises(CosmosResourceNotFoundError):
        client.delete_database(name)


def test_create_database_if_not_exists_is_idempotent(client):
    name = unique("db")
    first = client.create_database_if_not_exists(name)
    try:
        rid = first.read()["_rid"]
        second = client.create_database_if_not_exists(name)
        assert second.read()["_rid"] == rid
    finally:
        client.delete_database(name)


def test_container_create_read_list_replace_delete(database):
    name = unique("coll")
    container = database.create_container(name, partition_key=PartitionKey(path="/pk"))
    props = container.read()
    assert props["id"] == name
    assert props["partitionKey"]["paths"] == ["/pk"]
    assert "defaultTtl" not in props
    for field in ("_rid", "_self", "_etag", "_ts", "_docs"):
        assert field in props, field

    other = database.create_container(unique("coll"), partition_key=PartitionKey(path="/tenant"))
    assert sorted(c["id"] for c in database.list_containers()) == sorted([name, other.id])

    with pytest.raises(CosmosResourceExistsError):
        database.create_container(name, partition_key=PartitionKey(path="/pk"))

    replaced = database.replace_container(container, partition_key=PartitionKey(path="/pk"), default_ttl=3600)
    assert replaced.read()["defaultTtl"] == 3600
    # A fresh read from the server, not the proxy's cached properties.
    assert database.get_container_client(name).read()["defaultTtl"] == 3600

    database.delete_container(name)
    assert [c["id"] for c in database.list_containers()] == [other.id]
    with pytest.raises(CosmosResourceNotFoundError):
        database.get_container_client(name).read()
    with pytest.raises(CosmosResourceNotFoundError):
        database.delete_container(name)


def test_container_default_ttl_round_trips(database):
    on = database.create_container(unique("coll"), partition_key=PartitionKey(path="/pk"), default_ttl=-1)
    assert on.read()["defaultTtl"] == -1
    timed = database.create_container(unique("coll"), partition_key=PartitionKey(path="/pk"), default_ttl=1000)
    assert timed.read()["defaultTtl"] == 1000
    # Replacing without default_ttl removes it (TTL off again).
    database.replace_container(timed, partition_key=PartitionKey(path="/pk"))
    assert "defaultTtl" not in database.get_container_client(timed.id).read()


def test_items_in_a_deleted_container_are_gone(database):
    container = database.create_container(unique("coll"), partition_key=PartitionKey(path="/pk"))
    container.create_item({"id": "a", "pk": "p"})
    database.delete_container(container.id)
    recreated = database.create_container(container.id, partition_key=PartitionKey(path="/pk"))
    with pytest.raises(CosmosResourceNotFoundError):
        recreated.read_item("a", partition_key="p")
