"""The change feed through the official SDK (issue 11): query_items_change_feed in
every start mode, by partition key, and the all-versions-and-deletes mode with TTL
expirations as deletes (timeToLiveExpired), over HTTP and HTTPS."""

from datetime import datetime, timezone

from azure.cosmos import PartitionKey

from conftest import unique


def ids(items):
    return [i["id"] for i in items]


def test_latest_version_from_the_beginning_now_and_a_continuation(database):
    c = database.create_container(unique("feed"), partition_key=PartitionKey(path="/pk"))
    c.create_item({"id": "a", "pk": "p", "v": 1})
    c.create_item({"id": "b", "pk": "q"})
    c.upsert_item({"id": "a", "pk": "p", "v": 2})
    feed = list(c.query_items_change_feed(start_time="Beginning"))
    assert ids(feed) == ["b", "a"], "in the order of the last write"
    assert feed[1]["v"] == 2 and "_lsn" in feed[1]
    token = c.client_connection.last_response_headers["etag"]
    assert token
    # From now: nothing, then what comes after.
    now = c.query_items_change_feed(start_time="Now")
    assert list(now) == []
    continuation = c.client_connection.last_response_headers["etag"]
    c.create_item({"id": "c", "pk": "p"})
    pages = c.query_items_change_feed(start_time="Now").by_page()
    for _ in pages:
        pass
    # A continuation from the SDK's own token resumes after what it read.
    iterator = c.query_items_change_feed(start_time="Beginning", max_item_count=1).by_page()
    first_page = list(next(iterator))
    assert ids(first_page) == ["b"]
    resumed = list(c.query_items_change_feed(continuation=iterator.continuation_token))
    assert ids(resumed) == ["a", "c"]
    assert continuation


def test_latest_version_from_a_point_in_time_and_for_one_partition_key(database, clock):
    c = database.create_container(unique("feed"), partition_key=PartitionKey(path="/pk"))
    c.create_item({"id": "early", "pk": "p"})
    clock.advance(3600)
    c.create_item({"id": "late", "pk": "p"})
    c.create_item({"id": "other", "pk": "q"})
    since = datetime.fromtimestamp(clock.now() - 60, tz=timezone.utc)
    assert ids(c.query_items_change_feed(start_time=since)) == ["late", "other"]
    assert ids(c.query_items_change_feed(start_time="Beginning", partition_key="q")) == ["other"]
    assert ids(c.query_items_change_feed(start_time="Beginning", partition_key="p")) == ["early", "late"]
    # Feed ranges: the container's one range, and the range of one key.
    ranges = list(c.read_feed_ranges())
    assert len(ranges) == 1
    assert ids(c.query_items_change_feed(feed_range=ranges[0], start_time="Beginning")) == [
        "early", "late", "other"]
    key_range = c.feed_range_from_partition_key("q")
    assert ids(c.query_items_change_feed(feed_range=key_range, start_time="Beginning")) == ["other"]


def test_deletes_and_expired_items_never_appear_in_latest_version(database, clock):
    c = database.create_container(unique("feed"), partition_key=PartitionKey(path="/pk"),
                                  default_ttl=10)
    c.create_item({"id": "kept", "pk": "p", "ttl": -1})
    c.create_item({"id": "deleted", "pk": "p"})
    c.create_item({"id": "expires", "pk": "p"})
    c.delete_item("deleted", partition_key="p")
    clock.advance(11)
    clock.purge()
    assert ids(c.query_items_change_feed(start_time="Beginning")) == ["kept"]


def test_all_versions_and_deletes_with_a_ttl_delete(database, clock):
    c = database.create_container(unique("feed"), partition_key=PartitionKey(path="/pk"),
                                  default_ttl=10)
    # From now, then from the etag of that answer, as Microsoft's sample does
    # (an empty start yields no page, so no composite token).
    assert list(c.query_items_change_feed(mode="AllVersionsAndDeletes", start_time="Now")) == []
    etag = c.client_connection.last_response_headers["etag"]
    t0 = clock.now()
    c.create_item({"id": "a", "pk": "p"})
    c.upsert_item({"id": "a", "pk": "p", "v": 2})
    c.create_item({"id": "gone", "pk": "p", "ttl": -1})
    c.delete_item("gone", partition_key="p")
    clock.advance(15)
    clock.purge()  # returns once `a` (due) is purged, by it or the background purge
    changes = list(c.query_items_change_feed(
        mode="AllVersionsAndDeletes", continuation=etag))
    summary = [(ch["metadata"]["operationType"],
                ch.get("current", {}).get("id") or ch["metadata"].get("id"),
                ch["metadata"].get("timeToLiveExpired", False)) for ch in changes]
    assert summary == [("create", "a", False), ("replace", "a", False),
                       ("create", "gone", False), ("delete", "gone", False),
                       ("delete", "a", True)]
    ttl_delete = changes[-1]["metadata"]
    assert ttl_delete["crts"] >= t0 + 10, "never before the expiry instant"
    assert ttl_delete["partitionKey"] == {"pk": "p"}
