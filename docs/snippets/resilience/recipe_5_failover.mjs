// ANCHOR: recipe
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";
import { ENDPOINT, KEY, control } from "./control.mjs";

await control.reset();
const ports = Object.fromEntries(
  (await control.regions()).map((r) => [r.name, r.endpoint]),
);
const served = [];
const client = new CosmosClient({
  endpoint: ENDPOINT,
  key: KEY,
  connectionPolicy: { preferredLocations: ["westus", "eastus"] },
  plugins: [{ on: "request", plugin: (context, node, next) => (served.push(context.endpoint), next(context)) }],
});
const { database } = await client.databases.create({ id: "shop" });
const { container: items } = await database.containers.create({ id: "orders", partitionKey: "/pk" });

// The write region moves: westus now answers writes with 403/3, the SDK
// reads the account again and writes to eastus.
await control.failOver("eastus");
await items.items.create({ id: "o1", pk: "p" });
assert.equal(served.at(-1), ports.eastus);
client.dispose();
// ANCHOR_END: recipe
