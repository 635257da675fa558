"""A multi-region account (--regions; docs/src/regions.md) through the official azure-cosmos SDK:
what an application's tests check before a region outage. An emulator of its own with two
regions, West US (the write region) and East US, each on its own port; the SDK is given
preferred locations and finds the regions in the account document, as against the service.

Which region served each request is read from the URLs the SDK sent (raw_response_hook).
The SDK's behaviour these tests pin (azure-cosmos 4.17):
- a preferred read region that refuses connections is marked unavailable and the read goes
  to the next region (ServiceRequestError: one try per endpoint);
- a read region answering 503 is left for the next region (_ServiceUnavailableRetryPolicy);
- after a failover, a write sent to the old write region gets 403/3: the SDK re-reads the
  account and retries on the new write region (EndpointDiscoveryRetryPolicy);
- a session read in a region whose replica is behind the session token gets 404/1002: the
  SDK retries it on the write region (_SessionRetryPolicy)."""

from __future__ import annotations

import pytest
from azure.cosmos import CosmosClient, PartitionKey

from conftest import unique
from emulator import KEY, Emulator, new_workdir


@pytest.fixture(scope="module")
def regional():
    emu = Emulator(tls=False, workdir=new_workdir(), extra_args=["--regions", "West US,East US"])
    yield emu
    emu.stop()


@pytest.fixture
def ports(regional):
    return {r["name"]: r["endpoint"].rstrip("/").rsplit(":", 1)[1] for r in regional.control.regions()}


@pytest.fixture
def restore(regional):
    yield
    regional.control.reset()


def client_preferring(regional, *regions) -> CosmosClient:
    return CosmosClient(regional.endpoint, KEY, preferred_locations=list(regions))


class Served:
    """The port of every request the SDK sent, in order."""

    def __init__(self):
        self.ports = []

    def __call__(self, response):
        url = response.http_request.url
        self.ports.append(url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])


def setup_item(client: CosmosClient):
    db = client.create_database(unique("db"))
    container = db.create_container(unique("c"), PartitionKey("/pk"))
    container.create_item({"id": "a", "pk": "p", "v": 1})
    return container


def test_the_printed_endpoint_names_localhost_and_preferred_regions_work_with_it(regional, ports, restore):
    # The endpoint every helper hands the SDK (docs/src/running.md); both
    # loopbacks answer on its port.
    assert regional.endpoint.startswith("http://localhost:"), regional.endpoint
    client = client_preferring(regional, "East US", "West US")
    container = setup_item(client)
    served = Served()
    container.upsert_item({"id": "b", "pk": "p"}, raw_response_hook=served)
    assert served.ports == [ports["West US"]], "writes go to the write region"
    served = Served()
    assert container.read_item("a", "p", raw_response_hook=served)["v"] == 1
    assert served.ports == [ports["East US"]], "reads go to the first preferred region"


def test_reads_go_to_the_preferred_region_and_fail_over_when_it_refuses_connections(regional, ports, restore):
    client = client_preferring(regional, "East US", "West US")
    container = setup_item(client)
    served = Served()
    assert container.read_item("a", "p", raw_response_hook=served)["v"] == 1
    assert served.ports == [ports["East US"]], "reads go to the first preferred region"
    # Answered once the region's listener is closed.
    regional.control.take_down("East US", mode="refuse")
    served = Served()
    assert container.read_item("a", "p", raw_response_hook=served)["v"] == 1
    assert served.ports[-1] == ports["West US"], "and to the next one when it is down"


def test_a_read_region_answering_503_is_left_for_the_next(regional, ports, restore):
    client = client_preferring(regional, "East US", "West US")
    container = setup_item(client)
    regional.control.take_down("East US", mode="503")
    served = Served()
    assert container.read_item("a", "p", raw_response_hook=served)["v"] == 1
    assert served.ports[-1] == ports["West US"]


def test_writes_follow_a_failover(regional, ports, restore):
    client = client_preferring(regional, "West US", "East US")
    container = setup_item(client)
    regional.control.fail_over("East US")
    served = Served()
    container.create_item({"id": "b", "pk": "p"}, raw_response_hook=served)
    assert served.ports[-1] == ports["East US"], served.ports
    # The old write region still serves reads.
    assert container.read_item("b", "p")["id"] == "b"


def test_a_session_read_in_a_lagging_region_is_retried_on_the_write_region(regional, ports, restore):
    client = client_preferring(regional, "East US", "West US")
    container = setup_item(client)
    regional.control.set_replication("East US", paused=True)
    container.upsert_item({"id": "a", "pk": "p", "v": 2})
    served = Served()
    statuses = []
    read = container.read_item(
        "a", "p", raw_response_hook=lambda r: (served(r), statuses.append(r.http_response.status_code))
    )
    assert read["v"] == 2
    # East US was behind the session token (404/1002); the write region answered.
    assert served.ports == [ports["East US"], ports["West US"]], (served.ports, statuses)
    assert statuses == [404, 200]
