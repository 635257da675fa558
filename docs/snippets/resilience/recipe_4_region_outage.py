# ANCHOR: recipe
from azure.cosmos import CosmosClient, PartitionKey
from control import ENDPOINT, KEY, control

control.reset()
# Reads prefer eastus; westus (the first of --regions) takes the writes.
client = CosmosClient(ENDPOINT, KEY, preferred_locations=["eastus", "westus"])
items = client.create_database("shop").create_container("orders", PartitionKey("/pk"))
items.create_item({"id": "o1", "pk": "p"})

ports = {r["name"]: r["endpoint"] for r in control.regions()}
served = []
hook = lambda response: served.append(response.http_request.url)

items.read_item("o1", "p", raw_response_hook=hook)
assert served[-1].startswith(ports["eastus"])

# eastus goes away (its port closes) for a minute of the test clock.
control.take_down("eastus", mode="refuse", for_ms=60000)
items.read_item("o1", "p", raw_response_hook=hook)
assert served[-1].startswith(ports["westus"])  # the SDK failed over
control.bring_up("eastus")
# ANCHOR_END: recipe
