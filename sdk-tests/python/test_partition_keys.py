"""Partition keys through the official SDK (issue 12): undefined values, quoted
paths, hierarchical keys (MultiHash) with missing levels, prefix queries and feed
ranges (sent as x-ms-start-epk/x-ms-end-epk), and delete_all_items_by_partition_key
for a key and for a hierarchical prefix, over HTTP and HTTPS. Several cases follow
the SDK's own tests (test_crud_subpartition*.py), which run against the service."""

import pytest
from azure.cosmos import PartitionKey
from azure.cosmos.exceptions import CosmosHttpResponseError
from azure.cosmos.partition_key import NonePartitionKeyValue

from conftest import unique

NOT_THE_DEFINITION = "Partition key provided either doesn't correspond to definition in the collection"

ZIP_CODES = [
    ("CA", "Newbury Park", "91319"),
    ("CA", "Oxnard", "93033"),
    ("CA", "Oxnard", "93030"),
    ("CA", "Oxnard", "93036"),
    ("CA", "Thousand Oaks", "91358"),
    ("CA", "Ventura", "93002"),
    ("CA", "Ojai", "93023"),  # cspell:disable-line
    ("CA", "Port Hueneme", "93041"),  # cspell:disable-line
    ("WA", "Seattle", "98101"),
    ("WA", "Bellevue", "98004"),
]
CA = {f"d{i}" for i in range(8)}
CA_OXNARD = {"d1", "d2", "d3"}


def ids(items):
    return {i["id"] for i in items}


def zip_codes(database):
    c = database.create_container(
        unique("zip"), partition_key=PartitionKey(path=["/state", "/city", "/zipcode"], kind="MultiHash"))
    for i, (state, city, zipcode) in enumerate(ZIP_CODES):
        c.create_item({"id": f"d{i}", "state": state, "city": city, "zipcode": zipcode})
    # A first level that starts like "CA" but is another key.
    c.create_item({"id": "cal", "state": "CAL", "city": "Oxnard", "zipcode": "1"})
    return c


def test_objects_and_absent_values_are_undefined(database):
    c = database.create_container(unique("pk"), partition_key=PartitionKey(path="/pk"))
    # The SDK extracts undefined from an object (and a missing path) and sends [{}].
    c.create_item({"id": "object", "pk": {"nested": 1}})
    c.create_item({"id": "absent"})
    c.create_item({"id": "null", "pk": None})
    assert c.read_item("object", partition_key=NonePartitionKeyValue)["pk"] == {"nested": 1}
    assert c.read_item("absent", partition_key=NonePartitionKeyValue)["id"] == "absent"
    assert c.read_item("null", partition_key=None)["id"] == "null"
    with pytest.raises(CosmosHttpResponseError) as e:
        c.read_item("absent", partition_key=None)
    assert e.value.status_code == 404, "null and undefined are two keys"
    assert ids(c.query_items("SELECT * FROM c", partition_key=NonePartitionKeyValue)) == {"object", "absent"}
    c.delete_item("object", partition_key=NonePartitionKeyValue)
    assert ids(c.read_all_items()) == {"absent", "null"}


def test_quoted_paths(database):
    # The paths of the SDK's test_partitioned_collection_partition_key_extraction_special_chars.
    first = database.create_container(unique("q1"), partition_key=PartitionKey(
        path=['/"first level\' 1*()"/"le/vel2"', '/"second level\' 1*()"/"le/vel2"'], kind="MultiHash"))
    first.create_item({"id": "document1",
                       "first level' 1*()": {"le/vel2": "val1"},
                       "second level' 1*()": {"le/vel2": "val2"}})
    assert first.read_item("document1", partition_key=["val1", "val2"])["id"] == "document1"
    second = database.create_container(unique("q2"), partition_key=PartitionKey(
        path=["/'first level\" 1*()'/'first le/vel2'", "/'second level\" 1*()'/'second le/vel2'"],
        kind="MultiHash"))
    second.create_item({"id": "document2",
                        'first level" 1*()': {"first le/vel2": "val3"},
                        'second level" 1*()': {"second le/vel2": "val4"}})
    assert second.read_item("document2", partition_key=["val3", "val4"])["id"] == "document2"
    single = database.create_container(unique("q3"), partition_key=PartitionKey(path="/'level\" 1*()'/'le/vel2'"))
    single.create_item({"id": "s", 'level" 1*()': {"le/vel2": "v"}})
    assert single.read_item("s", partition_key="v")["id"] == "s"
    assert ids(single.query_items("SELECT * FROM c", partition_key="v")) == {"s"}


