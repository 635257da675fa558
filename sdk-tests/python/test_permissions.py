"""Users, permissions and resource tokens through the official SDK: the
master-key client creates users and permissions; a CosmosClient built from
the permission's token reads and writes where the permission allows, is
refused (403) elsewhere, and gets 401 once the token expired on the
emulator's clock."""

import pytest
from azure.cosmos import CosmosClient, PartitionKey
from azure.cosmos.documents import PermissionMode
from azure.cosmos.exceptions import (
    CosmosHttpResponseError,
    CosmosResourceExistsError,
    CosmosResourceNotFoundError,
)

from conftest import unique


@pytest.fixture
def container(database):
    c = database.create_container(unique("coll"), partition_key=PartitionKey(path="/pk"))
    c.create_item({"id": "a", "pk": "p1"})
    c.create_item({"id": "b", "pk": "p2"})
    return c


def token_client(emulator, credential):
    return CosmosClient(emulator.endpoint, credential, **emulator.client_kwargs())


def grant(user, container, mode, **extra):
    body = {"id": unique("perm"), "permissionMode": mode, "resource": container.container_link}
    body.update(extra)
    return user.create_permission(body).properties


def forbidden(call):
    with pytest.raises(CosmosHttpResponseError) as caught:
        call()
    assert caught.value.status_code == 403, caught.value
    assert "Insufficient permissions" in caught.value.message
    return caught.value


def test_users_create_read_list_query_replace_delete(database):
    user = database.create_user({"id": "alice"})
    props = user.read()
    assert props["id"] == "alice"
    assert props["_permissions"] == "permissions/"
    for field in ("_rid", "_self", "_etag", "_ts"):
        assert field in props, field
    with pytest.raises(CosmosResourceExistsError):
        database.create_user({"id": "alice"})
    with pytest.raises(CosmosResourceNotFoundError):
        database.get_user_client("nobody").read()

    database.upsert_user({"id": "bob"})
    assert sorted(u["id"] for u in database.list_users()) == ["alice", "bob"]
    found = list(database.query_users(
        "SELECT * FROM u WHERE u.id = @id", parameters=[{"name": "@id", "value": "bob"}]))
    assert [u["id"] for u in found] == ["bob"]

    renamed = database.replace_user("bob", {"id": "robert"})
    assert renamed.read()["id"] == "robert"
    with pytest.raises(CosmosResourceNotFoundError):
        database.get_user_client("bob").read()
    database.delete_user("robert")
    assert [u["id"] for u in database.list_users()] == ["alice"]


def test_permissions_create_read_list_upsert_delete(database, container):
    user = database.create_user({"id": "alice"})
    body = {"id": "read-c", "permissionMode": PermissionMode.Read, "resource": container.container_link}
    created = user.create_permission(body)
    # Echoed as sent: the SDK sends "read" (PermissionMode.Read), as the
    # service echoes the JavaScript SDK's "all".
    assert created.properties["permissionMode"] == PermissionMode.Read == "read"
    assert created.properties["resource"] == container.container_link
    assert created.properties["_token"].startswith("type=resource&ver=1.0&sig=")
    with pytest.raises(CosmosResourceExistsError):
        user.create_permission(body)

    read = user.get_permission("read-c")
    assert read.properties["_token"] != ""
    assert [p["id"] for p in user.list_permissions()] == ["read-c"]
    found = list(user.query_permissions("SELECT * FROM p WHERE p.permissionMode = 'read'"))
    assert [p["id"] for p in found] == ["read-c"]

    upserted = user.upsert_permission(dict(body, permissionMode=PermissionMode.All))
    assert upserted.properties["permissionMode"] == "all"
    replaced = user.replace_permission("read-c", body)
    assert replaced.properties["permissionMode"] == "read"
    user.delete_permission("read-c")
    with pytest.raises(CosmosResourceNotFoundError):
        user.get_permission("read-c")


