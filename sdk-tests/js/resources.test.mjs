// Databases and containers: create, read, list, replace, delete.
import { test } from "node:test";
import assert from "node:assert/strict";
import { forEachScheme, unique } from "./emulator.mjs";

forEachScheme("databases and containers", (ctx) => {
  test("database create, read, list, query, conflict, delete", async () => {
    const id = unique("db");
    const { database, resource } = await ctx.client.databases.create({ id });
    assert.equal(resource.id, id);
    for (const f of ["_rid", "_self", "_etag", "_ts"]) assert.ok(f in resource, f);
    assert.ok(Number.isInteger(resource._ts));

    const { resource: read } = await database.read();
    assert.equal(read._rid, resource._rid);
    const { resources: all } = await ctx.client.databases.readAll().fetchAll();
    assert.ok(all.some((d) => d.id === id));
    const { resources: found } = await ctx.client.databases
      .query({ query: "SELECT * FROM r WHERE r.id = @id", parameters: [{ name: "@id", value: id }] })
      .fetchAll();
    assert.deepEqual(found.map((d) => d.id), [id]);
    await assert.rejects(ctx.client.databases.create({ id }), (e) => e.code === 409);

    // createIfNotExists returns the existing one.
    const again = await ctx.client.databases.createIfNotExists({ id });
    assert.equal(again.resource._rid, resource._rid);

    await database.delete();
    const { resources: after } = await ctx.client.databases.readAll().fetchAll();
    assert.ok(!after.some((d) => d.id === id));
    await assert.rejects(database.read(), (e) => e.code === 404);
    await assert.rejects(database.delete(), (e) => e.code === 404);
  });

  test("container create, read, list, replace, delete", async () => {
    const db = await ctx.newDatabase();
    const id = unique("coll");
    const { container, resource } = await db.containers.create({ id, partitionKey: { paths: ["/pk"] } });
    assert.equal(resource.id, id);
    assert.deepEqual(resource.partitionKey.paths, ["/pk"]);
    assert.equal(resource.defaultTtl, undefined);
    for (const f of ["_rid", "_self", "_etag", "_ts", "_docs"]) assert.ok(f in resource, f);

    const other = unique("coll");
    await db.containers.create({ id: other, partitionKey: { paths: ["/tenant"] } });
    const { resources: list } = await db.containers.readAll().fetchAll();
    assert.deepEqual(list.map((c) => c.id).sort(), [id, other].sort());
    await assert.rejects(db.containers.create({ id, partitionKey: { paths: ["/pk"] } }), (e) => e.code === 409);

    const { resource: replaced } = await container.replace({ id, partitionKey: { paths: ["/pk"] }, defaultTtl: 3600 });
    assert.equal(replaced.defaultTtl, 3600);
    const { resource: reread } = await db.container(id).read();
    assert.equal(reread.defaultTtl, 3600);
    // Replacing without defaultTtl removes it.
    await container.replace({ id, partitionKey: { paths: ["/pk"] } });
    assert.equal((await db.container(id).read()).resource.defaultTtl, undefined);

    await container.delete();
    const { resources: left } = await db.containers.readAll().fetchAll();
    assert.deepEqual(left.map((c) => c.id), [other]);
    await assert.rejects(db.container(id).read(), (e) => e.code === 404);
    await assert.rejects(db.container(id).delete(), (e) => e.code === 404);
  });

  test("container defaultTtl round-trips", async () => {
    const db = await ctx.newDatabase();
    const { resource: on } = await db.containers.create({ id: unique("coll"), partitionKey: { paths: ["/pk"] }, defaultTtl: -1 });
    assert.equal(on.defaultTtl, -1);
    const { container } = await db.containers.create({ id: unique("coll"), partitionKey: { paths: ["/pk"] }, defaultTtl: 1000 });
    assert.equal((await container.read()).resource.defaultTtl, 1000);
  });
});
