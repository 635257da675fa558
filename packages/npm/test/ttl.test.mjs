// The test clock through the installed package: TTL with @azure/cosmos,
// an item's ttl and a container's defaultTtl, seconds moved by advance().

import assert from "node:assert/strict";
import { realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { CosmosClient } from "@azure/cosmos";
import { binaryPath, startEmulator, WELL_KNOWN_KEY } from "cosmos-emulator";
import { PROJECT, unique } from "./helpers.mjs";

describe("TTL through the test clock", () => {
  let emu;
  let client;
  let database;

  before(async () => {
    emu = await startEmulator({ clock: "manual", clockStart: 1_700_000_000 });
    client = new CosmosClient(emu.clientOptions());
    ({ database } = await client.databases.create({ id: unique("db") }));
  });

  after(async () => {
    client?.dispose();
    await emu?.stop();
  });

  test("the package and its binary come from the installed packages", () => {
    const require = createRequire(join(PROJECT, "index.js"));
    const main = realpathSync(require.resolve("cosmos-emulator"));
    assert.equal(main, join(PROJECT, "node_modules", "cosmos-emulator", "index.js"));
    assert.equal(
      realpathSync(binaryPath()),
      join(PROJECT, "node_modules", "cosmos-emulator-linux-x64", "bin", "cosmos-emulator"),
    );
  });

  test("the emulator it started: endpoint, key, clock", async () => {
    assert.match(emu.endpoint, /^http:\/\/localhost:\d+\/$/);
    assert.equal(emu.key, WELL_KNOWN_KEY);
    assert.equal(emu.certificate, undefined);
    assert.equal(emu.connectionString, `AccountEndpoint=${emu.endpoint};AccountKey=${WELL_KNOWN_KEY};`);
    assert.equal(await emu.now(), 1_700_000_000);
    assert.ok(Number.isInteger(emu.pid));
  });

  test("an item with ttl 10 is there after 9 s and gone after 10 s", async () => {
    const { container } = await database.containers.create({
      id: unique("items"),
      partitionKey: { paths: ["/pk"] },
      defaultTtl: -1,
    });
    await container.items.create({ id: "short", pk: "p", ttl: 10 });
    await container.items.create({ id: "kept", pk: "p" });
    const start = await emu.now();

    assert.equal(await emu.advance(9), start + 9);
    assert.equal((await container.item("short", "p").read()).statusCode, 200);

    assert.equal(await emu.advance(1), start + 10);
    assert.equal((await container.item("short", "p").read()).statusCode, 404);
    const { resources } = await container.items.query("SELECT c.id FROM c").fetchAll();
    assert.deepEqual(resources.map((r) => r.id), ["kept"]);
    assert.equal(typeof (await emu.purge()), "number");
  });

  test("a container's defaultTtl expires every item it did not override", async () => {
    const { container } = await database.containers.create({
      id: unique("default-ttl"),
      partitionKey: { paths: ["/pk"] },
      defaultTtl: 30,
    });
    await container.items.create({ id: "a", pk: "p" });
    await container.items.create({ id: "forever", pk: "p", ttl: -1 });
    await emu.advance(29);
    assert.equal((await container.item("a", "p").read()).statusCode, 200);
    await emu.advance(1);
    assert.equal((await container.item("a", "p").read()).statusCode, 404);
    assert.equal((await container.item("forever", "p").read()).statusCode, 200);
    await emu.purge();
    const { resources } = await container.items.readAll().fetchAll();
    assert.deepEqual(resources.map((r) => r.id), ["forever"]);
  });

  test("setClock moves the manual clock to a given second", async () => {
    assert.equal(await emu.setClock(1_900_000_000), 1_900_000_000);
    assert.equal(await emu.now(), 1_900_000_000);
  });
});

describe("the system clock", () => {
  test("clock: 'system' starts an emulator without the test clock", async () => {
    const emu = await startEmulator({ clock: "system" });
    try {
      const error = await emu.now().then(
        () => assert.fail("the clock route answered on the system clock"),
        (e) => e,
      );
      assert.equal(error.name, "EmulatorError");
      assert.equal(error.status, 404);
    } finally {
      await emu.stop();
    }
  });
});
