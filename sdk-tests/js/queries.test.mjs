// Queries: cross-partition (ORDER BY, TOP, COUNT need the query plan) and single-partition, with parameters.
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { forEachScheme, unique } from "./emulator.mjs";

const ITEMS = [
  { id: "a1", pk: "a", n: 3, kind: "x" },
  { id: "a2", pk: "a", n: 1, kind: "y" },
  { id: "b1", pk: "b", n: 5, kind: "x" },
  { id: "b2", pk: "b", n: 2, kind: "x" },
  { id: "c1", pk: "c", n: 4, kind: "y" },
];

forEachScheme("queries", (ctx) => {
  let c;
  const query = async (spec, options) => (await c.items.query(spec, options).fetchAll()).resources;

  // Runs after forEachScheme's own before hook (hooks run in registration order).
  before(async () => {
    const db = await ctx.newDatabase();
    ({ container: c } = await db.containers.create({ id: unique("coll"), partitionKey: { paths: ["/pk"] } }));
    for (const item of ITEMS) await c.items.create(item);
  });

  test("cross-partition filter with parameters", async () => {
    const got = await query({
      query: "SELECT * FROM c WHERE c.kind = @kind AND c.n >= @min",
      parameters: [{ name: "@kind", value: "x" }, { name: "@min", value: 3 }],
    });
    assert.deepEqual(got.map((i) => i.id).sort(), ["a1", "b1"]);
  });

  test("single-partition query with parameters", async () => {
    const got = await query(
      { query: "SELECT c.id, c.n FROM c WHERE c.n > @min", parameters: [{ name: "@min", value: 0 }] },
      { partitionKey: "b" },
    );
    assert.deepEqual(got.map((i) => [i.id, i.n]).sort(), [["b1", 5], ["b2", 2]]);
  });

  test("cross-partition ORDER BY", async () => {
    assert.deepEqual(await query("SELECT VALUE c.id FROM c ORDER BY c.n DESC"), ["b1", "c1", "a1", "b2", "a2"]);
    const asc = await query("SELECT c.id, c.n FROM c ORDER BY c.n");
    assert.deepEqual(asc.map((i) => i.id), ["a2", "b2", "a1", "c1", "b1"]);
  });

  test("cross-partition ORDER BY paged by the SDK", async () => {
    const it = c.items.query("SELECT * FROM c ORDER BY c.n", { maxItemCount: 2 });
    const ids = [];
    while (it.hasMoreResults()) {
      const { resources } = await it.fetchNext();
      assert.ok(resources.length <= 2);
      ids.push(...resources.map((i) => i.id));
    }
    assert.deepEqual(ids, ["a2", "b2", "a1", "c1", "b1"]);
  });

  test("cross-partition TOP", async () => {
    assert.deepEqual(await query("SELECT TOP 2 VALUE c.id FROM c ORDER BY c.n DESC"), ["b1", "c1"]);
    const top = await query("SELECT TOP 3 * FROM c");
    assert.equal(top.length, 3);
  });

  test("cross-partition COUNT", async () => {
    assert.deepEqual(await query("SELECT VALUE COUNT(1) FROM c"), [5]);
    assert.deepEqual(
      await query({ query: "SELECT VALUE COUNT(1) FROM c WHERE c.kind = @k", parameters: [{ name: "@k", value: "x" }] }),
      [3],
    );
  });

  test("cross-partition SUM, MIN, MAX, AVG, DISTINCT and OFFSET/LIMIT", async () => {
    assert.deepEqual(await query("SELECT VALUE SUM(c.n) FROM c"), [15]);
    assert.deepEqual(await query("SELECT VALUE MIN(c.n) FROM c"), [1]);
    assert.deepEqual(await query("SELECT VALUE MAX(c.n) FROM c"), [5]);
    assert.deepEqual(await query("SELECT VALUE AVG(c.n) FROM c"), [3]);
    assert.deepEqual((await query("SELECT DISTINCT VALUE c.kind FROM c")).sort(), ["x", "y"]);
    assert.deepEqual(await query("SELECT VALUE c.id FROM c ORDER BY c.n OFFSET 1 LIMIT 2"), ["b2", "a1"]);
  });

  test("single-partition COUNT", async () => {
    assert.deepEqual(await query("SELECT VALUE COUNT(1) FROM c", { partitionKey: "a" }), [2]);
  });

  test("JOIN, GROUP BY, FROM x IN and queries without FROM, across partitions through the query plan", async () => {
    const db = await ctx.newDatabase();
    const { container: t } = await db.containers.create({ id: unique("tags"), partitionKey: { paths: ["/pk"] } });
    await t.items.create({ id: "p1", pk: "a", tags: ["red", "blue"] });
    await t.items.create({ id: "p2", pk: "b", tags: ["green"] });
    await t.items.create({ id: "p3", pk: "c" });
    const run = async (q) => (await t.items.query(q).fetchAll()).resources;
    assert.deepEqual((await run("SELECT VALUE tag FROM p JOIN tag IN p.tags")).sort(), ["blue", "green", "red"]);
    assert.deepEqual(await run("SELECT VALUE COUNT(1) FROM p JOIN tag IN p.tags"), [3]);
    assert.deepEqual(await run("SELECT VALUE tag FROM tag IN p.tags ORDER BY tag"), ["blue", "green", "red"]);
    const pairs = await run("SELECT p.id, tag FROM p JOIN tag IN p.tags WHERE tag != 'red'");
    assert.deepEqual(pairs.map((r) => `${r.id}:${r.tag}`).sort(), ["p1:blue", "p2:green"]);
    assert.deepEqual(await run("SELECT VALUE CONCAT('a', 'b')"), ["ab"]);
    const groups = await run("SELECT tag, COUNT(1) AS n FROM p JOIN tag IN p.tags GROUP BY tag");
    assert.deepEqual(groups.map((g) => `${g.tag}:${g.n}`).sort(), ["blue:1", "green:1", "red:1"]);
    assert.deepEqual(await run("SELECT VALUE COUNT(1) FROM p GROUP BY p.pk"), [1, 1, 1]);
  });

  test("GROUP BY with every aggregate and subqueries, across partitions through the query plan", async () => {
    const db = await ctx.newDatabase();
    const { container: t } = await db.containers.create({ id: unique("groups"), partitionKey: { paths: ["/pk"] } });
    const items = [
      { id: "a", pk: "p1", cat: "x", n: 1, tags: [{ k: "fabric" }, { k: "season" }] },
      { id: "b", pk: "p2", cat: "x", n: 3, tags: [{ k: "fabric" }] },
      { id: "c", pk: "p3", cat: "y", n: 5, tags: [] },
      { id: "d", pk: "p1", n: 7 },
    ];
    for (const item of items) await t.items.create(item);
    const run = async (q) => (await t.items.query(q).fetchAll()).resources;
    // The SDK merges the groups each range returns (groupByItems and payload).
    const groups = await run(
      "SELECT c.cat, COUNT(1) AS n, SUM(c.n) AS total, AVG(c.n) AS mean, MIN(c.n) AS low, MAX(c.n) AS high FROM c GROUP BY c.cat",
    );
    const byCat = Object.fromEntries(groups.map((g) => [g.cat ?? "(none)", g]));
    assert.deepEqual(byCat.x, { cat: "x", n: 2, total: 4, mean: 2, low: 1, high: 3 });
    assert.deepEqual(byCat.y, { cat: "y", n: 1, total: 5, mean: 5, low: 5, high: 5 });
    assert.deepEqual(byCat["(none)"], { n: 1, total: 7, mean: 7, low: 7, high: 7 });
    assert.deepEqual((await run("SELECT VALUE MAX(c.n) FROM c GROUP BY c.cat")).sort(), [3, 5, 7]);
    assert.deepEqual((await run("SELECT VALUE c.cat FROM c WHERE IS_DEFINED(c.cat) GROUP BY c.cat")).sort(), ["x", "y"]);
    // An aggregate without VALUE and without GROUP BY: one group.
    assert.deepEqual(await run("SELECT COUNT(1) AS n, SUM(c.n) AS s FROM c"), [{ n: 4, s: 16 }]);
    // Subqueries: answered per range, each range's rows already the answer.
    const subq = await run(
      "SELECT c.id, EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t.k = 'season') AS winter, " +
        "ARRAY(SELECT VALUE t.k FROM t IN c.tags) AS keys, (SELECT VALUE COUNT(1) FROM t IN c.tags) AS count FROM c",
    );
    assert.deepEqual(
      subq.sort((p, q) => p.id.localeCompare(q.id)),
      [
        { id: "a", winter: true, keys: ["fabric", "season"], count: 2 },
        { id: "b", winter: false, keys: ["fabric"], count: 1 },
        { id: "c", winter: false, keys: [], count: 0 },
        { id: "d", winter: false, keys: [], count: 0 },
      ],
    );
    assert.deepEqual(
      await run("SELECT VALUE c.id FROM c JOIN (SELECT VALUE t FROM t IN c.tags WHERE t.k = 'fabric') ORDER BY c.id DESC"),
      ["b", "a"],
    );
    assert.deepEqual(await run("SELECT VALUE [5 & 3, 5 | 3, 5 ^ 3, ~5, 1 << 3, -16 >> 2, -16 >>> 28]"), [[1, 7, 6, -6, 8, -4, 15]]);
  });

  test("MakeList and MakeSet, across partitions through the query plan and per group", async () => {
    // The SDK concatenates each range's array (and dedupes a set): order is the SDK's.
    const list = (await query("SELECT VALUE MakeList(c.kind) FROM c"))[0];
    assert.deepEqual([...list].sort(), ["x", "x", "x", "y", "y"]);
    const set = (await query("SELECT VALUE MakeSet(c.kind) FROM c"))[0];
    assert.deepEqual([...set].sort(), ["x", "y"]);
    const groups = await query("SELECT c.kind, MakeList(c.n) AS ns, MakeSet(c.pk) AS pks FROM c GROUP BY c.kind");
    const byKind = Object.fromEntries(groups.map((g) => [g.kind, [[...g.ns].sort(), [...g.pks].sort()]]));
    assert.deepEqual(byKind, { x: [[2, 3, 5], ["a", "b"]], y: [[1, 4], ["a", "c"]] });
  });

  // The SDK's own crossPartition.spec.ts and aggregateQuery.spec.ts read each
  // query with fetchAll, then again page by page with fetchNext, and require
  // the two charges within 10%: a query's charge follows its work, not how it
  // is paged, nor whether the emulator computed its result on this read.
  test("a query costs the same read with fetchAll or with fetchNext pages, across ranges", async () => {
    const db = await ctx.newDatabase();
    const { container } = await db.containers.create(
      { id: unique("ranged"), partitionKey: { paths: ["/id"] } },
      { offerThroughput: 25100 },
    );
    for (let i = 0; i < 20; i++) {
      await container.items.create({ id: `sample${i}`, spam: `eggs${i}`, spam3: `eggs${i % 3}`, n: i });
    }
    const { resources: ranges } = await container.readPartitionKeyRanges().fetchAll();
    assert.ok(ranges.length > 1, `several ranges: ${ranges.length}`);
    for (const query of [
      "SELECT * FROM root r ORDER BY r.spam",
      "SELECT DISTINCT VALUE r.spam3 FROM root r",
      "SELECT DISTINCT VALUE r.spam3 FROM root r ORDER BY r.spam3 DESC",
      "SELECT VALUE COUNT(r.n) FROM root r",
      "SELECT VALUE SUM(r.n) FROM root r WHERE r.n > 3",
    ]) {
      const it = container.items.query(query, { maxItemCount: 2, populateQueryMetrics: true });
      const all = await it.fetchAll();
      it.reset();
      let pages = 0;
      while (it.hasMoreResults()) pages += (await it.fetchNext()).requestCharge;
      assert.ok(all.requestCharge > 0, query);
      const difference = Math.abs(all.requestCharge - pages) / pages;
      assert.ok(difference <= 0.01, `${query}: fetchAll ${all.requestCharge}, fetchNext pages ${pages}`);
    }
  });

  test("no match is empty", async () => {
    assert.deepEqual(await query({ query: "SELECT * FROM c WHERE c.id = @id", parameters: [{ name: "@id", value: "zzz" }] }), []);
  });
});
