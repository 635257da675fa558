// ANCHOR: recipe
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";
import { ENDPOINT, KEY, control } from "./control.mjs";

await control.reset(); // POST /_emulator/reset: a clean account, no data, no rules
const client = new CosmosClient({ endpoint: ENDPOINT, key: KEY });
const { database } = await client.databases.create({ id: "shop" });
const { container: items } = await database.containers.create({ id: "orders", partitionKey: "/pk" });

// The next three creates answer 429, as a throttled service does.
await control.addFault({
  match: { operation: "create" },
  respond: { status: 429, subStatus: 3200, retryAfterMs: 50 },
  hits: 3,
});
const { headers } = await items.items.create({ id: "o1", pk: "p" });
// The SDK waited 3 x 50 ms, and says so.
assert.equal(headers["x-ms-throttle-retry-count"], 3);
assert.equal(headers["x-ms-throttle-retry-wait-time-ms"], 150);

// Throttled for good: after its 9 retries, the SDK gives the 429 to the application.
await control.clearFaults();
await control.addFault({
  match: { operation: "create" },
  respond: { status: 429, subStatus: 3200, retryAfterMs: 10 },
});
await assert.rejects(items.items.create({ id: "o2", pk: "p" }), (error) => {
  assert.equal(error.code, 429);
  assert.equal(error.substatus, 3200);
  return true;
});
await control.clearFaults();
client.dispose();
// ANCHOR_END: recipe
