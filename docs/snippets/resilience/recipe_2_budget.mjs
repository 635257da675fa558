// ANCHOR: recipe
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";
import { ENDPOINT, KEY, control } from "./control.mjs";

await control.reset();
// No throttle retries: the first 429 reaches this code.
const client = new CosmosClient({
  endpoint: ENDPOINT,
  key: KEY,
  connectionPolicy: { retryOptions: { maxRetryAttemptCount: 0 } },
});
const { database } = await client.databases.create({ id: "shop" });
const { container: items } = await database.containers.create(
  { id: "orders", partitionKey: "/pk" },
  { offerThroughput: 400 },
);

// --rate-limit: 400 RU/s for this one-partition container, per second of the
// test clock, which stands still: the second's budget runs out.
let written = 0;
let spent = 0;
for (;;) {
  try {
    const { requestCharge } = await items.items.create({ id: `o${written}`, pk: "p", text: "x".repeat(800) });
    spent += requestCharge;
    written++;
  } catch (error) {
    assert.equal(error.code, 429);
    assert.equal(error.substatus, 3200);
    assert.ok(error.retryAfterInMs <= 1000);
    break;
  }
}
console.log(`${written} writes, ${spent.toFixed(1)} RU in one second`); // ~400 RU
assert.ok(spent >= 400);

await control.advance(1); // the next second: refilled
await items.items.create({ id: "later", pk: "p" });
client.dispose();
// ANCHOR_END: recipe
