// Fault rules (issue 40, point 3; docs/src/faults.md) through the official @azure/cosmos
// SDK: what an application's tests check when the service throttles, fails a write after
// applying it, splits a partition under a query, or answers 503. The rules go through the
// control API (POST /_emulator/faults); each counts HTTP requests, so the SDK's retries show
// in hitCount. HTTP and HTTPS.
//
// What this SDK (4.9) does, as these tests pin it (the table in docs/src/resilience.md):
// - 429: resourceThrottleRetryPolicy, 9 retries, waits err.retryAfterInMs, and writes the sums
//   into the final response's headers (x-ms-throttle-retry-count, -wait-time-ms), on success
//   and on failure;
// - 408 from the server on a write: the default policy, no retry: the app sees it;
// - 410/1002: see the split tests below (a per-range query never recovers in 4.9.3);
// - 503 on a read: timeoutFailoverRetryPolicy, one retry (with one region, on the same
//   endpoint), then the app sees it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { forEachScheme, unique } from "./emulator.mjs";

const ITEMS = 40;
const allIds = Array.from({ length: ITEMS }, (_, i) => `i${String(i).padStart(2, "0")}`);

forEachScheme("fault rules", (ctx) => {
  const setup = async () => {
    await ctx.emulator.control.clearFaults();
    const database = ctx.database ?? (ctx.database = await ctx.newDatabase());
    const id = unique("c");
    const { container } = await database.containers.create({ id, partitionKey: { paths: ["/pk"] } });
    // A match for this test's container only: other requests never hit it.
    const scoped = (match) => ({ database: database.id, container: id, ...match });
    return { database, container, scoped };
  };
  const fill = async (container) => {
    for (let i = 0; i < ITEMS; i++) {
      await container.items.create({ id: allIds[i], pk: `p${i % 8}`, n: i });
    }
  };
  const rejection = async (promise) => {
    try {
      await promise;
    } catch (error) {
      return error;
    }
    assert.fail("expected an error");
  };

  test("a throttled create is retried and succeeds", async () => {
    const { container, scoped } = await setup();
    const rule = await ctx.emulator.control.addFault({
      match: scoped({ operation: "create" }),
      respond: { status: 429, subStatus: 3200, retryAfterMs: 50 },
      hits: 3,
    });
    const started = Date.now();
    const response = await container.items.create({ id: "a", pk: "p" });
    assert.equal(response.statusCode, 201);
    assert.ok(Date.now() - started >= 150, "waited what each 429 advertised");
    assert.equal(Number(response.headers["x-ms-throttle-retry-count"]), 3);
    assert.ok(Number(response.headers["x-ms-throttle-retry-wait-time-ms"]) >= 150);
    const [listed] = await ctx.emulator.control.faults();
    assert.equal(listed.id, rule.id);
    assert.equal(listed.hitCount, 3);
  });

  test("ten throttles surface as a 429 and nothing is written", async () => {
    const { container, scoped } = await setup();
    await ctx.emulator.control.addFault({
      match: scoped({ operation: "create" }),
      respond: { status: 429, subStatus: 3200, retryAfterMs: 10 },
    });
    const error = await rejection(container.items.create({ id: "a", pk: "p" }));
    assert.equal(error.code, 429);
    assert.equal(error.substatus, 3200);
    assert.equal(Number(error.headers["x-ms-throttle-retry-count"]), 9);
    assert.equal(Number(error.headers["x-ms-throttle-retry-wait-time-ms"]), 90);
    // The first try and nine retries: ten HTTP requests.
    assert.equal((await ctx.emulator.control.faults())[0].hitCount, 10);
    await ctx.emulator.control.clearFaults();
    const { statusCode } = await container.item("a", "p").read();
    assert.equal(statusCode, 404);
  });

  test("a timeout after the write was applied", async () => {
    const { container, scoped } = await setup();
    await ctx.emulator.control.addFault({
      match: scoped({ operation: "create" }),
      respond: { status: 408 },
      when: "after",
      hits: 1,
    });
    const error = await rejection(container.items.create({ id: "a", pk: "p" }));
    assert.equal(error.code, 408);
    // The write happened: a read finds it, and the app's retry of the create conflicts.
    const { resource } = await container.item("a", "p").read();
    assert.equal(resource.id, "a");
    const conflict = await rejection(container.items.create({ id: "a", pk: "p" }));
    assert.equal(conflict.code, 409);
    assert.equal((await ctx.emulator.control.faults())[0].hitCount, 1);
  });

  // The service answers 410/1002 to a request sent to a range that split: here the
  // parent "0". This SDK sends a query that needs no query plan to the gateway as one
  // query over every range (no range id), so the rule never matches: the gateway absorbs
  // the split, and the continuation goes on.
  test("a split mid-query loses and repeats nothing", async () => {
    const { database, container, scoped } = await setup();
    await fill(container);
    const iterator = container.items.query("SELECT * FROM c", { maxItemCount: 5 });
    const seen = (await iterator.fetchNext()).resources.map((d) => d.id);
    await ctx.clock.split(database.id, container.id, "0");
    await ctx.emulator.control.addFault({
      match: scoped({ operation: "query", partitionKeyRangeId: "0" }),
      respond: { status: 410, subStatus: 1002 },
    });
    while (iterator.hasMoreResults()) {
      seen.push(...(await iterator.fetchNext()).resources.map((d) => d.id));
    }
    assert.equal(new Set(seen).size, seen.length, `read twice: ${[...seen].sort()}`);
    assert.deepEqual([...seen].sort(), allIds);
    assert.equal((await ctx.emulator.control.faults())[0].hitCount, 0);
  });

  // A query this SDK runs per range (ORDER BY) names the range: after the split, its
  // next request to the parent meets the 410/1002 (the rule's, then the emulator's own
  // for a range that split), and 4.9.3 never recovers: splits.test.mjs, "an ORDER BY query
  // continues across a split", has the cause (documentProducer.js buffers the 1002 as a
  // result, so the repair with the children is never reached). Kept as a todo, bounded.
  test(
    "a split with a gone mid-query in a per-range query",
    { todo: "SDK bug: @azure/cosmos 4.9.3 retries the split range forever (documentProducer.js:158)" },
    async () => {
      const { database, container, scoped } = await setup();
      await fill(container);
      const iterator = container.items.query("SELECT * FROM c ORDER BY c.n", { maxItemCount: 5 });
      const seen = (await iterator.fetchNext()).resources.map((d) => d.id);
      await ctx.clock.split(database.id, container.id, "0");
      await ctx.emulator.control.addFault({
        match: scoped({ operation: "query", partitionKeyRangeId: "0" }),
        respond: { status: 410, subStatus: 1002 },
        hits: 1,
      });
      for (let i = 0; i < 30 && iterator.hasMoreResults(); i++) {
        seen.push(...((await iterator.fetchNext()).resources ?? []).map((d) => d.id));
      }
      assert.deepEqual(seen, allIds, "in order, each once");
    },
  );

  // timeoutFailoverRetryPolicy retries a read's 503 once, on the next (here the same)
  // region; a second 503 reaches the app.
  test("a 503 before a read with one region", async () => {
    const { container, scoped } = await setup();
    await container.items.create({ id: "a", pk: "p" });
    await ctx.emulator.control.addFault({
      match: scoped({ operation: "read" }),
      respond: { status: 503 },
      hits: 1,
    });
    const { statusCode } = await container.item("a", "p").read();
    assert.equal(statusCode, 200);
    assert.equal((await ctx.emulator.control.faults())[0].hitCount, 1);
    await ctx.emulator.control.clearFaults();
    await ctx.emulator.control.addFault({ match: scoped({ operation: "read" }), respond: { status: 503 } });
    const error = await rejection(container.item("a", "p").read());
    assert.equal(error.code, 503);
    assert.equal((await ctx.emulator.control.faults())[0].hitCount, 2);
  });
});
