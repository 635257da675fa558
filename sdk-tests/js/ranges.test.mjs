// Several physical partition key ranges (issue 13, point 4) through the official SDK:
// a container provisioned at 30,000 RU/s has five ranges (one per 6,000 above 10,000); cross-partition queries
// (through the query plan), the change feed and feed ranges give the same items as
// with one range, each exactly once; TTL is exact in every range.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ChangeFeedStartFrom } from "@azure/cosmos";
import { forEachScheme, unique } from "./emulator.mjs";

const ITEMS = 40;
const allIds = Array.from({ length: ITEMS }, (_, i) => `i${String(i).padStart(2, "0")}`);

async function drain(iterator) {
  const changes = [];
  for (let i = 0; i < 200 && iterator.hasMoreResults; i++) {
    const response = await iterator.readNext();
    if (response.statusCode === 304) break;
    changes.push(...response.result);
  }
  return changes;
}

forEachScheme("partition key ranges", (ctx) => {
  const pair = async (extra = {}) => {
    const db = await ctx.newDatabase();
    const def = (id) => ({ id: unique(id), partitionKey: { paths: ["/pk"] }, ...extra });
    const one = (await db.containers.create(def("one"))).container;
    const many = (await db.containers.create(def("many"), { offerThroughput: 30000 })).container;
    return { one, many };
  };
  const fill = async (c) => {
    for (let i = 0; i < ITEMS; i++) {
      await c.items.create({ id: allIds[i], pk: `p${i}`, n: i, g: i % 3 });
    }
  };

  test("30,000 RU/s gives five feed ranges that partition the items", async () => {
    const { one, many } = await pair();
    assert.equal((await one.getFeedRanges()).length, 1);
    const ranges = await many.getFeedRanges();
    assert.equal(ranges.length, 5);
    await fill(many);
    // Each feed range's change feed holds its own items (this SDK's queries
    // take no feedRange option): together every item, once.
    const perRange = [];
    for (const range of ranges) {
      const feed = await drain(
        many.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(range) }),
      );
      perRange.push(feed.map((d) => d.id));
    }
    assert.ok(perRange.every((ids) => ids.length > 0), "every range holds items");
    assert.deepEqual(perRange.flat().sort(), allIds, "no item lost or read twice");
  });

  test("cross-partition queries give what one range gives", async () => {
    const { one, many } = await pair();
    await fill(one);
    await fill(many);
    const queries = [
      "SELECT * FROM c ORDER BY c.n DESC",
      "SELECT TOP 5 c.id FROM c ORDER BY c.n",
      "SELECT VALUE COUNT(1) FROM c",
      "SELECT VALUE SUM(c.n) FROM c",
      "SELECT VALUE MAX(c.n) FROM c",
      "SELECT VALUE MIN(c.n) FROM c",
      "SELECT DISTINCT VALUE c.g FROM c",
      "SELECT c.id FROM c WHERE c.n >= 30 ORDER BY c.id OFFSET 2 LIMIT 5",
      "SELECT c.id FROM c WHERE c.n < 10",
    ];
    for (const query of queries) {
      const expected = (await one.items.query(query).fetchAll()).resources;
      const got = (await many.items.query(query, { maxItemCount: 3 }).fetchAll()).resources;
      // Without system properties (the two containers' _rid and _etag differ).
      const user = (rows) =>
        rows.map((r) =>
          typeof r === "object" && r !== null
            ? Object.fromEntries(Object.entries(r).filter(([k]) => !k.startsWith("_")))
            : r,
        );
      const unordered = query.includes("DISTINCT") || query.includes("< 10");
      const norm = (rows) => (unordered ? user(rows).map((r) => JSON.stringify(r)).sort() : user(rows));
      assert.deepEqual(norm(got), norm(expected), query);
    }
    const all = (await many.items.readAll({ maxItemCount: 7 }).fetchAll()).resources;
    assert.deepEqual(all.map((d) => d.id).sort(), allIds);
  });

  test("the change feed over every range reads each item once, then only later writes", async () => {
    const { many } = await pair();
    await fill(many);
    const iterator = many.items.getChangeFeedIterator({
      changeFeedStartFrom: ChangeFeedStartFrom.Beginning(),
      maxItemCount: 5,
    });
    const first = await drain(iterator);
    assert.deepEqual(first.map((d) => d.id).sort(), allIds);
    for (const i of [3, 17, 29]) await many.items.upsert({ id: allIds[i], pk: `p${i}`, n: -i });
    const later = await drain(iterator);
    assert.deepEqual(later.map((d) => d.id).sort(), ["i03", "i17", "i29"]);
  });

  test("TTL is exact in every range", async () => {
    const { many } = await pair({ defaultTtl: 10 });
    await fill(many);
    await ctx.clock.advance(9);
    assert.equal((await many.items.readAll().fetchAll()).resources.length, ITEMS);
    await ctx.clock.advance(1);
    assert.deepEqual((await many.items.readAll().fetchAll()).resources, []);
    const count = await many.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll();
    assert.deepEqual(count.resources, [0]);
  });
});
