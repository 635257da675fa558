// The change feed through the official SDK (issue 11): getChangeFeedIterator from
// the beginning, now, a point in time and a continuation, by partition key, and the
// all-versions-and-deletes mode with TTL expirations as deletes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ChangeFeedMode, ChangeFeedStartFrom } from "@azure/cosmos";
import { forEachScheme, unique } from "./emulator.mjs";

/** Every change until the feed answers 304; returns them and the continuation. */
async function drain(iterator) {
  const changes = [];
  let continuation;
  for (let i = 0; i < 100 && iterator.hasMoreResults; i++) {
    const response = await iterator.readNext();
    continuation = response.continuationToken;
    if (response.statusCode === 304) break;
    changes.push(...response.result);
  }
  return { changes, continuation };
}

forEachScheme("change feed", (ctx) => {
  const newContainer = async (defaultTtl) => {
    const db = await ctx.newDatabase();
    const def = { id: unique("feed"), partitionKey: { paths: ["/pk"] } };
    if (defaultTtl !== undefined) def.defaultTtl = defaultTtl;
    return (await db.containers.create(def)).container;
  };

  test("latest version: beginning, continuation, now, partition key", async () => {
    const c = await newContainer();
    await c.items.create({ id: "a", pk: "p", v: 1 });
    await c.items.create({ id: "b", pk: "q" });
    await c.items.upsert({ id: "a", pk: "p", v: 2 });
    const first = await drain(c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() }));
    assert.deepEqual(first.changes.map((d) => d.id), ["b", "a"]);
    assert.equal(first.changes[1].v, 2);
    assert.ok(first.changes[1]._lsn > first.changes[0]._lsn);
    await c.items.create({ id: "c", pk: "p" });
    const next = await drain(
      c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Continuation(first.continuation) }),
    );
    assert.deepEqual(next.changes.map((d) => d.id), ["c"]);
    const now = await drain(c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Now() }));
    assert.deepEqual(now.changes, []);
    await c.items.create({ id: "d", pk: "q" });
    const after = await drain(
      c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Continuation(now.continuation) }),
    );
    assert.deepEqual(after.changes.map((d) => d.id), ["d"]);
    const scoped = await drain(c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning("q") }));
    assert.deepEqual(scoped.changes.map((d) => d.id), ["b", "d"]);
  });

  test("latest version from a point in time; deletes and expired items never appear", async () => {
    const c = await newContainer(10);
    await c.items.create({ id: "early", pk: "p", ttl: -1 });
    await ctx.clock.advance(3600);
    await c.items.create({ id: "late", pk: "p", ttl: -1 });
    await c.items.create({ id: "deleted", pk: "p" });
    await c.item("deleted", "p").delete();
    await c.items.create({ id: "expires", pk: "p" });
    const since = new Date((await ctx.clock.now()) * 1000 - 60_000);
    await ctx.clock.advance(11);
    await ctx.clock.purge();
    const { changes } = await drain(c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Time(since) }));
    assert.deepEqual(changes.map((d) => d.id), ["late"]);
  });

  test("all versions and deletes: a TTL expiration is one delete with timeToLiveExpired", async () => {
    const c = await newContainer(10);
    const start = await drain(
      c.items.getChangeFeedIterator({
        changeFeedStartFrom: ChangeFeedStartFrom.Now(),
        changeFeedMode: ChangeFeedMode.AllVersionsAndDeletes,
      }),
    );
    assert.deepEqual(start.changes, []);
    const t0 = await ctx.clock.now();
    await c.items.create({ id: "a", pk: "p" });
    await c.items.upsert({ id: "a", pk: "p", v: 2 });
    await c.items.create({ id: "gone", pk: "p", ttl: -1 });
    await c.item("gone", "p").delete();
    await ctx.clock.advance(15);
    await ctx.clock.purge();
    const { changes } = await drain(
      c.items.getChangeFeedIterator({
        changeFeedStartFrom: ChangeFeedStartFrom.Continuation(start.continuation),
        changeFeedMode: ChangeFeedMode.AllVersionsAndDeletes,
      }),
    );
    const summary = changes.map((ch) => [
      ch.metadata.operationType,
      ch.current?.id ?? ch.metadata.id,
      ch.metadata.timeToLiveExpired ?? false,
    ]);
    assert.deepEqual(summary, [
      ["create", "a", false],
      ["replace", "a", false],
      ["create", "gone", false],
      ["delete", "gone", false],
      ["delete", "a", true],
    ]);
    const ttlDelete = changes.at(-1).metadata;
    assert.ok(ttlDelete.crts >= t0 + 10, "never before the expiry instant");
    assert.deepEqual(ttlDelete.partitionKey, { pk: "p" });
  });
});
