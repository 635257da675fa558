"""Isolation between tests: the cosmos_database fixture, reset(), and
snapshot()/restore() of the whole account with its clock."""

from __future__ import annotations

import pytest
from azure.cosmos import PartitionKey, exceptions

import cosmos_emulator as cosmos_emulator_module
from conftest import unique

# Filled by the first test, read by the second (pytest runs a file in order).
_seen = {}


def database_ids(client):
    return {d["id"] for d in client.list_databases()}


def test_cosmos_database_is_fresh_and_named_after_the_test(cosmos_client, cosmos_database, request):
    assert cosmos_database.id.startswith("test_cosmos_database_is_fresh_and_named_after_the_test-")
    assert list(cosmos_database.list_containers()) == []
    assert cosmos_database.id in database_ids(cosmos_client)
    cosmos_database.create_container("c", PartitionKey("/pk")).create_item({"id": "1", "pk": "a"})
    _seen["first"] = cosmos_database.id


def test_the_previous_tests_database_is_gone(cosmos_client, cosmos_database):
    if "first" not in _seen:
        pytest.skip("runs after test_cosmos_database_is_fresh_and_named_after_the_test")
    assert _seen["first"] not in database_ids(cosmos_client)
    assert cosmos_database.id != _seen["first"]
    assert list(cosmos_database.list_containers()) == []


def test_the_database_is_deleted_when_the_test_fails(pytester):
    pytester.makepyfile(
        test_inner="""
        from azure.cosmos import PartitionKey

        names = []

        def test_fails(cosmos_database):
            cosmos_database.create_container("c", PartitionKey("/pk"))
            names.append(cosmos_database.id)
            assert False, "this test fails on purpose"

        def test_after(cosmos_client):
            assert names, "test_fails ran first"
            assert names[0] not in {d["id"] for d in cosmos_client.list_databases()}
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*this test fails on purpose*"])


def test_reset_drops_every_database_and_keeps_the_clock(cosmos_emulator, cosmos_client, cosmos_database):
    other = cosmos_client.create_database(unique("other"))
    other.create_container("c", PartitionKey("/pk")).create_item({"id": "1", "pk": "a"})
    now = cosmos_emulator.advance(3)

    answer = cosmos_emulator.reset()
    assert answer["databases"] >= 2
    assert answer["now"] == now == cosmos_emulator.now()
    assert database_ids(cosmos_client) == set()
    # The account is usable at once, and the names are free again.
    again = cosmos_client.create_database(other.id)
    again.create_container("c", PartitionKey("/pk"))
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        again.get_container_client("c").read_item("1", "a")
    cosmos_client.delete_database(other.id)
    # The fixture's teardown finds its database gone, and says nothing.


def test_reset_can_set_the_clock(cosmos_emulator):
    answer = cosmos_emulator.reset(clock=1_600_000_000)
    assert answer["now"] == 1_600_000_000 == cosmos_emulator.now()
    answer = cosmos_emulator.reset(clock=1_900_000_000)
    assert answer["now"] == 1_900_000_000 == cosmos_emulator.now()


def test_snapshot_and_restore_bring_back_the_data_and_the_clock(cosmos_emulator, cosmos_client):
    db = cosmos_client.create_database(unique("snap"))
    container = db.create_container("c", PartitionKey("/pk"), default_ttl=-1)
    container.create_item({"id": "1", "pk": "a", "v": 1})
    container.create_item({"id": "expiring", "pk": "a", "ttl": 10})
    before = cosmos_emulator.now()
    etag = container.read_item("1", "a")["_etag"]

    taken = cosmos_emulator.snapshot("before-change")
    assert taken["name"] == "before-change"
    assert taken["now"] == before
    assert taken["databases"] >= 1 and taken["containers"] >= 1 and taken["items"] >= 2
    assert "before-change" in {s["name"] for s in cosmos_emulator.snapshots()}

    # Change everything: data, settings, the clock (the TTL item expires).
    container.upsert_item({"id": "1", "pk": "a", "v": 2})
    container.create_item({"id": "2", "pk": "b"})
    db.create_container("added", PartitionKey("/pk"))
    cosmos_emulator.advance(60)
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        container.read_item("expiring", "a")

    restored = cosmos_emulator.restore("before-change")
    assert restored["name"] == "before-change"
    assert restored["now"] == before == cosmos_emulator.now()
    item = container.read_item("1", "a")
    assert item["v"] == 1 and item["_etag"] == etag
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        container.read_item("2", "b")
    assert [c["id"] for c in db.list_containers()] == ["c"]
    assert container.read_item("expiring", "a")["ttl"] == 10  # its clock is back too
    cosmos_emulator.advance(10)
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        container.read_item("expiring", "a")

    # A snapshot is kept after a restore and a reset: restore it again.
    cosmos_emulator.reset()
    cosmos_emulator.restore("before-change")
    assert container.read_item("1", "a")["v"] == 1
    cosmos_emulator.delete_snapshot("before-change")
    cosmos_client.delete_database(db.id)


def test_restore_of_an_unknown_snapshot_is_404_and_a_bad_name_400(cosmos_emulator):
    with pytest.raises(cosmos_emulator_module.ControlError) as missing:
        cosmos_emulator.restore(unique("never-taken"))
    assert missing.value.status == 404
    assert missing.value.code
    with pytest.raises(cosmos_emulator_module.ControlError) as bad:
        cosmos_emulator.snapshot("no spaces/or slashes")
    assert bad.value.status == 400
    assert bad.value.message
