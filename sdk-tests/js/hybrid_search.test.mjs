// The JavaScript SDK's own full-text ranking expectations (azure-sdk-for-js,
// sdk/cosmosdb/cosmos/test/public/integration/fullTextSearch.spec.ts: its
// container, its 100 documents, its queries and expected orders), through
// @azure/cosmos: a container partitioned on /id at 25,000 RU/s (five
// ranges), the documents created with the ids the SDK generates. Of its
// queries, those ranking FullTextScore(c.title, ['John']) are here, with the
// spec's two accepted orders (57 and 85 tie). Its RRF queries are not: the
// service's FullTextContains(c.text, 'United States') matches documents 25
// and 66 ("the United Kingdom") where this emulator takes the two words as
// a phrase (docs/src/search.md).
import { test } from "node:test";
import assert from "node:assert/strict";
import { forEachScheme, unique } from "./emulator.mjs";
import { ITEMS } from "./hybrid_search_items.mjs";

const JOHN = "WHERE FullTextContains(c.title, 'John') OR FullTextContains(c.text, 'John') ORDER BY RANK FullTextScore(c.title, ['John'])";
const SELECT = "c.index AS Index, c.title AS Title, c.text AS Text";

// [query, its accepted orders], as the spec lists them.
const QUERIES = [
  [`SELECT ${SELECT} FROM c ${JOHN}`, [[2, 57, 85], [2, 85, 57]]],
  [`SELECT TOP 10 ${SELECT} FROM c ${JOHN}`, [[2, 57, 85], [2, 85, 57]]],
  [`SELECT ${SELECT} FROM c ${JOHN} OFFSET 1 LIMIT 5`, [[57, 85], [85, 57]]],
];

forEachScheme("hybrid search (the SDK's fullTextSearch.spec.ts)", (ctx) => {
  let container;

  test("the spec's container holds its 100 documents on five ranges", async () => {
    const db = await ctx.newDatabase();
    ({ container } = await db.containers.create(
      {
        id: unique("sample container"),
        indexingPolicy: {
          includedPaths: [{ path: "/*" }],
          compositeIndexes: [
            [
              { path: "/index", order: "ascending" },
              { path: "/mixedTypefield", order: "ascending" },
            ],
          ],
        },
        partitionKey: { paths: ["/id"] },
      },
      { offerThroughput: 25000 },
    ));
    assert.equal((await container.getFeedRanges()).length, 5);
    for (const item of ITEMS) await container.items.create({ ...item });
  });

  for (const [query, accepted] of QUERIES) {
    test(`ranks as the service: ${query.replace(`${SELECT} `, "").replace(JOHN, "...")}`, async () => {
      // Page by page, as the spec reads them; unbounded queries need the option.
      const iterator = container.items.query(query, { allowUnboundedNonStreamingQueries: true });
      const indexes = [];
      while (iterator.hasMoreResults()) {
        const { resources } = await iterator.fetchNext();
        if (resources) indexes.push(...resources.map((r) => r.Index));
      }
      assert.ok(
        accepted.some((order) => JSON.stringify(order) === JSON.stringify(indexes)),
        `got ${JSON.stringify(indexes)}, the service gives ${JSON.stringify(accepted[0])}`,
      );
    });
  }
});
