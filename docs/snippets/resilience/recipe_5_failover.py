# ANCHOR: recipe
from azure.cosmos import CosmosClient, PartitionKey
from control import ENDPOINT, KEY, control

control.reset()
client = CosmosClient(ENDPOINT, KEY, preferred_locations=["westus", "eastus"])
items = client.create_database("shop").create_container("orders", PartitionKey("/pk"))
ports = {r["name"]: r["endpoint"] for r in control.regions()}

# The write region moves: westus now answers writes with 403/3, the SDK
# reads the account again and writes to eastus.
control.fail_over("eastus")
served = []
items.create_item({"id": "o1", "pk": "p"},
                  raw_response_hook=lambda r: served.append(r.http_request.url))
assert served[-1].startswith(ports["eastus"])
# ANCHOR_END: recipe
