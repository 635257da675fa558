// HTTPS: the certificate is verified (never disabled) and obtainable like Microsoft's emulator's.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import https from "node:https";
import { CosmosClient } from "@azure/cosmos";
import { Emulator, KEY, request } from "./emulator.mjs";

describe("tls", () => {
  let emu;
  before(async () => {
    emu = await Emulator.start({ tls: true });
  });
  after(async () => {
    await emu?.stop();
  });

  test("GET /_explorer/emulator.pem serves the certificate --cert-out wrote", async () => {
    const res = await request(new URL("_explorer/emulator.pem", emu.endpoint).toString(), { agent: emu.agent });
    assert.equal(res.status, 200);
    assert.match(res.body, /-----BEGIN CERTIFICATE-----/);
    assert.equal(res.body.trim(), emu.pem.trim());
  });

  test("the certificate covers localhost", async () => {
    const port = new URL(emu.endpoint).port;
    const client = new CosmosClient({ endpoint: `https://localhost:${port}/`, key: KEY, agent: new https.Agent({ ca: emu.pem }) });
    try {
      const { resources } = await client.databases.readAll().fetchAll();
      assert.ok(Array.isArray(resources));
    } finally {
      client.dispose?.();
    }
  });

  test("without the certificate the connection is refused (verification is on)", async () => {
    await assert.rejects(
      request(new URL("_explorer/emulator.pem", emu.endpoint).toString(), { agent: new https.Agent({ keepAlive: false }) }),
      (e) => /self[- ]signed|unable to verify|certificate/i.test(e.message),
    );
  });
});