def test_hierarchical_keys_with_missing_levels(database):
    c = database.create_container(
        unique("h"), partition_key=PartitionKey(path=["/city", "/zipcode"], kind="MultiHash"))
    c.create_item({"id": "document", "city": "Redmond", "zipcode": "98052"})
    # As in the SDK's own test against the service: the SDK sends ["Vancouver", null]
    # for an item that lacks its zipcode, and the service refuses it.
    with pytest.raises(CosmosHttpResponseError) as e:
        c.create_item({"id": "document3", "city": "Vancouver"})
    assert e.value.status_code == 400
    assert NOT_THE_DEFINITION in e.value.message
    # A point read needs every level.
    with pytest.raises(CosmosHttpResponseError) as e:
        c.read_item("document", partition_key=["Redmond"])
    assert e.value.status_code == 400
    assert NOT_THE_DEFINITION in e.value.message
    # Null levels are values: stored and addressed as [null, 1000].
    created = c.create_item({"id": "doc4", "city": None, "zipcode": 1000})
    assert created["city"] is None and created["zipcode"] == 1000
    assert c.read_item("doc4", partition_key=[None, 1000])["id"] == "doc4"
    c.replace_item("doc4", {"id": "doc4", "city": None, "zipcode": 1000, "v": 2})
    assert c.read_item("doc4", partition_key=[None, 1000])["v"] == 2
    c.upsert_item({"id": "both-null", "city": None, "zipcode": None})
    assert c.read_item("both-null", partition_key=[None, None])["id"] == "both-null"
    c.delete_item("both-null", partition_key=[None, None])
    assert ids(c.read_all_items()) == {"document", "doc4"}


def test_prefix_queries_return_exactly_the_prefix(database):
    # The SDK's test_partitioned_collection_prefix_partition_query_subpartition, with
    # one more key ("CAL") that a textual prefix match would wrongly take.
    c = zip_codes(database)
    assert len(list(c.query_items("SELECT * FROM c", enable_cross_partition_query=True))) == 11
    assert ids(c.query_items("SELECT * FROM c", partition_key=["CA"])) == CA
    assert ids(c.query_items("SELECT * FROM c", partition_key=["CA", "Oxnard"])) == CA_OXNARD
    assert ids(c.query_items('SELECT * FROM c WHERE c.zipcode = "93033"', partition_key=["CA"])) == {"d1"}
    assert ids(c.query_items("SELECT * FROM c", partition_key=["CA", "Oxnard", "93030"])) == {"d2"}
    assert list(c.query_items("SELECT * FROM c", partition_key=[None, "93033"])) == []
    assert list(c.query_items("SELECT * FROM c", partition_key=[0xFF, 0xFF])) == []
    # Paged one item at a time, the scope holds across continuations.
    pages = c.query_items("SELECT * FROM c", partition_key=["CA"], max_item_count=1).by_page()
    seen = [ids(page) for page in pages]
    assert set().union(*seen) == CA and all(len(page) <= 1 for page in seen)


def test_feed_range_queries(database):
    c = zip_codes(database)
    prefix = c.feed_range_from_partition_key(["CA"])
    assert ids(c.query_items("SELECT * FROM c", feed_range=prefix)) == CA
    two_levels = c.feed_range_from_partition_key(["CA", "Oxnard"])
    assert ids(c.query_items("SELECT * FROM c", feed_range=two_levels)) == CA_OXNARD
    one_key = c.feed_range_from_partition_key(["WA", "Seattle", "98101"])
    assert ids(c.query_items("SELECT * FROM c", feed_range=one_key)) == {"d8"}
    whole = list(c.read_feed_ranges())
    assert len(whole) == 1
    assert len(ids(c.query_items("SELECT * FROM c", feed_range=whole[0]))) == 11
    assert ids(c.query_items_change_feed(feed_range=two_levels, start_time="Beginning")) == CA_OXNARD


def test_delete_all_items_by_partition_key(database, clock):
    c = database.create_container(unique("del"), partition_key=PartitionKey(path="/pk"), default_ttl=100)
    for i in range(3):
        c.create_item({"id": f"a{i}", "pk": "a"})
    kept = c.create_item({"id": "b0", "pk": "b"})
    assert list(c.query_items_change_feed(mode="AllVersionsAndDeletes", start_time="Now")) == []
    etag = c.client_connection.last_response_headers["etag"]
    headers = {}
    c.delete_all_items_by_partition_key("a", response_hook=lambda h, _: headers.update(h))
    assert "x-ms-request-charge" in {k.lower() for k in headers}
    # Gone at once from every path.
    assert [i["id"] for i in c.read_all_items()] == ["b0"]
    assert list(c.query_items("SELECT * FROM c", partition_key="a")) == []
    with pytest.raises(CosmosHttpResponseError) as e:
        c.read_item("a1", partition_key="a")
    assert e.value.status_code == 404
    assert ids(c.query_items_change_feed(start_time="Beginning")) == {"b0"}
    changes = list(c.query_items_change_feed(mode="AllVersionsAndDeletes", continuation=etag))
    assert sorted((ch["metadata"]["operationType"], ch["metadata"]["id"],
                   ch["metadata"]["timeToLiveExpired"]) for ch in changes) == [
        ("delete", "a0", False), ("delete", "a1", False), ("delete", "a2", False)]
    # None is the null key, which holds nothing here: nothing changes (as in the SDK's test).
    c.delete_all_items_by_partition_key(None)
    assert [i["id"] for i in c.read_all_items()] == [kept["id"]]
    # The ids are free again; the items expire as usual afterwards.
    c.create_item({"id": "a0", "pk": "a"})
    clock.advance(101)
    assert list(c.read_all_items()) == []


