// Throughput offers through the SDK (readOffer, offers.readAll, offer.replace),
// and the conflicts feed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { forEachScheme, unique } from "./emulator.mjs";

forEachScheme("offers", (ctx) => {
  test("a container's throughput is read and replaced", async () => {
    const db = await ctx.newDatabase();
    const { container, resource: props } = await db.containers.create({
      id: unique("coll"),
      partitionKey: { paths: ["/pk"] },
      throughput: 700,
    });
    const { resource: offer, offer: handle } = await container.readOffer();
    assert.equal(offer.offerVersion, "V2");
    assert.equal(offer.offerType, "Invalid");
    assert.equal(offer.resource, props._self);
    assert.equal(offer.offerResourceId, props._rid);
    assert.equal(offer.content.offerThroughput, 700);
    assert.equal(offer.content.offerIsRUPerMinuteThroughputEnabled, false);
    assert.equal(offer._self, `offers/${offer.id}/`);

    // Read by id, signed with the lower-cased RID.
    const { resource: byId } = await handle.read();
    assert.deepEqual(byId, offer);
    offer.content.offerThroughput = 1100;
    const { resource: replaced } = await handle.replace(offer);
    assert.equal(replaced.content.offerThroughput, 1100);
    assert.equal((await container.readOffer()).resource.content.offerThroughput, 1100);

    // Below the minimum: refused, nothing changed.
    offer.content.offerThroughput = 250;
    await assert.rejects(
      handle.replace(offer),
      (e) => e.code === 400 && /Requested throughput 250 is less than required minimum throughput 400/.test(e.message),
    );
    assert.equal((await container.readOffer()).resource.content.offerThroughput, 1100);
  });

  test("a container without throughput gets 400; its offer goes with it", async () => {
    const db = await ctx.newDatabase();
    const { container } = await db.containers.create({ id: unique("coll"), partitionKey: { paths: ["/pk"] } });
    const { resource: offer, offer: handle } = await container.readOffer();
    assert.equal(offer.content.offerThroughput, 400);
    const { resources: all } = await ctx.client.offers.readAll().fetchAll();
    assert.ok(all.some((o) => o.id === offer.id));
    await container.delete();
    await assert.rejects(handle.read(), (e) => e.code === 404);
  });

  test("autoscale on a database, shared by its containers", async () => {
    const id = unique("db");
    const { database, resource: props } = await ctx.client.databases.create({ id, maxThroughput: 6000 });
    try {
      const { resource: offer, offer: handle } = await database.readOffer();
      assert.equal(offer.resource, props._self);
      assert.equal(offer.content.offerAutopilotSettings.maxThroughput, 6000);
      assert.equal(offer.content.offerThroughput, 600);

      offer.content.offerAutopilotSettings.maxThroughput = 9000;
      const { resource: raised } = await handle.replace(offer);
      assert.equal(raised.content.offerAutopilotSettings.maxThroughput, 9000);

      // A container sharing the database's throughput has no offer of its own.
      const { container } = await database.containers.create({ id: unique("coll"), partitionKey: { paths: ["/pk"] } });
      const { resource: none } = await container.readOffer();
      assert.equal(none, undefined);
    } finally {
      await database.delete();
    }
  });

  test("a database without throughput has no offer; invalid throughput is refused", async () => {
    const db = await ctx.newDatabase();
    assert.equal((await db.readOffer()).resource, undefined);
    const id = unique("db");
    await assert.rejects(
      ctx.client.databases.create({ id, maxThroughput: 2500 }),
      (e) => e.code === 400 && /increments of 1000/.test(e.message),
    );
    await assert.rejects(ctx.client.database(id).read(), (e) => e.code === 404);
    await assert.rejects(
      db.containers.create({ id: unique("coll"), partitionKey: { paths: ["/pk"] }, throughput: 399 }),
      (e) => e.code === 400,
    );
  });

  test("the conflicts feed is empty", async () => {
    const db = await ctx.newDatabase();
    const { container } = await db.containers.create({ id: unique("coll"), partitionKey: { paths: ["/pk"] } });
    const { resources } = await container.conflicts.readAll().fetchAll();
    assert.deepEqual(resources, []);
    const { resources: queried } = await container.conflicts
      .query("SELECT * FROM c WHERE c.operationType = 'create'")
      .fetchAll();
    assert.deepEqual(queried, []);
  });
});
