from azure.cosmos import PartitionKey


def test_items_expire(cosmos_emulator, cosmos_database):  # the plugin's fixtures
    items = cosmos_database.create_container("items", PartitionKey("/pk"), default_ttl=10)
    items.create_item({"id": "a", "pk": "a"})
    cosmos_emulator.advance(9)  # 9 s pass at once, for the emulator only
    assert [item["id"] for item in items.read_all_items()] == ["a"]
    cosmos_emulator.advance(1)  # the 10th second: expired, gone from every API
    assert list(items.read_all_items()) == []
