// Refusals: invalid ttl (400), wrong key (401).
import { test } from "node:test";
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";
import { forEachScheme, unique } from "./emulator.mjs";

const ttl400 = (e) => e.code === 400 && /ttl/i.test(e.message);

const WRONG_KEY = "dGhpcyBpcyBub3QgdGhlIGVtdWxhdG9yIGtleSwgaXQgaXMganVzdCBzaXh0eSBmb3VyIGJ5dGVzIGxvbmchIQ==";

forEachScheme("errors", (ctx) => {
  const newContainer = async () => {
    const db = await ctx.newDatabase();
    return (await db.containers.create({ id: unique("coll"), partitionKey: { paths: ["/pk"] }, defaultTtl: 100 })).container;
  };

  test("invalid item ttl on create is 400 and stores nothing", async () => {
    const c = await newContainer();
    for (const ttl of [0, -2, 1.5, "10", 2147483648, null]) {
      await assert.rejects(
        c.items.create({ id: "bad", pk: "p", ttl }),
        ttl400,
        `ttl ${JSON.stringify(ttl)}`,
      );
      assert.equal((await c.item("bad", "p").read()).statusCode, 404, `ttl ${JSON.stringify(ttl)} stored`);
    }
    assert.equal((await c.items.create({ id: "max", pk: "p", ttl: 2147483647 })).resource.ttl, 2147483647);
  });

  test("invalid item ttl on replace, upsert and patch changes nothing", async () => {
    const c = await newContainer();
    await c.items.create({ id: "ok", pk: "p", ttl: 50, v: 1 });
    await assert.rejects(c.item("ok", "p").replace({ id: "ok", pk: "p", ttl: 0, v: 2 }), ttl400);
    await assert.rejects(c.items.upsert({ id: "ok", pk: "p", ttl: -5, v: 3 }), ttl400);
    await assert.rejects(c.item("ok", "p").patch([{ op: "set", path: "/ttl", value: 0 }]), ttl400);
    const { resource } = await c.item("ok", "p").read();
    assert.deepEqual([resource.ttl, resource.v], [50, 1]);
  });

  test("invalid container defaultTtl is 400", async () => {
    const db = await ctx.newDatabase();
    for (const defaultTtl of [0, -2]) {
      const id = unique("coll");
      await assert.rejects(db.containers.create({ id, partitionKey: { paths: ["/pk"] }, defaultTtl }), ttl400);
      await assert.rejects(db.container(id).read(), (e) => e.code === 404);
    }
  });

  test("wrong key is 401", async () => {
    const bad = new CosmosClient(ctx.emulator.clientOptions({ key: WRONG_KEY }));
    try {
      await assert.rejects(bad.databases.readAll().fetchAll(), (e) => e.code === 401);
    } finally {
      bad.dispose?.();
    }
    // The right key still works.
    assert.ok(Array.isArray((await ctx.client.databases.readAll().fetchAll()).resources));
  });
});
