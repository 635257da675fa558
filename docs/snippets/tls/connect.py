from azure.cosmos import CosmosClient, documents

KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
ssl = documents.SSLConfiguration()
ssl.SSLCaCerts = "emulator.pem"
policy = documents.ConnectionPolicy()
policy.SSLConfiguration = ssl
# azure-cosmos skips verification for localhost/127.0.0.1 unless an
# SSLConfiguration is given: this one makes it verify against the emulator's CA.
client = CosmosClient("https://localhost:8081/", KEY, connection_policy=policy)
print([db["id"] for db in client.list_databases()])
