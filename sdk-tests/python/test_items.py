"""Items: create, read, replace, upsert, patch, delete; If-Match."""

import pytest
from azure.core import MatchConditions
from azure.cosmos import PartitionKey
from azure.cosmos.exceptions import (
    CosmosAccessConditionFailedError,
    CosmosHttpResponseError,
    CosmosResourceExistsError,
    CosmosResourceNotFoundError,
)

from conftest import unique


@pytest.fixture
def container(database):
    return database.create_container(unique("coll"), partition_key=PartitionKey(path="/pk"))


def test_create_and_read(container):
    created = container.create_item({"id": "item1", "pk": "a", "n": 1, "tags": ["x", "y"], "nested": {"k": None}})
    for field in ("_rid", "_self", "_etag", "_ts", "_attachments"):
        assert field in created, field
    assert isinstance(created["_ts"], int)
    assert created["_etag"].startswith('"') and created["_etag"].endswith('"')

    read = container.read_item("item1", partition_key="a")
    assert read["n"] == 1 and read["tags"] == ["x", "y"] and read["nested"] == {"k": None}
    assert read["_etag"] == created["_etag"]
    assert read["_ts"] == created["_ts"]


def test_create_duplicate_id_conflicts_only_within_partition(container):
    container.create_item({"id": "same", "pk": "a"})
    with pytest.raises(CosmosResourceExistsError) as e:
        container.create_item({"id": "same", "pk": "a"})
    assert e.value.status_code == 409
    # Same id, other logical partition: a different item.
    container.create_item({"id": "same", "pk": "b", "v": 2})
    assert container.read_item("same", partition_key="b")["v"] == 2


def test_read_missing_and_wrong_partition(container):
    container.create_item({"id": "x", "pk": "a"})
    with pytest.raises(CosmosResourceNotFoundError):
        container.read_item("nope", partition_key="a")
    with pytest.raises(CosmosResourceNotFoundError):
        container.read_item("x", partition_key="b")


def test_replace(container):
    created = container.create_item({"id": "r", "pk": "a", "v": 1})
    replaced = container.replace_item("r", {"id": "r", "pk": "a", "v": 2, "extra": True})
    assert replaced["v"] == 2 and replaced["_etag"] != created["_etag"]
    read = container.read_item("r", partition_key="a")
    assert read["v"] == 2 and read["extra"] is True
    with pytest.raises(CosmosResourceNotFoundError):
        container.replace_item("missing", {"id": "missing", "pk": "a"})


def test_upsert_creates_then_replaces(container):
    first = container.upsert_item({"id": "u", "pk": "a", "v": 1})
    assert container.read_item("u", partition_key="a")["v"] == 1
    second = container.upsert_item({"id": "u", "pk": "a", "v": 2})
    assert second["_etag"] != first["_etag"]
    assert container.read_item("u", partition_key="a")["v"] == 2
    assert len(list(container.read_all_items())) == 1


def test_patch_operations(container):
    container.create_item({"id": "p", "pk": "a", "count": 1, "name": "old", "gone": True, "list": [1, 2]})
    patched = container.patch_item("p", partition_key="a", patch_operations=[
        {"op": "incr", "path": "/count", "value": 5},
        {"op": "set", "path": "/name", "value": "new"},
        {"op": "add", "path": "/added", "value": {"k": "v"}},
        {"op": "remove", "path": "/gone"},
        {"op": "replace", "path": "/list/0", "value": 10},
        {"op": "add", "path": "/list/-", "value": 3},
    ])
    assert patched["count"] == 6
    read = container.read_item("p", partition_key="a")
    assert read["count"] == 6 and read["name"] == "new" and read["added"] == {"k": "v"}
    assert "gone" not in read
    assert read["list"] == [10, 2, 3]


def test_patch_with_filter_predicate(container):
    container.create_item({"id": "f", "pk": "a", "state": "open"})
    with pytest.raises(CosmosAccessConditionFailedError):
        container.patch_item("f", partition_key="a", filter_predicate="FROM c WHERE c.state = 'closed'",
                             patch_operations=[{"op": "set", "path": "/state", "value": "x"}])
    container.patch_item("f", partition_key="a", filter_predicate="FROM c WHERE c.state = 'open'",
                         patch_operations=[{"op": "set", "path": "/state", "value": "closed"}])
    assert container.read_item("f", partition_key="a")["state"] == "closed"


def test_patch_missing_item_and_bad_path(container):
    with pytest.raises(CosmosResourceNotFoundError):
        container.patch_item("none", partition_key="a", patch_operations=[{"op": "set", "path": "/x", "value": 1}])
    container.create_item({"id": "b", "pk": "a"})
    with pytest.raises(CosmosHttpResponseError) as e:
        container.patch_item("b", partition_key="a", patch_operations=[{"op": "replace", "path": "/absent", "value": 1}])
    assert e.value.status_code == 400


def test_delete(container):
    container.create_item({"id": "d", "pk": "a"})
    container.delete_item("d", partition_key="a")
    with pytest.raises(CosmosResourceNotFoundError):
        container.read_item("d", partition_key="a")
    with pytest.raises(CosmosResourceNotFoundError):
        container.delete_item("d", partition_key="a")
    # The id is free again.
    container.create_item({"id": "d", "pk": "a", "again": True})
    assert container.read_item("d", partition_key="a")["again"] is True


def test_if_match_on_replace_upsert_patch_delete(container):
    old_etag = container.create_item({"id": "e", "pk": "a", "v": 0})["_etag"]
    current = container.replace_item("e", {"id": "e", "pk": "a", "v": 1},
                                     etag=old_etag, match_condition=MatchConditions.IfNotModified)["_etag"]
    assert current != old_etag

    stale = dict(id="e", pk="a", v=99)
    with pytest.raises(CosmosAccessConditionFailedError) as e:
        container.replace_item("e", stale, etag=old_etag, match_condition=MatchConditions.IfNotModified)
    assert e.value.status_code == 412
    with pytest.raises(CosmosAccessConditionFailedError):
        container.upsert_item(stale, etag=old_etag, match_condition=MatchConditions.IfNotModified)
    with pytest.raises(CosmosAccessConditionFailedError):
        container.patch_item("e", partition_key="a", patch_operations=[{"op": "set", "path": "/v", "value": 99}],
                             etag=old_etag, match_condition=MatchConditions.IfNotModified)
    with pytest.raises(CosmosAccessConditionFailedError):
        container.delete_item("e", partition_key="a", etag=old_etag, match_condition=MatchConditions.IfNotModified)
    # None of the refused writes changed anything.
    read = container.read_item("e", partition_key="a")
    assert read["v"] == 1 and read["_etag"] == current

    current = container.upsert_item({"id": "e", "pk": "a", "v": 2}, etag=current,
                                    match_condition=MatchConditions.IfNotModified)["_etag"]
    current = container.patch_item("e", partition_key="a", patch_operations=[{"op": "incr", "path": "/v", "value": 1}],
                                   etag=current, match_condition=MatchConditions.IfNotModified)["_etag"]
    assert container.read_item("e", partition_key="a")["v"] == 3
    container.delete_item("e", partition_key="a", etag=current, match_condition=MatchConditions.IfNotModified)
    with pytest.raises(CosmosResourceNotFoundError):
        container.read_item("e", partition_key="a")


def test_read_all_items(container):
    for i in range(5):
        container.create_item({"id": f"i{i}", "pk": f"p{i % 2}"})
    assert sorted(i["id"] for i in container.read_all_items(max_item_count=2)) == [f"i{i}" for i in range(5)]