def test_delete_all_items_by_a_hierarchical_prefix(database):
    c = zip_codes(database)
    c.delete_all_items_by_partition_key(["CA", "Oxnard"])
    assert ids(c.read_all_items()) == {f"d{i}" for i in range(10)} - CA_OXNARD | {"cal"}
    c.delete_all_items_by_partition_key(["CA"])
    assert ids(c.read_all_items()) == {"d8", "d9", "cal"}
    c.delete_all_items_by_partition_key(["WA", "Seattle", "98101"])
    assert ids(c.read_all_items()) == {"d9", "cal"}


def create_container_without_a_partition_key(emulator, database_id: str, container_id: str) -> None:
    """POST /dbs/{db}/colls with no partitionKey at API version 2018-06-18, as the
    v2 SDKs made containers (this SDK cannot)."""
    import json
    import urllib.request

    from emulator import master_key_headers

    headers = master_key_headers("POST", "colls", f"dbs/{database_id}")
    headers["x-ms-version"] = "2018-06-18"
    headers["content-type"] = "application/json"
    url = f"{emulator.endpoint.rstrip('/')}/dbs/{database_id}/colls"
    body = json.dumps({"id": container_id}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    with urllib.request.urlopen(request, context=emulator.ssl_context(), timeout=30) as response:
        assert response.status == 201


def test_a_container_without_a_partition_key_partitions_by_its_system_key(emulator, database):
    """Microsoft's "Migrate non-partitioned containers to partitioned containers":
    the SDK reads the system key /_partitionKey; an item with "_partitionKey": "Doe"
    is in the logical partition "Doe", one without it is reached with
    NonePartitionKeyValue, for point operations, queries, the change feed and
    batches."""
    name = unique("legacy")
    create_container_without_a_partition_key(emulator, database.id, name)
    container = database.get_container_client(name)
    definition = container.read()["partitionKey"]
    assert definition["paths"] == ["/_partitionKey"] and definition["systemKey"] is True

    container.create_item({"id": "old-1"})  # the SDK sends the empty key
    container.create_item({"id": "old-2"})
    for item_id in ["id-1", "id-2"]:
        created = container.create_item({"id": item_id, "_partitionKey": "Doe"})
        assert created["_partitionKey"] == "Doe"
    container.create_item({"id": "id-1", "_partitionKey": "Roe"})

    assert container.read_item("id-1", partition_key="Doe")["_partitionKey"] == "Doe"
    assert container.read_item("old-1", partition_key=NonePartitionKeyValue)["id"] == "old-1"
    with pytest.raises(CosmosHttpResponseError) as missing:
        container.read_item("id-2", partition_key=NonePartitionKeyValue)
    assert missing.value.status_code == 404

    def ids(items):
        return sorted(item["id"] for item in items)

    query = "SELECT * FROM c"
    assert ids(container.query_items(query, partition_key="Doe")) == ["id-1", "id-2"]
    assert ids(container.query_items(query, partition_key=NonePartitionKeyValue)) == ["old-1", "old-2"]
    assert ids(container.query_items(query, enable_cross_partition_query=True)) == [
        "id-1",
        "id-1",
        "id-2",
        "old-1",
        "old-2",
    ]
    changes = container.query_items_change_feed(start_time="Beginning", partition_key="Doe")
    assert ids(changes) == ["id-1", "id-2"]

    results = container.execute_item_batch(
        [("create", ({"id": "id-3", "_partitionKey": "Doe"},)), ("read", ("id-1",))],
        partition_key="Doe",
    )
    assert [r["statusCode"] for r in results] == [201, 200]
    container.upsert_item({"id": "old-2", "n": 2})
    assert container.read_item("old-2", partition_key=NonePartitionKeyValue)["n"] == 2
    container.delete_item("old-1", partition_key=NonePartitionKeyValue)
    container.delete_item("id-3", partition_key="Doe")
    assert ids(container.query_items(query, enable_cross_partition_query=True)) == [
        "id-1",
        "id-1",
        "id-2",
        "old-2",
    ]
