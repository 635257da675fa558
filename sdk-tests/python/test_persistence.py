"""Persistence through the official SDK (issue 14): items written through
azure-cosmos into an emulator started with --data-dir come back after the
emulator is killed (SIGKILL) and started again on the same directory: point
reads, queries, and the change feed resumed from a continuation the SDK
handed out before the kill (nothing seen twice, nothing missed)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from azure.cosmos import CosmosClient, PartitionKey

from emulator import KEY, Emulator, new_workdir


def ids(items):
    return [i["id"] for i in items]


def test_items_queries_and_the_change_feed_survive_sigkill():
    data = Path(tempfile.mkdtemp(prefix="cosmos-sdk-persistence-")) / "data"
    args = ["--data-dir", str(data)]
    emu = Emulator(tls=False, workdir=new_workdir(), extra_args=args)
    try:
        client = CosmosClient(emu.endpoint, KEY)
        db = client.create_database("persisted")
        c = db.create_container("c", partition_key=PartitionKey(path="/pk"), default_ttl=-1)
        for i in range(10):
            c.create_item({"id": f"a{i}", "pk": f"p{i % 3}", "n": i})
        c.upsert_item({"id": "a3", "pk": "p0", "n": 33})
        written = {i: c.read_item(f"a{i}", partition_key=f"p{i % 3}") for i in range(10)}
        # The first page of the feed, and the SDK's continuation after it.
        pages = c.query_items_change_feed(start_time="Beginning", max_item_count=4).by_page()
        first_page = ids(next(pages))
        assert first_page == ["a0", "a1", "a2", "a4"]
        continuation = pages.continuation_token
        assert continuation
    finally:
        emu.kill()

    emu = Emulator(tls=False, workdir=new_workdir(), extra_args=args)
    try:
        client = CosmosClient(emu.endpoint, KEY)
        c = client.get_database_client("persisted").get_container_client("c")
        assert c.read()["defaultTtl"] == -1
        for i, before in written.items():
            after = c.read_item(f"a{i}", partition_key=f"p{i % 3}")
            assert after == before, "the item and its system properties, as written"
        assert list(c.query_items("SELECT VALUE COUNT(1) FROM c", enable_cross_partition_query=True)) == [10]
        found = c.query_items("SELECT c.id FROM c WHERE c.n > 8", enable_cross_partition_query=True)
        assert sorted(ids(found)) == ["a3", "a9"]
        for i in range(3):
            c.create_item({"id": f"b{i}", "pk": "p1"})
        # The feed goes on from before the kill: the rest of the old writes, then the new ones.
        resumed = ids(c.query_items_change_feed(continuation=continuation))
        assert resumed == ["a5", "a6", "a7", "a8", "a9", "a3", "b0", "b1", "b2"]
        assert sorted(first_page + resumed) == sorted([f"a{i}" for i in range(10)] + ["b0", "b1", "b2"])
    finally:
        emu.stop()
        shutil.rmtree(data.parent, ignore_errors=True)
