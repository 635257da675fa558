"""Request units and throttling through the Python SDK (docs/src/request-units.md).

An emulator of their own, started with --rate-limit on the manual clock: a
400 RU/s container's partition spends its budget each second of that clock,
so what the SDK retries, how long it waits and when a 429 reaches the
application are all deterministic. A thread moves the clock when a test
needs the second to pass while the SDK waits.
"""

from __future__ import annotations

import collections
import threading
import time

import pytest
from azure.cosmos import CosmosClient, PartitionKey, exceptions

from conftest import unique
from emulator import KEY, Emulator, new_workdir

BUDGET = 400.0  # RU/s of a container created without throughput, one partition


@pytest.fixture(scope="module")
def limited():
    emu = Emulator(tls=False, workdir=new_workdir(), extra_args=["--rate-limit"])
    yield emu
    emu.stop()


@pytest.fixture
def container(limited):
    client = CosmosClient(limited.endpoint, KEY)
    db = client.create_database(unique("db"))
    yield db.create_container(unique("c"), PartitionKey("/pk"))
    client.delete_database(db.id)


def item(i: int) -> dict:
    return {"id": f"i{i}", "pk": "p", "blob": "x" * 800}


def spend_the_second(container) -> int:
    """Creates items until the partition's second is spent: the SDK's own
    retries cannot help, the clock does not move. Returns how many were made."""
    made = 0
    with pytest.raises(exceptions.CosmosHttpResponseError) as throttled:
        while True:
            container.create_item(item(made))
            made += 1
    assert throttled.value.status_code == 429
    return made


def test_a_create_throttled_once_is_retried_after_the_advertised_wait(limited, container):
    spend_the_second(container)
    # The second passes (on the emulator's clock) while the SDK waits.
    mover = threading.Timer(0.3, lambda: limited.clock.advance(1))
    mover.start()
    started = time.monotonic()
    created = container.create_item({"id": "after", "pk": "p"})
    waited = time.monotonic() - started
    mover.join()
    assert created["id"] == "after"
    # One retry, after the advertised 1000 ms. (azure-cosmos 4.17.1 writes its
    # throttle counters into last_response_headers, then replaces that dict
    # with the successful response's: on success they are not visible. They
    # are on a 429 that reaches the application: the next test.)
    assert 0.95 <= waited < 1.9, waited


def test_a_partition_that_stays_spent_surfaces_as_429_3200_after_nine_retries(limited, container):
    made = spend_the_second(container)
    started = time.monotonic()
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        container.create_item({"id": "never", "pk": "p"})
    waited = time.monotonic() - started
    assert refused.value.status_code == 429
    assert refused.value.sub_status == 3200
    assert refused.value.headers["x-ms-retry-after-ms"] == "1000"
    # Nine retries of the advertised 1000 ms, then the tenth 429 is the app's.
    counters = container.client_connection.last_response_headers
    assert counters["x-ms-throttle-retry-count"] == 9
    assert counters["x-ms-throttle-retry-wait-time-ms"] == 9000
    assert 8.5 <= waited < 20, waited
    limited.clock.advance(1)
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        container.read_item("never", "p")
    assert len(list(container.read_all_items())) == made, "nothing throttled was written"


def test_an_import_completes_through_retries_within_the_budget_of_each_second(limited, container):
    stop = threading.Event()

    def tick():
        # A fast clock: one emulator second every 150 ms. A control request
        # that fails under load is tried again: the ticker must outlive it,
        # or the clock stops and the import meets the SDK's last retry.
        while not stop.wait(0.15):
            try:
                limited.clock.advance(1)
            except Exception:  # noqa: BLE001 - any failure: tick again
                pass

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    charges = []
    try:
        for i in range(150):
            container.create_item(item(i))
            charges.append(float(container.client_connection.last_response_headers["x-ms-request-charge"]))
    finally:
        stop.set()
        ticker.join()
    spent = collections.Counter()
    by_id = {c["id"]: c["_ts"] for c in container.read_all_items()}
    assert len(by_id) == 150, "every item arrived"
    for i, charge in enumerate(charges):
        spent[by_id[f"i{i}"]] += charge
    largest = max(charges)
    assert len(spent) > 1, "the import needed more than one second"
    for second, total in spent.items():
        assert total < BUDGET + largest, f"second {second} spent {total}"


