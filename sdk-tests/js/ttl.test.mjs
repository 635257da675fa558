// TTL through the test clock (E1-E3, R4 boundary, R6 extend, R8/L11: the rules
// of docs/src/reference/ttl-rules.md).
import { test } from "node:test";
import assert from "node:assert/strict";
import { forEachScheme, unique } from "./emulator.mjs";

forEachScheme("time to live", (ctx) => {
  const newContainer = async (defaultTtl) => {
    const db = await ctx.newDatabase();
    const def = { id: unique("coll"), partitionKey: { paths: ["/pk"] } };
    if (defaultTtl !== undefined) def.defaultTtl = defaultTtl;
    return (await db.containers.create(def)).container;
  };
  const visible = async (c, id) => {
    const { statusCode } = await c.item(id, "p").read();
    assert.ok(statusCode === 200 || statusCode === 404, `read answered ${statusCode}`);
    return statusCode === 200;
  };
  const ids = async (c) => (await c.items.query("SELECT VALUE c.id FROM c").fetchAll()).resources.sort();
  const count = async (c) => (await c.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll()).resources[0];
  const pointReadIds = async (c, list) => Promise.all(list.map((id) => visible(c, id)));

  test("E3.1/E3.2/E3.3 and the boundary second", async () => {
    const c = await newContainer(1000);
    const { resource: r1 } = await c.items.create({ id: "e31", pk: "p" });
    const ts = r1._ts;
    assert.equal((await c.items.create({ id: "e32", pk: "p", ttl: -1 })).resource._ts, ts);
    assert.equal((await c.items.create({ id: "e33", pk: "p", ttl: 2000 })).resource._ts, ts);
    assert.equal(await ctx.clock.now(), ts);
    const all = ["e31", "e32", "e33"];

    await ctx.clock.setClock(ts + 999);
    assert.deepEqual(await pointReadIds(c, all), [true, true, true]);
    assert.deepEqual(await ids(c), all);
    assert.equal(await count(c), 3);

    await ctx.clock.setClock(ts + 1000); // _ts + ttl <= now: gone
    assert.deepEqual(await pointReadIds(c, all), [false, true, true]);
    assert.deepEqual(await ids(c), ["e32", "e33"]);
    assert.equal(await count(c), 2);
    const { resources: feed } = await c.items.readAll().fetchAll();
    assert.deepEqual(feed.map((i) => i.id).sort(), ["e32", "e33"]);

    await ctx.clock.setClock(ts + 1999);
    assert.equal(await visible(c, "e33"), true);
    await ctx.clock.setClock(ts + 2000);
    assert.deepEqual(await pointReadIds(c, all), [false, true, false]);
    assert.deepEqual(await ids(c), ["e32"]);
    assert.equal(await count(c), 1);

    await ctx.clock.advance(10 * 365 * 86400);
    assert.equal(await visible(c, "e32"), true);
  });

  test("E1: TTL off, item ttl ignored", async () => {
    const c = await newContainer();
    const ts = (await c.items.create({ id: "e11", pk: "p" })).resource._ts;
    await c.items.create({ id: "e12", pk: "p", ttl: -1 });
    await c.items.create({ id: "e13", pk: "p", ttl: 2000 });
    await ctx.clock.setClock(ts + 100_000);
    assert.deepEqual(await ids(c), ["e11", "e12", "e13"]);
    assert.equal(await visible(c, "e13"), true);
  });

  test("E2: default -1, item ttl applies", async () => {
    const c = await newContainer(-1);
    const ts = (await c.items.create({ id: "e21", pk: "p" })).resource._ts;
    await c.items.create({ id: "e22", pk: "p", ttl: -1 });
    await c.items.create({ id: "e23", pk: "p", ttl: 2000 });
    await ctx.clock.setClock(ts + 1999);
    assert.equal(await count(c), 3);
    await ctx.clock.setClock(ts + 2000);
    assert.deepEqual(await ids(c), ["e21", "e22"]);
    assert.equal(await visible(c, "e23"), false);
  });

  test("an expired item is gone for every operation, and its id is free", async () => {
    const c = await newContainer(10);
    const ts = (await c.items.create({ id: "x", pk: "p", v: 1 })).resource._ts;
    await ctx.clock.setClock(ts + 10);
    assert.equal(await visible(c, "x"), false);
    await assert.rejects(c.item("x", "p").replace({ id: "x", pk: "p", v: 2 }), (e) => e.code === 404);
    await assert.rejects(c.item("x", "p").patch([{ op: "set", path: "/v", value: 2 }]), (e) => e.code === 404);
    await assert.rejects(c.item("x", "p").delete(), (e) => e.code === 404);
    const { resource } = await c.items.create({ id: "x", pk: "p", v: 3 });
    assert.equal(resource._ts, ts + 10);
    assert.equal((await c.item("x", "p").read()).resource.v, 3);
  });

  test("a write restarts the countdown", async () => {
    const c = await newContainer(100);
    const ts = (await c.items.create({ id: "x", pk: "p" })).resource._ts;
    await ctx.clock.setClock(ts + 60);
    assert.equal((await c.items.upsert({ id: "x", pk: "p", v: 2 })).resource._ts, ts + 60);
    await ctx.clock.setClock(ts + 159);
    assert.equal(await visible(c, "x"), true);
    await ctx.clock.setClock(ts + 160);
    assert.equal(await visible(c, "x"), false);
  });

  test("disabling container TTL stops expiry but never resurrects", async () => {
    const c = await newContainer(100);
    const ts = (await c.items.create({ id: "expired", pk: "p" })).resource._ts;
    await c.items.create({ id: "own", pk: "p", ttl: 500 });
    await ctx.clock.setClock(ts + 100);
    assert.equal(await visible(c, "expired"), false);
    const { resource: def } = await c.read();
    await c.replace({ id: def.id, partitionKey: def.partitionKey });
    await ctx.clock.setClock(ts + 10_000);
    assert.deepEqual(await ids(c), ["own"]);
    assert.equal(await visible(c, "expired"), false);
  });
});
