// The control API's client, route by route beyond the clock, the purge,
// reset and snapshots (isolation.test.mjs): stats, lifetimes, splits,
// compaction, fault rules and regions, on an Emulator and through a
// Control made from an endpoint alone.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { CosmosClient } from "@azure/cosmos";
import { Control, EmulatorError, startEmulator } from "cosmos-emulator";
import { unique } from "./helpers.mjs";

describe("the control API", () => {
  let emu;
  let client;

  before(async () => {
    emu = await startEmulator({ args: ["--regions", "westus,eastus"] });
    client = new CosmosClient(emu.clientOptions());
  });
  after(async () => {
    client?.dispose();
    await emu?.stop();
  });

  async function refusal(promise) {
    const error = await promise.then(
      () => assert.fail("expected a refusal"),
      (e) => e,
    );
    assert.ok(error instanceof EmulatorError, String(error));
    return error;
  }

  test("a Control made from the endpoint drives the same emulator", async () => {
    const control = new Control(emu.endpoint, { key: emu.key });
    assert.equal(await control.now(), await emu.now());
    assert.equal(await control.advance(2), await emu.now());
  });

  test("stats and lifetimes see the items stored", async () => {
    const { database } = await client.databases.create({ id: unique("db") });
    const { container } = await database.containers.create({
      id: "c",
      partitionKey: { paths: ["/pk"] },
      defaultTtl: 60,
    });
    await container.items.create({ id: "a", pk: "p" });
    await container.items.create({ id: "b", pk: "p", ttl: 10 });
    const stats = await emu.stats();
    assert.equal(stats.clock, "manual");
    assert.deepEqual(
      stats.containers.filter((c) => c.database === database.id),
      [{ database: database.id, container: "c", storedItems: 2 }],
    );
    const page = await emu.lifetimes(database.id, "c", { maxItems: 1, order: "expiry" });
    assert.deepEqual(
      page.items.map((i) => i.id),
      ["b"],
    );
    assert.equal(page.items[0].rule, "item-override");
    const rest = await emu.lifetimes(database.id, "c", { continuation: page.continuation, order: "expiry" });
    assert.deepEqual(
      rest.items.map((i) => i.id),
      ["a"],
    );
    assert.equal(rest.continuation, null);
    assert.equal((await refusal(emu.lifetimes(database.id, "c", { maxItems: 0 }))).status, 400);
  });

  test("split answers the children; compact needs a data directory", async () => {
    const { database } = await client.databases.create({ id: unique("db") });
    await database.containers.create({ id: "c", partitionKey: { paths: ["/pk"] } });
    const children = await emu.split(database.id, "c", "0");
    assert.deepEqual(
      children.map((c) => c.parents),
      [["0"], ["0"]],
    );
    const refused = await refusal(emu.compact());
    assert.equal(refused.status, 400);
    assert.match(refused.message, /--data-dir/);
  });

  test("fault rules are added, read, counted and removed", async () => {
    await emu.clearFaults();
    const { database } = await client.databases.create({ id: unique("db") });
    const rule = await emu.addFault({
      match: { operation: "read", database: database.id },
      respond: { status: 400 },
      hits: 1,
    });
    assert.equal(rule.hitCount, 0);
    const { container } = await database.containers.create({ id: "c", partitionKey: { paths: ["/pk"] } });
    await container.items.create({ id: "x", pk: "p" });
    await assert.rejects(container.item("x", "p").read(), (e) => e.code === 400);
    assert.equal((await emu.fault(rule.id)).hitCount, 1);
    assert.deepEqual(
      (await emu.faults()).map((r) => r.id),
      [rule.id],
    );
    await emu.deleteFault(rule.id);
    assert.equal((await refusal(emu.fault(rule.id))).status, 404);
    await emu.addFault({ match: { operation: "query" }, respond: { delayMs: 1 } });
    assert.equal(await emu.clearFaults(), 1);
    assert.deepEqual(await emu.faults(), []);
  });

  test("regions go down, lag and fail over", async () => {
    await emu.reset();
    assert.deepEqual(
      (await emu.regions()).map((r) => [r.name, r.writes]),
      [
        ["westus", true],
        ["eastus", false],
      ],
    );
    const down = await emu.takeDown("eastus", { mode: "503", forMs: 60_000 });
    assert.deepEqual(
      down.map((r) => r.down),
      [null, "503"],
    );
    assert.ok((await emu.bringUp("eastus")).every((r) => r.down === null));
    const lagging = await emu.setReplication("eastus", { lagMs: 500 });
    assert.equal(lagging[1].lagMs, 500);
    const paused = await emu.setReplication("eastus", { paused: true });
    assert.equal(paused[1].paused, true);
    const failedOver = await emu.failOver("eastus");
    assert.deepEqual(
      failedOver.map((r) => r.writes),
      [false, true],
    );
    assert.equal((await refusal(emu.takeDown("nowhere"))).status, 404);
    await emu.reset();
    assert.deepEqual(
      (await emu.regions()).map((r) => r.writes),
      [true, false],
    );
  });
});

describe("compact()", () => {
  test("writes a snapshot of the data directory", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "cosmos-emulator-data-"));
    const emu = await startEmulator({ dataDir });
    try {
      const report = await emu.compact();
      assert.ok(report.generation >= 1, JSON.stringify(report));
      assert.ok(report.snapshotBytes > 0, JSON.stringify(report));
    } finally {
      await emu.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
