import { CosmosClient } from "@azure/cosmos";

const KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";
const client = new CosmosClient({ endpoint: "http://localhost:8081", key: KEY });
const { database } = await client.databases.createIfNotExists({ id: "app" });
const { container } = await database.containers.createIfNotExists({
  id: "items",
  partitionKey: { paths: ["/pk"] },
  defaultTtl: 3600,
});
await container.items.upsert({ id: "1", pk: "a", ttl: 60 });
const { resource } = await container.item("1", "a").read();
console.log(resource._ts);
