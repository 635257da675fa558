// ANCHOR: recipe
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";
import { ENDPOINT, KEY, control } from "./control.mjs";

await control.reset();
const ports = Object.fromEntries(
  (await control.regions()).map((r) => [r.name, r.endpoint]),
);
const served = [];
// Reads prefer eastus; westus (the first of --regions) takes the writes.
const client = new CosmosClient({
  endpoint: ENDPOINT,
  key: KEY,
  connectionPolicy: { preferredLocations: ["eastus", "westus"] },
  plugins: [{ on: "request", plugin: (context, node, next) => (served.push(context.endpoint), next(context)) }],
});
const { database } = await client.databases.create({ id: "shop" });
const { container: items } = await database.containers.create({ id: "orders", partitionKey: "/pk" });
await items.items.create({ id: "o1", pk: "p" });

await items.item("o1", "p").read();
assert.equal(served.at(-1), ports.eastus);

// eastus answers 503 for a minute of the test clock. (This SDK fails over on a
// 503, not on a refused connection: see the table above.)
await control.takeDown("eastus", { mode: "503", forMs: 60000 });
await items.item("o1", "p").read();
assert.equal(served.at(-1), ports.westus); // the SDK went to the next region
await control.bringUp("eastus");
client.dispose();
// ANCHOR_END: recipe
