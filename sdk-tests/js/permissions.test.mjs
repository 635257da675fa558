// Users, permissions and resource tokens: the master-key client creates
// users and permissions; a CosmosClient built from `resourceTokens` or a
// `permissionFeed` works where the permission allows, is refused (403)
// elsewhere, and gets 401 once the token expired on the emulator's clock.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";
import { forEachScheme, unique } from "./emulator.mjs";

/** A client authenticated with resource tokens only (no master key). */
function tokenClient(ctx, auth) {
  // eslint-disable-next-line no-unused-vars
  const { key, ...options } = ctx.emulator.clientOptions(auth);
  return new CosmosClient(options);
}

const forbidden = (e) => e.code === 403 && /Insufficient permissions/.test(e.message);

forEachScheme("users and permissions", (ctx) => {
  async function setup() {
    const db = await ctx.newDatabase();
    const { container } = await db.containers.create({ id: unique("coll"), partitionKey: { paths: ["/pk"] } });
    await container.items.create({ id: "a", pk: "p1" });
    await container.items.create({ id: "b", pk: "p2" });
    const { user } = await db.users.create({ id: unique("user") });
    return { db, container, user };
  }

  test("users: create, read, list, query, replace, delete", async () => {
    const db = await ctx.newDatabase();
    const { user, resource } = await db.users.create({ id: "alice" });
    assert.equal(resource.id, "alice");
    assert.equal(resource._permissions, "permissions/");
    for (const f of ["_rid", "_self", "_etag", "_ts"]) assert.ok(f in resource, f);
    assert.equal((await user.read()).resource._rid, resource._rid);
    await assert.rejects(db.users.create({ id: "alice" }), (e) => e.code === 409);
    await assert.rejects(db.user("nobody").read(), (e) => e.code === 404);

    await db.users.upsert({ id: "bob" });
    const { resources: all } = await db.users.readAll().fetchAll();
    assert.deepEqual(all.map((u) => u.id).sort(), ["alice", "bob"]);
    const { resources: found } = await db.users
      .query({ query: "SELECT * FROM u WHERE u.id = @id", parameters: [{ name: "@id", value: "bob" }] })
      .fetchAll();
    assert.deepEqual(found.map((u) => u.id), ["bob"]);

    const { resource: renamed } = await db.user("bob").replace({ id: "robert" });
    assert.equal(renamed.id, "robert");
    await assert.rejects(db.user("bob").read(), (e) => e.code === 404);
    await db.user("robert").delete();
    const { resources: left } = await db.users.readAll().fetchAll();
    assert.deepEqual(left.map((u) => u.id), ["alice"]);
  });

  test("permissions: create, read, list, replace, delete, each with a fresh token", async () => {
    const { container, user } = await setup();
    const body = { id: "read-c", permissionMode: "Read", resource: container.url };
    const { permission, resource } = await user.permissions.create(body);
    assert.equal(resource.permissionMode, "Read");
    assert.ok(resource._token.startsWith("type=resource&ver=1.0&sig="));
    await assert.rejects(user.permissions.create(body), (e) => e.code === 409);

    await ctx.clock.advance(1);
    const { resource: read } = await permission.read();
    assert.notEqual(read._token, resource._token);
    const { resources: all } = await user.permissions.readAll().fetchAll();
    assert.deepEqual(all.map((p) => p.id), ["read-c"]);

    const { resource: replaced } = await permission.replace({ ...body, permissionMode: "All" });
    assert.equal(replaced.permissionMode, "All");
    await permission.delete();
    await assert.rejects(permission.read(), (e) => e.code === 404);
  });

  test("resourceTokens: an All token reads and writes its container only", async () => {
    const { db, container, user } = await setup();
    const { container: other } = await db.containers.create({ id: unique("coll"), partitionKey: { paths: ["/pk"] } });
    const { resource: perm } = await user.permissions.create({
      id: "all-c",
      permissionMode: "All",
      resource: container.url,
    });
    const client = tokenClient(ctx, { resourceTokens: { [container.url]: perm._token } });
    const mine = client.database(db.id).container(container.id);
    assert.equal((await mine.item("a", "p1").read()).resource.pk, "p1");
    await mine.items.create({ id: "c", pk: "p3" });
    await mine.items.upsert({ id: "a", pk: "p1", changed: true });
    const { resources: rows } = await mine.items.query("SELECT * FROM c").fetchAll();
    assert.deepEqual(rows.map((r) => r.id).sort(), ["a", "b", "c"]);
    await mine.item("c", "p3").delete();
    assert.equal((await container.item("a", "p1").read()).resource.changed, true);

    // Elsewhere the SDK finds no token for the path and sends none ("null"): 401.
    const theirs = client.database(db.id).container(other.id);
    await assert.rejects(theirs.items.create({ id: "x", pk: "p1" }), (e) => e.code === 401);
    assert.equal((await other.item("x", "p1").read()).statusCode, 404);
    await assert.rejects(client.database(db.id).users.create({ id: "mallory" }), (e) => e.code === 401);
    // A token sent for a resource its permission does not cover: 403.
    const misdirected = tokenClient(ctx, { resourceTokens: { [other.url]: perm._token } });
    const stolen = misdirected.database(db.id).container(other.id);
    await assert.rejects(stolen.items.create({ id: "x", pk: "p1" }), forbidden);
    assert.equal((await other.item("x", "p1").read()).statusCode, 404);
    const { resources: users } = await db.users.readAll().fetchAll();
    assert.equal(users.length, 1);
  });

  test("permissionFeed: a Read token refuses writes", async () => {
    const { db, container, user } = await setup();
    await user.permissions.create({ id: "read-c", permissionMode: "Read", resource: container.url });
    const { resources: feed } = await user.permissions.readAll().fetchAll();
    const client = tokenClient(ctx, { permissionFeed: feed });
    const mine = client.database(db.id).container(container.id);
    assert.equal((await mine.item("b", "p2").read()).resource.id, "b");
    const { resources: rows } = await mine.items.readAll().fetchAll();
    assert.equal(rows.length, 2);
    await assert.rejects(mine.items.create({ id: "x", pk: "p1" }), forbidden);
    await assert.rejects(mine.item("a", "p1").delete(), forbidden);
    assert.equal((await container.item("a", "p1").read()).resource.id, "a");
  });

  test("a resourcePartitionKey token is confined to its partition", async () => {
    const { db, container, user } = await setup();
    const { resource: perm } = await user.permissions.create({
      id: "p1",
      permissionMode: "All",
      resource: container.url,
      resourcePartitionKey: ["p1"],
    });
    const client = tokenClient(ctx, { resourceTokens: { [container.url]: perm._token } });
    const mine = client.database(db.id).container(container.id);
    assert.equal((await mine.item("a", "p1").read()).resource.id, "a");
    await mine.items.create({ id: "n", pk: "p1" });
    const { resources: rows } = await mine.items.query("SELECT * FROM c", { partitionKey: "p1" }).fetchAll();
    assert.deepEqual(rows.map((r) => r.id).sort(), ["a", "n"]);
    await assert.rejects(mine.item("b", "p2").read(), forbidden);
    await assert.rejects(mine.items.create({ id: "n", pk: "p2" }), forbidden);
  });

  test("a token expires on the emulator's clock", async () => {
    const { db, container, user } = await setup();
    const { permission, resource: perm } = await user.permissions.create(
      { id: "short", permissionMode: "Read", resource: container.url },
      { resourceTokenExpirySeconds: 600 },
    );
    const client = tokenClient(ctx, { resourceTokens: { [container.url]: perm._token } });
    const mine = client.database(db.id).container(container.id);
    assert.equal((await mine.item("a", "p1").read()).resource.id, "a");
    await ctx.clock.advance(600);
    await assert.rejects(mine.item("a", "p1").read(), (e) => e.code === 401 && /expired/.test(e.message));

    const { resource: fresh } = await permission.read();
    const renewed = tokenClient(ctx, { resourceTokens: { [container.url]: fresh._token } });
    assert.equal((await renewed.database(db.id).container(container.id).item("a", "p1").read()).resource.id, "a");
  });
});
