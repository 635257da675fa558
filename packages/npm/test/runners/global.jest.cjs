// jest: a test file using the emulator of globalSetup.
const { CosmosClient } = require("@azure/cosmos");

test("the globalSetup emulator answers (jest)", async () => {
  const client = new CosmosClient({ endpoint: process.env.COSMOS_ENDPOINT, key: process.env.COSMOS_KEY });
  try {
    const { database } = await client.databases.create({ id: "jest-global" });
    expect(database.id).toBe("jest-global");
  } finally {
    client.dispose();
  }
});
