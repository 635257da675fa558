// The cases of @azure/cosmos's own vector search tests
// (azure-sdk-for-js, sdk/cosmosdb/cosmos/test/public/functional/
// vectorEmbeddingPolicy.spec.ts), written again here: that suite is not in
// the npm package and imports the SDK's sources, so it cannot run
// unchanged against a package. Same containers, items, queries and
// assertions, through @azure/cosmos from the registry; the replace refusal
// is checked in the service's current words (the spec pins an older
// wording; the Python SDK's tests pin this one), and the unbounded ORDER BY
// queries pass the option the SDK now asks for them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { forEachScheme, unique } from "./emulator.mjs";

const Q = "[0.056419, -0.021141]";
const EUCLIDEAN = `VectorDistance(${Q}, c.vector1, true, {distanceFunction:'euclidean'})`;
const DOT_1 = `VectorDistance(${Q}, c.vector1, true, {distanceFunction:'dotProduct'})`;
const DOT_2 = `VectorDistance(${Q}, c.vector2, true, {distanceFunction:'dotProduct'})`;

// The spec's helper: every page read, the scores strictly ascending (or
// descending), and `size` rows in all. @azure/cosmos 4.x refuses a vector
// ORDER BY without TOP or LIMIT on the client unless the caller allows it
// (as the SDK's full-text spec does): allowed here.
async function queryInOrder(container, query, size, descending) {
  const iterator = container.items.query(query, { allowUnboundedNonStreamingQueries: true });
  let previous = descending ? Number.MAX_VALUE : -Number.MIN_VALUE;
  let count = 0;
  while (iterator.hasMoreResults()) {
    const { resources } = await iterator.fetchNext();
    for (const item of resources ?? []) {
      if (descending) assert.ok(previous > item.similarityScore, `not descending: ${query}`);
      else assert.ok(previous < item.similarityScore, `not ascending: ${query}`);
      previous = item.similarityScore;
      count++;
    }
  }
  assert.equal(count, size, query);
}

forEachScheme("the JavaScript SDK's vector search cases", (ctx) => {
  test("an embedding policy of three data types is served back", async () => {
    const db = await ctx.newDatabase();
    const { resource } = await db.containers.createIfNotExists({
      id: unique("vectors"),
      vectorEmbeddingPolicy: {
        vectorEmbeddings: [
          { path: "/vector1", dataType: "float32", dimensions: 500, distanceFunction: "euclidean" },
          { path: "/vector2", dataType: "int8", dimensions: 200, distanceFunction: "dotproduct" },
          { path: "/vector3", dataType: "uint8", dimensions: 400, distanceFunction: "cosine" },
        ],
      },
      indexingPolicy: {
        vectorIndexes: [
          { path: "/vector1", type: "flat" },
          { path: "/vector2", type: "quantizedFlat" },
        ],
      },
    });
    assert.ok(resource.indexingPolicy !== undefined);
    assert.deepEqual(
      resource.vectorEmbeddingPolicy.vectorEmbeddings.map((e) => e.path),
      ["/vector1", "/vector2", "/vector3"],
    );
  });

  test("a vector index without its embedding is refused, in the service's words", async () => {
    const db = await ctx.newDatabase();
    const id = unique("refused");
    await assert.rejects(
      db.containers.createIfNotExists({ id, indexingPolicy: { vectorIndexes: [{ path: "/vector1", type: "flat" }] } }),
      (e) =>
        e.code === 400 &&
        e.body.message.includes("Vector Indexing Policy's path::/vector1 not matching in Embedding's path"),
    );
    await assert.rejects(
      db.containers.createIfNotExists({
        id,
        vectorEmbeddingPolicy: {
          vectorEmbeddings: [{ path: "/vector1", dataType: "float32", dimensions: 500, distanceFunction: "euclidean" }],
        },
        indexingPolicy: { vectorIndexes: [{ path: "/vector2", type: "flat" }] },
      }),
      (e) => e.code === 400 && e.body.message.includes("vector2 not matching in Embedding's path"),
    );
  });

  test("a replace may not change a path's vector index", async () => {
    const db = await ctx.newDatabase();
    const id = unique("replace");
    await db.containers.createIfNotExists({
      id,
      vectorEmbeddingPolicy: {
        vectorEmbeddings: [{ path: "/vector1", dataType: "float32", dimensions: 500, distanceFunction: "euclidean" }],
      },
      indexingPolicy: { vectorIndexes: [{ path: "/vector1", type: "flat" }] },
    });
    await assert.rejects(
      db.container(id).replace({ id, indexingPolicy: { vectorIndexes: [{ path: "/vector1", type: "quantizedFlat" }] } }),
      (e) =>
        e.code === 400 &&
        e.body.message.includes("Paths in existing vector indexing policy cannot be modified in Collection Replace"),
    );
  });

  let container;
  test("queries: three items, two embeddings", async () => {
    const db = await ctx.newDatabase();
    ({ container } = await db.containers.createIfNotExists({
      id: unique("query"),
      vectorEmbeddingPolicy: {
        vectorEmbeddings: [
          { path: "/vector1", dataType: "float32", dimensions: 2, distanceFunction: "euclidean" },
          { path: "/vector2", dataType: "float32", dimensions: 2, distanceFunction: "dotproduct" },
        ],
      },
      indexingPolicy: { vectorIndexes: [{ path: "/vector1", type: "flat" }] },
      throughput: 1000,
    }));
    for (const [id, x, y] of [
      ["1", 0.056419, -0.021141],
      ["2", 0.066419, -0.031141],
      ["3", 0.076419, -0.041141],
    ]) {
      await container.items.create({ id, vector1: [x, y], vector2: [x, y] });
    }
  });

  for (const distinct of ["", "DISTINCT "]) {
    test(`${distinct}ORDER BY a Euclidean distance: nearest first`, async () => {
      const query = `SELECT ${distinct}c.id AS Id, ${EUCLIDEAN} AS similarityScore FROM c ORDER BY ${EUCLIDEAN}`;
      await queryInOrder(container, query, 3, false);
    });
    test(`${distinct}ORDER BY a dot product with OFFSET LIMIT: greatest first`, async () => {
      const query = `SELECT ${distinct}c.id AS Id, ${DOT_2} AS similarityScore FROM c ORDER BY ${DOT_1} OFFSET 0 LIMIT 2`;
      await queryInOrder(container, query, 2, true);
    });
    test(`${distinct}TOP with a dot product: greatest first`, async () => {
      const query = `SELECT ${distinct}TOP 2 c.id AS Id, ${DOT_2} AS similarityScore FROM c ORDER BY ${DOT_1}`;
      await queryInOrder(container, query, 2, true);
    });
    test(`${distinct}a filter on VectorDistance: each page in id order`, async () => {
      const query = `SELECT ${distinct}c.id AS Id, ${EUCLIDEAN} AS similarityScore FROM c WHERE ${EUCLIDEAN} >= 0.0`;
      const iterator = container.items.query(query);
      let id = 1;
      while (iterator.hasMoreResults()) {
        const { resources } = await iterator.fetchNext();
        if (resources !== undefined && resources.length > 0) {
          assert.equal(resources[0].Id, String(id));
          id++;
        }
      }
      assert.ok(id > 1, "some rows");
    });
  }
});
