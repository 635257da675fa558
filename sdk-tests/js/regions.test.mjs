// A multi-region account (--regions; docs/src/regions.md) through the official @azure/cosmos
// SDK: what an application's tests check before a region outage. An emulator of its own with
// two regions, West US (the write region) and East US, each on its own port; the client is
// given preferred locations and finds the regions in the account document.
//
// Which region served each request is read from the endpoint of every request the SDK sent
// (a plugin). The SDK's behaviour these tests pin (@azure/cosmos 4.9):
// - a preferred read region that refuses connections is NOT left for the next one: 4.9 fails
//   over on ENOTFOUND and REQUEST_SEND_ERROR, and retries ECONNRESET on the same endpoint,
//   but ECONNREFUSED reaches the application (retryUtility.js, defaultRetryPolicy.js). The
//   Python SDK fails over (test_regions.py): the difference is the SDKs';
// - a read region answering 503 is left for the next one (timeoutFailoverRetryPolicy, one retry);
// - after a failover, a write sent to the old write region gets 403/3: the SDK re-reads the
//   account and retries on the new write region;
// - a session read in a region whose replica is behind the session token gets 404/1002: the
//   SDK clears the token and retries, in 4.9 on the same region: sessionRetryPolicy.js sets
//   retryRequestOnPreferredLocations = false "to force the primary write endpoint", but
//   retryUtility.js never reads that flag; the lagging region then answers without a token. JavaScript
//   sends session tokens only with consistencyLevel "Session" set on the client.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Emulator, unique } from "./emulator.mjs";

describe("regions [--regions West US,East US]", () => {
  let emulator;
  let ports;
  before(async () => {
    emulator = await Emulator.start({ tls: false, args: ["--regions", "West US,East US"] });
    const regions = await emulator.control.regions();
    ports = Object.fromEntries(regions.map((r) => [r.name, new URL(r.endpoint).port]));
  });
  after(async () => {
    await emulator.stop();
  });

  /** A client preferring `regions`, and the [port, status] of every request it sends. */
  const clientPreferring = (...regions) => {
    const served = [];
    const client = emulator.client({
      consistencyLevel: "Session",
      connectionPolicy: { preferredLocations: regions },
      plugins: [
        {
          on: "request",
          plugin: async (context, diagnosticNode, next) => {
            const port = new URL(context.endpoint).port;
            try {
              const response = await next(context);
              served.push([port, response.code]);
              return response;
            } catch (error) {
              served.push([port, error.code]);
              throw error;
            }
          },
        },
      ],
    });
    return { client, served };
  };

  const setupItem = async (client) => {
    const { database } = await client.databases.create({ id: unique("db") });
    const { container } = await database.containers.create({ id: unique("c"), partitionKey: { paths: ["/pk"] } });
    await container.items.create({ id: "a", pk: "p", v: 1 });
    return container;
  };

  const reset = async () => {
    await emulator.control.reset();
  };

  test("the printed endpoint names localhost, and preferred regions work with it", async () => {
    // The endpoint every helper hands the SDK (docs/src/running.md): both
    // loopbacks answer on its port, whichever Node resolves localhost to.
    assert.match(emulator.endpoint, /^http:\/\/localhost:\d+\/?$/);
    const { client, served } = clientPreferring("East US", "West US");
    try {
      const container = await setupItem(client);
      assert.deepEqual([...new Set(served.slice(-1).map(([port]) => port))], [ports["West US"]], "writes: the write region");
      served.length = 0;
      assert.equal((await container.item("a", "p").read()).resource.v, 1);
      assert.deepEqual(served.map(([port]) => port), [ports["East US"]], "reads: the first preferred region");
    } finally {
      client.dispose();
      await reset();
    }
  });

  test("reads go to the preferred region; one that refuses connections fails the read", async () => {
    const { client, served } = clientPreferring("East US", "West US");
    try {
      const container = await setupItem(client);
      served.length = 0;
      assert.equal((await container.item("a", "p").read()).resource.v, 1);
      assert.deepEqual(served.map(([port]) => port), [ports["East US"]], "the first preferred region");
      // Answered once the region's listener is closed.
      await emulator.control.takeDown("East US", { mode: "refuse" });
      await assert.rejects(container.item("a", "p").read(), (error) => {
        assert.equal(error.code, "ECONNREFUSED");
        return true;
      });
    } finally {
      client.dispose();
      await reset();
    }
  });

  test("a read region answering 503 is left for the next", async () => {
    const { client, served } = clientPreferring("East US", "West US");
    try {
      const container = await setupItem(client);
      await emulator.control.takeDown("East US", { mode: "503" });
      served.length = 0;
      assert.equal((await container.item("a", "p").read()).resource.v, 1);
      assert.deepEqual(served, [
        [ports["East US"], 503],
        [ports["West US"], 200],
      ]);
    } finally {
      client.dispose();
      await reset();
    }
  });

  test("writes follow a failover", async () => {
    const { client, served } = clientPreferring("West US", "East US");
    try {
      const container = await setupItem(client);
      await emulator.control.failOver("East US");
      served.length = 0;
      await container.items.create({ id: "b", pk: "p" });
      assert.deepEqual(served[0], [ports["West US"], 403], "the old write region refuses");
      assert.deepEqual(served.at(-1), [ports["East US"], 201], JSON.stringify(served));
    } finally {
      client.dispose();
      await reset();
    }
  });

  test("a session read in a lagging region is retried without its token", async () => {
    const { client, served } = clientPreferring("East US", "West US");
    try {
      const container = await setupItem(client);
      await emulator.control.setReplication("East US", { paused: true });
      await container.items.upsert({ id: "a", pk: "p", v: 2 });
      served.length = 0;
      assert.equal((await container.item("a", "p").read()).resource.v, 2);
      assert.deepEqual(served, [
        [ports["East US"], 404],
        [ports["East US"], 200],
      ]);
    } finally {
      client.dispose();
      await reset();
    }
  });
});
