// ANCHOR: recipe
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";
import { ENDPOINT, KEY, control } from "./control.mjs";

await control.reset();
const client = new CosmosClient({ endpoint: ENDPOINT, key: KEY });
const { database } = await client.databases.create({ id: "shop" });
const { container: items } = await database.containers.create({ id: "orders", partitionKey: "/pk" });

// The write is applied, then the answer is lost: a 408 after the commit.
await control.addFault({
  match: { operation: "create" },
  respond: { status: 408 },
  when: "after",
  hits: 1,
});

// What the application does: retry a timed-out create, and take the 409 of
// that retry as proof that the first attempt was applied.
async function createOnce(item) {
  try {
    return (await items.items.create(item)).resource;
  } catch (timeout) {
    assert.equal(timeout.code, 408);
    try {
      return (await items.items.create(item)).resource;
    } catch (conflict) {
      assert.equal(conflict.code, 409);
      return (await items.item(item.id, item.pk).read()).resource;
    }
  }
}

const order = await createOnce({ id: "o1", pk: "p", total: 10 });
assert.equal(order.total, 10);
client.dispose();
// ANCHOR_END: recipe
