"""The control API's client, route by route beyond the clock, the purge,
reset and snapshots (test_isolation.py): stats, lifetimes, splits,
compaction, fault rules and regions, on an Emulator and through a
Control made from an endpoint alone."""

from __future__ import annotations

import pytest
from azure.cosmos import CosmosClient, PartitionKey, exceptions

import cosmos_emulator
from conftest import unique


@pytest.fixture(scope="module")
def two_regions():
    with cosmos_emulator.start(args=["--regions", "westus,eastus"]) as emulator:
        yield emulator


def test_a_control_made_from_the_endpoint_drives_the_same_emulator(two_regions):
    control = cosmos_emulator.Control(two_regions.endpoint)
    assert control.now() == two_regions.now()
    assert control.advance(2) == two_regions.now()


def test_stats_and_lifetimes_see_the_items_stored(two_regions):
    client = CosmosClient(two_regions.endpoint, two_regions.key)
    database = client.create_database(unique("db"))
    container = database.create_container("c", PartitionKey("/pk"), default_ttl=60)
    container.create_item({"id": "a", "pk": "p"})
    container.create_item({"id": "b", "pk": "p", "ttl": 10})
    stats = two_regions.stats()
    assert stats["clock"] == "manual"
    mine = [c for c in stats["containers"] if c["database"] == database.id]
    assert mine == [{"database": database.id, "container": "c", "storedItems": 2}]

    page = two_regions.lifetimes(database.id, "c", max_items=1, order="expiry")
    assert [item["id"] for item in page["items"]] == ["b"]
    assert page["items"][0]["rule"] == "item-override"
    rest = two_regions.lifetimes(database.id, "c", continuation=page["continuation"], order="expiry")
    assert [item["id"] for item in rest["items"]] == ["a"]
    assert rest["continuation"] is None
    with pytest.raises(cosmos_emulator.ControlError) as refused:
        two_regions.lifetimes(database.id, "c", max_items=0)
    assert refused.value.status == 400


def test_split_answers_the_children_and_compact_needs_a_data_dir(two_regions):
    client = CosmosClient(two_regions.endpoint, two_regions.key)
    database = client.create_database(unique("db"))
    database.create_container("c", PartitionKey("/pk"))
    children = two_regions.split(database.id, "c", "0")
    assert [child["parents"] for child in children] == [["0"], ["0"]]
    with pytest.raises(cosmos_emulator.ControlError) as refused:
        two_regions.compact()
    assert refused.value.status == 400
    assert "--data-dir" in refused.value.message


def test_compact_writes_a_snapshot_of_the_data_directory(tmp_path):
    with cosmos_emulator.start(data_dir=tmp_path / "data") as emulator:
        report = emulator.compact()
        assert report["generation"] >= 1
        assert report["snapshotBytes"] > 0


def test_fault_rules_are_added_read_counted_and_removed(two_regions):
    two_regions.clear_faults()
    client = CosmosClient(two_regions.endpoint, two_regions.key)
    database = client.create_database(unique("db"))
    rule = two_regions.add_fault(
        {"match": {"operation": "read", "database": database.id}, "respond": {"status": 400}, "hits": 1}
    )
    assert rule["hitCount"] == 0
    container = database.create_container("c", PartitionKey("/pk"))
    container.create_item({"id": "x", "pk": "p"})
    with pytest.raises(exceptions.CosmosHttpResponseError) as faulted:
        container.read_item("x", "p")
    assert faulted.value.status_code == 400
    assert two_regions.fault(rule["id"])["hitCount"] == 1
    assert [r["id"] for r in two_regions.faults()] == [rule["id"]]
    two_regions.delete_fault(rule["id"])
    with pytest.raises(cosmos_emulator.ControlError) as gone:
        two_regions.fault(rule["id"])
    assert gone.value.status == 404
    two_regions.add_fault({"respond": {"delayMs": 1}, "match": {"operation": "query"}})
    assert two_regions.clear_faults() == 1
    assert two_regions.faults() == []


def test_regions_go_down_lag_and_fail_over(two_regions):
    two_regions.reset()
    regions = two_regions.regions()
    assert [(r["name"], r["writes"]) for r in regions] == [("westus", True), ("eastus", False)]
    down = {r["name"]: r["down"] for r in two_regions.take_down("eastus", mode="503", for_ms=60_000)}
    assert down == {"westus": None, "eastus": "503"}
    assert all(r["down"] is None for r in two_regions.bring_up("eastus"))
    lagging = {r["name"]: r for r in two_regions.set_replication("eastus", lag_ms=500)}
    assert lagging["eastus"]["lagMs"] == 500
    paused = {r["name"]: r for r in two_regions.set_replication("eastus", paused=True)}
    assert paused["eastus"]["paused"] is True
    writes = {r["name"]: r["writes"] for r in two_regions.fail_over("eastus")}
    assert writes == {"westus": False, "eastus": True}
    with pytest.raises(cosmos_emulator.ControlError) as unknown:
        two_regions.take_down("nowhere")
    assert unknown.value.status == 404
    two_regions.reset()
    assert [r["writes"] for r in two_regions.regions()] == [True, False]
