# ANCHOR: recipe
from azure.cosmos import CosmosClient, PartitionKey
from control import ENDPOINT, KEY, control

control.reset()
client = CosmosClient(ENDPOINT, KEY, preferred_locations=["eastus", "westus"])
items = client.create_database("shop").create_container("orders", PartitionKey("/pk"))
items.create_item({"id": "o1", "pk": "p", "status": "new"})

# eastus's replica stops applying writes: a read there, with the session
# token of the write below, is behind it (404/1002).
control.set_replication("eastus", paused=True)
items.upsert_item({"id": "o1", "pk": "p", "status": "paid"})
statuses = []
order = items.read_item("o1", "p",
                        raw_response_hook=lambda r: statuses.append(r.http_response.status_code))
assert statuses == [404, 200]  # retried on the write region
assert order["status"] == "paid"  # the session's own write is seen
control.set_replication("eastus", paused=False)
# ANCHOR_END: recipe
