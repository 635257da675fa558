"use strict";
// The emulator's control API over node:http(s), signed with the master key
// as the account read is (resource type and link empty).

const { createHmac } = require("node:crypto");
const http = require("node:http");
const https = require("node:https");

/** Master-key authorization headers (verb, resource type, resource link). */
function masterKeyHeaders(key, verb, resourceType = "", resourceLink = "") {
  const date = new Date().toUTCString();
  const payload =
    `${verb.toLowerCase()}\n${resourceType.toLowerCase()}\n${resourceLink}\n` +
    `${date.toLowerCase()}\n\n`;
  const sig = createHmac("sha256", Buffer.from(key, "base64"))
    .update(payload, "utf8")
    .digest("base64");
  return {
    authorization: encodeURIComponent(`type=master&ver=1.0&sig=${sig}`),
    "x-ms-date": date,
    "x-ms-version": "2020-07-15",
  };
}

/** One request on node:http / node:https; resolves {status, body} (body as text). */
function request(url, { method = "GET", headers = {}, body, ca, timeoutMs = 30000 } = {}) {
  const u = new URL(url);
  const mod = u.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(
      u,
      // A fresh connection per call (agent: false): nothing lingers to keep
      // the event loop alive after the call.
      { method, headers, agent: false, ...(ca ? { ca } : {}), timeout: timeoutMs },
      (res) => {
        let data = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (data += d));
        res.on("end", () => resolve({ status: res.statusCode, body: data }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** The error a control call rejects with: the emulator's {code, message}, status. */
class EmulatorError extends Error {
  constructor(message, { status, code, body } = {}) {
    super(message);
    this.name = "EmulatorError";
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

module.exports = { EmulatorError, masterKeyHeaders, request };
