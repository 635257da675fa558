// Request units and throttling through the JavaScript SDK (docs/src/request-units.md).
// An emulator of its own, started with --rate-limit on the manual clock: a 400 RU/s
// container's partition spends its budget each second of that clock, so what the SDK
// retries, how long it waits and when a 429 reaches the application are deterministic.
// A timer moves the clock when a test needs the second to pass while the SDK waits.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Emulator, unique } from "./emulator.mjs";

const BUDGET = 400; // RU/s of a container created without throughput, one partition
const item = (i) => ({ id: `i${i}`, pk: "p", blob: "x".repeat(800) });

describe("throughput [--rate-limit]", () => {
  let emulator, client, noRetries;
  const databases = [];
  before(async () => {
    emulator = await Emulator.start({ tls: false, args: ["--rate-limit"] });
    client = emulator.client();
    // To spend a second quickly: a client that never retries a 429.
    noRetries = emulator.client({ connectionPolicy: { retryOptions: { maxRetryAttemptCount: 0 } } });
  });
  after(async () => {
    for (const db of databases) await db.delete().catch(() => {});
    await emulator.stop();
  });

  const newContainer = async () => {
    const { database } = await client.databases.create({ id: unique("db") });
    databases.push(database);
    const { container } = await database.containers.create({ id: unique("c"), partitionKey: { paths: ["/pk"] } });
    return container;
  };

  /** Creates items until the partition's second is spent; how many were made. */
  const spendTheSecond = async (container) => {
    const spender = noRetries.database(container.database.id).container(container.id);
    for (let made = 0; ; made++) {
      try {
        await spender.items.create(item(made));
      } catch (error) {
        assert.equal(error.code, 429);
        return made;
      }
    }
  };

  test("a create throttled once is retried after the advertised wait and succeeds", async () => {
    const c = await newContainer();
    await spendTheSecond(c);
    const mover = setTimeout(() => emulator.clock.advance(1), 300);
    const started = performance.now();
    const { resource, headers } = await c.items.create({ id: "after", pk: "p" });
    clearTimeout(mover);
    assert.equal(resource.id, "after");
    // The SDK copies its throttle retries into the response's headers.
    assert.equal(headers["x-ms-throttle-retry-count"], 1);
    assert.equal(headers["x-ms-throttle-retry-wait-time-ms"], 1000, "x-ms-retry-after-ms, as advertised");
    assert.ok(performance.now() - started >= 950);
  });

  test("a partition that stays spent surfaces as 429/3200 after nine retries", async () => {
    const c = await newContainer();
    const made = await spendTheSecond(c);
    await assert.rejects(c.items.create({ id: "never", pk: "p" }), (error) => {
      assert.equal(error.code, 429);
      assert.equal(error.substatus, 3200);
      assert.equal(error.retryAfterInMs, 1000);
      assert.equal(error.headers["x-ms-throttle-retry-count"], 9);
      assert.equal(error.headers["x-ms-throttle-retry-wait-time-ms"], 9000);
      return true;
    });
    await emulator.clock.advance(1);
    const { resources } = await c.items.readAll().fetchAll();
    assert.equal(resources.length, made, "nothing throttled was written");
  });

  // The bulk executor sends up to 100 operations a request. A throttled request's
  // operations each get its 429, and the SDK (4.9) retries them one after the other,
  // sleeping each one's x-ms-retry-after-ms in turn (bulkExecutionRetryPolicy.js): ten
  // throttled operations wait ten seconds. Hence 110 items, not thousands.
  test("executeBulkOperations imports through its retries within each second's budget", async () => {
    const c = await newContainer();
    // A fast clock: one emulator second every 150 ms.
    const ticker = setInterval(() => emulator.clock.advance(1).catch(() => {}), 150);
    let results;
    try {
      results = await c.items.executeBulkOperations(
        Array.from({ length: 110 }, (_, i) => ({ operationType: "Create", partitionKey: "p", resourceBody: item(i) })),
      );
    } finally {
      clearInterval(ticker);
    }
    const statuses = results.map((r) => r.response?.statusCode ?? r.error?.code);
    assert.deepEqual([...new Set(statuses)], [201], "every operation created its item");
    const { resources } = await c.items.readAll().fetchAll();
    const ts = new Map(resources.map((r) => [r.id, r._ts]));
    const spent = new Map();
    let largest = 0;
    results.forEach((r, i) => {
      const charge = r.response.requestCharge;
      largest = Math.max(largest, charge);
      const second = ts.get(`i${i}`);
      spent.set(second, (spent.get(second) ?? 0) + charge);
    });
    assert.ok(spent.size > 1, "the import needed more than one second");
    // One request may overshoot its second: here a request is a batch of up to 100
    // operations, whose charges add up to the request's.
    for (const [second, total] of spent) assert.ok(total < BUDGET + 100 * largest, `second ${second}: ${total}`);
    assert.ok(Math.max(...spent.values()) > BUDGET, "the first batch overshot its second, as the service allows");
  });

  test("one busy container may use its shared database's whole throughput; one of its own keeps its budget apart", async () => {
    const { database } = await client.databases.create({ id: unique("shared"), throughput: 400 });
    databases.push(database);
    const make = async (id, options = {}) =>
      (await database.containers.create({ id: unique(id), partitionKey: { paths: ["/pk"] }, ...options })).container;
    const busy = await make("busy");
    const idle = await make("idle");
    const own = await make("own", { throughput: 400 });
    await emulator.clock.advance(1);
    // The idle container aside, the busy one spends all 400 RU of the database's
    // second, as the service shares it (not 400 divided by two containers).
    const quick = (c) => noRetries.database(database.id).container(c.id);
    let spent = 0;
    for (let i = 0; ; i++) {
      try {
        spent += (await quick(busy).items.create(item(i))).requestCharge;
      } catch (error) {
        assert.equal(error.code, 429);
        assert.equal(error.substatus, 3200);
        break;
      }
    }
    assert.ok(spent >= BUDGET && spent < BUDGET + 15, `${spent}`);
    // The second is the database's: the idle container is refused in it too,
    await assert.rejects(quick(idle).items.create({ id: "b", pk: "p" }), (error) => error.code === 429);
    // while the container of its own 400 RU/s is not.
    const { resource } = await quick(own).items.create({ id: "c", pk: "p" });
    assert.equal(resource.id, "c");
    await emulator.clock.advance(1);
  });

  test("an after rule answers neither a throttled nor a conflicting create", async () => {
    const c = await newContainer();
    const rule = await emulator.control.addFault({
      match: { database: c.database.id, container: c.id, operation: "create" },
      respond: { status: 408 },
      when: "after",
    });
    const hits = async () => (await emulator.control.faults()).find((f) => f.id === rule.id).hitCount;
    const quick = noRetries.database(c.database.id).container(c.id);
    try {
      // It ran and was kept, then the rule answered (the SDK does not retry a write's 408).
      await assert.rejects(quick.items.create({ id: "a", pk: "p" }), (error) => {
        assert.equal(error.code, 408);
        assert.match(error.message, /the operation ran and its changes were kept/);
        return true;
      });
      assert.equal(await hits(), 1);
      // A 409 is the create's own answer, and no hit.
      await assert.rejects(quick.items.create({ id: "a", pk: "p" }), (error) => error.code === 409);
      assert.equal(await hits(), 1);
      // A second spent by upserts (the rule matches creates only): the create the budget
      // throttles gets the budget's 429, never the rule's 408.
      for (let i = 0; ; i++) {
        try {
          await quick.items.upsert(item(i));
        } catch (error) {
          assert.equal(error.code, 429);
          break;
        }
      }
      await assert.rejects(quick.items.create({ id: "b", pk: "p" }), (error) => {
        assert.equal(error.code, 429);
        assert.equal(error.substatus, 3200);
        return true;
      });
      assert.equal(await hits(), 1, "a throttled request is no hit");
      await emulator.clock.advance(1);
      const { statusCode } = await c.item("b", "p").read();
      assert.equal(statusCode, 404, "nothing was written");
    } finally {
      await emulator.control.clearFaults();
      await emulator.clock.advance(1);
    }
  });

  test("charges follow the documented points", async () => {
    const c = await newContainer();
    const created = await c.items.create({ id: "s", pk: "p", blob: "x".repeat(700) });
    const read = await c.item("s", "p").read();
    const replaced = await c.item("s", "p").replace(created.resource);
    assert.equal(read.requestCharge, 1, "a 1 KB point read is 1 RU");
    assert.ok(created.requestCharge >= 5.5 && created.requestCharge < 7, `${created.requestCharge}`);
    assert.ok(Math.abs(replaced.requestCharge - 2 * created.requestCharge) < 0.02);
  });
});
