# ANCHOR: recipe
from azure.cosmos import CosmosClient, PartitionKey, exceptions
from control import ENDPOINT, KEY, control

control.reset()
# One throttle retry instead of nine: the 429 reaches this code after one wait.
client = CosmosClient(ENDPOINT, KEY, retry_throttle_total=1)
items = client.create_database("shop").create_container(
    "orders", PartitionKey("/pk"), offer_throughput=400)

# --rate-limit: 400 RU/s for this one-partition container, per second of the
# test clock, which stands still: the second's budget runs out.
written, spent = 0, 0.0
try:
    while True:
        items.create_item({"id": f"o{written}", "pk": "p", "text": "x" * 800})
        spent += float(items.client_connection.last_response_headers["x-ms-request-charge"])
        written += 1
except exceptions.CosmosHttpResponseError as error:
    assert (error.status_code, error.sub_status) == (429, 3200)
    assert int(error.headers["x-ms-retry-after-ms"]) <= 1000
print(f"{written} writes, {spent:.1f} RU in one second")  # ~400 RU
assert spent >= 400

control.advance(1)  # the next second: refilled
items.create_item({"id": "later", "pk": "p"})
# ANCHOR_END: recipe
