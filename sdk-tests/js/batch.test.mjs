// Transactional batch (items.batch) and bulk (items.bulk, executeBulkOperations).
import { test } from "node:test";
import assert from "node:assert/strict";
import { forEachScheme, unique } from "./emulator.mjs";

const ids = async (c) => (await c.items.readAll().fetchAll()).resources.map((i) => i.id).sort();

forEachScheme("batch", (ctx) => {
  const newContainer = async (extra = {}) => {
    const db = await ctx.newDatabase();
    const { container } = await db.containers.create({ id: unique("coll"), partitionKey: { paths: ["/pk"] }, ...extra });
    return container;
  };

  test("items.batch runs every operation type in order", async () => {
    const c = await newContainer();
    for (const id of ["read", "replace", "delete", "patch"]) await c.items.create({ id, pk: "A", n: 1 });
    const response = await c.items.batch(
      [
        { operationType: "Create", resourceBody: { id: "new", pk: "A" } },
        { operationType: "Upsert", resourceBody: { id: "up", pk: "A" } },
        { operationType: "Read", id: "read" },
        { operationType: "Replace", id: "replace", resourceBody: { id: "replace", pk: "A", n: 2 } },
        { operationType: "Delete", id: "delete" },
        {
          operationType: "Patch",
          id: "patch",
          resourceBody: {
            operations: [{ op: "add", path: "/good", value: "greatValue" }],
            condition: "from c where NOT IS_DEFINED(c.good)",
          },
        },
      ],
      "A",
    );
    assert.equal(response.code, 200);
    assert.deepEqual(
      response.result.map((r) => r.statusCode),
      [201, 201, 200, 200, 204, 200],
    );
    assert.ok(response.result.every((r) => typeof r.requestCharge === "number"));
    assert.equal(response.result[0].eTag, response.result[0].resourceBody._etag);
    assert.equal(response.result[5].resourceBody.good, "greatValue");
    assert.deepEqual(await ids(c), ["new", "patch", "read", "replace", "up"]);
    assert.equal((await c.item("replace", "A").read()).resource.n, 2);
  });

  test("items.batch rolls back prior operations when one fails", async () => {
    const c = await newContainer();
    const response = await c.items.batch(
      [
        { operationType: "Upsert", resourceBody: { id: "other", pk: "A" } },
        { operationType: "Delete", id: "missing" },
      ],
      "A",
    );
    assert.equal(response.code, 207);
    assert.deepEqual(
      response.result.map((r) => r.statusCode),
      [424, 404],
    );
    assert.equal((await c.item("other", "A").read()).statusCode, 404);
    assert.deepEqual(await ids(c), []);
  });

  test("items.batch with an operation for another partition key is refused whole", async () => {
    const c = await newContainer();
    await assert.rejects(
      c.items.batch(
        [
          { operationType: "Create", resourceBody: { id: "i1", pk: "B" }, partitionKey: "B" },
          { operationType: "Upsert", resourceBody: { id: "i2", pk: "B" }, partitionKey: "A" },
        ],
        "B",
      ),
      (e) => e.message.includes("One or more operations within the batch request have a different partition key value than the request."),
    );
    assert.deepEqual(await ids(c), []);
  });

  test("items.bulk continues on error by default, across partitions", async () => {
    const c = await newContainer();
    await c.items.create({ id: "dup", pk: "B" });
    const results = await c.items.bulk([
      { operationType: "Create", resourceBody: { id: "a", pk: "A" } },
      { operationType: "Create", resourceBody: { id: "dup", pk: "B" } },
      { operationType: "Upsert", resourceBody: { id: "c", pk: "C" } },
      { operationType: "Read", id: "dup", partitionKey: "B" },
    ]);
    assert.deepEqual(
      results.map((r) => r.statusCode),
      [201, 409, 201, 200],
    );
    assert.equal(results[3].resourceBody.id, "dup");
    assert.deepEqual(await ids(c), ["a", "c", "dup"]);
    // continueOnError false: the operations after the failure do not run.
    const stopped = await c.items.bulk(
      [
        { operationType: "Delete", id: "a", partitionKey: "A" },
        { operationType: "Delete", id: "missing", partitionKey: "A" },
        { operationType: "Delete", id: "c", partitionKey: "C" },
      ],
      { continueOnError: false },
    );
    assert.deepEqual(
      stopped.map((r) => r.statusCode),
      [204, 404, 424],
    );
    assert.deepEqual(await ids(c), ["c", "dup"]);
  });

  test("executeBulkOperations reports each failure beside the successes", async () => {
    const c = await newContainer({ defaultTtl: 100 });
    await c.items.create({ id: "dup", pk: "B" });
    const results = await c.items.executeBulkOperations([
      { operationType: "Create", partitionKey: "A", resourceBody: { id: "a", pk: "A" } },
      { operationType: "Create", partitionKey: "B", resourceBody: { id: "dup", pk: "B" } },
      { operationType: "Create", partitionKey: "A", resourceBody: { id: "bad", pk: "A", ttl: 0 } },
      { operationType: "Replace", partitionKey: "B", id: "dup", resourceBody: { id: "dup", pk: "B", v: 2 } },
    ]);
    assert.equal(results.length, 4);
    assert.equal(results[0].response.statusCode, 201);
    assert.equal(results[1].error.code, 409);
    assert.equal(results[2].error.code, 400);
    assert.equal(results[3].response.statusCode, 200);
    assert.equal(results[3].response.resourceBody.v, 2);
    assert.deepEqual(await ids(c), ["a", "dup"]);
  });

  test("contentResponseOnWriteEnabled: false answers writes without their items, in batch and bulk", async () => {
    const c = await newContainer();
    await c.items.create({ id: "r", pk: "A" });
    const batch = await c.items.batch(
      [
        { operationType: "Create", resourceBody: { id: "n", pk: "A" } },
        { operationType: "Read", id: "r" },
      ],
      "A",
      { contentResponseOnWriteEnabled: false },
    );
    assert.equal(batch.result[0].statusCode, 201);
    assert.equal(batch.result[0].resourceBody, undefined);
    assert.equal(batch.result[1].resourceBody.id, "r");
    const bulk = await c.items.executeBulkOperations(
      [{ operationType: "Upsert", partitionKey: "A", resourceBody: { id: "u", pk: "A" } }],
      { contentResponseOnWriteEnabled: false },
    );
    assert.equal(bulk[0].response.statusCode, 201);
    assert.equal(bulk[0].response.resourceBody, undefined);
    assert.deepEqual(await ids(c), ["n", "r", "u"]);
  });
});
