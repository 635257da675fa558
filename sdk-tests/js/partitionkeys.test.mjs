// Partition keys through the official SDK (issue 12): hierarchical keys (MultiHash)
// whose items lack levels (the SDK sends {} for them), prefix queries and a prefix
// change feed, and deleteAllItemsForPartitionKey for a key and a hierarchical prefix;
// a container made without a partition key, addressed by _partitionKey and by the
// SDK's none value.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ChangeFeedStartFrom, PartitionKeyBuilder } from "@azure/cosmos";
import { KEY, forEachScheme, masterKeyHeaders, request, unique } from "./emulator.mjs";

const ZIP_CODES = [
  ["CA", "Newbury Park", "91319"],
  ["CA", "Oxnard", "93033"],
  ["CA", "Oxnard", "93030"],
  ["CA", "Oxnard", "93036"],
  ["CA", "Thousand Oaks", "91358"],
  ["CA", "Ventura", "93002"],
  ["CA", "Ojai", "93023"], // cspell:disable-line
  ["CA", "Port Hueneme", "93041"], // cspell:disable-line
  ["WA", "Seattle", "98101"],
  ["WA", "Bellevue", "98004"],
];
const CA = ["d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7"];
const CA_OXNARD = ["d1", "d2", "d3"];

const sortedIds = (items) => items.map((d) => d.id).sort();

