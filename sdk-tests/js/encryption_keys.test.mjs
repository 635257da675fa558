// Client encryption keys and clientEncryptionPolicy through the SDK's own
// Always Encrypted support: an encryption-enabled client (with a key
// resolver of its own, standing in for Azure Key Vault) creates, reads and
// rewraps keys, creates a container with a policy, and writes items whose
// encrypted properties the emulator stores as ciphertext; a plain client
// reads what the emulator holds. The feed has no SDK method: a signed request.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { forEachScheme, masterKeyHeaders, request, unique } from "./emulator.mjs";

const AEAD = "AEAD_AES_256_CBC_HMAC_SHA256";

/** A key resolver that "wraps" by XOR with a pad derived from the KEK's id:
 * reversible, keyless, and enough for the SDK to exercise the service. */
class XorResolver {
  encryptionKeyResolverName = "TEST_RESOLVER";
  #pad(kek, length) {
    const pad = Buffer.alloc(length);
    let block = createHash("sha256").update(kek).digest();
    for (let i = 0; i < length; i++) {
      if (i > 0 && i % 32 === 0) block = createHash("sha256").update(block).digest();
      pad[i] = block[i % 32];
    }
    return pad;
  }
  async wrapKey(kek, _algorithm, key) {
    const pad = this.#pad(kek, key.length);
    return Uint8Array.from(key, (b, i) => b ^ pad[i]);
  }
  async unwrapKey(kek, algorithm, wrapped) {
    return this.wrapKey(kek, algorithm, wrapped);
  }
}

const metadata = (name) => ({
  type: "TEST_RESOLVER",
  name,
  value: `https://vault.example/keys/${name}/1`,
  algorithm: "RSA-OAEP",
});

forEachScheme("client encryption keys", (ctx) => {
  const encryptionClient = () =>
    ctx.emulator.client({ clientEncryptionOptions: { keyEncryptionKeyResolver: new XorResolver() } });

  async function signed(method, path, link, body) {
    const headers = masterKeyHeaders(method, "clientencryptionkeys", link);
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await request(new URL(path, ctx.emulator.endpoint).toString(), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      agent: ctx.emulator.agent,
    });
    return { status: res.status, body: res.body ? JSON.parse(res.body) : undefined };
  }

  test("create, read, rewrap, 409 and 404 through the SDK; feed and DELETE signed", async () => {
    const plain = await ctx.newDatabase();
    const client = encryptionClient();
    try {
      const db = client.database(plain.id);
      const created = await db.createClientEncryptionKey("key1", AEAD, metadata("kek1"));
      assert.equal(created.statusCode, 201);
      const { resource } = created;
      assert.equal(resource.id, "key1");
      assert.equal(resource.encryptionAlgorithm, AEAD);
      assert.deepEqual(resource.keyWrapMetadata, metadata("kek1"));
      for (const f of ["_rid", "_self", "_etag", "_ts"]) assert.ok(f in resource, f);
      assert.ok(resource._self.endsWith(`/clientencryptionkeys/${resource._rid}/`));
      await assert.rejects(db.createClientEncryptionKey("key1", AEAD, metadata("kek2")), (e) => e.code === 409);

      const read = await db.readClientEncryptionKey("key1");
      assert.equal(read.statusCode, 200);
      assert.equal(read.resource.wrappedDataEncryptionKey, resource.wrappedDataEncryptionKey);
      await assert.rejects(db.readClientEncryptionKey("nokey"), (e) => e.code === 404);

      // A rewrap reads the key, unwraps it with the old KEK, wraps it with
      // the new one, and replaces it with If-Match.
      const rewrapped = await db.rewrapClientEncryptionKey("key1", metadata("kek2"));
      assert.equal(rewrapped.statusCode, 200);
      assert.deepEqual(rewrapped.resource.keyWrapMetadata, metadata("kek2"));
      assert.notEqual(rewrapped.resource.wrappedDataEncryptionKey, resource.wrappedDataEncryptionKey);
      assert.notEqual(rewrapped.resource._etag, resource._etag);

      await db.createClientEncryptionKey("key2", AEAD, metadata("kek1"));
      const feed = await signed("GET", `dbs/${plain.id}/clientencryptionkeys`, `dbs/${plain.id}`);
      assert.equal(feed.status, 200);
      assert.deepEqual(feed.body.ClientEncryptionKeys.map((k) => k.id), ["key1", "key2"]);

      const del = await signed("DELETE", `dbs/${plain.id}/clientencryptionkeys/key1`, `dbs/${plain.id}/clientencryptionkeys/key1`);
      assert.equal(del.status, 405);
      assert.match(del.body.message, /cannot be deleted/);
    } finally {
      client.dispose?.();
    }
  });

  test("a container policy: items are stored encrypted and read back decrypted", async () => {
    const plainDb = await ctx.newDatabase();
    const client = encryptionClient();
    try {
      const db = client.database(plainDb.id);
      await db.createClientEncryptionKey("key1", AEAD, metadata("kek1"));
      const clientEncryptionPolicy = {
        includedPaths: [
          { path: "/ssn", clientEncryptionKeyId: "key1", encryptionType: "Deterministic", encryptionAlgorithm: AEAD },
          { path: "/card", clientEncryptionKeyId: "key1", encryptionType: "Randomized", encryptionAlgorithm: AEAD },
        ],
        policyFormatVersion: 2,
      };
      const id = unique("coll");
      const { resource: coll } = await db.containers.create({
        id,
        partitionKey: { paths: ["/pk"] },
        clientEncryptionPolicy,
      });
      assert.deepEqual(coll.clientEncryptionPolicy, clientEncryptionPolicy);

      const container = db.container(id);
      await container.initializeEncryption();
      await container.items.create({ id: "a", pk: "p", ssn: "123-45-6789", card: "4111", name: "Ann" });
      const { resource: back } = await container.item("a", "p").read();
      assert.equal(back.ssn, "123-45-6789");
      assert.equal(back.card, "4111");

      // What the emulator holds: ciphertext, never the plaintext.
      const { resource: stored } = await plainDb.container(id).item("a", "p").read();
      assert.equal(stored.name, "Ann");
      assert.notEqual(stored.ssn, "123-45-6789");
      assert.equal(typeof stored.ssn, "string");

      // The policy cannot change on replace.
      const changed = { ...coll, clientEncryptionPolicy: { ...clientEncryptionPolicy, includedPaths: clientEncryptionPolicy.includedPaths.slice(1) } };
      await assert.rejects(plainDb.container(id).replace(changed), (e) => e.code === 400 && /cannot be changed/.test(e.message));
    } finally {
      client.dispose?.();
    }
  });

  test("a policy naming a key the database lacks is refused", async () => {
    const db = await ctx.newDatabase();
    await assert.rejects(
      db.containers.create({
        id: unique("coll"),
        partitionKey: { paths: ["/pk"] },
        clientEncryptionPolicy: {
          includedPaths: [{ path: "/ssn", clientEncryptionKeyId: "nokey", encryptionType: "Randomized", encryptionAlgorithm: AEAD }],
          policyFormatVersion: 1,
        },
      }),
      (e) => e.code === 400 && /ClientEncryptionKey with id '\[nokey\]' does not exist/.test(e.message),
    );
  });
});
