// The explorer's client of the emulator: every request signed with the
// account key (Cosmos DB's master-key scheme), errors turned into messages.
// The key lives in this module (and the tab's session storage), nowhere else.

import { hmacSha256 } from "./hmac.js";

export const WELL_KNOWN_KEY =
  "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";
const API_VERSION = "2020-07-15";
const SESSION_KEY = "cosmos-explorer-key";

/** A refused or failed request: the service's status, code and message. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export class Client {
  /** `base`: the emulator's origin; `key`: the account key in base64. */
  constructor(base, key) {
    this.base = base.replace(/\/$/, "");
    this.key = decodeKey(key);
    this.keyText = key.trim();
  }

  /** Whether this client signs with the well-known emulator key. */
  get wellKnown() {
    return this.keyText === WELL_KNOWN_KEY;
  }

  /** The key held for this tab, if one was entered. */
  static savedKey() {
    try {
      return sessionStorage.getItem(SESSION_KEY);
    } catch {
      return null;
    }
  }

  /** Keeps the key for the tab's session: once the emulator accepted it. */
  remember() {
    try {
      sessionStorage.setItem(SESSION_KEY, this.keyText);
    } catch {
      // No session storage (a sandboxed frame, node): the key stays in memory.
    }
  }

  /**
   * One signed request. `type` and `link` are the resource type and link the
   * signature covers (empty for the emulator's control routes); `path` is
   * the URL path. Resolves to `{body, headers, status}`; a refusal rejects
   * with an ApiError carrying the service's message.
   */
  async request(method, path, { type = "", link = "", body, headers = {} } = {}) {
    const date = new Date().toUTCString();
    const text = `${method.toLowerCase()}\n${type.toLowerCase()}\n${link}\n${date.toLowerCase()}\n\n`;
    const signature = base64(await hmacSha256(this.key, text));
    const all = {
      "x-ms-date": date,
      "x-ms-version": API_VERSION,
      authorization: encodeURIComponent(`type=master&ver=1.0&sig=${signature}`),
      ...headers,
    };
    if (body !== undefined && !all["content-type"]) all["content-type"] = "application/json";
    let response;
    try {
      response = await fetch(this.base + path, {
        method,
        headers: all,
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
        cache: "no-store",
      });
    } catch (e) {
      throw new ApiError(0, "Unreachable", `The emulator did not answer (${e.message}). Is it still running?`);
    }
    const raw = await response.text();
    let parsed = null;
    if (raw) {
      try {
        parsed = JSON.parse(raw);
      } catch {
        parsed = raw;
      }
    }
    if (!response.ok && response.status !== 304) {
      const code = (parsed && parsed.code) || response.statusText || "Error";
      const message = (parsed && parsed.message) || (typeof parsed === "string" ? parsed : `HTTP ${response.status}`);
      throw new ApiError(response.status, code, message);
    }
    return { body: parsed, headers: response.headers, status: response.status };
  }

  // Control routes (signed like the account read: empty type and link).
  stats() {
    return this.request("GET", "/_emulator/stats").then((r) => r.body);
  }
  advanceClock(seconds) {
    return this.request("POST", "/_emulator/clock", { body: { advance: seconds } }).then((r) => r.body);
  }
  setClock(instant) {
    return this.request("POST", "/_emulator/clock", { body: { set: instant } }).then((r) => r.body);
  }
  purge() {
    return this.request("POST", "/_emulator/purge", { body: {} }).then((r) => r.body);
  }
  lifetimes(database, container, { order = "key", continuation = null, maxItems = 100 } = {}) {
    return this.request("POST", "/_emulator/lifetimes", {
      body: { database, container, order, continuation, maxItems },
    }).then((r) => r.body);
  }

  // Resources.
  listDatabases() {
    return this.request("GET", "/dbs", { type: "dbs" }).then((r) => r.body.Databases);
  }
  createDatabase(id) {
    return this.request("POST", "/dbs", { type: "dbs", body: { id } }).then((r) => r.body);
  }
  deleteDatabase(db) {
    const link = dbLink(db);
    return this.request("DELETE", url(link), { type: "dbs", link });
  }
  listContainers(db) {
    const link = dbLink(db);
    return this.request("GET", `${url(link)}/colls`, { type: "colls", link }).then((r) => r.body.DocumentCollections);
  }
  readContainer(db, coll) {
    const link = collLink(db, coll);
    return this.request("GET", url(link), { type: "colls", link }).then((r) => r.body);
  }
  createContainer(db, body, throughput) {
    const link = dbLink(db);
    const headers = throughput ? { "x-ms-offer-throughput": String(throughput) } : {};
    return this.request("POST", `${url(link)}/colls`, { type: "colls", link, body, headers }).then((r) => r.body);
  }
  replaceContainer(db, coll, body) {
    const link = collLink(db, coll);
    return this.request("PUT", url(link), { type: "colls", link, body }).then((r) => r.body);
  }
  deleteContainer(db, coll) {
    const link = collLink(db, coll);
    return this.request("DELETE", url(link), { type: "colls", link });
  }
  partitionKeyRanges(db, coll) {
    const link = collLink(db, coll);
    return this.request("GET", `${url(link)}/pkranges`, { type: "pkranges", link }).then(
      (r) => r.body.PartitionKeyRanges,
    );
  }
  offers() {
    return this.request("GET", "/offers", { type: "offers" }).then((r) => r.body.Offers);
  }

  readItem(db, coll, id, partitionKey) {
    const link = `${collLink(db, coll)}/docs/${id}`;
    return this.request("GET", url(link), { type: "docs", link, headers: pkHeader(partitionKey) }).then((r) => r.body);
  }
  createItem(db, coll, item, partitionKey) {
    const link = collLink(db, coll);
    return this.request("POST", `${url(link)}/docs`, {
      type: "docs",
      link,
      body: item,
      headers: pkHeader(partitionKey),
    }).then((r) => r.body);
  }
  replaceItem(db, coll, id, item, partitionKey) {
    const link = `${collLink(db, coll)}/docs/${id}`;
    return this.request("PUT", url(link), { type: "docs", link, body: item, headers: pkHeader(partitionKey) }).then(
      (r) => r.body,
    );
  }
  deleteItem(db, coll, id, partitionKey) {
    const link = `${collLink(db, coll)}/docs/${id}`;
    return this.request("DELETE", url(link), { type: "docs", link, headers: pkHeader(partitionKey) });
  }

  /**
   * One page of a query within `scope`: `{partitionKey: [values]}`, `{range:
   * id}` (one partition key range, as the SDKs run a query they planned) or
   * `{}` (across partitions).
   */
  async query(db, coll, query, parameters, scope, continuation, maxItems = 100) {
    const link = collLink(db, coll);
    const headers = {
      "content-type": "application/query+json",
      "x-ms-documentdb-isquery": "True",
      "x-ms-max-item-count": String(maxItems),
    };
    if (scope.partitionKey) Object.assign(headers, pkHeader(scope.partitionKey));
    else headers["x-ms-documentdb-query-enablecrosspartition"] = "True";
    if (scope.range !== undefined) headers["x-ms-documentdb-partitionkeyrangeid"] = scope.range;
    if (continuation) headers["x-ms-continuation"] = continuation;
    const r = await this.request("POST", `${url(link)}/docs`, {
      type: "docs",
      link,
      body: { query, parameters },
      headers,
    });
    return {
      items: r.body.Documents,
      charge: Number(r.headers.get("x-ms-request-charge")),
      continuation: r.headers.get("x-ms-continuation"),
    };
  }

  /**
   * One page of the change feed. `mode`: "latest" (from the beginning) or
   * "all" (all versions and deletes, from the oldest retained change);
   * `etag`: where the previous page ended. `{changes, etag}`.
   */
  async changeFeed(db, coll, mode, etag, maxItems = 100) {
    const link = collLink(db, coll);
    const headers = { "x-ms-max-item-count": String(maxItems) };
    if (mode === "all") {
      headers["a-im"] = "Full-Fidelity Feed";
      headers["x-ms-cosmos-changefeed-wire-format-version"] = "2021-09-15";
      // LSN 0: every change the container's log still holds.
      headers["if-none-match"] = etag || '"0"';
    } else {
      headers["a-im"] = "Incremental Feed";
      if (etag) headers["if-none-match"] = etag;
    }
    const r = await this.request("GET", `${url(link)}/docs`, { type: "docs", link, headers });
    return { changes: r.status === 304 ? [] : r.body.Documents, etag: r.headers.get("etag") };
  }
}

function dbLink(db) {
  return `dbs/${db}`;
}
function collLink(db, coll) {
  return `dbs/${db}/colls/${coll}`;
}
/** The URL path of a resource link: each name percent-encoded. */
function url(link) {
  return "/" + link.split("/").map(encodeURIComponent).join("/");
}

/** The partition key header: JSON, non-ASCII escaped as the SDKs send it. */
export function pkHeader(partitionKey) {
  if (partitionKey === undefined) return {};
  const json = JSON.stringify(partitionKey).replace(/[\u007f-\uffff]/g, (c) => {
    return "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0");
  });
  return { "x-ms-documentdb-partitionkey": json };
}

function decodeKey(key) {
  let bytes;
  try {
    bytes = Uint8Array.from(atob(key.trim()), (c) => c.charCodeAt(0));
  } catch {
    throw new ApiError(0, "BadKey", "The account key is not base64: paste it as the emulator prints it.");
  }
  if (bytes.length === 0) throw new ApiError(0, "BadKey", "The account key is empty.");
  return bytes;
}

function base64(bytes) {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text);
}
