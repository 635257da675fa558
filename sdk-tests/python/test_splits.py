"""Splits on demand (issue 13, point 5) through the official SDK: a query, a read feed and
the change feed, read page by page with a split of the range made in the middle of the
iteration (POST /_emulator/split), give every item exactly once; pkranges then lists the
children (with their parents) and no longer the parent; item writes and reads keep working
with the session tokens of the children; TTL stays exact. HTTP and HTTPS.

A query this SDK runs per range (ORDER BY, aggregates) reads the items already read from the
parent again after a split: an SDK limitation (see the xfail below)."""

import pytest
from azure.cosmos import PartitionKey

from conftest import unique

ITEMS = 40
ALL = sorted(f"i{i:02}" for i in range(ITEMS))


def filled(database):
    container = database.create_container(unique("c"), partition_key=PartitionKey(path="/pk"))
    for i in range(ITEMS):
        container.create_item({"id": f"i{i:02}", "pk": f"p{i % 8}", "n": i})
    return container


def ranges(container):
    return list(container.client_connection._ReadPartitionKeyRanges(container.container_link))


def split_in_the_middle(pages, clock, database, container, range_id="0"):
    """Reads the first page, splits `range_id`, reads the rest; the ids read."""
    first = next(pages)
    seen = [i["id"] for i in first]
    assert 0 < len(seen) <= 5
    children = clock.split(database.id, container.id, range_id)
    assert len(children) == 2
    for page in pages:
        seen.extend(i["id"] for i in page)
    return seen, children


def assert_once(seen):
    assert len(seen) == len(set(seen)), f"read twice: {sorted(seen)}"
    assert sorted(seen) == ALL


def test_a_query_continues_across_a_split(database, clock):
    # This SDK sends a query without ORDER BY, aggregates or DISTINCT to the
    # gateway as one query over every range (no range id): the split is
    # invisible to it, and its continuation goes on.
    container = filled(database)
    pages = container.query_items(
        "SELECT * FROM c", enable_cross_partition_query=True, max_item_count=5
    ).by_page()
    seen, children = split_in_the_middle(pages, clock, database, container)
    assert_once(seen)
    listed = ranges(container)
    assert [r["id"] for r in listed] == ["1", "2"]
    assert all(r["parents"] == ["0"] for r in listed)
    assert [c["id"] for c in children] == ["1", "2"]
    # Splitting again while another query runs: the SDK's routing map has
    # the children, which it now learns are split too.
    pages = container.query_items(
        "SELECT c.id FROM c WHERE c.n >= 0", enable_cross_partition_query=True, max_item_count=5
    ).by_page()
    seen, _ = split_in_the_middle(pages, clock, database, container, "2")
    assert_once(seen)
    assert [r["id"] for r in ranges(container)] == ["1", "3", "4"]


@pytest.mark.xfail(
    strict=True,
    reason="azure-cosmos 4.17.1 restarts the children of a split range from their beginning in "
    "a query it runs per range (the query plan's ORDER BY, aggregates...): "
    "_execution_context/multi_execution_aggregator.py, _repair_document_producer, builds the "
    "children's _DocumentProducer (document_producer.py:42) with no continuation, so the items "
    "already read from the parent come again",
)
def test_an_order_by_query_continues_across_a_split(database, clock):
    container = filled(database)
    pages = container.query_items(
        "SELECT * FROM c ORDER BY c.n", enable_cross_partition_query=True, max_item_count=5
    ).by_page()
    seen, _ = split_in_the_middle(pages, clock, database, container)
    assert_once(seen)


def test_a_read_feed_continues_across_a_split(database, clock):
    # This SDK reads the feed over every range at once (no range id), so
    # the split is invisible to it too.
    container = filled(database)
    pages = container.read_all_items(max_item_count=5).by_page()
    seen, _ = split_in_the_middle(pages, clock, database, container)
    assert_once(seen)
    assert [r["id"] for r in ranges(container)] == ["1", "2"]


def test_the_change_feed_continues_across_a_split(database, clock):
    # The change feed reads per range: the parent's 410/1002 makes the SDK
    # read pkranges from its etag (200, the children), then 304, and resume
    # on the children from the parent's etag.
    container = filled(database)
    answers = []

    def hook(response):
        headers = response.http_response.headers
        answers.append((response.http_response.status_code, headers.get("x-ms-substatus")))

    pages = container.query_items_change_feed(
        start_time="Beginning", max_item_count=5, raw_response_hook=hook
    ).by_page()
    seen, _ = split_in_the_middle(pages, clock, database, container)
    assert_once(seen)
    assert (410, "1002") in answers, "the SDK met the split"
    # From its continuation, later writes only, once each, across the children.
    token = pages.continuation_token
    for i in (3, 17, 29):
        container.upsert_item({"id": f"i{i:02}", "pk": f"p{i % 8}", "n": -i})
    later = [i["id"] for i in container.query_items_change_feed(continuation=token)]
    assert sorted(later) == ["i03", "i17", "i29"]


def test_a_change_feed_continuation_taken_before_the_split_resumes_on_the_children(
    database, clock
):
    container = filled(database)
    pages = container.query_items_change_feed(start_time="Beginning", max_item_count=5).by_page()
    first = [i["id"] for i in next(pages)]
    token = pages.continuation_token
    clock.split(database.id, container.id, "0")
    rest = [i["id"] for i in container.query_items_change_feed(continuation=token)]
    assert_once(first + rest)


def test_point_operations_and_sessions_after_a_split(database, clock):
    container = filled(database)
    clock.split(database.id, container.id, "0")
    for i in range(ITEMS):
        item = container.read_item(f"i{i:02}", partition_key=f"p{i % 8}")
        assert item["n"] == i
        container.upsert_item({"id": f"i{i:02}", "pk": f"p{i % 8}", "n": i + 100})
    headers = container.client_connection.last_response_headers
    assert headers["x-ms-documentdb-partitionkeyrangeid"] in ("1", "2")
    assert headers["x-ms-session-token"].startswith(headers["x-ms-documentdb-partitionkeyrangeid"] + ":")
    assert sorted(i["n"] for i in container.read_all_items()) == list(range(100, 100 + ITEMS))


def test_ttl_stays_exact_after_a_split(database, clock):
    container = database.create_container(
        unique("ttl"), partition_key=PartitionKey(path="/pk"), default_ttl=-1
    )
    for i in range(ITEMS):
        container.create_item({"id": f"i{i:02}", "pk": f"p{i % 8}", "ttl": 10 if i % 2 else -1})
    clock.split(database.id, container.id, "0")
    clock.advance(9)
    assert len(list(container.read_all_items())) == ITEMS
    clock.advance(1)
    left = sorted(i["id"] for i in container.query_items("SELECT * FROM c", enable_cross_partition_query=True))
    assert left == [f"i{i:02}" for i in range(0, ITEMS, 2)]
