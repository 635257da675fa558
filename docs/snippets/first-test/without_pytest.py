# ANCHOR: use
import cosmos_emulator
from azure.cosmos import PartitionKey

with cosmos_emulator.start() as emulator:  # a free port, the manual test clock
    client = emulator.client()  # an azure.cosmos CosmosClient for it
    items = client.create_database("db").create_container(
        "items", PartitionKey("/pk"), default_ttl=60
    )
    items.create_item({"id": "a", "pk": "a"})
    emulator.advance(60)
    assert list(items.read_all_items()) == []
# ANCHOR_END: use
