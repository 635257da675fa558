import { test } from "node:test";
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";
import { startEmulator } from "cosmos-emulator";

test("items expire", async () => {
  const emu = await startEmulator(); // manual test clock, HTTP, a free port
  try {
    const client = new CosmosClient(emu.clientOptions()); // endpoint and key
    const { database } = await client.databases.createIfNotExists({ id: "db" });
    const { container } = await database.containers.createIfNotExists({
      id: "items",
      partitionKey: { paths: ["/pk"] },
      defaultTtl: 10,
    });
    await container.items.create({ id: "a", pk: "a" });
    await emu.advance(10); // 10 s pass at once
    const { resources } = await container.items.readAll().fetchAll();
    assert.deepEqual(resources, []);
  } finally {
    await emu.stop();
  }
});
