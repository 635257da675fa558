"""Stored procedures, triggers and UDFs through the SDK's `container.scripts`:
create, execute, list, query, replace and delete, as an application ported
from Azure uses them."""

import pytest
from azure.cosmos import PartitionKey
from azure.cosmos.exceptions import CosmosHttpResponseError, CosmosResourceNotFoundError

from conftest import unique

BULK_IMPORT = """function bulkImport(docs) {
    var collection = getContext().getCollection();
    var count = 0;
    if (!docs || docs.length === 0) { getContext().getResponse().setBody(0); return; }
    tryCreate(docs[count], callback);
    function tryCreate(doc, callback) {
        var accepted = collection.createDocument(collection.getSelfLink(), doc, callback);
        if (!accepted) getContext().getResponse().setBody(count);
    }
    function callback(err) {
        if (err) throw err;
        count++;
        if (count >= docs.length) getContext().getResponse().setBody(count);
        else tryCreate(docs[count], callback);
    }
}"""


@pytest.fixture
def container(database):
    return database.create_container(unique("scripts"), partition_key=PartitionKey(path="/pk"))


def test_a_stored_procedure_is_created_executed_and_deleted(container):
    scripts = container.scripts
    sproc = scripts.create_stored_procedure({"id": "bulkImport", "body": BULK_IMPORT})
    assert sproc["body"] == BULK_IMPORT
    docs = [{"id": f"d{i}", "pk": "p"} for i in range(25)]
    assert scripts.execute_stored_procedure("bulkImport", partition_key="p", params=[docs]) == 25
    assert len(list(container.query_items("SELECT * FROM c", partition_key="p"))) == 25
    assert [s["id"] for s in scripts.list_stored_procedures()] == ["bulkImport"]
    found = list(scripts.query_stored_procedures(
        "SELECT * FROM r WHERE r.id = @id", parameters=[{"name": "@id", "value": "bulkImport"}]))
    assert len(found) == 1
    scripts.delete_stored_procedure("bulkImport")
    with pytest.raises(CosmosResourceNotFoundError):
        scripts.get_stored_procedure("bulkImport")


def test_a_failed_execution_writes_nothing(container):
    scripts = container.scripts
    scripts.create_stored_procedure({"id": "bulkImport", "body": BULK_IMPORT})
    container.create_item({"id": "d3", "pk": "p"})
    docs = [{"id": f"d{i}", "pk": "p"} for i in range(5)]
    with pytest.raises(CosmosHttpResponseError) as failure:
        scripts.execute_stored_procedure("bulkImport", partition_key="p", params=[docs])
    # The create of d3 conflicted, the script rethrew: 400, substatus 409.
    assert failure.value.status_code == 400
    assert failure.value.sub_status == 409
    ids = [d["id"] for d in container.query_items("SELECT * FROM c", partition_key="p")]
    assert ids == ["d3"]


def test_script_logging_and_errors_with_numbers(container):
    scripts = container.scripts
    scripts.create_stored_procedure({
        "id": "logs",
        "body": "function (x) { console.log('x is %s', x); if (x > 1) throw new Error(4444, 'too big'); "
                "getContext().getResponse().setBody(x); }",
    })
    assert scripts.execute_stored_procedure("logs", partition_key="p", params=[1],
                                            enable_script_logging=True) == 1
    headers = scripts.client_connection.last_response_headers
    assert headers["x-ms-documentdb-script-log-results"] == "x%20is%201"
    with pytest.raises(CosmosHttpResponseError) as failure:
        scripts.execute_stored_procedure("logs", partition_key="p", params=[2])
    assert failure.value.status_code == 400
    assert failure.value.sub_status == 4444
    assert "Encountered exception while executing function" in failure.value.message


def test_triggers_run_on_the_writes_that_name_them(container):
    scripts = container.scripts
    scripts.create_trigger({
        "id": "stamp", "triggerType": "Pre", "triggerOperation": "Create",
        "body": "function () { var r = getContext().getRequest(); var d = r.getBody(); "
                "d.stamped = true; r.setBody(d); }",
    })
    scripts.create_trigger({
        "id": "refuse", "triggerType": "Post", "triggerOperation": "All",
        "body": "function () { if (getContext().getResponse().getBody().bad) throw new Error('refused'); }",
    })
    item = container.create_item({"id": "a", "pk": "p"}, pre_trigger_include="stamp")
    assert item["stamped"] is True
    assert container.create_item({"id": "b", "pk": "p"})["id"] == "b"
    assert "stamped" not in container.read_item("b", partition_key="p")
    with pytest.raises(CosmosHttpResponseError) as failure:
        container.create_item({"id": "c", "pk": "p", "bad": True}, post_trigger_include="refuse")
    assert failure.value.status_code == 400
    with pytest.raises(CosmosResourceNotFoundError):
        container.read_item("c", partition_key="p")
    # A Create trigger on an upsert is refused.
    with pytest.raises(CosmosHttpResponseError) as failure:
        container.upsert_item({"id": "a", "pk": "p"}, pre_trigger_include="stamp")
    assert failure.value.status_code == 400


def test_udfs_in_queries(container):
    container.scripts.create_user_defined_function({
        "id": "tax", "body": "function (income) { return income * 0.25; }"})
    for i, income in enumerate([100, 1000, 10000]):
        container.create_item({"id": str(i), "pk": "p", "income": income})
    taxed = list(container.query_items(
        "SELECT c.id, udf.tax(c.income) AS tax FROM c WHERE udf.tax(c.income) > 100",
        partition_key="p"))
    assert taxed == [{"id": "1", "tax": 250}, {"id": "2", "tax": 2500}]
    across = list(container.query_items(
        "SELECT VALUE udf.tax(c.income) FROM c", enable_cross_partition_query=True))
    assert sorted(across) == [25, 250, 2500]
