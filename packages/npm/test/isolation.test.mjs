// Isolation between tests: reset() drops every database, snapshot() and
// restore() save and bring back the whole account (the clock included).

import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import { CosmosClient } from "@azure/cosmos";
import { EmulatorError, startEmulator } from "cosmos-emulator";

const START = 1_700_000_000;

async function databaseIds(client) {
  const { resources } = await client.databases.readAll().fetchAll();
  return resources.map((d) => d.id).sort();
}

describe("reset()", () => {
  let emu;
  let client;

  before(async () => {
    emu = await startEmulator({ clockStart: START });
    client = new CosmosClient(emu.clientOptions());
  });
  after(async () => {
    client?.dispose();
    await emu?.stop();
  });
  beforeEach(() => emu.reset());

  test("drops every database and leaves the clock where it is", async () => {
    await client.databases.create({ id: "one" });
    const { database } = await client.databases.create({ id: "two" });
    await database.containers.create({ id: "c", partitionKey: { paths: ["/pk"] } });
    const now = await emu.advance(5);
    // Fractions of a second add up; the time answered stays whole.
    assert.equal(await emu.advance(0.5), now);
    assert.equal(await emu.advance(0.5), now + 1);
    const result = await emu.reset();
    assert.deepEqual(result, { databases: 2, now: now + 1 });
    assert.deepEqual(await databaseIds(client), []);
    assert.equal(await emu.now(), now + 1);
  });

  test("a database of that name can be made again after it", async () => {
    // beforeEach reset: the previous test's databases are gone.
    assert.deepEqual(await databaseIds(client), []);
    const { database } = await client.databases.create({ id: "one" });
    const { container } = await database.containers.create({ id: "c", partitionKey: { paths: ["/pk"] } });
    await container.items.create({ id: "x", pk: "p" });
    assert.equal((await container.item("x", "p").read()).statusCode, 200);
  });

  test("reset({ clock }) also sets the manual clock, earlier or later", async () => {
    assert.equal((await emu.reset({ clock: START + 1000 })).now, START + 1000);
    assert.equal(await emu.now(), START + 1000);
    assert.equal((await emu.reset({ clock: START })).now, START);
    assert.equal(await emu.now(), START);
  });
});

describe("snapshot() and restore()", () => {
  let emu;
  let client;
  let container;
  let seeded;

  before(async () => {
    emu = await startEmulator({ clockStart: START });
    client = new CosmosClient(emu.clientOptions());
    const { database } = await client.databases.create({ id: "app" });
    ({ container } = await database.containers.create({
      id: "items",
      partitionKey: { paths: ["/pk"] },
      defaultTtl: 100,
    }));
    for (let i = 0; i < 5; i++) await container.items.create({ id: `item${i}`, pk: "p", n: i });
    seeded = await emu.snapshot("seeded");
  });
  after(async () => {
    client?.dispose();
    await emu?.stop();
  });
  // Every test starts from the seeded account.
  beforeEach(() => emu.restore("seeded"));

  test("snapshot() describes what it saved", () => {
    assert.equal(seeded.name, "seeded");
    assert.equal(seeded.databases, 1);
    assert.equal(seeded.containers, 1);
    assert.equal(seeded.items, 5);
    assert.equal(seeded.now, START);
  });

  test("a test changes the data and the clock...", async () => {
    await container.item("item0", "p").delete();
    await emu.advance(100); // the seeded items expire (defaultTtl 100)
    await container.items.create({ id: "extra", pk: "p" });
    const { resources } = await container.items.readAll().fetchAll();
    assert.deepEqual(resources.map((r) => r.id), ["extra"]);
  });

  test("...and the next one starts from the snapshot again, system properties and clock included", async () => {
    assert.equal(await emu.now(), START);
    const { resources } = await container.items.readAll().fetchAll();
    assert.deepEqual(resources.map((r) => r.id).sort(), ["item0", "item1", "item2", "item3", "item4"]);
    const { resource } = await container.item("item3", "p").read();
    assert.equal(resource.n, 3);
    assert.equal(resource._ts, START);
  });

  test("restore() brings back databases dropped by reset(); snapshots outlive reset()", async () => {
    await emu.reset();
    assert.deepEqual(await databaseIds(client), []);
    const restored = await emu.restore("seeded");
    assert.equal(restored.items, 5);
    assert.deepEqual(await databaseIds(client), ["app"]);
  });

  test("snapshots() lists them; deleteSnapshot() removes one", async () => {
    await emu.snapshot("other");
    const names = (await emu.snapshots()).map((s) => s.name).sort();
    assert.deepEqual(names, ["other", "seeded"]);
    await emu.deleteSnapshot("other");
    assert.deepEqual((await emu.snapshots()).map((s) => s.name), ["seeded"]);
  });

  test("restoring a snapshot that does not exist rejects with the emulator's 404", async () => {
    await assert.rejects(emu.restore("no-such-snapshot"), (e) => {
      assert.ok(e instanceof EmulatorError);
      assert.equal(e.status, 404);
      assert.equal(typeof e.code, "string");
      assert.match(e.message, /404/);
      return true;
    });
  });

  test("a snapshot name outside A-Z a-z 0-9 . _ - rejects with the emulator's 400", async () => {
    await assert.rejects(emu.snapshot("not valid!"), (e) => {
      assert.ok(e instanceof EmulatorError);
      assert.equal(e.status, 400);
      assert.ok(e.message.length > 0);
      return true;
    });
  });
});
