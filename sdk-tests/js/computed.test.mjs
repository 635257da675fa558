// Computed properties through the official SDK: the SDK's own test
// (computedProperties.spec.ts: its items, definitions, indexing policies and
// expected rows), plus ORDER BY, GROUP BY and the service's refusals.
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { forEachScheme, unique } from "./emulator.mjs";

const lowerName = {
  name: "lowerLastName",
  query: "SELECT VALUE LOWER(IS_DEFINED(c.lastName) ? c.lastName : c.parents[0].familyName) FROM c",
};
const parentsFullName = {
  name: "parentsFullName",
  query:
    "SELECT VALUE CONCAT(CONCAT(c.parents[0].firstName, ' ', c.lastName), ' & ', CONCAT(c.parents[1].firstName, ' ', c.lastName)) FROM c",
};
const all = [lowerName, parentsFullName];
const selectAll = `SELECT c.${lowerName.name}, c.${parentsFullName.name} FROM c`;

const ITEMS = [
  {
    id: "AndersenFamily",
    lastName: "Andersen",
    parents: [{ firstName: "Thomas" }, { firstName: "Mary Kay" }],
    address: { state: "WA", county: "King", city: "seattle" },
  },
  {
    id: "WakefieldFamily",
    parents: [
      { familyName: "Wakefield", givenName: "Robin" },
      { familyName: "Miller", givenName: "Ben" },
    ],
    address: { state: "NY", county: "Manhattan", city: "NY" },
  },
];

const allResult = [
  { lowerLastName: "andersen", parentsFullName: "Thomas Andersen & Mary Kay Andersen" },
  { lowerLastName: "wakefield" },
];
const emptyResult = [{}, {}];

// Rows of a cross-partition query without ORDER BY come in no promised order.
const sorted = (rows) => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

forEachScheme("computed properties", (ctx) => {
  let db;
  before(async () => {
    db = await ctx.newDatabase();
  });

  const create = async (computedProperties, indexingPolicy) => {
    const { container } = await db.containers.create({
      id: unique("coll"),
      partitionKey: { paths: ["/id"] },
      computedProperties,
      indexingPolicy,
    });
    for (const item of ITEMS) await container.items.create(item);
    return container;
  };
  const query = async (container, q) => (await container.items.query(q).fetchAll()).resources;

  const policies = {
    "no indexing": undefined,
    "indexed, exclude /*": {
      includedPaths: [{ path: `/${lowerName.name}/*` }, { path: `/${parentsFullName.name}/*` }],
      excludedPaths: [{ path: "/*" }],
    },
    "indexed, include /*": {
      includedPaths: [{ path: `/${lowerName.name}/*` }, { path: `/${parentsFullName.name}/*` }, { path: "/*" }],
    },
    "not indexed, exclude /*": { excludedPaths: [{ path: "/*" }] },
    "not indexed, include /*": { includedPaths: [{ path: "/*" }] },
  };

  test("empty computed properties", async () => {
    const c = await create([]);
    assert.deepEqual(await query(c, selectAll), emptyResult);
  });

  for (const [name, policy] of Object.entries(policies)) {
    test(`all computed properties, ${name}`, async () => {
      const c = await create(all, policy);
      assert.deepEqual(sorted(await query(c, selectAll)), sorted(allResult));
      const { resource } = await c.read();
      assert.deepEqual(resource.computedProperties, all);
    });
  }

  test("replace changes them", async () => {
    const c = await create([lowerName], { includedPaths: [{ path: "/*" }] });
    assert.deepEqual(sorted(await query(c, selectAll)), [
      { lowerLastName: "andersen" },
      { lowerLastName: "wakefield" },
    ]);
    const { resource: definition } = await c.read();
    definition.computedProperties = [parentsFullName];
    await c.replace(definition);
    assert.deepEqual(sorted(await query(c, selectAll)), sorted([
      { parentsFullName: "Thomas Andersen & Mary Kay Andersen" },
      {},
    ]));
  });

  test("replace with none removes them", async () => {
    const c = await create([lowerName], { includedPaths: [{ path: "/*" }] });
    const { resource: definition } = await c.read();
    definition.computedProperties = [];
    await c.replace(definition);
    assert.deepEqual(await query(c, selectAll), emptyResult);
  });

  test("SELECT * and point reads leave them out", async () => {
    const c = await create(all);
    for (const item of await query(c, "SELECT * FROM c")) {
      assert.equal(item.lowerLastName, undefined);
      assert.ok(item._rid);
    }
    const { resource } = await c.item("AndersenFamily", "AndersenFamily").read();
    assert.equal(resource.lowerLastName, undefined);
  });

  test("WHERE, ORDER BY (indexed, through the query plan) and GROUP BY", async () => {
    const c = await create(all, policies["indexed, include /*"]);
    assert.deepEqual(
      await query(c, "SELECT VALUE c.id FROM c WHERE c.lowerLastName = 'wakefield'"),
      ["WakefieldFamily"],
    );
    assert.deepEqual(
      await query(c, "SELECT VALUE c.id FROM c ORDER BY c.lowerLastName DESC"),
      ["WakefieldFamily", "AndersenFamily"],
    );
    const byName = await query(
      c,
      "SELECT c.lowerLastName AS name, COUNT(1) AS n FROM c GROUP BY c.lowerLastName",
    );
    assert.deepEqual(sorted(byName), [{ name: "andersen", n: 1 }, { name: "wakefield", n: 1 }]);
  });

  test("ORDER BY an unindexed one is refused", async () => {
    const c = await create(all);
    await assert.rejects(
      query(c, "SELECT * FROM c ORDER BY c.lowerLastName"),
      (e) => e.code === 400 && /order-by item is excluded/.test(e.message),
    );
  });

  test("invalid definitions are refused with the rule", async () => {
    for (const [computedProperties, says] of [
      [[{ name: "id", query: "SELECT VALUE c.a FROM c" }], /'id' is reserved/],
      [[{ name: "cp", query: "SELECT VALUE c.a FROM c ORDER BY c.a" }], /cannot use ORDER BY/],
      [[lowerName, { name: "cp", query: "SELECT VALUE c.lowerLastName FROM c" }], /computed property 'lowerLastName'/],
    ]) {
      await assert.rejects(
        db.containers.create({ id: unique("coll"), partitionKey: { paths: ["/id"] }, computedProperties }),
        (e) => e.code === 400 && says.test(e.message),
      );
    }
  });
});
