"""Transactional batch through the official SDK: execute_item_batch, all or nothing."""

import pytest
from azure.cosmos import PartitionKey
from azure.cosmos.exceptions import CosmosBatchOperationError, CosmosHttpResponseError

from conftest import unique


@pytest.fixture
def container(database):
    return database.create_container(unique("coll"), partition_key=PartitionKey(path="/pk"))


def test_every_operation_type_in_one_batch(container):
    for item_id in ("read", "replace", "delete", "patch"):
        container.create_item({"id": item_id, "pk": "a", "n": 1})
    etag = container.read_item("replace", partition_key="a")["_etag"]
    results = container.execute_item_batch(
        [
            ("create", ({"id": "new", "pk": "a", "n": 0},)),
            ("upsert", ({"id": "up", "pk": "a", "n": 5},)),
            ("read", ("read",)),
            ("replace", ("replace", {"id": "replace", "pk": "a", "n": 2}), {"if_match_etag": etag}),
            ("delete", ("delete",)),
            ("patch", ("patch", [{"op": "incr", "path": "/n", "value": 4}]), {"filter_predicate": "FROM c WHERE c.n = 1"}),
        ],
        partition_key="a",
    )
    assert [r["statusCode"] for r in results] == [201, 201, 200, 200, 204, 200]
    assert results[0]["resourceBody"]["id"] == "new"
    assert results[0]["eTag"] == results[0]["resourceBody"]["_etag"]
    assert results[2]["resourceBody"]["n"] == 1
    assert results[5]["resourceBody"]["n"] == 5
    assert container.read_item("replace", partition_key="a")["n"] == 2
    assert container.read_item("new", partition_key="a")["_etag"] == results[0]["eTag"]
    ids = sorted(i["id"] for i in container.query_items("SELECT * FROM c", partition_key="a"))
    assert ids == ["new", "patch", "read", "replace", "up"]


def test_a_failed_operation_rolls_back_the_batch(container):
    container.create_item({"id": "x", "pk": "a", "n": 1})
    with pytest.raises(CosmosBatchOperationError) as e:
        container.execute_item_batch(
            [
                ("create", ({"id": "y", "pk": "a"},)),
                ("replace", ("x", {"id": "x", "pk": "a", "n": 2})),
                ("create", ({"id": "x", "pk": "a"},)),
                ("delete", ("x",)),
            ],
            partition_key="a",
        )
    error = e.value
    assert error.error_index == 2
    assert error.status_code == 409
    assert [r["statusCode"] for r in error.operation_responses] == [424, 424, 409, 424]
    # Nothing of it happened.
    assert [i["id"] for i in container.query_items("SELECT * FROM c", partition_key="a")] == ["x"]
    assert container.read_item("x", partition_key="a")["n"] == 1


def test_a_stale_if_match_and_a_false_condition_fail_with_412(container):
    container.create_item({"id": "x", "pk": "a", "n": 1})
    with pytest.raises(CosmosBatchOperationError) as e:
        container.execute_item_batch(
            [
                ("upsert", ({"id": "y", "pk": "a"},)),
                ("patch", ("x", [{"op": "set", "path": "/n", "value": 3}]), {"filter_predicate": "FROM c WHERE c.n = 7"}),
            ],
            partition_key="a",
        )
    assert e.value.error_index == 1 and e.value.status_code == 412
    assert container.read_item("x", partition_key="a")["n"] == 1
    assert [i["id"] for i in container.query_items("SELECT * FROM c", partition_key="a")] == ["x"]


def test_an_invalid_ttl_rolls_back_and_an_expired_item_is_absent(database, clock):
    container = database.create_container(unique("ttl"), partition_key=PartitionKey(path="/pk"), default_ttl=10)
    with pytest.raises(CosmosBatchOperationError) as e:
        container.execute_item_batch(
            [("create", ({"id": "ok", "pk": "a"},)), ("create", ({"id": "bad", "pk": "a", "ttl": 0},))],
            partition_key="a",
        )
    assert e.value.error_index == 1 and e.value.status_code == 400
    assert list(container.query_items("SELECT * FROM c", partition_key="a")) == []
    container.create_item({"id": "old", "pk": "a", "v": "old"})
    clock.advance(10)
    with pytest.raises(CosmosBatchOperationError) as e:
        container.execute_item_batch([("read", ("old",))], partition_key="a")
    assert e.value.status_code == 404
    results = container.execute_item_batch([("create", ({"id": "old", "pk": "a", "v": "new"},))], partition_key="a")
    assert results[0]["statusCode"] == 201
    assert container.read_item("old", partition_key="a")["v"] == "new"


def test_more_than_100_operations_is_refused_by_the_service(container):
    with pytest.raises(CosmosHttpResponseError) as e:
        container.execute_item_batch(
            [("create", ({"id": f"i{k}", "pk": "a"},)) for k in range(101)],
            partition_key="a",
        )
    assert e.value.status_code == 400
    assert "more operations than what is supported" in e.value.message
    assert list(container.query_items("SELECT * FROM c", partition_key="a")) == []
