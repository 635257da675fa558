"""The image started by Testcontainers for Python's Cosmos DB module, used as
its documentation shows (CosmosDBNoSQLEndpointContainer; the module's own
docstring) with one change: the image name, from COSMOS_EMULATOR_IMAGE.

What the module does, read from its source (testcontainers/community/
cosmosdb/_emulator.py, 4.15.0): binds the container's 8081 to the host's
8081; sets AZURE_COSMOS_EMULATOR_PARTITION_COUNT (the string "None" unless
given), _IP_ADDRESS_OVERRIDE (this host's address), _ENABLE_DATA_PERSISTENCE
("False") and _KEY; waits for a log line matching `Started\\s*$`, then for
https://host:8081/_explorer/index.html and a database listing; copies
emulator.pem out of the container from the older image's path.

Run by `cargo xtask image --test` through podman's Docker API
(DOCKER_HOST), Ryuk off (TESTCONTAINERS_RYUK_DISABLED=true).
"""

import base64
import hashlib
import hmac
import json
import os
import ssl
import tempfile
import urllib.parse
import urllib.request
from email.utils import formatdate

import pytest
from azure.cosmos import CosmosClient, PartitionKey
from azure.cosmos.exceptions import CosmosResourceNotFoundError
from testcontainers.community.cosmosdb import CosmosDBNoSQLEndpointContainer

IMAGE = os.environ.get("COSMOS_EMULATOR_IMAGE", "ghcr.io/owner/cosmos-emulator")


# ANCHOR: usage
def test_the_documented_usage():
    with CosmosDBNoSQLEndpointContainer(image=IMAGE) as emulator:
        db = emulator.insecure_sync_client().create_database_if_not_exists("test")
        assert db.read()["id"] == "test"
        # ANCHOR_END: usage

        # The second documented form: a client of its own on emulator.url.
        client = CosmosClient(url=emulator.url, credential=emulator.key, connection_verify=False)
        assert [d["id"] for d in client.list_databases()] == ["test"]

        # The certificate the module copied out of the container is the one
        # the endpoint serves: a client that verifies TLS against it alone.
        pem = emulator.server_certificate_pem
        assert pem.startswith(b"-----BEGIN CERTIFICATE-----")
        with tempfile.NamedTemporaryFile(suffix=".pem") as bundle:
            bundle.write(pem)
            bundle.flush()
            verified = CosmosClient(url=emulator.url, credential=emulator.key, connection_verify=bundle.name)
            assert [d["id"] for d in verified.list_databases()] == ["test"]


def test_an_item_expires_through_the_test_clock():
    # with_env is the module's (DockerContainer's) documented way to add a
    # variable; the emulator's clock then stands still until moved.
    # ANCHOR: clock
    emulator = CosmosDBNoSQLEndpointContainer(image=IMAGE).with_env("COSMOS_EMULATOR_CLOCK", "manual")
    # ANCHOR_END: clock
    with emulator:
        db = emulator.insecure_sync_client().create_database_if_not_exists("ttl")
        items = db.create_container_if_not_exists("items", PartitionKey("/pk"), default_ttl=60)
        items.create_item({"id": "a", "pk": "a"})
        advance(emulator, 59)
        assert [item["id"] for item in items.read_all_items()] == ["a"]
        assert items.read_item("a", partition_key="a")["id"] == "a"

        advance(emulator, 1)  # the 60th second: expired
        assert list(items.read_all_items()) == []
        with pytest.raises(CosmosResourceNotFoundError):
            items.read_item("a", partition_key="a")


def advance(emulator, seconds):
    """POST /_emulator/clock {"advance": seconds}, signed with the account
    key as an account read is, over HTTPS verified against the emulator's
    certificate."""
    date = formatdate(usegmt=True)
    payload = f"post\n\n\n{date.lower()}\n\n"
    mac = hmac.new(base64.b64decode(emulator.key), payload.encode(), hashlib.sha256)
    token = "type=master&ver=1.0&sig=" + base64.b64encode(mac.digest()).decode()
    request = urllib.request.Request(
        emulator.url + "/_emulator/clock",
        method="POST",
        data=json.dumps({"advance": seconds}).encode(),
        headers={
            "x-ms-date": date,
            "authorization": urllib.parse.quote(token, safe=""),
            "content-type": "application/json",
        },
    )
    context = ssl.create_default_context(cadata=emulator.server_certificate_pem.decode())
    with urllib.request.urlopen(request, context=context) as response:
        assert response.status == 200
        return json.load(response)