forEachScheme("partition keys", (ctx) => {
  const hierarchical = async (paths) => {
    const db = await ctx.newDatabase();
    const def = { id: unique("hpk"), partitionKey: { paths, kind: "MultiHash", version: 2 } };
    return (await db.containers.create(def)).container;
  };

  const zipCodes = async () => {
    const c = await hierarchical(["/state", "/city", "/zipcode"]);
    for (const [i, [state, city, zipcode]] of ZIP_CODES.entries()) {
      await c.items.create({ id: `d${i}`, state, city, zipcode });
    }
    // Starts like "CA" as text, but is another first level.
    await c.items.create({ id: "cal", state: "CAL", city: "Oxnard", zipcode: "1" });
    return c;
  };

  const all = async (c, options) => sortedIds((await c.items.query("SELECT * FROM c", options).fetchAll()).resources);

  test("items lacking levels of a hierarchical key: created, read, replaced, deleted", async () => {
    const c = await hierarchical(["/city", "/zipcode"]);
    // The SDK extracts ["Vancouver", {}] (undefined for the missing level).
    const created = await c.items.create({ id: "d3", city: "Vancouver" });
    assert.equal(created.statusCode, 201);
    const read = await c.item("d3", ["Vancouver", {}]).read();
    assert.equal(read.statusCode, 200);
    assert.equal(read.resource.city, "Vancouver");
    // null is a value, not the missing level.
    assert.equal((await c.item("d3", ["Vancouver", null]).read()).statusCode, 404);
    const replaced = await c.item("d3", ["Vancouver", {}]).replace({ id: "d3", city: "Vancouver", v: 2 });
    assert.equal(replaced.statusCode, 200);
    assert.equal(replaced.resource.v, 2);
    await c.items.create({ id: "none" });
    assert.equal((await c.item("none", [{}, {}]).read()).statusCode, 200);
    await c.items.create({ id: "nulls", city: null, zipcode: null });
    assert.equal((await c.item("nulls", [null, null]).read()).statusCode, 200);
    assert.equal((await c.item("d3", ["Vancouver", {}]).delete()).statusCode, 204);
    assert.deepEqual(await all(c), ["none", "nulls"]);
  });

  test("prefix queries and a prefix change feed return exactly the prefix", async () => {
    const c = await zipCodes();
    assert.equal((await all(c)).length, 11);
    assert.deepEqual(await all(c, { partitionKey: ["CA"] }), CA);
    assert.deepEqual(await all(c, { partitionKey: ["CA", "Oxnard"] }), CA_OXNARD);
    assert.deepEqual(await all(c, { partitionKey: ["CA", "Oxnard", "93033"] }), ["d1"]);
    assert.deepEqual(await all(c, { partitionKey: ["CA"], maxItemCount: 1 }), CA);
    const ranges = await c.getFeedRanges();
    assert.equal(ranges.length, 1);
    const iterator = c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(["CA", "Oxnard"]) });
    const changes = [];
    for (let i = 0; i < 20 && iterator.hasMoreResults; i++) {
      const response = await iterator.readNext();
      if (response.statusCode === 304) break;
      changes.push(...response.result);
    }
    assert.deepEqual(sortedIds(changes), CA_OXNARD);
  });

  test("deleteAllItemsForPartitionKey: a key, then hierarchical prefixes", async () => {
    const db = await ctx.newDatabase();
    const { container: c } = await db.containers.create({ id: unique("del"), partitionKey: { paths: ["/state"] } });
    for (const [id, state] of [["wa1", "WA"], ["wa2", "WA"], ["il1", "IL"]]) {
      await c.items.create({ id, state });
    }
    const response = await c.deleteAllItemsForPartitionKey("WA");
    assert.equal(response.statusCode, 200);
    assert.deepEqual(await all(c), ["il1"]);
    assert.equal((await c.item("wa1", "WA").read()).statusCode, 404);

    const z = await zipCodes();
    await z.deleteAllItemsForPartitionKey(["CA", "Oxnard"]);
    assert.deepEqual(await all(z), ["cal", "d0", "d4", "d5", "d6", "d7", "d8", "d9"]);
    await z.deleteAllItemsForPartitionKey(["CA"]);
    assert.deepEqual(await all(z), ["cal", "d8", "d9"]);
  });
  test("a container made without a partition key partitions by its system key", async () => {
    // Made as the v2 SDKs made it: no partitionKey, API version 2018-06-18.
    const db = await ctx.newDatabase();
    const id = unique("legacy");
    const headers = { ...masterKeyHeaders("POST", "colls", `dbs/${db.id}`, KEY), "x-ms-version": "2018-06-18" };
    headers["content-type"] = "application/json";
    const url = new URL(`dbs/${db.id}/colls`, ctx.emulator.endpoint).toString();
    const made = await request(url, { method: "POST", headers, body: JSON.stringify({ id }), agent: ctx.emulator.agent });
    assert.equal(made.status, 201, made.body);
    const c = db.container(id);
    const { resource: definition } = await c.read();
    assert.deepEqual(definition.partitionKey.paths, ["/_partitionKey"]);
    assert.equal(definition.partitionKey.systemKey, true);

    const none = new PartitionKeyBuilder().addNoneValue().build();
    await c.items.create({ id: "old-1" });
    await c.items.create({ id: "old-2" });
    await c.items.create({ id: "id-1", _partitionKey: "Doe" });
    await c.items.create({ id: "id-2", _partitionKey: "Doe" });
    await c.items.create({ id: "id-1", _partitionKey: "Roe" });

    assert.equal((await c.item("id-1", "Doe").read()).resource._partitionKey, "Doe");
    assert.equal((await c.item("old-1", none).read()).resource.id, "old-1");
    assert.equal((await c.item("id-2", none).read()).statusCode, 404);

    const query = async (options) => sortedIds((await c.items.query("SELECT * FROM c", options).fetchAll()).resources);
    assert.deepEqual(await query({ partitionKey: "Doe" }), ["id-1", "id-2"]);
    assert.deepEqual(await query({}), ["id-1", "id-1", "id-2", "old-1", "old-2"]);

    const feed = c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning("Doe") });
    const { result } = await feed.readNext();
    assert.deepEqual(sortedIds(result), ["id-1", "id-2"]);

    const batch = await c.items.batch(
      [
        { operationType: "Create", resourceBody: { id: "id-3", _partitionKey: "Doe" } },
        { operationType: "Read", id: "id-1" },
      ],
      "Doe",
    );
    assert.deepEqual(batch.result.map((r) => r.statusCode), [201, 200]);
    await c.item("old-1", none).delete();
    await c.item("id-3", "Doe").delete();
    assert.deepEqual(await query({}), ["id-1", "id-1", "id-2", "old-2"]);
  });
});
