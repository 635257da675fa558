// The image started by Testcontainers for Node's Azure Cosmos DB module
// (@testcontainers/azure-cosmosdb-emulator 12.1.0), used as its
// documentation shows (node.testcontainers.org/modules/cosmosdb, "Execute a
// query"), with one change: the image, from COSMOS_EMULATOR_IMAGE. (`await
// using` becomes try/finally, as the Node it runs on may lack explicit
// resource management; start() only adds a log consumer, so that a failed
// start shows what the container said.)
//
// What the module does, read from its source (build/azure-cosmosdb-
// emulator-container.js): picks a free host port and publishes the
// container port of the same number; sets PORT to it, PROTOCOL (http
// unless withProtocol), ENABLE_TELEMETRY=false, ENABLE_EXPLORER=false; waits
// for a log line containing "Now listening on: ".
//
// Run by `cargo xtask image --test` through podman's Docker API
// (DOCKER_HOST), Ryuk off (TESTCONTAINERS_RYUK_DISABLED=true).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import https from "node:https";
import { AzureCosmosDbEmulatorContainer } from "@testcontainers/azure-cosmosdb-emulator";
import { CosmosClient, PartitionKeyKind } from "@azure/cosmos";

const IMAGE = process.env.COSMOS_EMULATOR_IMAGE ?? "ghcr.io/owner/cosmos-emulator";

test("execute a query, as documented (HTTP)", async () => {
  const dbName = "testdb";
  const containerName = "testcontainer";

  // ANCHOR: usage
  const container = await start(new AzureCosmosDbEmulatorContainer(IMAGE).withProtocol("http"));
  try {
    const cosmosClient = new CosmosClient({
      endpoint: container.getEndpoint(),
      key: container.getKey(),
    });
    // ANCHOR_END: usage

    await cosmosClient.databases.createIfNotExists({ id: dbName });

    const dbClient = cosmosClient.database(dbName);
    await dbClient.containers.createIfNotExists({
      id: containerName,
      partitionKey: {
        kind: PartitionKeyKind.Hash,
        paths: ["/foo"],
      },
    });

    const containerClient = dbClient.container(containerName);
    const createResponse = await containerClient.items.create({ foo: "bar" });

    const readItem = await containerClient.item(createResponse.item.id, "bar").read();

    assert.equal(readItem.resource.foo, "bar");
    // The account document names the address the client used: the port
    // the module chose (PORT), over HTTP. (@azure/cosmos drops the
    // locations of an account whose id is "localhost": read it raw.)
    const account = await signed(container, "GET", "/");
    assert.deepEqual(
      account.writableLocations.map((l) => l.databaseAccountEndpoint),
      [`${container.getEndpoint()}/`],
    );
  } finally {
    await container.stop();
  }
});

test("HTTPS, as documented (withProtocol, an agent that trusts any certificate)", async () => {
  const container = await start(new AzureCosmosDbEmulatorContainer(IMAGE).withProtocol("https"));
  try {
    assert.ok(container.getEndpoint().startsWith("https://"));
    const cosmosClient = new CosmosClient({
      endpoint: container.getEndpoint(),
      key: container.getKey(),
      agent: new https.Agent({ rejectUnauthorized: false }),
    });
    const { database } = await cosmosClient.databases.createIfNotExists({ id: "secure" });
    const { resources } = await cosmosClient.databases.readAll().fetchAll();
    assert.deepEqual(
      resources.map((d) => d.id),
      [database.id],
    );
  } finally {
    await container.stop();
  }
});

test("an item expires through the test clock", async () => {
  // withEnvironment is GenericContainer's documented way to add a variable;
  // the module adds its own to it at start.
  const container = await start(
    new AzureCosmosDbEmulatorContainer(IMAGE).withEnvironment({ COSMOS_EMULATOR_CLOCK: "manual" }),
  );
  try {
    const client = new CosmosClient(container.getConnectionUri());
    const { database } = await client.databases.createIfNotExists({ id: "ttl" });
    const { container: items } = await database.containers.createIfNotExists({
      id: "items",
      partitionKey: { paths: ["/pk"] },
      defaultTtl: 60,
    });
    await items.items.create({ id: "a", pk: "a" });

    await advance(container, 59);
    const before = await items.items.readAll().fetchAll();
    assert.deepEqual(
      before.resources.map((i) => i.id),
      ["a"],
    );

    await advance(container, 1); // the 60th second: expired
    const after = await items.items.readAll().fetchAll();
    assert.deepEqual(after.resources, []);
    const read = await items.item("a", "a").read();
    assert.equal(read.statusCode, 404);
  } finally {
    await container.stop();
  }
});

/** `builder.start()`, with the container's output in the error if it fails
 * to start (withLogConsumer, GenericContainer's documented hook). */
async function start(builder) {
  const lines = [];
  builder.withLogConsumer((stream) => stream.on("data", (line) => lines.push(String(line).trimEnd())));
  try {
    return await builder.start();
  } catch (error) {
    error.message += `\nthe container said:\n${lines.join("\n")}`;
    throw error;
  }
}

/** POST /_emulator/clock {"advance": seconds}. */
async function advance(container, seconds) {
  await signed(container, "POST", "/_emulator/clock", { advance: seconds });
}

/** A request signed with the account key as an account read is (no
 * resource type, no link); its JSON body, once it answered 200. */
async function signed(container, method, path, body) {
  const date = new Date().toUTCString();
  const payload = `${method.toLowerCase()}\n\n\n${date.toLowerCase()}\n\n`;
  const signature = createHmac("sha256", Buffer.from(container.getKey(), "base64"))
    .update(payload)
    .digest("base64");
  const response = await fetch(`${container.getEndpoint()}${path}`, {
    method,
    headers: {
      "x-ms-date": date,
      authorization: encodeURIComponent(`type=master&ver=1.0&sig=${signature}`),
      "content-type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return JSON.parse(text);
}
