// The explorer's SHA-256/HMAC fallback (used where the browser offers no Web
// Crypto) against node's crypto, on the lengths where padding changes.

import assert from "node:assert/strict";
import { createHash, createHmac, randomBytes } from "node:crypto";
import { test } from "node:test";
import { hmacFallback, sha256 } from "../emulator/src/http/explorer/assets/hmac.js";

const hex = (bytes) => Buffer.from(bytes).toString("hex");

test("SHA-256 of every length around the block boundaries", () => {
  for (const length of [0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000, 100_000]) {
    const data = randomBytes(length);
    assert.equal(hex(sha256(new Uint8Array(data))), createHash("sha256").update(data).digest("hex"), `${length} bytes`);
  }
});

test("HMAC-SHA256 with short, block-sized and long keys", () => {
  for (const keyLength of [1, 32, 64, 65, 200]) {
    const key = randomBytes(keyLength);
    const message = "get\ndocs\ndbs/db/colls/c/docs/é\ntue, 24 nov 2026 21:16:13 gmt\n\n";
    const expected = createHmac("sha256", key).update(message).digest("hex");
    assert.equal(hex(hmacFallback(new Uint8Array(key), new TextEncoder().encode(message))), expected, `${keyLength}-byte key`);
  }
});
