# ANCHOR: recipe
from azure.cosmos import CosmosClient, PartitionKey, exceptions
from control import ENDPOINT, KEY, control

control.reset()
client = CosmosClient(ENDPOINT, KEY)
items = client.create_database("shop").create_container("orders", PartitionKey("/pk"))

# The write is applied, then the answer is lost: a 408 after the commit.
control.add_fault({  # POST /_emulator/faults
    "match": {"operation": "create"},
    "respond": {"status": 408},
    "when": "after",
    "hits": 1,
})


def create_once(item):
    """What the application does: retry a timed-out create, and take the
    409 of that retry as proof that the first attempt was applied."""
    try:
        return items.create_item(item)
    except exceptions.CosmosHttpResponseError as timeout:
        assert timeout.status_code == 408
        try:
            return items.create_item(item)
        except exceptions.CosmosResourceExistsError:
            return items.read_item(item["id"], item["pk"])


order = create_once({"id": "o1", "pk": "p", "total": 10})
assert order["total"] == 10
# ANCHOR_END: recipe
