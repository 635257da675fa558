"""Queries: cross-partition and single-partition, with parameters, paging."""

import pytest
from azure.cosmos import PartitionKey, exceptions

from conftest import unique

ITEMS = [
    {"id": "a1", "pk": "a", "n": 3, "kind": "x"},
    {"id": "a2", "pk": "a", "n": 1, "kind": "y"},
    {"id": "b1", "pk": "b", "n": 5, "kind": "x"},
    {"id": "b2", "pk": "b", "n": 2, "kind": "x"},
    {"id": "c1", "pk": "c", "n": 4, "kind": "y"},
]


@pytest.fixture
def container(database):
    c = database.create_container(unique("coll"), partition_key=PartitionKey(path="/pk"))
    for item in ITEMS:
        c.create_item(item)
    return c


def test_cross_partition_with_parameters(container):
    got = list(container.query_items(
        query="SELECT * FROM c WHERE c.kind = @kind AND c.n >= @min",
        parameters=[{"name": "@kind", "value": "x"}, {"name": "@min", "value": 3}],
        enable_cross_partition_query=True,
    ))
    assert sorted(i["id"] for i in got) == ["a1", "b1"]
    assert all("_ts" in i for i in got)


def test_single_partition_with_parameters(container):
    got = list(container.query_items(
        query="SELECT c.id, c.n FROM c WHERE c.n > @min",
        parameters=[{"name": "@min", "value": 0}],
        partition_key="b",
    ))
    assert sorted((i["id"], i["n"]) for i in got) == [("b1", 5), ("b2", 2)]


def test_select_value_and_order_by(container):
    ids = list(container.query_items(
        query="SELECT VALUE c.id FROM c ORDER BY c.n DESC", enable_cross_partition_query=True))
    assert ids == ["b1", "c1", "a1", "b2", "a2"]


def test_count_cross_partition_and_single_partition(container):
    assert list(container.query_items(
        query="SELECT VALUE COUNT(1) FROM c", enable_cross_partition_query=True)) == [5]
    assert list(container.query_items(
        query="SELECT VALUE COUNT(1) FROM c WHERE c.kind = @k",
        parameters=[{"name": "@k", "value": "y"}], partition_key="a")) == [1]


def test_paging_returns_every_item_once(container):
    pages = container.query_items(
        query="SELECT * FROM c", enable_cross_partition_query=True, max_item_count=2).by_page()
    seen = []
    page_sizes = []
    for page in pages:
        items = list(page)
        page_sizes.append(len(items))
        seen += [i["id"] for i in items]
    assert sorted(seen) == sorted(i["id"] for i in ITEMS)
    assert len(page_sizes) >= 3 and max(page_sizes) <= 2


def test_no_match_is_empty(container):
    assert list(container.query_items(
        query="SELECT * FROM c WHERE c.id = @id", parameters=[{"name": "@id", "value": "zzz"}],
        enable_cross_partition_query=True)) == []


def test_order_by_paged_and_top(container):
    pages = container.query_items(
        query="SELECT VALUE c.id FROM c ORDER BY c.n", enable_cross_partition_query=True, max_item_count=2).by_page()
    ids = []
    for page in pages:
        items = list(page)
        assert len(items) <= 2
        ids += items
    assert ids == ["a2", "b2", "a1", "c1", "b1"]
    assert list(container.query_items(
        query="SELECT TOP 2 VALUE c.id FROM c ORDER BY c.n DESC", enable_cross_partition_query=True)) == ["b1", "c1"]