def test_charges_follow_the_documented_points(limited, container):
    small = container.create_item({"id": "s", "pk": "p", "blob": "x" * 700})
    insert = float(container.client_connection.last_response_headers["x-ms-request-charge"])
    container.read_item("s", "p")
    read = float(container.client_connection.last_response_headers["x-ms-request-charge"])
    container.replace_item("s", small)
    replace = float(container.client_connection.last_response_headers["x-ms-request-charge"])
    assert read == 1.0, "a 1 KB point read is 1 RU"
    assert 5.5 <= insert < 7, insert
    assert abs(replace - 2 * insert) < 0.02, (replace, insert)


def impatient(limited) -> CosmosClient:
    """A client that meets a 429 after one quick retry instead of nine waits:
    the spent second stays spent on the manual clock, so waiting helps nothing."""
    return CosmosClient(limited.endpoint, KEY, retry_throttle_total=1, retry_fixed_interval=1)


def spend_quickly(container, prefix: str) -> float:
    """Creates items until the second's budget refuses one: the RU they spent."""
    spent = 0.0
    with pytest.raises(exceptions.CosmosHttpResponseError) as throttled:
        for i in range(10_000):
            container.create_item({"id": f"{prefix}{i}", "pk": "p", "blob": "x" * 800})
            spent += float(container.client_connection.last_response_headers["x-ms-request-charge"])
    assert throttled.value.status_code == 429
    assert throttled.value.sub_status == 3200
    return spent


def test_one_busy_container_may_use_its_shared_databases_whole_throughput(limited):
    client = impatient(limited)
    db = client.create_database(unique("shared"), offer_throughput=400)
    try:
        busy = db.create_container(unique("busy"), PartitionKey("/pk"))
        idle = db.create_container(unique("idle"), PartitionKey("/pk"))
        own = db.create_container(unique("own"), PartitionKey("/pk"), offer_throughput=400)
        limited.clock.advance(1)
        # The other container idle, the busy one spends all 400 RU of the
        # database's second (the service shares it; not 400 / 2).
        spent = spend_quickly(busy, "a")
        assert BUDGET <= spent < BUDGET + 15, spent
        # The second is the database's: the idle container is refused too...
        with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
            idle.create_item({"id": "b", "pk": "p"})
        assert refused.value.status_code == 429
        # ...while a container of its own throughput keeps its budget apart.
        assert own.create_item({"id": "c", "pk": "p"})["id"] == "c"
    finally:
        limited.clock.advance(1)
        client.delete_database(db.id)


def test_an_after_rule_answers_neither_a_throttled_nor_a_refused_create(limited):
    client = impatient(limited)
    db = client.create_database(unique("db"))
    container = db.create_container(unique("c"), PartitionKey("/pk"))
    limited.clock.advance(1)
    rule = limited.control.add_fault(
        {
            "match": {"database": db.id, "container": container.id, "operation": "create"},
            "respond": {"status": 408},
            "when": "after",
        }
    )

    def hits() -> int:
        return next(f for f in limited.control.faults() if f["id"] == rule["id"])["hitCount"]

    try:
        # The create ran and was kept, then the rule answered: the SDK does
        # not retry a write's 408, the app sees it and the item is there.
        with pytest.raises(exceptions.CosmosHttpResponseError) as late:
            container.create_item({"id": "a", "pk": "p"})
        assert late.value.status_code == 408
        assert "the operation ran and its changes were kept" in late.value.message
        assert hits() == 1
        assert container.read_item("a", "p")["id"] == "a"
        # A create refused with 409 gets its own answer, and is no hit.
        with pytest.raises(exceptions.CosmosResourceExistsError):
            container.create_item({"id": "a", "pk": "p"})
        assert hits() == 1
        # A second spent by upserts (the rule matches creates only): a create
        # throttled by the budget is the budget's 429, never the rule's 408.
        with pytest.raises(exceptions.CosmosHttpResponseError) as throttled:
            for i in range(10_000):
                container.upsert_item({"id": f"u{i}", "pk": "p", "blob": "x" * 800})
        assert throttled.value.status_code == 429
        with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
            container.create_item({"id": "b", "pk": "p"})
        assert refused.value.status_code == 429
        assert refused.value.sub_status == 3200
        assert hits() == 1, "a throttled request is no hit"
        limited.clock.advance(1)
        with pytest.raises(exceptions.CosmosResourceNotFoundError):
            container.read_item("b", "p")
    finally:
        limited.control.clear_faults()
        limited.clock.advance(1)
        client.delete_database(db.id)
