"use strict";
// The emulator's control API (/_emulator/...) over node:http(s), signed with
// the master key as the account read is (resource type and link empty).
// `Control` has one method per route of the emulator's route table (ROUTES
// in emulator/src/control/mod.rs, described in the guide's "The control
// API" page): a test of the emulator's repository fails when one is
// missing. `Emulator` (index.js) is a Control of the process it started.

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

/** The emulator's default master key (the well-known key of Microsoft's emulator). */
const WELL_KNOWN_KEY =
  "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

/** Drops the fields left undefined. */
function defined(fields) {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

/** A name in a route's path (snapshot, fault rule, region), quoted. */
function segment(name) {
  return encodeURIComponent(name);
}

/** The control API of the emulator at `endpoint` (see index.d.ts). */
class Control {
  constructor(endpoint, { key = WELL_KNOWN_KEY, certificatePem } = {}) {
    this.endpoint = String(endpoint).replace(/\/?$/, "/");
    this.key = key;
    this.certificatePem = certificatePem;
  }

  /** The error of a request that got no answer (Emulator adds why the process went). */
  _unreachable(method, route, error) {
    return new EmulatorError(`${method} /${route}: ${error.message}`);
  }

  async _control(method, route, payload) {
    const headers = masterKeyHeaders(this.key, method);
    let body;
    if (payload !== undefined) {
      body = JSON.stringify(payload);
      headers["content-type"] = "application/json";
    }
    const url = new URL(route, this.endpoint).toString();
    let res;
    try {
      res = await request(url, { method, headers, body, ca: this.certificatePem });
    } catch (e) {
      throw this._unreachable(method, route, e);
    }
    let json;
    try {
      json = res.body ? JSON.parse(res.body) : undefined;
    } catch {
      json = undefined;
    }
    if (res.status >= 200 && res.status < 300) return json;
    const code = json && json.code;
    const message = json && json.message;
    throw new EmulatorError(
      `${method} /${route}: ${res.status}${code ? ` ${code}` : ""}: ${message || res.body || "(no body)"}`,
      { status: res.status, code, body: json === undefined ? res.body : json },
    );
  }

  // The test clock (--clock manual).

  /** Moves the manual clock forward by `seconds` (a fraction to the millisecond too: 1.5); resolves the new time (whole epoch seconds). */
  async advance(seconds) {
    return (await this._control("POST", "_emulator/clock", { advance: seconds })).now;
  }

  /** The manual clock's time, in epoch seconds. */
  async now() {
    return (await this._control("GET", "_emulator/clock")).now;
  }

  /** Sets the manual clock to `epochSeconds` (earlier or later); resolves it. */
  async setClock(epochSeconds) {
    return (await this._control("POST", "_emulator/clock", { set: epochSeconds })).now;
  }

  // What is stored.

  /** `{now, clock, containers: [{database, container, storedItems}]}`. */
  async stats() {
    return this._control("GET", "_emulator/stats");
  }

  /** A page of a container's items with their lifetimes explained. */
  async lifetimes(database, container, { continuation, maxItems, order } = {}) {
    const body = defined({ database, container, continuation, maxItems, order });
    return this._control("POST", "_emulator/lifetimes", body);
  }

  // Maintenance.

  /** Resolves once every item due now is purged; the number purged. */
  async purge() {
    return (await this._control("POST", "_emulator/purge", {})).purged;
  }

  /** Splits a partition key range in two; resolves the children as pkranges lists them. */
  async split(database, container, range) {
    const body = { database, container, range: String(range) };
    return (await this._control("POST", "_emulator/split", body)).PartitionKeyRanges;
  }

  /** Writes a snapshot of the data directory now (--data-dir only). */
  async compact() {
    return this._control("POST", "_emulator/compact");
  }

  /** Drops every database (snapshots are kept); `{clock}` also sets the manual clock. */
  async reset(options = {}) {
    const body = options && options.clock !== undefined ? { clock: options.clock } : {};
    return this._control("POST", "_emulator/reset", body);
  }

  // Snapshots.

  /** Saves the whole account in memory under `name` (replacing one of that name). */
  async snapshot(name) {
    return this._control("PUT", `_emulator/snapshots/${segment(name)}`, {});
  }

  /** Makes the account exactly the snapshot `name` (the manual clock included). */
  async restore(name) {
    return this._control("POST", `_emulator/snapshots/${segment(name)}/restore`, {});
  }

  /** The saved snapshots. */
  async snapshots() {
    return (await this._control("GET", "_emulator/snapshots")).snapshots;
  }

  /** Deletes the snapshot `name`. */
  async deleteSnapshot(name) {
    await this._control("DELETE", `_emulator/snapshots/${segment(name)}`);
  }

  // Fault rules.

  /** Adds a fault rule; resolves it as stored, with its id and hitCount. */
  async addFault(rule) {
    return this._control("POST", "_emulator/faults", rule);
  }

  /** Every fault rule, with its hitCount. */
  async faults() {
    return (await this._control("GET", "_emulator/faults")).faults;
  }

  /** The fault rule `id`, with its hitCount. */
  async fault(id) {
    return this._control("GET", `_emulator/faults/${segment(id)}`);
  }

  /** Removes the fault rule `id`. */
  async deleteFault(id) {
    await this._control("DELETE", `_emulator/faults/${segment(id)}`);
  }

  /** Removes every fault rule; resolves how many there were. */
  async clearFaults() {
    return (await this._control("DELETE", "_emulator/faults")).deleted;
  }

  // Regions (--regions).

  /** Every region: name, endpoint, writes, down, lagMs, paused. */
  async regions() {
    return (await this._control("GET", "_emulator/regions")).regions;
  }

  /** Takes `region` down (`mode`: refuse, reset, hang, 503 or 403-1008; `forMs` of the emulator's clock). */
  async takeDown(region, { mode, forMs } = {}) {
    const body = defined({ mode, forMs });
    return (await this._control("POST", `_emulator/regions/${segment(region)}/down`, body)).regions;
  }

  /** Brings `region` back. */
  async bringUp(region) {
    return (await this._control("POST", `_emulator/regions/${segment(region)}/up`, {})).regions;
  }

  /** Makes `region`'s replica lag by `lagMs` of the emulator's clock, or pauses (`paused: true`) and resumes it. */
  async setReplication(region, { lagMs, paused } = {}) {
    const body = defined({ lagMs, paused });
    return (await this._control("POST", `_emulator/regions/${segment(region)}/replication`, body)).regions;
  }

  /** Makes `writeRegion` the region that takes writes. */
  async failOver(writeRegion) {
    return (await this._control("POST", "_emulator/failover", { writeRegion })).regions;
  }
}

module.exports = { Control, EmulatorError, WELL_KNOWN_KEY, masterKeyHeaders, request };
