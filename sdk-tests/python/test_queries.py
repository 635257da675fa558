"""Queries: cross-partition and single-partition, with parameters, paging."""

import pytest
from azure.cosmos import PartitionKey

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
    groups = run("SELECT tag, COUNT(1) AS n FROM p JOIN tag IN p.tags GROUP BY tag")
    assert sorted(f"{g['tag']}:{g['n']}" for g in groups) == ["blue:1", "green:1", "red:1"]
    assert run("SELECT VALUE COUNT(1) FROM p GROUP BY p.pk") == [1, 1, 1]
    assert list(c.query_items(query="SELECT VALUE COUNT(1) FROM p JOIN t IN p.tags", partition_key="a")) == [2]
