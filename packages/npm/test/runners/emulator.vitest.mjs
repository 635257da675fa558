// vitest: the emulator in beforeAll/afterAll, TTL through the test clock.
import { afterAll, beforeAll, expect, test } from "vitest";
import { CosmosClient } from "@azure/cosmos";
import { startEmulator } from "cosmos-emulator";

let emu;
let client;
beforeAll(async () => {
  emu = await startEmulator();
  client = new CosmosClient(emu.clientOptions());
});
afterAll(async () => {
  client?.dispose();
  await emu?.stop();
});

test("an item with ttl 10 is gone after advance(10) (vitest)", async () => {
  const { database } = await client.databases.create({ id: "vitest" });
  const { container } = await database.containers.create({ id: "c", partitionKey: { paths: ["/pk"] }, defaultTtl: -1 });
  await container.items.create({ id: "a", pk: "p", ttl: 10 });
  await emu.advance(10);
  expect((await container.item("a", "p").read()).statusCode).toBe(404);
});
