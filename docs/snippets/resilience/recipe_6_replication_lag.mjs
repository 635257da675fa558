// ANCHOR: recipe
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";
import { ENDPOINT, KEY, control } from "./control.mjs";

await control.reset();
const statuses = [];
const client = new CosmosClient({
  endpoint: ENDPOINT,
  key: KEY,
  consistencyLevel: "Session", // this SDK sends session tokens only when asked to
  connectionPolicy: { preferredLocations: ["eastus", "westus"] },
  plugins: [
    {
      on: "request",
      plugin: async (context, node, next) => {
        try {
          const response = await next(context);
          statuses.push(response.code);
          return response;
        } catch (error) {
          statuses.push(error.code);
          throw error;
        }
      },
    },
  ],
});
const { database } = await client.databases.create({ id: "shop" });
const { container: items } = await database.containers.create({ id: "orders", partitionKey: "/pk" });
await items.items.create({ id: "o1", pk: "p", status: "new" });

// eastus's replica stops applying writes: a read there, with the session
// token of the write below, is behind it (404/1002).
await control.setReplication("eastus", { paused: true });
await items.items.upsert({ id: "o1", pk: "p", status: "paid" });
statuses.length = 0;
const { resource: order } = await items.item("o1", "p").read();
assert.deepEqual(statuses, [404, 200]); // retried without the token
assert.equal(order.status, "paid");
await control.setReplication("eastus", { paused: false });
client.dispose();
// ANCHOR_END: recipe
