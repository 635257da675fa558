// The items path beyond CRUD (issue 12): session tokens kept and sent back, a
// container dropped and re-created under a cached client, populateQuotaInfo,
// query metrics and index metrics as the SDK parses them.
//
// contentResponseOnWriteEnabled: false is refused by @azure/cosmos 4.9 itself
// for point operations ("only supported for batch and bulk operations"), so
// Prefer: return=minimal is tested over HTTP and through Python here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { forEachScheme, unique } from "./emulator.mjs";

forEachScheme("items protocol", (ctx) => {
  /** A session-consistent client that records the headers of every request it sends. */
  const recordingClient = () => {
    const sent = [];
    const client = ctx.emulator.client({
      consistencyLevel: "Session",
      plugins: [
        {
          on: "request",
          plugin: async (context, _diagnostics, next) => {
            sent.push({ path: context.path, method: context.method, headers: { ...context.headers } });
            return next(context);
          },
        },
      ],
    });
    return { client, sent };
  };

  const newContainer = async (client) => {
    const { database } = await client.databases.create({ id: unique("db") });
    ctx.databases.push(database);
    const { container } = await database.containers.create({ id: unique("coll"), partitionKey: { paths: ["/pk"] } });
    return container;
  };

  test("the session token of a write is kept and sent back on reads", async () => {
    const { client, sent } = recordingClient();
    try {
      const c = await newContainer(client);
      const created = await c.items.create({ id: "a", pk: "p" });
      const token = created.headers["x-ms-session-token"];
      assert.match(token, /^0:-1#\d+$/);
      sent.length = 0;
      const read = await c.item("a", "p").read();
      assert.equal(read.statusCode, 200);
      const readRequest = sent.find((r) => r.method === "GET" && r.path.endsWith("/docs/a"));
      assert.equal(readRequest.headers["x-ms-session-token"], token);

      await c.items.upsert({ id: "a", pk: "p", v: 2 });
      sent.length = 0;
      const { resources } = await c.items.query("SELECT * FROM c", { partitionKey: "p" }).fetchAll();
      assert.equal(resources[0].v, 2);
      const queryToken = sent.find((r) => r.method === "POST").headers["x-ms-session-token"];
      assert.ok(Number(queryToken.split("#")[1]) > Number(token.split("#")[1]), queryToken);
    } finally {
      client.dispose();
    }
  });

  test("a container dropped and re-created under a cached client is found again", async () => {
    const { client, sent } = recordingClient();
    try {
      const cached = await newContainer(client);
      for (const id of ["a", "b", "c"]) await cached.items.create({ id, pk: "p" });
      assert.equal((await cached.item("a", "p").read()).statusCode, 200);
      const { resource: before } = await cached.read();

      // Another client drops and re-creates the container under its name.
      const other = ctx.emulator.client();
      const db = other.database(cached.database.id);
      await db.container(cached.id).delete();
      await db.containers.create({ id: cached.id, partitionKey: { paths: ["/pk"] } });
      other.dispose();

      const created = await cached.items.create({ id: "new", pk: "p" });
      assert.equal(created.statusCode, 201);
      // The cached client still sends the old container's session token
      // (keyed by the container's name): it names the old container's LSN,
      // beyond what the new one committed; a token cannot ask for more than
      // the container has, so the read is served at once.
      sent.length = 0;
      const read = await cached.item("new", "p").read();
      assert.equal(read.statusCode, 200);
      assert.equal(read.resource.id, "new");
      const reads = sent.filter((r) => r.method === "GET" && r.path.endsWith("/docs/new"));
      assert.equal(reads.length, 1);
      assert.equal(reads[0].headers["x-ms-session-token"], "0:-1#3");

      const { resources } = await cached.items.query("SELECT * FROM c").fetchAll();
      assert.deepEqual(resources.map((i) => i.id), ["new"]);
      const { resource: after } = await cached.read();
      assert.notEqual(after._rid, before._rid);
    } finally {
      client.dispose();
    }
  });

  test("populateQuotaInfo gives the container's usage", async () => {
    const c = await newContainer(ctx.client);
    for (let i = 0; i < 3; i++) await c.items.create({ id: `i${i}`, pk: "p", filler: "x".repeat(3000) });
    const { headers } = await c.read({ populateQuotaInfo: true });
    const usage = Object.fromEntries(
      headers["x-ms-resource-usage"].split(";").filter(Boolean).map((pair) => pair.split("=")),
    );
    assert.equal(usage.documentsCount, "3");
    assert.ok(Number(usage.documentsSize) >= 9 && Number(usage.documentsSize) <= 10, JSON.stringify(usage));
    assert.match(headers["x-ms-resource-quota"], /documentsSize=\d+;/);
  });

  test("query metrics and index metrics, as the SDK parses them", async () => {
    const c = await newContainer(ctx.client);
    for (let i = 0; i < 4; i++) await c.items.create({ id: `i${i}`, pk: "p", n: i });
    const query = "SELECT * FROM c WHERE c.n >= 2";

    const withMetrics = await c.items.query(query, { partitionKey: "p", populateQueryMetrics: true }).fetchNext();
    assert.equal(withMetrics.resources.length, 2);
    const metrics = withMetrics.queryMetrics["0"];
    assert.equal(metrics.outputDocumentCount, 2);
    // The index of /n found the two items: none was read in vain.
    assert.equal(metrics.retrievedDocumentCount, 2);
    assert.ok(metrics.outputDocumentSize > 0);
    assert.ok(metrics.totalQueryExecutionTime.totalMilliseconds() >= 0);

    const withIndex = await c.items.query(query, { partitionKey: "p", populateIndexMetrics: true }).fetchNext();
    const index = JSON.parse(withIndex.indexMetrics);
    assert.ok(index.UtilizedIndexes && index.PotentialIndexes, withIndex.indexMetrics);
    const specs = index.UtilizedIndexes.SingleIndexes.map((i) => i.IndexSpec);
    assert.deepEqual(specs, ["/pk/?", "/n/?"], withIndex.indexMetrics);

    const plain = await c.items.query(query, { partitionKey: "p" }).fetchNext();
    assert.equal(plain.queryMetrics, undefined);
  });
});
