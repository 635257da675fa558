// TLS: the emulator's own certificate, trusted exactly, verification on.

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import https from "node:https";
import { after, before, describe, test } from "node:test";
import { CosmosClient } from "@azure/cosmos";
import { startEmulator } from "cosmos-emulator";
import { unique } from "./helpers.mjs";

function get(url, options) {
  return new Promise((resolve, reject) => {
    https.get(url, options, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
    }).on("error", reject);
  });
}

describe("TLS", () => {
  let emu;
  let client;

  before(async () => {
    emu = await startEmulator({ tls: true });
    client = new CosmosClient(emu.clientOptions());
  });
  after(async () => {
    client?.dispose();
    await emu?.stop();
  });

  test("an https endpoint and the PEM certificate, as a file and as text", () => {
    assert.match(emu.endpoint, /^https:\/\/localhost:\d+\/$/);
    assert.ok(existsSync(emu.certificate), emu.certificate);
    assert.equal(readFileSync(emu.certificate, "utf8"), emu.certificatePem);
    assert.match(emu.certificatePem, /^-----BEGIN CERTIFICATE-----/);
  });

  test("@azure/cosmos through clientOptions() (an agent trusting the certificate)", async () => {
    const { database } = await client.databases.create({ id: unique("db") });
    const { container } = await database.containers.create({ id: "c", partitionKey: { paths: ["/pk"] }, defaultTtl: -1 });
    await container.items.create({ id: "a", pk: "p", ttl: 10 });
    await emu.advance(10);
    assert.equal((await container.item("a", "p").read()).statusCode, 404);
  });

  test("the README's snippet: an https.Agent with ca read from emu.certificate", async () => {
    const agent = new https.Agent({ ca: readFileSync(emu.certificate) });
    const own = new CosmosClient({ endpoint: emu.endpoint, key: emu.key, agent });
    try {
      const { resources } = await own.databases.readAll().fetchAll();
      assert.ok(Array.isArray(resources));
    } finally {
      own.dispose();
      agent.destroy();
    }
  });

  test("verification is on: without the certificate the connection is refused", async () => {
    await assert.rejects(get(new URL("_explorer/emulator.pem", emu.endpoint), {}), (e) => {
      assert.match(e.code || e.message, /SELF_SIGNED|UNABLE_TO_VERIFY|CERT/);
      return true;
    });
    // The same request trusting exactly the emulator's certificate goes through.
    assert.equal(await get(new URL("_explorer/emulator.pem", emu.endpoint), { ca: emu.certificatePem }), 200);
  });

  test("stop() removes the temporary directory of the certificate", async () => {
    const other = await startEmulator({ tls: true });
    assert.ok(existsSync(other.certificate));
    await other.stop();
    assert.ok(!existsSync(other.certificate));
  });
});
