// Persistence through the official SDK (issue 14): items written through
// @azure/cosmos into an emulator started with --data-dir come back after the
// emulator is killed (SIGKILL) and started again on the same directory: point
// reads, queries, and the change feed resumed from a continuation the SDK
// handed out before the kill (nothing seen twice, nothing missed).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChangeFeedStartFrom } from "@azure/cosmos";
import { Emulator } from "./emulator.mjs";

/** Every change until the feed answers 304. */
async function drain(iterator) {
  const changes = [];
  for (let i = 0; i < 100 && iterator.hasMoreResults; i++) {
    const response = await iterator.readNext();
    if (response.statusCode === 304) break;
    changes.push(...response.result);
  }
  return changes;
}

test("items, queries and the change feed survive SIGKILL and a restart on --data-dir", async () => {
  const root = mkdtempSync(join(tmpdir(), "cosmos-sdk-persistence-js-"));
  const args = ["--data-dir", join(root, "data")];
  let emu = await Emulator.start({ tls: false, args });
  const written = {};
  let firstPage;
  let continuation;
  try {
    const client = emu.client();
    const { database } = await client.databases.create({ id: "persisted" });
    const { container: c } = await database.containers.create({
      id: "c",
      partitionKey: { paths: ["/pk"] },
      defaultTtl: -1,
    });
    for (let i = 0; i < 10; i++) await c.items.create({ id: `a${i}`, pk: `p${i % 3}`, n: i });
    await c.items.upsert({ id: "a3", pk: "p0", n: 33 });
    for (let i = 0; i < 10; i++) written[i] = (await c.item(`a${i}`, `p${i % 3}`).read()).resource;
    // The first page of the feed, and the SDK's continuation after it.
    const iterator = c.items.getChangeFeedIterator({
      changeFeedStartFrom: ChangeFeedStartFrom.Beginning(),
      maxItemCount: 4,
    });
    const page = await iterator.readNext();
    firstPage = page.result.map((d) => d.id);
    assert.deepEqual(firstPage, ["a0", "a1", "a2", "a4"]);
    continuation = page.continuationToken;
    assert.ok(continuation);
    client.dispose?.();
  } finally {
    await emu.kill();
  }

  emu = await Emulator.start({ tls: false, args });
  try {
    const client = emu.client();
    const c = client.database("persisted").container("c");
    assert.equal((await c.read()).resource.defaultTtl, -1);
    for (let i = 0; i < 10; i++) {
      const { resource } = await c.item(`a${i}`, `p${i % 3}`).read();
      assert.deepEqual(resource, written[i], "the item and its system properties, as written");
    }
    const { resources: count } = await c.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll();
    assert.deepEqual(count, [10]);
    const { resources: found } = await c.items.query("SELECT c.id FROM c WHERE c.n > 8").fetchAll();
    assert.deepEqual(found.map((d) => d.id).sort(), ["a3", "a9"]);
    for (let i = 0; i < 3; i++) await c.items.create({ id: `b${i}`, pk: "p1" });
    // The feed goes on from before the kill: the rest of the old writes, then the new ones.
    const resumed = (
      await drain(c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Continuation(continuation) }))
    ).map((d) => d.id);
    assert.deepEqual(resumed, ["a5", "a6", "a7", "a8", "a9", "a3", "b0", "b1", "b2"]);
    const all = [...firstPage, ...resumed].sort();
    assert.deepEqual(all, [...Array(10).keys()].map((i) => `a${i}`).concat(["b0", "b1", "b2"]).sort());
    client.dispose?.();
  } finally {
    await emu.stop();
    rmSync(root, { recursive: true, force: true });
  }
});
