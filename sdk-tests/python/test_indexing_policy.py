"""The legacy indexing policy through the official SDK: the shapes that the
SDK's own tests send (tests/test_orderby.py, tests/test_aggregate.py,
tests/test_crud_container.py's test_collection_indexing_policy and
test_create_default_indexing_policy, tests/test_crud.py's
test_geospatial_index) are accepted, read back in the current shape, and the
containers answer queries as with it."""

import pytest
from azure.cosmos import PartitionKey, exceptions

from conftest import unique

RANGE_INDEXES = [{"kind": "Range", "dataType": "Number"}, {"kind": "Range", "dataType": "String"}]


def test_root_written_slash_serves_cross_partition_order_by(database):
    # test_orderby.py's container: "/" alone, on five partition key ranges.
    container = database.create_container(
        unique("coll"), PartitionKey(path="/id"), offer_throughput=30000,
        indexing_policy={"includedPaths": [{"path": "/", "indexes": RANGE_INDEXES}]})
    assert len(list(container.read_feed_ranges())) == 5
    for i in range(20):
        container.create_item({"id": str(i), "cnt": i, "spam": f"eggs{i}"})
    got = list(container.query_items(
        "SELECT TOP 5 VALUE r.cnt FROM r ORDER BY r.cnt DESC", enable_cross_partition_query=True))
    assert got == [19, 18, 17, 16, 15]
    policy = container.read()["indexingPolicy"]
    assert policy["includedPaths"] == [{"path": "/*"}]


def test_index_specifications_are_dropped(database):
    # test_collection_indexing_policy: 1 included path, 2 excluded (with _etag).
    container = database.create_container(
        unique("coll"), PartitionKey(path="/id"),
        indexing_policy={
            "automatic": True, "indexingMode": "consistent",
            "includedPaths": [{"path": "/", "indexes": [
                {"kind": "Hash", "dataType": "Number", "precision": 2}]}],
            "excludedPaths": [{"path": '/"systemMetadata"/*'}]})
    policy = container.read()["indexingPolicy"]
    assert policy["includedPaths"] == [{"path": "/*"}]
    assert policy["excludedPaths"] == [{"path": '/"systemMetadata"/*'}, {"path": '/"_etag"/?'}]
    # test_create_default_indexing_policy's "missing precision": the default back.
    container = database.create_container(
        unique("coll"), PartitionKey(path="/id"),
        indexing_policy={"includedPaths": [{"path": "/*", "indexes": [
            {"kind": "Hash", "dataType": "String"}, {"kind": "Range", "dataType": "Number"}]}]})
    policy = container.read()["indexingPolicy"]
    assert policy["includedPaths"] == [{"path": "/*"}]
    assert policy["excludedPaths"] == [{"path": '/"_etag"/?'}]


def test_legacy_spatial_index_serves_st_distance(database):
    container = database.create_container(
        unique("coll"), PartitionKey(path="/id"),
        indexing_policy={"includedPaths": [
            {"path": '/"Location"/?', "indexes": [{"kind": "Spatial", "dataType": "Point"}]},
            {"path": "/"}]})
    container.create_item({"id": "loc1", "Location": {"type": "Point", "coordinates": [20.0, 20.0]}})
    container.create_item({"id": "loc2", "Location": {"type": "Point", "coordinates": [100.0, 100.0]}})
    got = list(container.query_items(
        "SELECT VALUE root.id FROM root WHERE "
        "ST_DISTANCE(root.Location, {type: 'Point', coordinates: [20.1, 20]}) < 20000",
        enable_cross_partition_query=True))
    assert got == ["loc1"]


@pytest.mark.parametrize("index, named", [
    ({"kind": "Rnage", "dataType": "Number"}, "'Rnage'"),
    ({"kind": "Spatial", "dataType": "String"}, "'String'"),
    ({"kind": "Range", "dataType": "Number", "precision": "max"}, "precision"),
])
def test_malformed_index_specifications_are_refused(database, index, named):
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        database.create_container(
            unique("coll"), PartitionKey(path="/id"),
            indexing_policy={"includedPaths": [{"path": "/", "indexes": [index]}]})
    assert refused.value.status_code == 400
    assert named in refused.value.message
