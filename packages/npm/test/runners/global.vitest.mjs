// vitest: a test file using the emulator of globalSetup.
import { expect, inject, test } from "vitest";
import { CosmosClient } from "@azure/cosmos";

test("the globalSetup emulator answers (vitest)", async () => {
  const client = new CosmosClient(inject("cosmos"));
  try {
    const { database } = await client.databases.create({ id: "vitest-global" });
    expect(database.id).toBe("vitest-global");
  } finally {
    client.dispose();
  }
});
