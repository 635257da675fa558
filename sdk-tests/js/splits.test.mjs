// Splits on demand (issue 13, point 5) through the official SDK: a query, a read feed
// (readAll) and the change feed, read page by page with a split of the range made in
// the middle of the iteration (POST /_emulator/split), give every item exactly once;
// the change feed meets the parent's 410/1002 and resumes on the children; pkranges then lists
// the children (with their parents) and no longer the parent; point operations and
// TTL go on in the children.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ChangeFeedStartFrom } from "@azure/cosmos";
import { forEachScheme, unique } from "./emulator.mjs";

const ITEMS = 40;
const allIds = Array.from({ length: ITEMS }, (_, i) => `i${String(i).padStart(2, "0")}`);

forEachScheme("range splits", (ctx) => {
  // Every answer the SDK met, as [status, substatus]: to see it met the split.
  const answers = [];
  let client;
  const setup = async (extra = {}) => {
    client ??= ctx.emulator.client({
      plugins: [
        {
          on: "request",
          plugin: async (context, diagnosticNode, next) => {
            try {
              const response = await next(context);
              answers.push([response.code, response.substatus]);
              return response;
            } catch (error) {
              answers.push([error.code, error.substatus]);
              throw error;
            }
          },
        },
      ],
    });
    const { database } = await client.databases.create({ id: unique("db") });
    ctx.databases.push(database);
    const id = unique("c");
    const { container } = await database.containers.create({ id, partitionKey: { paths: ["/pk"] }, ...extra });
    for (let i = 0; i < ITEMS; i++) {
      await container.items.create({ id: allIds[i], pk: `p${i % 8}`, n: i });
    }
    answers.length = 0;
    const split = (range) => ctx.clock.split(database.id, id, range);
    return { container, split };
  };
  const metTheSplit = () => answers.some(([status, sub]) => status === 410 && sub === 1002);
  const assertOnce = (seen) => {
    assert.equal(new Set(seen).size, seen.length, `read twice: ${[...seen].sort()}`);
    assert.deepEqual([...seen].sort(), allIds);
  };
  const rangeIds = async (container) =>
    (await container.readPartitionKeyRanges().fetchAll()).resources.map((r) => r.id);

  /** Reads the first page, splits `range`, reads the rest; the ids read. */
  const acrossSplit = async (iterator, split, range = "0") => {
    const first = await iterator.fetchNext();
    const seen = first.resources.map((d) => d.id);
    assert.ok(seen.length > 0 && seen.length <= 5, `first page: ${seen}`);
    const children = await split(range);
    assert.equal(children.length, 2);
    while (iterator.hasMoreResults()) {
      const page = await iterator.fetchNext();
      seen.push(...page.resources.map((d) => d.id));
    }
    return seen;
  };

  // This SDK sends a query that needs no query plan to the gateway as one
  // query over every range (no range id): the split is invisible to it, and
  // its continuation goes on.
  test("a query continues across a split", async () => {
    const { container, split } = await setup();
    const seen = await acrossSplit(container.items.query("SELECT * FROM c", { maxItemCount: 5 }), split);
    assertOnce(seen);
    const listed = (await container.readPartitionKeyRanges().fetchAll()).resources;
    assert.deepEqual(
      listed.map((r) => [r.id, r.parents]),
      [
        ["1", ["0"]],
        ["2", ["0"]],
      ],
    );
    // Again, splitting a child while another query runs.
    answers.length = 0;
    const again = await acrossSplit(
      container.items.query("SELECT c.id FROM c WHERE c.n >= 0", { maxItemCount: 5 }),
      split,
      "1",
    );
    assertOnce(again);
    assert.deepEqual(await rangeIds(container), ["3", "4", "2"], "in EPK order");
  });

  // A query run per range (ORDER BY here) meets the parent's 410/1002 and
  // never recovers in @azure/cosmos 4.9.3: DocumentProducer.bufferMore
  // (queryExecutionContext/documentProducer.js:158-163) buffers the 1002 as a
  // result instead of throwing it, so the repair in
  // ParallelQueryExecutionContextBase (parallelQueryExecutionContextBase.js:710-714,
  // new routing map, children with the parent's continuation) is never
  // reached; the SDK asks range "0" again forever with empty pages.
  test(
    "an ORDER BY query continues across a split",
    { todo: "SDK bug: @azure/cosmos 4.9.3 retries the split range forever (documentProducer.js:158)" },
    async () => {
      const { container, split } = await setup();
      const iterator = container.items.query("SELECT * FROM c ORDER BY c.n", { maxItemCount: 5 });
      const first = await iterator.fetchNext();
      const seen = first.resources.map((d) => d.id);
      await split("0");
      for (let i = 0; i < 30 && iterator.hasMoreResults(); i++) {
        seen.push(...((await iterator.fetchNext()).resources ?? []).map((d) => d.id));
      }
      assert.ok(metTheSplit());
      assertOnce(seen);
    },
  );

  // readAll reads over every range at once too (no range id).
  test("a read feed (readAll) continues across a split", async () => {
    const { container, split } = await setup();
    const seen = await acrossSplit(container.items.readAll({ maxItemCount: 5 }), split);
    assertOnce(seen);
    assert.deepEqual(await rangeIds(container), ["1", "2"]);
  });

  test("the change feed continues across a split", async () => {
    const { container, split } = await setup();
    const iterator = container.items.getChangeFeedIterator({
      changeFeedStartFrom: ChangeFeedStartFrom.Beginning(),
      maxItemCount: 5,
    });
    const seen = [];
    let splitDone = false;
    for (let i = 0; i < 200 && iterator.hasMoreResults; i++) {
      const response = await iterator.readNext();
      if (response.statusCode === 304) break;
      seen.push(...response.result.map((d) => d.id));
      if (!splitDone) {
        assert.ok(seen.length > 0 && seen.length <= 5);
        await split("0");
        splitDone = true;
      }
    }
    assertOnce(seen);
    assert.ok(metTheSplit(), "the SDK met the parent's 410/1002");
    // Later writes, once each, from where the iterator is.
    for (const i of [3, 17, 29]) {
      await container.items.upsert({ id: allIds[i], pk: `p${i % 8}`, n: -i });
    }
    const later = [];
    for (let i = 0; i < 50 && iterator.hasMoreResults; i++) {
      const response = await iterator.readNext();
      if (response.statusCode === 304) break;
      later.push(...response.result.map((d) => d.id));
    }
    assert.deepEqual(later.sort(), ["i03", "i17", "i29"]);
  });

  test("point operations and sessions go on in the children", async () => {
    const { container, split } = await setup();
    await split("0");
    for (let i = 0; i < ITEMS; i++) {
      const { resource } = await container.item(allIds[i], `p${i % 8}`).read();
      assert.equal(resource.n, i);
      const written = await container.items.upsert({ id: allIds[i], pk: `p${i % 8}`, n: i + 100 });
      const range = written.headers["x-ms-documentdb-partitionkeyrangeid"];
      assert.ok(["1", "2"].includes(range), range);
      assert.ok(written.headers["x-ms-session-token"].startsWith(`${range}:`));
    }
    const { resources } = await container.items.readAll().fetchAll();
    assert.deepEqual(resources.map((d) => d.n).sort((a, b) => a - b), Array.from({ length: ITEMS }, (_, i) => i + 100));
  });

  test("bulk regroups its operations on the children", async () => {
    const { container, split } = await setup();
    // The SDK's routing map still has range "0": its first bulk request for
    // it is 410/1002, then it reads the ranges again and regroups.
    const warm = await container.items.bulk([
      { operationType: "Create", resourceBody: { id: "warm", pk: "p0" } },
    ]);
    assert.equal(warm[0].statusCode, 201);
    await split("0");
    answers.length = 0;
    const operations = Array.from({ length: 20 }, (_, i) => ({
      operationType: "Create",
      resourceBody: { id: `b${i}`, pk: `p${i % 8}`, n: i },
    }));
    const results = await container.items.bulk(operations);
    assert.deepEqual(results.map((r) => r.statusCode), Array(20).fill(201));
    assert.ok(metTheSplit(), "the SDK met the parent's 410/1002");
    const { resources } = await container.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll();
    assert.deepEqual(resources, [ITEMS + 21]);
  });

  test("TTL stays exact after a split", async () => {
    const { container, split } = await setup({ defaultTtl: -1 });
    for (let i = 0; i < ITEMS; i++) {
      await container.items.upsert({ id: allIds[i], pk: `p${i % 8}`, n: i, ttl: i % 2 ? 10 : -1 });
    }
    await split("0");
    await ctx.clock.advance(9);
    assert.equal((await container.items.readAll().fetchAll()).resources.length, ITEMS);
    await ctx.clock.advance(1);
    const { resources } = await container.items.query("SELECT * FROM c").fetchAll();
    assert.deepEqual(resources.map((d) => d.id).sort(), allIds.filter((_, i) => i % 2 === 0));
  });
});