def test_join_group_by_from_in_and_no_from(database):
    """JOIN over arrays, GROUP BY, FROM x IN path, and a query without FROM (evaluated once)."""
    c = database.create_container(unique("tags"), partition_key=PartitionKey(path="/pk"))
    c.create_item({"id": "p1", "pk": "a", "tags": ["red", "blue"]})
    c.create_item({"id": "p2", "pk": "b", "tags": ["green"]})
    c.create_item({"id": "p3", "pk": "c"})

    def run(q):
        return list(c.query_items(query=q, enable_cross_partition_query=True))

    assert sorted(run("SELECT VALUE tag FROM p JOIN tag IN p.tags")) == ["blue", "green", "red"]
    assert sorted(run("SELECT VALUE t FROM t IN p.tags")) == ["blue", "green", "red"]
    pairs = run("SELECT p.id, tag FROM p JOIN tag IN p.tags WHERE tag != 'red'")
    assert sorted(f"{r['id']}:{r['tag']}" for r in pairs) == ["p1:blue", "p2:green"]
    assert run("SELECT VALUE CONCAT('a', 'b')") == ["ab"]
    # GROUP BY within one partition key is answered whole.
    groups = list(c.query_items(
        query="SELECT tag, COUNT(1) AS n FROM p JOIN tag IN p.tags GROUP BY tag", partition_key="a"))
    assert sorted(f"{g['tag']}:{g['n']}" for g in groups) == ["blue:1", "red:1"]
    # Across partitions, as in Azure: the gateway refuses an aggregate
    # without VALUE, and this SDK does not declare GroupBy when it asks for
    # the plan, so the plan request is refused too.
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        run("SELECT tag, COUNT(1) AS n FROM p JOIN tag IN p.tags GROUP BY tag")
    assert refused.value.status_code == 400
    assert "only supports 'VALUE <AggregateFunc>'" in refused.value.message
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        run("SELECT VALUE COUNT(1) FROM p GROUP BY p.pk")
    assert "Query contained GroupBy, which the calling client does not support." in refused.value.message
    assert list(c.query_items(query="SELECT VALUE COUNT(1) FROM p JOIN t IN p.tags", partition_key="a")) == [2]


def test_subqueries(database):
    """EXISTS, ARRAY and scalar subqueries, and a JOIN over a subquery, across
    partitions (served directly: each partition's rows are the answer) and
    through the SDK's pipeline (ORDER BY)."""
    c = database.create_container(unique("subq"), partition_key=PartitionKey(path="/pk"))
    c.create_item({"id": "p1", "pk": "a", "tags": [{"k": "fabric", "v": "wool"}, {"k": "season", "v": "winter"}]})
    c.create_item({"id": "p2", "pk": "b", "tags": [{"k": "fabric", "v": "cotton"}]})
    c.create_item({"id": "p3", "pk": "c", "tags": []})

    def run(q):
        return list(c.query_items(query=q, enable_cross_partition_query=True))

    assert sorted(run(
        "SELECT VALUE p.id FROM p WHERE EXISTS(SELECT VALUE t FROM t IN p.tags WHERE t.v = 'winter')")) == ["p1"]
    assert sorted(run(
        "SELECT VALUE p.id FROM p WHERE NOT EXISTS(SELECT VALUE t FROM t IN p.tags)")) == ["p3"]
    rows = run("SELECT p.id, ARRAY(SELECT VALUE t.v FROM t IN p.tags) AS vs, "
               "(SELECT VALUE COUNT(1) FROM t IN p.tags) AS n FROM p")
    assert sorted((r["id"], r["vs"], r["n"]) for r in rows) == [
        ("p1", ["wool", "winter"], 2), ("p2", ["cotton"], 1), ("p3", [], 0)]
    assert sorted(run(
        "SELECT VALUE p.id FROM p JOIN (SELECT VALUE t FROM t IN p.tags WHERE t.k = 'fabric')")) == ["p1", "p2"]
    assert run("SELECT VALUE [p.id, (SELECT VALUE COUNT(1) FROM t IN p.tags)] FROM p ORDER BY p.id DESC") == [
        ["p3", 0], ["p2", 1], ["p1", 2]]


def test_scans_come_in_write_order(database):
    """Within a physical partition the service returns items in the order
    they were written (their _rid), not by partition key and id: a query
    without ORDER BY and read_all_items, page by page; a replace keeps an
    item's place, a delete and a create again puts it last."""
    c = database.create_container(unique("coll"), partition_key=PartitionKey(path="/pk"))
    written = ["m", "c", "x", "a", "q", "b", "z", "k"]
    for i, id in enumerate(written):
        c.create_item({"id": id, "pk": f"p{i % 2}", "n": i})

    def scanned():
        return [i["id"] for i in c.query_items(
            query="SELECT * FROM c", enable_cross_partition_query=True, max_item_count=3)]

    assert scanned() == written
    assert [i["id"] for i in c.read_all_items(max_item_count=3)] == written
    assert [i["id"] for i in c.query_items(
        query="SELECT * FROM c", partition_key="p1", max_item_count=3)] == ["c", "a", "b", "k"]
    c.replace_item("x", {"id": "x", "pk": "p0", "n": 100})
    c.delete_item("c", partition_key="p1")
    c.create_item({"id": "c", "pk": "p1"})
    assert scanned() == ["m", "x", "a", "q", "b", "z", "k", "c"]
