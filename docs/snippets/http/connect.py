from azure.cosmos import CosmosClient, PartitionKey

KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
client = CosmosClient("http://localhost:8081/", KEY)
db = client.create_database_if_not_exists("app")
items = db.create_container_if_not_exists("items", PartitionKey("/pk"), default_ttl=3600)
items.upsert_item({"id": "1", "pk": "a", "ttl": 60})
print(items.read_item("1", partition_key="a")["_ts"])
