"""Computed properties through the official SDK: the SDK's own test items and
definitions (tests/test_computed_properties.py), created and replaced with
computed_properties=..., queried in SELECT, WHERE, ORDER BY and GROUP BY."""

import pytest
from azure.cosmos import PartitionKey, exceptions

from conftest import unique

ITEMS = [
    {"id": "1", "pk": "test", "val": 5, "stringProperty": "prefixOne", "db_group": "GroUp1"},
    {"id": "2", "pk": "test", "val": 5, "stringProperty": "prefixTwo", "db_group": "GrOUp1"},
    {"id": "3", "pk": "test", "val": 5, "stringProperty": "randomWord1", "db_group": "GroUp2"},
    {"id": "4", "pk": "test", "val": 5, "stringProperty": "randomWord2", "db_group": "groUp1"},
    {"id": "5", "pk": "test", "val": 5, "stringProperty": "randomWord3", "db_group": "GroUp3"},
    {"id": "6", "pk": "test", "val": 5, "stringProperty": "randomWord4", "db_group": "GrOUP1"},
    {"id": "7", "pk": "test", "val": 5, "stringProperty": "randomWord5", "db_group": "GroUp2"},
    {"id": "8", "pk": "test", "val": 0, "stringProperty": "randomWord6", "db_group": "group1"},
    {"id": "9", "pk": "test", "val": 3, "stringProperty": "randomWord7", "db_group": "group2"},
    {"id": "10", "pk": "test", "val": 2, "stringProperty": "randomWord8", "db_group": "GroUp3"},
]

COMPUTED = [
    {"name": "cp_lower", "query": "SELECT VALUE LOWER(c.db_group) FROM c"},
    {"name": "cp_power", "query": "SELECT VALUE POWER(c.val, 2) FROM c"},
    {"name": "cp_str_len", "query": "SELECT VALUE LENGTH(c.stringProperty) FROM c"},
]


def count(container, query):
    return len(list(container.query_items(query=query, partition_key="test")))


def filled(container):
    for item in ITEMS:
        container.create_item(item)
    return container


def assert_the_sdks_cases(container):
    """The SDK test's rows: each computed property in WHERE, and a name that is none."""
    assert container.read()["computedProperties"] == COMPUTED
    assert count(container, 'SELECT * FROM c WHERE c.cp_upper = "GROUP2"') == 0
    assert count(container, 'SELECT * FROM c WHERE c.cp_lower = "group1"') == 5
    assert count(container, 'SELECT * FROM c WHERE c.cp_lower = "group4"') == 0
    assert count(container, "SELECT * FROM c WHERE c.cp_power = 25") == 7
    assert count(container, "SELECT * FROM c WHERE c.cp_power = 16") == 0
    assert count(container, "SELECT * FROM c WHERE c.cp_str_len = 9") == 2
    assert count(container, "SELECT * FROM c WHERE c.cp_str_len = 3") == 0


def test_created_with_computed_properties(database):
    container = filled(database.create_container(
        unique("coll"), PartitionKey(path="/pk"), computed_properties=COMPUTED))
    assert_the_sdks_cases(container)


def test_select_star_leaves_them_out_and_select_projects_them(database):
    container = filled(database.create_container(
        unique("coll"), PartitionKey(path="/pk"), computed_properties=COMPUTED))
    for item in container.query_items("SELECT * FROM c", partition_key="test"):
        assert not {"cp_lower", "cp_power", "cp_str_len"} & item.keys(), item
    assert "cp_lower" not in container.read_item("1", partition_key="test")
    got = list(container.query_items(
        "SELECT c.id, c.cp_lower, c.cp_power FROM c WHERE c.id = '10'", partition_key="test"))
    assert got == [{"id": "10", "cp_lower": "group3", "cp_power": 4}]


