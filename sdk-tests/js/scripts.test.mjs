// Stored procedures, triggers and UDFs through container.scripts, written as
// the SDK's own tests write them: bodies are JavaScript functions the SDK
// sends with toString().
import { test } from "node:test";
import assert from "node:assert/strict";
import { forEachScheme, unique } from "./emulator.mjs";

async function newContainer(ctx) {
  const db = await ctx.newDatabase();
  const { container } = await db.containers.create({
    id: unique("scripts"),
    partitionKey: { paths: ["/key"] },
  });
  return container;
}

forEachScheme("scripts", (ctx) => {
  test("a stored procedure is created, executed in its partition and deleted", async () => {
    const container = await newContainer(ctx);
    const { resource: sproc } = await container.scripts.storedProcedures.create({
      id: "upsertTwo",
      body: function (key, name) {
        const collection = getContext().getCollection();
        collection.upsertDocument(collection.getSelfLink(), { id: "one", key: key, name: name }, function (err) {
          if (err) throw err;
          collection.upsertDocument(collection.getSelfLink(), { id: "two", key: key }, function (err, doc) {
            if (err) throw err;
            getContext().getResponse().setBody({ second: doc.id });
          });
        });
      },
    });
    assert.match(sproc.body, /upsertDocument/);
    const { resource: result } = await container.scripts
      .storedProcedure("upsertTwo")
      .execute("k", ["k", "first"]);
    assert.deepEqual(result, { second: "two" });
    const { resource: one } = await container.item("one", "k").read();
    assert.equal(one.name, "first");

    // A null partition key scopes it to the items whose key is null.
    await container.items.create({ id: "n", key: null });
    await container.scripts.storedProcedures.create({
      id: "count",
      body: function () {
        const c = getContext().getCollection();
        c.readDocuments(c.getSelfLink(), function (err, docs) {
          if (err) throw err;
          getContext().getResponse().setBody(docs.map((d) => d.id));
        });
      },
    });
    const { resource: ids } = await container.scripts.storedProcedure("count").execute(null);
    assert.deepEqual(ids, ["n"]);

    const { resources: all } = await container.scripts.storedProcedures.readAll().fetchAll();
    assert.deepEqual(all.map((s) => s.id).sort(), ["count", "upsertTwo"]);
    await container.scripts.storedProcedure("upsertTwo").delete();
    await assert.rejects(container.scripts.storedProcedure("upsertTwo").read(), (e) => e.code === 404);
  });

  test("a script's log comes back when asked for, and its errors as 400", async () => {
    const container = await newContainer(ctx);
    await container.scripts.storedProcedures.create({
      id: "logs",
      body: function (x) {
        console.log("The value of x is %s.", x);
        if (x > 1) throw new Error(1234, "too big");
        getContext().getResponse().setBody("ok");
      },
    });
    const sproc = container.scripts.storedProcedure("logs");
    const response = await sproc.execute("k", [1], { enableScriptLogging: true });
    assert.equal(response.resource, "ok");
    assert.equal(
      response.headers["x-ms-documentdb-script-log-results"],
      encodeURIComponent("The value of x is 1."),
    );
    await assert.rejects(sproc.execute("k", [2]), (e) => e.code === 400 && e.substatus === 1234);
  });

  test("pre- and post-triggers run on the writes that name them", async () => {
    const container = await newContainer(ctx);
    await container.scripts.triggers.create({
      id: "upper",
      triggerType: "Pre",
      triggerOperation: "All",
      body: function () {
        const item = getContext().getRequest().getBody();
        item.id = item.id.toUpperCase();
        getContext().getRequest().setBody(item);
      },
    });
    await container.scripts.triggers.create({
      id: "onDelete",
      triggerType: "Post",
      triggerOperation: "Delete",
      body: function () {},
    });
    const { resource: created } = await container.items.create(
      { id: "abc", key: "k" },
      { preTriggerInclude: ["upper"] },
    );
    assert.equal(created.id, "ABC");
    // A Delete trigger on a create is refused.
    await assert.rejects(
      container.items.create({ id: "x", key: "k" }, { postTriggerInclude: ["onDelete"] }),
      (e) => e.code === 400,
    );
    await container.item("ABC", "k").delete({ postTriggerInclude: ["onDelete"] });
    // The SDK answers a point read's 404 without throwing.
    assert.equal((await container.item("ABC", "k").read()).statusCode, 404);
  });

  test("a UDF is called by queries", async () => {
    const container = await newContainer(ctx);
    await container.scripts.userDefinedFunctions.create({
      id: "double",
      body: function (x) {
        return x * 2;
      },
    });
    for (const [id, n] of [["a", 1], ["b", 2]]) await container.items.create({ id, key: "k", n });
    const { resources } = await container.items
      .query("SELECT VALUE udf.double(c.n) FROM c WHERE udf.double(c.n) > 2")
      .fetchAll();
    assert.deepEqual(resources, [4]);
  });
});