def test_all_token_reads_and_writes_its_container_only(emulator, database, container):
    user = database.create_user({"id": unique("user")})
    other = database.create_container(unique("coll"), partition_key=PartitionKey(path="/pk"))
    token = grant(user, container, PermissionMode.All)["_token"]

    client = token_client(emulator, {container.container_link: token})
    mine = client.get_database_client(database.id).get_container_client(container.id)
    assert mine.read_item("a", partition_key="p1")["pk"] == "p1"
    mine.create_item({"id": "c", "pk": "p3"})
    mine.upsert_item({"id": "a", "pk": "p1", "changed": True})
    assert sorted(i["id"] for i in mine.query_items(
        "SELECT * FROM c", enable_cross_partition_query=True)) == ["a", "b", "c"]
    assert [i["id"] for i in mine.query_items("SELECT * FROM c", partition_key="p2")] == ["b"]
    mine.delete_item("c", partition_key="p3")
    assert container.read_item("a", partition_key="p1")["changed"] is True

    theirs = client.get_database_client(database.id).get_container_client(other.id)
    forbidden(lambda: theirs.create_item({"id": "x", "pk": "p1"}))
    # For the account's databases the SDK finds no token to send at all: 401.
    name = unique("db")
    with pytest.raises(CosmosHttpResponseError) as caught:
        client.create_database(name)
    assert caught.value.status_code == 401
    assert name not in [d["id"] for d in database.client_connection.ReadDatabases()]
    forbidden(lambda: client.get_database_client(database.id).create_user({"id": "mallory"}))


def test_read_token_refuses_writes(emulator, database, container):
    user = database.create_user({"id": unique("user")})
    token = grant(user, container, PermissionMode.Read)["_token"]
    client = token_client(emulator, {container.container_link: token})
    mine = client.get_database_client(database.id).get_container_client(container.id)
    assert mine.read_item("b", partition_key="p2")["id"] == "b"
    assert len(list(mine.read_all_items())) == 2
    forbidden(lambda: mine.create_item({"id": "x", "pk": "p1"}))
    forbidden(lambda: mine.delete_item("a", partition_key="p1"))
    assert container.read_item("a", partition_key="p1")["id"] == "a"


def test_partition_key_token_is_confined_to_its_partition(emulator, database, container):
    user = database.create_user({"id": unique("user")})
    token = grant(user, container, PermissionMode.All, resourcePartitionKey=["p1"])["_token"]
    client = token_client(emulator, {container.container_link: token})
    mine = client.get_database_client(database.id).get_container_client(container.id)
    assert mine.read_item("a", partition_key="p1")["id"] == "a"
    mine.create_item({"id": "n", "pk": "p1"})
    assert sorted(i["id"] for i in mine.query_items("SELECT * FROM c", partition_key="p1")) == ["a", "n"]
    forbidden(lambda: mine.read_item("b", partition_key="p2"))
    forbidden(lambda: mine.create_item({"id": "n", "pk": "p2"}))
    forbidden(lambda: list(mine.query_items("SELECT * FROM c", enable_cross_partition_query=True)))


def test_token_expires_on_the_emulator_clock(emulator, database, container, clock):
    user = database.create_user({"id": unique("user")})
    perm = user.create_permission(
        {"id": "short", "permissionMode": PermissionMode.Read, "resource": container.container_link},
        resource_token_expiry_seconds=600,
    )
    client = token_client(emulator, {container.container_link: perm.properties["_token"]})
    mine = client.get_database_client(database.id).get_container_client(container.id)
    assert mine.read_item("a", partition_key="p1")["id"] == "a"
    clock.advance(600)
    with pytest.raises(CosmosHttpResponseError) as caught:
        mine.read_item("a", partition_key="p1")
    assert caught.value.status_code == 401
    assert "expired" in caught.value.message

    fresh = user.get_permission("short").properties["_token"]
    renewed = token_client(emulator, {container.container_link: fresh})
    again = renewed.get_database_client(database.id).get_container_client(container.id)
    assert again.read_item("a", partition_key="p1")["id"] == "a"
