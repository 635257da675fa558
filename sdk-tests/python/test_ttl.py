"""TTL through the test clock (E1-E3, R4 boundary, R6 extend, R7/R8).

The rules are those of docs/src/reference/ttl-rules.md.
"""

import pytest
from azure.cosmos import PartitionKey
from azure.cosmos.exceptions import CosmosResourceNotFoundError

from conftest import unique


def make_container(database, default_ttl=None):
    kwargs = {} if default_ttl is None else {"default_ttl": default_ttl}
    return database.create_container(unique("coll"), partition_key=PartitionKey(path="/pk"), **kwargs)


def visible(container, item_id, pk="p"):
    try:
        container.read_item(item_id, partition_key=pk)
        return True
    except CosmosResourceNotFoundError:
        return False


def queried_ids(container):
    return sorted(container.query_items(query="SELECT VALUE c.id FROM c", enable_cross_partition_query=True))


def count(container):
    return list(container.query_items(query="SELECT VALUE COUNT(1) FROM c", enable_cross_partition_query=True))[0]


def test_e3_container_default_item_overrides_and_boundary(database, clock):
    """E3.1 (ttl absent: 1000 s), E3.2 (ttl -1: never), E3.3 (ttl 2000: 2000 s), all created at the same _ts."""
    c = make_container(database, default_ttl=1000)
    ts = c.create_item({"id": "e31", "pk": "p"})["_ts"]
    assert c.create_item({"id": "e32", "pk": "p", "ttl": -1})["_ts"] == ts
    assert c.create_item({"id": "e33", "pk": "p", "ttl": 2000})["_ts"] == ts
    assert clock.now() == ts

    clock.set_clock(ts + 999)  # the last second E3.1 is visible
    assert [visible(c, i) for i in ("e31", "e32", "e33")] == [True, True, True]
    assert queried_ids(c) == ["e31", "e32", "e33"] and count(c) == 3

    clock.set_clock(ts + 1000)  # _ts + ttl <= now: gone
    assert [visible(c, i) for i in ("e31", "e32", "e33")] == [False, True, True]
    assert queried_ids(c) == ["e32", "e33"] and count(c) == 2
    assert sorted(i["id"] for i in c.read_all_items()) == ["e32", "e33"]

    clock.set_clock(ts + 1999)
    assert visible(c, "e33")
    clock.set_clock(ts + 2000)
    assert [visible(c, i) for i in ("e31", "e32", "e33")] == [False, True, False]
    assert queried_ids(c) == ["e32"] and count(c) == 1

    clock.advance(10 * 365 * 86400)
    assert visible(c, "e32") and count(c) == 1


def test_e1_ttl_off_nothing_expires(database, clock):
    c = make_container(database)  # defaultTtl absent: item ttl values are ignored (E1.1-E1.3)
    ts = c.create_item({"id": "e11", "pk": "p"})["_ts"]
    c.create_item({"id": "e12", "pk": "p", "ttl": -1})
    c.create_item({"id": "e13", "pk": "p", "ttl": 2000})
    clock.set_clock(ts + 100_000)
    assert queried_ids(c) == ["e11", "e12", "e13"] and count(c) == 3
    assert visible(c, "e13")


def test_e2_default_minus_one(database, clock):
    c = make_container(database, default_ttl=-1)
    ts = c.create_item({"id": "e21", "pk": "p"})["_ts"]
    c.create_item({"id": "e22", "pk": "p", "ttl": -1})
    c.create_item({"id": "e23", "pk": "p", "ttl": 2000})
    clock.set_clock(ts + 1999)
    assert count(c) == 3
    clock.set_clock(ts + 2000)
    assert queried_ids(c) == ["e21", "e22"] and not visible(c, "e23")


def test_expired_item_is_gone_for_every_operation(database, clock):
    c = make_container(database, default_ttl=10)
    ts = c.create_item({"id": "x", "pk": "p", "v": 1})["_ts"]
    clock.set_clock(ts + 10)
    with pytest.raises(CosmosResourceNotFoundError):
        c.read_item("x", partition_key="p")
    with pytest.raises(CosmosResourceNotFoundError):
        c.replace_item("x", {"id": "x", "pk": "p", "v": 2})
    with pytest.raises(CosmosResourceNotFoundError):
        c.patch_item("x", partition_key="p", patch_operations=[{"op": "set", "path": "/v", "value": 2}])
    with pytest.raises(CosmosResourceNotFoundError):
        c.delete_item("x", partition_key="p")
    # The id can be created again (L10) and the new item lives from its own _ts.
    new = c.create_item({"id": "x", "pk": "p", "v": 3})
    assert new["_ts"] == ts + 10
    assert c.read_item("x", partition_key="p")["v"] == 3


def test_write_extends_lifetime(database, clock):
    """R6/L1: a write sets _ts to now and restarts the countdown."""
    c = make_container(database, default_ttl=100)
    ts = c.create_item({"id": "x", "pk": "p", "v": 1})["_ts"]
    clock.set_clock(ts + 60)
    upserted = c.upsert_item({"id": "x", "pk": "p", "v": 2})
    assert upserted["_ts"] == ts + 60
    clock.set_clock(ts + 159)
    assert visible(c, "x")
    clock.set_clock(ts + 160)
    assert not visible(c, "x")


def test_patch_item_ttl(database, clock):
    """L2/L4: the item's ttl changes through patch, like any field."""
    c = make_container(database, default_ttl=100)
    ts = c.create_item({"id": "x", "pk": "p"})["_ts"]
    c.patch_item("x", partition_key="p", patch_operations=[{"op": "set", "path": "/ttl", "value": -1}])
    clock.set_clock(ts + 10_000)
    assert visible(c, "x")


def test_disabling_container_ttl_stops_expiry_but_never_resurrects(database, clock):
    """R8/L5 and L11."""
    c = make_container(database, default_ttl=100)
    ts = c.create_item({"id": "expired", "pk": "p"})["_ts"]
    c.create_item({"id": "own", "pk": "p", "ttl": 500})
    clock.set_clock(ts + 100)
    assert not visible(c, "expired")
    database.replace_container(c, partition_key=PartitionKey(path="/pk"))  # defaultTtl removed
    clock.set_clock(ts + 10_000)
    assert queried_ids(c) == ["own"]  # own ttl ignored while TTL is off; "expired" stays gone
    assert not visible(c, "expired")
