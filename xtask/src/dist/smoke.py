"""A short smoke test of a release binary through the official Python SDK:
create a database and a container with a default TTL, write, query, move
the emulator's test clock past the TTL, and see the item gone from reads
and queries. Run by `cargo xtask dist --run` against each binary that runs
on this machine (natively, under qemu-user or under wine).

Usage: python smoke.py ENDPOINT
"""

import base64
import email.utils
import hashlib
import hmac
import json
import sys
import urllib.parse
import urllib.request

from azure.cosmos import CosmosClient, PartitionKey, exceptions

KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="


def signed(verb):
    """Master-key headers as for the account read (resource type and link
    empty): how the emulator's control routes are signed."""
    date = email.utils.formatdate(usegmt=True)
    payload = f"{verb.lower()}\n\n\n{date.lower()}\n\n"
    signature = base64.b64encode(
        hmac.new(base64.b64decode(KEY), payload.encode(), hashlib.sha256).digest()
    ).decode()
    return {
        "authorization": urllib.parse.quote(f"type=master&ver=1.0&sig={signature}", safe=""),
        "x-ms-date": date,
        "x-ms-version": "2018-12-31",
        "content-type": "application/json",
    }


def clock(endpoint, body=None):
    verb = "GET" if body is None else "POST"
    request = urllib.request.Request(
        endpoint.rstrip("/") + "/_emulator/clock",
        data=None if body is None else json.dumps(body).encode(),
        headers=signed(verb),
        method=verb,
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)["now"]


def main(endpoint):
    client = CosmosClient(endpoint, KEY)
    database = client.create_database_if_not_exists("smoke")
    items = database.create_container_if_not_exists(
        "items", PartitionKey("/pk"), default_ttl=10
    )
    items.create_item({"id": "a", "pk": "p", "n": 1})
    items.create_item({"id": "b", "pk": "p", "n": 2, "ttl": -1})
    query = "SELECT VALUE c.id FROM c WHERE c.n > 0 ORDER BY c.id"
    found = list(items.query_items(query, enable_cross_partition_query=True))
    assert found == ["a", "b"], found

    before = clock(endpoint)
    assert clock(endpoint, {"advance": 9}) == before + 9
    assert items.read_item("a", partition_key="p")["n"] == 1
    clock(endpoint, {"advance": 1})
    try:
        items.read_item("a", partition_key="p")
        raise AssertionError("item a should have expired at its 10th second")
    except exceptions.CosmosResourceNotFoundError:
        pass
    found = list(items.query_items(query, enable_cross_partition_query=True))
    assert found == ["b"], found  # ttl -1: never expires
    count = list(items.query_items("SELECT VALUE COUNT(1) FROM c", partition_key="p"))
    assert count == [1], count
    client.delete_database("smoke")
    print("smoke: create, TTL through the test clock and query: passed")


if __name__ == "__main__":
    main(sys.argv[1])
