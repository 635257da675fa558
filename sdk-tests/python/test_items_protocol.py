"""The items path beyond CRUD (issue 12): no_response, a container dropped and
re-created under a cached client, session tokens kept and sent back, quota
information, query and index metrics, the 2 MB limit on the escaped payload."""

import pytest
from azure.cosmos import CosmosClient, PartitionKey
from azure.cosmos.exceptions import CosmosHttpResponseError, CosmosResourceNotFoundError

from conftest import unique
from emulator import KEY


@pytest.fixture
def container(database):
    return database.create_container(unique("coll"), partition_key=PartitionKey(path="/pk"))


def last_headers(container):
    return container.client_connection.last_response_headers


def test_no_response_writes_return_no_body_but_apply(container):
    created = container.create_item({"id": "a", "pk": "p", "n": 1}, no_response=True)
    assert dict(created) == {}
    created_etag = last_headers(container)["etag"]
    assert created_etag.startswith('"')

    upserted = container.upsert_item({"id": "a", "pk": "p", "n": 2}, no_response=True)
    assert dict(upserted) == {}
    replaced = container.replace_item("a", {"id": "a", "pk": "p", "n": 3}, no_response=True)
    assert dict(replaced) == {}
    patched = container.patch_item(
        "a", partition_key="p", patch_operations=[{"op": "incr", "path": "/n", "value": 10}], no_response=True
    )
    assert dict(patched) == {}
    patched_etag = last_headers(container)["etag"]
    assert patched_etag != created_etag

    read = container.read_item("a", partition_key="p")
    assert read["n"] == 13
    assert read["_etag"] == patched_etag
    # Without it, the document comes back.
    assert container.upsert_item({"id": "a", "pk": "p"})["id"] == "a"


def test_a_container_recreated_under_a_cached_client_is_found_again(emulator, client, database):
    """The cached client holds the old container's RID and partition key path;
    the emulator answers its requests 400/1024, the SDK refreshes its cache and
    retries, and works on the new container."""
    name = unique("coll")
    cached = database.create_container(name, partition_key=PartitionKey(path="/pk"))
    cached.create_item({"id": "old", "pk": "x"})
    assert cached.read_item("old", partition_key="x")["id"] == "old"
    old_rid = cached.read()["_rid"]

    other = CosmosClient(emulator.endpoint, KEY, **emulator.client_kwargs())
    other_db = other.get_database_client(database.id)
    other_db.delete_container(name)
    other_db.create_container(name, partition_key=PartitionKey(path="/tenant"))

    created = cached.create_item({"id": "new", "tenant": "t"})
    assert created["tenant"] == "t"
    assert cached.read_item("new", partition_key="t")["id"] == "new"
    assert [i["id"] for i in cached.query_items("SELECT * FROM c", enable_cross_partition_query=True)] == ["new"]
    assert cached.read()["_rid"] != old_rid
    with pytest.raises(CosmosResourceNotFoundError):
        cached.read_item("old", partition_key="x")


def test_session_token_is_kept_sent_back_and_honoured(container):
    container.create_item({"id": "a", "pk": "p"})
    token = last_headers(container)["x-ms-session-token"]
    assert token.startswith("0:-1#")

    sent = {}

    def capture(response):
        sent.update(response.http_request.headers)

    container.read_item("a", partition_key="p", raw_response_hook=capture)
    # The SDK kept the write's token and sends it back on the read.
    assert sent.get("x-ms-session-token") == token
    assert last_headers(container)["x-ms-session-token"] == token

    container.upsert_item({"id": "a", "pk": "p", "v": 2})
    newer = last_headers(container)["x-ms-session-token"]
    assert int(newer.split("#")[1]) > int(token.split("#")[1])
    sent.clear()
    assert container.read_item("a", partition_key="p", raw_response_hook=capture)["v"] == 2
    assert sent.get("x-ms-session-token") == newer

    # A token naming a state the emulator has not reached: 404/1002.
    with pytest.raises(CosmosResourceNotFoundError) as e:
        container.read_item("a", partition_key="p", session_token="0:-1#999999")
    assert e.value.sub_status == 1002


def test_populate_quota_info(container):
    for i in range(3):
        container.create_item({"id": f"i{i}", "pk": "p", "filler": "x" * 3000})
    container.read(populate_quota_info=True)
    usage = dict(
        pair.split("=") for pair in last_headers(container)["x-ms-resource-usage"].split(";") if pair
    )
    assert usage["documentsCount"] == "3"
    assert 9 <= int(usage["documentsSize"]) <= 10
    assert "documentsSize=" in last_headers(container)["x-ms-resource-quota"]


def test_query_and_index_metrics(container):
    for i in range(4):
        container.create_item({"id": f"i{i}", "pk": "p", "n": i})
    items = list(
        container.query_items(
            "SELECT * FROM c WHERE c.n >= 2", partition_key="p", populate_query_metrics=True
        )
    )
    assert len(items) == 2
    metrics = dict(
        pair.split("=") for pair in last_headers(container)["x-ms-documentdb-query-metrics"].split(";")
    )
    assert metrics["outputDocumentCount"] == "2"
    assert float(metrics["totalExecutionTimeInMs"]) >= 0

    list(container.query_items("SELECT * FROM c WHERE c.n >= 2", partition_key="p", populate_index_metrics=True))
    # The SDK decodes the base64 JSON into a dict.
    utilization = last_headers(container)["x-ms-cosmos-index-utilization"]
    assert isinstance(utilization, dict) and "UtilizedSingleIndexes" in utilization


def test_an_item_whose_escaped_payload_exceeds_2_mb_is_413(container):
    # 700 000 'é': 1.4 MB of UTF-8, but the SDK sends each as \u00e9 (6 bytes).
    with pytest.raises(CosmosHttpResponseError) as e:
        container.create_item({"id": "big", "pk": "p", "text": "é" * 700_000})
    assert e.value.status_code == 413
    assert "Request size is too large" in e.value.message
    with pytest.raises(CosmosResourceNotFoundError):
        container.read_item("big", partition_key="p")
    # Under the limit as sent, it is stored.
    container.create_item({"id": "fits", "pk": "p", "text": "é" * 300_000})
    assert len(container.read_item("fits", partition_key="p")["text"]) == 300_000