def test_group_by_and_order_by(database):
    indexed = {"includedPaths": [{"path": "/*"}, {"path": "/cp_power/?"}]}
    container = filled(database.create_container(
        unique("coll"), PartitionKey(path="/pk"), computed_properties=COMPUTED,
        indexing_policy=indexed))
    groups = list(container.query_items(
        "SELECT c.cp_lower AS g, COUNT(1) AS n FROM c GROUP BY c.cp_lower",
        partition_key="test"))
    assert sorted((g["g"], g["n"]) for g in groups) == [("group1", 5), ("group2", 3), ("group3", 2)]
    ordered = list(container.query_items(
        "SELECT VALUE c.cp_power FROM c ORDER BY c.cp_power", partition_key="test"))
    assert ordered == [0, 4, 9] + [25] * 7
    # Across partitions, through the query plan.
    ordered = list(container.query_items(
        "SELECT VALUE c.id FROM c ORDER BY c.cp_power DESC", enable_cross_partition_query=True))
    assert ordered[-3:] == ["9", "10", "8"]


def test_ordering_by_an_unindexed_one_is_refused(database):
    container = filled(database.create_container(
        unique("coll"), PartitionKey(path="/pk"), computed_properties=COMPUTED))
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        list(container.query_items("SELECT * FROM c ORDER BY c.cp_lower", partition_key="test"))
    assert refused.value.status_code == 400
    assert "order-by item is excluded" in refused.value.http_error_message


def test_replace_with_the_same_ones(database):
    container = filled(database.create_container(
        unique("coll"), PartitionKey(path="/pk"), computed_properties=COMPUTED))
    replaced = database.replace_container(
        container, partition_key=PartitionKey(path="/pk"), computed_properties=COMPUTED)
    assert_the_sdks_cases(replaced)


def test_replace_adds_them_to_a_container_without(database):
    container = filled(database.create_container(unique("coll"), PartitionKey(path="/pk")))
    assert count(container, 'SELECT * FROM c WHERE c.cp_lower = "group1"') == 0
    replaced = database.replace_container(
        container, partition_key=PartitionKey(path="/pk"), computed_properties=COMPUTED)
    assert_the_sdks_cases(replaced)


def test_replace_with_new_ones(database):
    container = filled(database.create_container(
        unique("coll"), PartitionKey(path="/pk"), computed_properties=COMPUTED))
    new = [
        {"name": "cp_upper", "query": "SELECT VALUE UPPER(c.db_group) FROM c"},
        {"name": "cp_len", "query": "SELECT VALUE LENGTH(c.stringProperty) FROM c"},
    ]
    replaced = database.replace_container(
        container, partition_key=PartitionKey(path="/pk"), computed_properties=new)
    assert replaced.read()["computedProperties"] == new
    assert count(replaced, 'SELECT * FROM c WHERE c.cp_upper = "GROUP2"') == 3
    assert count(replaced, 'SELECT * FROM c WHERE c.cp_lower = "group1"') == 0
    assert count(replaced, "SELECT * FROM c WHERE c.cp_len = 9") == 2
    assert count(replaced, "SELECT * FROM c WHERE c.cp_str_len = 9") == 0


def test_replace_without_them_removes_them(database):
    container = filled(database.create_container(
        unique("coll"), PartitionKey(path="/pk"), computed_properties=COMPUTED))
    replaced = database.replace_container(container, partition_key=PartitionKey(path="/pk"))
    assert "computedProperties" not in replaced.read()
    assert count(replaced, 'SELECT * FROM c WHERE c.cp_lower = "group1"') == 0


def test_replace_with_the_wrong_type_is_refused(database):
    container = filled(database.create_container(unique("coll"), PartitionKey(path="/pk")))
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        database.replace_container(
            container, partition_key=PartitionKey(path="/pk"),
            computed_properties={"name": "cp_lower", "query": "SELECT VALUE LOWER(c.db_group) FROM c"})
    assert refused.value.status_code == 400
    assert "One of the specified inputs is invalid" in refused.value.http_error_message


@pytest.mark.parametrize("computed, says", [
    ([{"name": "_ts", "query": "SELECT VALUE c.val FROM c"}], "'_ts' is reserved"),
    ([{"name": "cp", "query": "SELECT VALUE c.val FROM c WHERE c.val > 1"}], "cannot use WHERE"),
    ([{"name": "cp", "query": "SELECT VALUE GetCurrentTicks() FROM c"}], "nondeterministic"),
])
def test_invalid_definitions_are_refused_on_create(database, computed, says):
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        database.create_container(unique("coll"), PartitionKey(path="/pk"), computed_properties=computed)
    assert refused.value.status_code == 400
    assert says in refused.value.http_error_message
    assert list(database.list_containers()) == []
