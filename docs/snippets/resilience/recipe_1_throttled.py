# ANCHOR: recipe
from azure.cosmos import CosmosClient, PartitionKey, exceptions
from control import ENDPOINT, KEY, control

control.reset()  # POST /_emulator/reset: a clean account, no data, no rules
client = CosmosClient(ENDPOINT, KEY)
items = client.create_database("shop").create_container("orders", PartitionKey("/pk"))

# The next three creates answer 429, as a throttled service does.
control.add_fault({
    "match": {"operation": "create"},
    "respond": {"status": 429, "subStatus": 3200, "retryAfterMs": 50},
    "hits": 3,
})
items.create_item({"id": "o1", "pk": "p"})  # the SDK waits 3 x 50 ms and succeeds
assert control.faults()[0]["hitCount"] == 3

# Throttled for good: after its 9 retries, the SDK gives the 429 to the application.
control.clear_faults()
control.add_fault({
    "match": {"operation": "create"},
    "respond": {"status": 429, "subStatus": 3200, "retryAfterMs": 10},
})
try:
    items.create_item({"id": "o2", "pk": "p"})
    raise AssertionError("expected a 429")
except exceptions.CosmosHttpResponseError as error:
    assert (error.status_code, error.sub_status) == (429, 3200)
control.clear_faults()
# ANCHOR_END: recipe
