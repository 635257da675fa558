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

  // The shapes of the SDK's own sproc.spec.ts and trigger.spec.ts (not on
  // npm, so not run as such): a container with the SDK's default partition
  // key, executions without a partition key, and keys of every JSON type.
  test("the SDK's own script scenarios", async () => {
    const db = await ctx.newDatabase();
    const { container } = await db.containers.create({ id: unique("default-pk") });
    const sprocs = container.scripts.storedProcedures;
    await sprocs.create({
      id: "loop",
      body: function () {
        for (let i = 0; i < 1000; i++) {
          const body = getContext().getResponse().getBody();
          if (i > 0 && body !== i - 1) throw "body mismatch";
          getContext().getResponse().setBody(i);
        }
      },
    });
    assert.equal((await container.scripts.storedProcedure("loop").execute(undefined)).resource, 999);
    await sprocs.create({
      id: "append",
      body: function () {
        for (let i = 0; i < 10; i++) getContext().getResponse().appendValue("Body", i);
      },
    });
    // The initial body is "", so the digits are concatenated (the SDK's own test
    // compares loosely with 123456789).
    assert.equal((await container.scripts.storedProcedure("append").execute(undefined)).resource, "0123456789");
    await sprocs.create({
      id: "input",
      body: function (input) {
        getContext().getResponse().setBody("a" + input.temp);
      },
    });
    const { resource: aso } = await container.scripts.storedProcedure("input").execute(undefined, [{ temp: "so" }]);
    assert.equal(aso, "aso");

    // Pre-triggers rename, a post-trigger checks both bodies, and a Delete
    // trigger refuses a create.
    const triggers = container.scripts.triggers;
    await triggers.create({
      id: "t1", triggerType: "Pre", triggerOperation: "All",
      body: function () {
        const item = getContext().getRequest().getBody();
        item.id = item.id.toUpperCase() + "t1";
        getContext().getRequest().setBody(item);
      },
    });
    await triggers.create({ id: "t2", triggerType: "Pre", triggerOperation: "All", body: "function() { }" });
    await triggers.create({
      id: "check", triggerType: "Post", triggerOperation: "All",
      body: function () {
        const pre = getContext().getRequest().getBody();
        const post = getContext().getResponse().getBody();
        if (pre.id !== "POSTt1" || post.id !== "POSTt1") throw "name mismatch";
      },
    });
    assert.equal((await container.items.create({ id: "doc1" }, { preTriggerInclude: "t1" })).resource.id, "DOC1t1");
    assert.equal((await container.items.create({ id: "doc2" }, { preTriggerInclude: "t2" })).resource.id, "doc2");
    const { resource: post } = await container.items.create(
      { id: "post" },
      { preTriggerInclude: "t1", postTriggerInclude: "check" },
    );
    assert.equal(post.id, "POSTt1");

    // A partitioned container: a sproc sees only the partition it runs in.
    const { container: keyed } = await db.containers.create({
      id: unique("keyed"),
      partitionKey: { paths: ["/key"] },
    });
    const documents = [
      { id: "document1" },
      { id: "document2", key: null, prop: 1 },
      { id: "document3", key: false, prop: 1 },
      { id: "document4", key: true, prop: 1 },
      { id: "document5", key: 1, prop: 1 },
      { id: "document6", key: "A", prop: 1 },
    ];
    for (const doc of documents) await keyed.items.create(doc);
    await keyed.scripts.storedProcedures.create({
      id: "query",
      body: function () {
        const c = getContext().getCollection();
        const accepted = c.queryDocuments(c.getSelfLink(), "SELECT r.id, r.key, r.prop FROM r", {}, function (err, docs) {
          if (err) throw new Error("Error" + err.message);
          getContext().getResponse().setBody(docs);
        });
        if (!accepted) throw "not accepted";
      },
    });
    const run = async (pk, args) => (await keyed.scripts.storedProcedure("query").execute(pk, args)).resource;
    assert.deepEqual(await run(null, []), [documents[1]]);
    assert.deepEqual(await run(1, null), [documents[4]]);
    assert.deepEqual(await run(false, []), [documents[2]]);
    assert.deepEqual(await run("A", []), [documents[5]]);
  });
});
