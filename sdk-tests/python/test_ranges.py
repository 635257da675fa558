"""Several physical partition key ranges (issue 13, point 4) through the official SDK:
a container provisioned at 30,000 RU/s has five ranges (one per 6,000 above 10,000); cross-partition queries
(through the query plan), read feeds, the change feed and feed ranges give the same
items as with one range, each exactly once; TTL is exact in every range. HTTP and HTTPS."""

from azure.cosmos import PartitionKey

from conftest import unique

ITEMS = 40


def fill(container):
    for i in range(ITEMS):
        container.create_item({"id": f"i{i:02}", "pk": f"p{i}", "n": i, "g": i % 3})


def pair(database, **kwargs):
    """(one range, five ranges) containers holding the same items."""
    one = database.create_container(unique("one"), partition_key=PartitionKey(path="/pk"), **kwargs)
    many = database.create_container(
        unique("many"), partition_key=PartitionKey(path="/pk"), offer_throughput=30000, **kwargs
    )
    return one, many


def user(rows):
    """Rows without system properties (the two containers' _rid, _etag differ)."""
    return [
        {k: v for k, v in r.items() if not k.startswith("_")} if isinstance(r, dict) else r
        for r in rows
    ]


def ranges(container):
    return list(
        container.client_connection._ReadPartitionKeyRanges(container.container_link)
    )


def test_throughput_gives_the_services_layout_of_ranges(database):
    # One range up to 10,000 RU/s, then one per 6,000: 30,000 is five.
    one, many = pair(database)
    assert [r["id"] for r in ranges(one)] == ["0"]
    listed = ranges(many)
    assert [r["id"] for r in listed] == ["0", "1", "2", "3", "4"]
    # Cut as the service cuts them (the SDK's own test_pk_range_wrapper).
    assert listed[0]["maxExclusive"] == "0CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"
    assert listed[0]["minInclusive"] == "" and listed[-1]["maxExclusive"] == "FF"
    for low, high in zip(listed, listed[1:]):
        assert low["maxExclusive"] == high["minInclusive"]
    assert many.get_throughput().offer_throughput == 30000


def test_cross_partition_queries_match_one_range(database):
    one, many = pair(database)
    fill(one)
    fill(many)
    queries = [
        "SELECT * FROM c ORDER BY c.n DESC",
        "SELECT TOP 5 c.id FROM c ORDER BY c.n",
        "SELECT VALUE COUNT(1) FROM c",
        "SELECT VALUE SUM(c.n) FROM c",
        "SELECT VALUE MAX(c.n) FROM c",
        "SELECT VALUE MIN(c.n) FROM c",
        "SELECT DISTINCT VALUE c.g FROM c",
        "SELECT c.id FROM c WHERE c.n >= 30 ORDER BY c.id OFFSET 2 LIMIT 5",
    ]
    for query in queries:
        expected = user(one.query_items(query, enable_cross_partition_query=True))
        got = user(many.query_items(query, enable_cross_partition_query=True, max_item_count=3))
        if "DISTINCT" in query:
            expected, got = sorted(expected), sorted(got)
        assert got == expected, query
    # MIN/MAX are plain values for this SDK (it declares no NonValueAggregate).
    top = list(many.query_items("SELECT VALUE MAX(c.n) FROM c", enable_cross_partition_query=True))
    assert top == [ITEMS - 1]
    # A query the gateway answers itself reads every range too.
    plain = many.query_items("SELECT c.id FROM c WHERE c.n < 10", enable_cross_partition_query=True)
    assert sorted(i["id"] for i in plain) == [f"i{i:02}" for i in range(10)]


def test_read_all_items_and_change_feed_read_each_item_once(database):
    _, many = pair(database)
    fill(many)
    everything = [i["id"] for i in many.read_all_items(max_item_count=7)]
    assert sorted(everything) == [f"i{i:02}" for i in range(ITEMS)]
    feed = [i["id"] for i in many.query_items_change_feed(start_time="Beginning", max_item_count=5)]
    assert sorted(feed) == sorted(everything), "every item once"
    # Continue from the composite token: only later writes, once each.
    pages = many.query_items_change_feed(start_time="Beginning").by_page()
    for _ in pages:
        pass
    token = pages.continuation_token
    for i in (3, 17, 29):
        many.upsert_item({"id": f"i{i:02}", "pk": f"p{i}", "n": -i, "g": 0})
    later = [i["id"] for i in many.query_items_change_feed(continuation=token)]
    assert sorted(later) == ["i03", "i17", "i29"]


def test_feed_ranges_partition_the_items(database):
    _, many = pair(database)
    fill(many)
    feed_ranges = list(many.read_feed_ranges())
    assert len(feed_ranges) == 5
    per_range = [
        [i["id"] for i in many.query_items("SELECT * FROM c", feed_range=r)] for r in feed_ranges
    ]
    assert all(per_range), "every range holds items"
    flat = [i for ids in per_range for i in ids]
    assert sorted(flat) == [f"i{i:02}" for i in range(ITEMS)], "no item lost or read twice"
    changes = [
        [i["id"] for i in many.query_items_change_feed(feed_range=r, start_time="Beginning")]
        for r in feed_ranges
    ]
    assert [sorted(c) for c in changes] == [sorted(ids) for ids in per_range]


def test_ttl_is_exact_in_every_range(database, clock):
    _, many = pair(database, default_ttl=10)
    fill(many)
    clock.advance(9)
    assert len(list(many.read_all_items())) == ITEMS
    clock.advance(1)
    assert list(many.read_all_items()) == []
    assert list(many.query_items("SELECT VALUE COUNT(1) FROM c", enable_cross_partition_query=True)) == [0]
