"""Fault rules (issue 40, point 3; docs/src/faults.md) through the official azure-cosmos SDK:
what an application's tests check when the service throttles, fails a write after applying
it, splits a partition under a query, or answers 503. The rules go through the control API
(POST /_emulator/faults); each counts HTTP requests, so the SDK's retries show in hitCount.
HTTP and HTTPS.

What this SDK (4.17) does, as these tests pin it (the table in docs/src/resilience.md):
- 429: ResourceThrottleRetryPolicy, 9 retries, waits x-ms-retry-after-ms; the sums
  (x-ms-throttle-retry-count, -wait-time-ms) reach client.last_response_headers when the
  operation fails, not when it succeeds (see the first test);
- 408 on a write: not retried (no retry_write): the app sees it;
- 410/1002: the routing map is refreshed and the request retried (a whole-container query
  from its beginning);
- 503: _ServiceUnavailableRetryPolicy retries once more than there are regions (one region:
  one retry, on the same endpoint, 500 ms later)."""

import time

import pytest
from azure.cosmos import PartitionKey, exceptions

from conftest import unique


@pytest.fixture
def container(database, emulator):
    container = database.create_container(unique("c"), partition_key=PartitionKey(path="/pk"))
    yield container
    emulator.control.clear_faults()


def scoped(database, container, **match):
    """A match for this test's container only: other tests' requests never hit it."""
    return {"database": database.id, "container": container.id, **match}


def test_a_throttled_create_is_retried_and_succeeds(emulator, database, container):
    rule = emulator.control.add_fault(
        {
            "match": scoped(database, container, operation="create"),
            "respond": {"status": 429, "subStatus": 3200, "retryAfterMs": 50},
            "hits": 3,
        }
    )
    started = time.monotonic()
    created = container.create_item({"id": "a", "pk": "p"})
    assert created["id"] == "a"
    # The SDK waited what each 429 advertised: three times 50 ms.
    assert time.monotonic() - started >= 0.150
    # 4.17.1 writes the sums into client.last_response_headers (_retry_utility.Execute), then
    # CreateItem replaces that dict with the final response's headers: on success they are
    # gone. (On failure they stay: the next test.) Where an SDK version keeps them, they add up.
    headers = container.client_connection.last_response_headers
    if "x-ms-throttle-retry-count" in headers:
        assert int(headers["x-ms-throttle-retry-count"]) == 3
        assert int(headers["x-ms-throttle-retry-wait-time-ms"]) >= 150
    [listed] = emulator.control.faults()
    assert listed["id"] == rule["id"]
    assert listed["hitCount"] == 3


def test_ten_throttles_surface_as_a_429_and_nothing_is_written(emulator, database, container):
    emulator.control.add_fault(
        {
            "match": scoped(database, container, operation="create"),
            "respond": {"status": 429, "subStatus": 3200, "retryAfterMs": 10},
        }
    )
    with pytest.raises(exceptions.CosmosHttpResponseError) as raised:
        container.create_item({"id": "a", "pk": "p"})
    assert raised.value.status_code == 429
    assert raised.value.sub_status == 3200
    headers = container.client_connection.last_response_headers
    assert int(headers["x-ms-throttle-retry-count"]) == 9
    assert int(headers["x-ms-throttle-retry-wait-time-ms"]) == 90
    # The first try and nine retries: ten HTTP requests.
    assert emulator.control.faults()[0]["hitCount"] == 10
    emulator.control.clear_faults()
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        container.read_item("a", partition_key="p")


def test_a_timeout_after_the_write_was_applied(emulator, database, container):
    emulator.control.add_fault(
        {
            "match": scoped(database, container, operation="create"),
            "respond": {"status": 408},
            "when": "after",
            "hits": 1,
        }
    )
    with pytest.raises(exceptions.CosmosHttpResponseError) as raised:
        container.create_item({"id": "a", "pk": "p"})
    assert raised.value.status_code == 408
    # The write happened: a read finds it, and the app's retry of the create conflicts.
    assert container.read_item("a", partition_key="p")["id"] == "a"
    with pytest.raises(exceptions.CosmosResourceExistsError):
        container.create_item({"id": "a", "pk": "p"})
    assert emulator.control.faults()[0]["hitCount"] == 1


ITEMS = 40
ALL = sorted(f"i{i:02}" for i in range(ITEMS))


def filled(container):
    for i in range(ITEMS):
        container.create_item({"id": f"i{i:02}", "pk": f"p{i % 8}", "n": i})


def test_a_split_mid_query_loses_and_repeats_nothing(emulator, database, container, clock):
    # The service answers 410/1002 to a request sent to a range that split: here the
    # parent "0", for as long as a client sends it there. This SDK sends a query that needs
    # no query plan to the gateway as one query over every range (no range id), so the rule
    # never matches: the gateway absorbs the split, and the continuation goes on.
    filled(container)
    pages = container.query_items(
        "SELECT * FROM c", enable_cross_partition_query=True, max_item_count=5
    ).by_page()
    seen = [i["id"] for i in next(pages)]
    clock.split(database.id, container.id, "0")
    emulator.control.add_fault(
        {
            "match": scoped(database, container, operation="query", partitionKeyRangeId="0"),
            "respond": {"status": 410, "subStatus": 1002},
        }
    )
    for page in pages:
        seen.extend(i["id"] for i in page)
    assert len(seen) == len(set(seen)), f"read twice: {sorted(seen)}"
    assert sorted(seen) == ALL
    assert emulator.control.faults()[0]["hitCount"] == 0


def test_a_gone_on_a_whole_container_query_restarts_it(emulator, database, container, clock):
    # A 410/1002 on a query sent to no range (which the service's gateway does not send: it
    # serves such a query across a split itself) makes 4.17.1 refresh its routing map and
    # start the query again from its beginning (base_execution_context.py,
    # _fetch_items_helper_with_retries: the continuation it resumes from was cleared before
    # the fetch): the first page comes twice. Pinned, so that a fix shows.
    filled(container)
    pages = container.query_items(
        "SELECT * FROM c", enable_cross_partition_query=True, max_item_count=5
    ).by_page()
    first = [i["id"] for i in next(pages)]
    emulator.control.add_fault(
        {
            "match": scoped(database, container, operation="query"),
            "respond": {"status": 410, "subStatus": 1002},
            "hits": 1,
        }
    )
    seen = list(first)
    for page in pages:
        seen.extend(i["id"] for i in page)
    assert emulator.control.faults()[0]["hitCount"] == 1, "the SDK met the 410 and went on"
    assert sorted(set(seen)) == ALL, "nothing lost"
    assert sorted(seen) == sorted(ALL + first), "the first page again, nothing else"


def test_a_503_before_a_read_with_one_region(emulator, database, container):
    container.create_item({"id": "a", "pk": "p"})
    # One 503: retried once (max(regions + 1) attempts, one region), and the read succeeds.
    emulator.control.add_fault(
        {
            "match": scoped(database, container, operation="read"),
            "respond": {"status": 503},
            "hits": 1,
        }
    )
    assert container.read_item("a", partition_key="p")["id"] == "a"
    assert emulator.control.faults()[0]["hitCount"] == 1
    emulator.control.clear_faults()
    # Always 503: two attempts, then the app sees the 503.
    emulator.control.add_fault(
        {"match": scoped(database, container, operation="read"), "respond": {"status": 503}}
    )
    with pytest.raises(exceptions.CosmosHttpResponseError) as raised:
        container.read_item("a", partition_key="p")
    assert raised.value.status_code == 503
    assert emulator.control.faults()[0]["hitCount"] == 2
