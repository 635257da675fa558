// Vector, full-text and hybrid search (issue 25) through @azure/cosmos: the
// policies as the SDK sends them, VectorDistance top-k checked against a
// brute force computed here, full-text filters and BM25 ranks, and RRF; each
// query run on a container of one range and on one of five (30,000 RU/s),
// through the SDK's query plan pipeline, must give the same items in the
// same order.
import { test } from "node:test";
import assert from "node:assert/strict";
import { forEachScheme, unique } from "./emulator.mjs";

const WORDS = ["river", "stone", "run", "running", "light", "walk", "united", "states", "kingdom"];

// 60 items: a short text and a 16-dimension vector, both from the index.
function items() {
  return Array.from({ length: 60 }, (_, i) => ({
    id: `item-${String(i).padStart(2, "0")}`,
    pk: `pk-${i % 7}`,
    text: Array.from({ length: 3 + (i % 5) }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(" "),
    embedding: Array.from({ length: 16 }, (_, d) => Math.sin(i * 0.7 + d * 1.3)),
  }));
}

const cosine = (a, b) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
};
const euclidean = (a, b) => Math.sqrt(a.reduce((s, x, i) => s + (x - b[i]) ** 2, 0));

const vectorPolicy = (distanceFunction) => ({
  vectorEmbeddings: [{ path: "/embedding", dataType: "float32", dimensions: 16, distanceFunction }],
});
const fullTextPolicy = { defaultLanguage: "en-US", fullTextPaths: [{ path: "/text", language: "en-US" }] };
const indexingPolicy = {
  indexingMode: "consistent",
  includedPaths: [{ path: "/*" }],
  excludedPaths: [{ path: '/"_etag"/?' }, { path: "/embedding/*" }],
  vectorIndexes: [{ path: "/embedding", type: "quantizedFlat" }],
  fullTextIndexes: [{ path: "/text" }],
};

forEachScheme("search", (ctx) => {
  let one;
  let five;
  let euclid;
  const query = [0.3, -0.2, 0.9, 0.1, -0.5, 0.4, 0.2, -0.1, 0.0, 0.6, -0.3, 0.2, 0.1, 0.7, -0.4, 0.5];

  // Equal scores may come in another order from several ranges (as in
  // Azure): `ordered: false` compares the items only.
  const both = async (spec, { ordered = true } = {}) => {
    const run = async (c) => (await c.items.query(spec).fetchAll()).resources;
    const [a, b] = [await run(one), await run(five)];
    const key = (rows) => (ordered ? rows : [...rows].sort((x, y) => (x.id < y.id ? -1 : 1)));
    assert.deepEqual(key(b), key(a), `one range and five differ for ${JSON.stringify(spec)}`);
    return a;
  };

  test("create: the policies and indexes are served back as sent", async () => {
    const db = await ctx.newDatabase();
    const make = async (id, throughput, distance) =>
      (
        await db.containers.create({
          id,
          partitionKey: { paths: ["/pk"] },
          throughput,
          indexingPolicy,
          vectorEmbeddingPolicy: vectorPolicy(distance),
          fullTextPolicy,
        })
      ).container;
    one = await make(unique("one"), 400, "cosine");
    five = await make(unique("five"), 30000, "cosine");
    euclid = await make(unique("euclid"), 30000, "euclidean");
    assert.equal((await five.getFeedRanges()).length, 5);
    for (const item of items()) {
      await one.items.create(item);
      await five.items.create(item);
      await euclid.items.create(item);
    }
    const { resource } = await five.read();
    assert.deepEqual(resource.vectorEmbeddingPolicy, vectorPolicy("cosine"));
    assert.deepEqual(resource.fullTextPolicy, fullTextPolicy);
    assert.deepEqual(resource.indexingPolicy.vectorIndexes, indexingPolicy.vectorIndexes);
    assert.deepEqual(resource.indexingPolicy.fullTextIndexes, indexingPolicy.fullTextIndexes);
  });

  test("a vector index on a path without an embedding is refused", async () => {
    const db = await ctx.newDatabase();
    await assert.rejects(
      db.containers.create({
        id: unique("bad"),
        partitionKey: { paths: ["/pk"] },
        indexingPolicy: { vectorIndexes: [{ path: "/other", type: "flat" }] },
        vectorEmbeddingPolicy: vectorPolicy("cosine"),
      }),
      (e) => e.code === 400 && /path::\/other not matching in Embedding's path/.test(e.message),
    );
  });

  test("VectorDistance top 10 is the exact top 10, on one range and five", async () => {
    const rows = await both({
      query:
        "SELECT TOP 10 c.id, VectorDistance(c.embedding, @q) AS score FROM c ORDER BY VectorDistance(c.embedding, @q)",
      parameters: [{ name: "@q", value: query }],
    });
    const expected = items()
      .map((i) => ({ id: i.id, score: cosine(i.embedding, query) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 10);
    assert.deepEqual(
      rows.map((r) => r.id),
      expected.map((e) => e.id),
    );
    for (const [row, e] of rows.map((r, k) => [r, expected[k]])) {
      assert.ok(Math.abs(row.score - e.score) < 1e-5, `${row.score} vs ${e.score}`);
    }
  });

  test("a Euclidean policy ranks the smallest distances first; OFFSET LIMIT pages it", async () => {
    const { resources } = await euclid.items
      .query({
        query: "SELECT c.id FROM c ORDER BY VectorDistance(c.embedding, @q) OFFSET 3 LIMIT 5",
        parameters: [{ name: "@q", value: query }],
      })
      .fetchAll();
    const expected = items()
      .map((i) => ({ id: i.id, d: euclidean(i.embedding, query) }))
      .sort((a, b) => a.d - b.d)
      .slice(3, 8)
      .map((e) => e.id);
    assert.deepEqual(
      resources.map((r) => r.id),
      expected,
    );
  });

  test("FullTextContains filters by stemmed words on one range and five", async () => {
    const rows = await both(
      "SELECT VALUE c.id FROM c WHERE FullTextContainsAll(c.text, 'run', 'river') ORDER BY c.id",
    );
    // "running" stems to "run".
    const expected = items()
      .filter((i) => /\brun(ning)?\b/.test(i.text) && /\briver\b/.test(i.text))
      .map((i) => i.id);
    assert.ok(expected.length > 0);
    assert.deepEqual(rows, expected);
  });

  test("ORDER BY RANK FullTextScore and RRF rank alike on one range and five", async () => {
    // Several texts hold the same words: their scores tie.
    const ranked = await both(
      "SELECT TOP 8 c.id, c.text FROM c WHERE FullTextContains(c.text, 'stone') ORDER BY RANK FullTextScore(c.text, 'stone', 'light')",
      { ordered: false },
    );
    assert.ok(ranked.length > 0 && ranked.every((r) => /stone/.test(r.text)));
    const fused = await both({
      query:
        "SELECT TOP 6 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, 'united states'), VectorDistance(c.embedding, @q), [1, 2])",
      parameters: [{ name: "@q", value: query }],
    });
    assert.equal(fused.length, 6);
    // The vector weighs twice as much: its best item leads.
    const best = items()
      .map((i) => ({ id: i.id, score: cosine(i.embedding, query) }))
      .sort((a, b) => b.score - a.score)[0].id;
    assert.equal(fused[0].id, best);
  });

  test("RRF outside ORDER BY RANK, and a direction on RANK, are refused", async () => {
    await assert.rejects(
      five.items.query("SELECT TOP 2 c.id FROM c ORDER BY RANK FullTextScore(c.text, 'stone') DESC").fetchAll(),
      (e) => e.code === 400 && /ORDER BY RANK clause is not allowed/.test(e.message),
    );
    await assert.rejects(
      one.items
        .query("SELECT RRF(FullTextScore(c.text, 'a'), FullTextScore(c.text, 'b')) AS r FROM c", {
          partitionKey: "pk-1",
        })
        .fetchAll(),
      (e) => e.code === 400 && /only allowed in an ORDER BY RANK clause/.test(e.message),
    );
  });
});
