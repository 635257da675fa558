"use strict";
// cosmos-emulator: start the local Azure Cosmos DB (NoSQL) emulator from
// JavaScript tests. Plain CommonJS on purpose (require, import, jest and
// vitest all load it); no runtime dependencies. The binary comes from the
// platform package npm picked through optionalDependencies
// (cosmos-emulator-<platform>-<arch>), as with esbuild and @biomejs/biome.

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const https = require("node:https");
const os = require("node:os");
const path = require("node:path");

const pkg = require("./package.json");
const { binaryPath, platformPackage } = require("./lib/binary.js");
const { Child, howExited, removeDir } = require("./lib/child.js");
const { EmulatorError, masterKeyHeaders, request } = require("./lib/control.js");

/** The emulator's default master key (the well-known key of Microsoft's emulator). */
const WELL_KNOWN_KEY =
  "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

/**
 * Variables the binary reads when the matching flag is absent (the
 * container conventions, and its own COSMOS_EMULATOR_* for every flag). The
 * helper decides these settings through its own flags, so a PORT=3000 or a
 * DATA_PATH meant for the user's own application must not change the
 * emulator it starts: they are removed from the child's environment unless
 * given explicitly in `options.env`.
 */
const CONTAINER_ENV = ["PORT", "PROTOCOL", "KEY_FILE", "DATA_PATH", "LOG_LEVEL", "ENABLE_EXPLORER", "ENABLE_TELEMETRY"];
const CONTAINER_PREFIXES = ["AZURE_COSMOS_EMULATOR_", "COSMOS_EMULATOR_"];

const OPTIONS = new Set([
  "clock",
  "clockStart",
  "tls",
  "dataDir",
  "ranges",
  "key",
  "host",
  "port",
  "binary",
  "args",
  "env",
  "timeoutMs",
  "dieWithParent",
]);

function validate(options) {
  if (options === null || typeof options !== "object") {
    throw new TypeError("startEmulator(options): options must be an object");
  }
  for (const name of Object.keys(options)) {
    if (!OPTIONS.has(name)) {
      throw new TypeError(
        `startEmulator: unknown option ${JSON.stringify(name)} (known: ${[...OPTIONS].join(", ")})`,
      );
    }
  }
  const { clock = "manual", args = [], port = 0, timeoutMs = 30000 } = options;
  if (clock !== "manual" && clock !== "system") {
    throw new TypeError(`startEmulator: clock must be "manual" or "system", got ${JSON.stringify(clock)}`);
  }
  if (!Array.isArray(args) || !args.every((a) => typeof a === "string")) {
    throw new TypeError("startEmulator: args must be an array of strings");
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new TypeError(`startEmulator: port must be an integer 0..65535, got ${port}`);
  }
  if (!(timeoutMs > 0)) {
    throw new TypeError(`startEmulator: timeoutMs must be a positive number, got ${timeoutMs}`);
  }
  if (options.clockStart !== undefined && clock !== "manual") {
    throw new TypeError('startEmulator: clockStart needs clock: "manual"');
  }
}

/** The command line for `options` (without the binary). */
function commandLine(options, certPath) {
  const {
    clock = "manual",
    clockStart,
    tls = false,
    dataDir,
    ranges,
    key = WELL_KNOWN_KEY,
    host = "localhost",
    port = 0,
    args = [],
    dieWithParent = true,
  } = options;
  const argv = ["--host", host, "--port", String(port), "--key", key, "--clock", clock];
  if (clockStart !== undefined) argv.push("--clock-start", String(clockStart));
  if (tls) argv.push("--tls", "--cert-out", certPath);
  if (dataDir !== undefined) argv.push("--data-dir", String(dataDir));
  if (ranges !== undefined) argv.push("--ranges-per-container", String(ranges));
  if (dieWithParent) argv.push("--parent-pid", String(process.pid));
  argv.push(...args);
  return argv;
}

function childEnv(extra) {
  // NO_COLOR: the log goes to a pipe and into error messages, not a terminal.
  const env = { NO_COLOR: "1", ...process.env };
  for (const name of Object.keys(env)) {
    if (CONTAINER_ENV.includes(name) || CONTAINER_PREFIXES.some((p) => name.startsWith(p))) delete env[name];
  }
  return { ...env, ...(extra || {}) };
}

/**
 * Starts the emulator on a free loopback port and resolves once it answers
 * a signed request. Rejects with an Error saying why it could not start
 * (binary missing, bad flag, exit code, timeout), with the tail of the
 * emulator's stderr.
 */
async function startEmulator(options = {}) {
  validate(options);
  const { tls = false, key = WELL_KNOWN_KEY, timeoutMs = 30000 } = options;
  const binary = binaryPath(options);
  const tmp = tls ? fs.mkdtempSync(path.join(os.tmpdir(), "cosmos-emulator-")) : undefined;
  const certPath = tls ? path.join(tmp, "emulator.pem") : undefined;
  const argv = commandLine(options, certPath);
  const shown = `${binary} ${argv.map((a) => (a === key ? "<key>" : a)).join(" ")}`;
  const deadline = Date.now() + timeoutMs;

  let proc;
  try {
    proc = spawn(binary, argv, {
      // stdin stays a pipe that is never written: the emulator's end closes
      // when this process goes, whatever way it goes.
      stdio: ["pipe", "pipe", "pipe"],
      // Its own session (Unix): a terminal's Ctrl-C (SIGINT to the whole
      // foreground process group) reaches the test runner alone, and the
      // emulator still serves the runner's teardown; it ends with this
      // process all the same (stop(), the exit listener, --parent-pid).
      detached: process.platform !== "win32",
      env: childEnv(options.env),
      windowsHide: true,
    });
  } catch (e) {
    removeDir(tmp);
    throw new Error(`cosmos-emulator: cannot run ${binary}: ${e.message}`);
  }
  const child = new Child(proc, tmp);
  try {
    const url = await child.listening(deadline, timeoutMs, shown);
    const endpoint = url.replace(/\/?$/, "/");
    let certificatePem;
    if (tls) {
      try {
        certificatePem = fs.readFileSync(certPath, "utf8");
      } catch (e) {
        throw child.failure(`--cert-out ${certPath} did not write a certificate (${e.message})`, shown);
      }
    }
    const emu = new Emulator(child, { endpoint, key, certificate: certPath, certificatePem, tls });
    await emu._ready(deadline, timeoutMs, shown);
    child.detach();
    return emu;
  } catch (e) {
    await child.kill("SIGKILL");
    child.cleanup();
    throw e;
  }
}

/** A running emulator (see index.d.ts). */
class Emulator {
  constructor(child, { endpoint, key, certificate, certificatePem, tls }) {
    this._child = child;
    this.endpoint = endpoint;
    this.key = key;
    this.tls = tls;
    this.certificate = certificate;
    this.certificatePem = certificatePem;
    this.pid = child.proc.pid;
    this._agent = undefined;
    this._stopping = undefined;
  }

  /** The connection string of the emulator (AccountEndpoint=...;AccountKey=...;). */
  get connectionString() {
    return `AccountEndpoint=${this.endpoint};AccountKey=${this.key};`;
  }

  /** What the emulator wrote on stderr lately (its log). */
  get stderr() {
    return this._child.stderr;
  }

  /** Whether the process has exited. */
  get exited() {
    return this._child.exit !== undefined;
  }

  /**
   * With TLS, an https.Agent that trusts exactly the emulator's certificate
   * (verification stays on); undefined over HTTP. Made on first use,
   * destroyed by stop().
   */
  get agent() {
    if (!this.tls) return undefined;
    if (!this._agent) this._agent = new https.Agent({ ca: this.certificatePem, keepAlive: true });
    return this._agent;
  }

  /** Options for `new CosmosClient(...)` of @azure/cosmos: endpoint, key and, with TLS, agent. */
  clientOptions(extra = {}) {
    const agent = this.agent;
    return { endpoint: this.endpoint, key: this.key, ...(agent ? { agent } : {}), ...extra };
  }

  async _ready(deadline, timeoutMs, shown) {
    let last;
    for (let delay = 5; ; delay = Math.min(delay * 2, 200)) {
      if (this._child.exit) {
        await new Promise((r) => setImmediate(r));
        throw this._child.failure(this._child.exitReason("before it answered"), shown);
      }
      try {
        const res = await request(this.endpoint, {
          headers: masterKeyHeaders(this.key, "GET"),
          ca: this.certificatePem,
          timeoutMs: Math.max(1, deadline - Date.now()),
        });
        if (res.status === 200) return;
        if (res.status === 401 || res.status === 403) {
          throw this._child.failure(`a signed request was refused (${res.status} ${res.body})`, shown);
        }
        last = `${res.status} ${res.body}`;
      } catch (e) {
        if (e.message.startsWith("cosmos-emulator did not start")) throw e;
        last = e.message;
      }
      if (Date.now() + delay > deadline) {
        throw this._child.failure(`no answer to a signed request within ${timeoutMs} ms (last: ${last})`, shown);
      }
      await new Promise((r) => setTimeout(r, delay));
    }
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
      if (this._child.exit) {
        const { code, signal } = this._child.exit;
        throw new EmulatorError(
          `${method} /${route}: the emulator ${howExited(code, signal)}` +
            (this._child.stderr.trim() ? `\n--- emulator stderr ---\n${this._child.stderr.trim()}` : ""),
        );
      }
      throw new EmulatorError(`${method} /${route}: ${e.message}`);
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

  /** Resolves once every item due now is purged; the number purged. */
  async purge() {
    return (await this._control("POST", "_emulator/purge", {})).purged;
  }

  /** Drops every database (snapshots are kept); `{clock}` also sets the manual clock. */
  async reset(options = {}) {
    const body = options && options.clock !== undefined ? { clock: options.clock } : {};
    return this._control("POST", "_emulator/reset", body);
  }

  /** Saves the whole account in memory under `name` (replacing one of that name). */
  async snapshot(name) {
    return this._control("PUT", `_emulator/snapshots/${encodeURIComponent(name)}`, {});
  }

  /** Makes the account exactly the snapshot `name` (the manual clock included). */
  async restore(name) {
    return this._control("POST", `_emulator/snapshots/${encodeURIComponent(name)}/restore`, {});
  }

  /** The saved snapshots. */
  async snapshots() {
    return (await this._control("GET", "_emulator/snapshots")).snapshots;
  }

  /** Deletes the snapshot `name`. */
  async deleteSnapshot(name) {
    await this._control("DELETE", `_emulator/snapshots/${encodeURIComponent(name)}`);
  }

  /**
   * Stops the emulator: SIGTERM, then SIGKILL after `timeoutMs` (default
   * 10 s). Resolves once the process has exited; calling it again returns
   * the same promise.
   */
  stop({ timeoutMs = 10000 } = {}) {
    if (!this._stopping) this._stopping = this._stop(timeoutMs);
    return this._stopping;
  }

  async _stop(timeoutMs) {
    const child = this._child;
    if (this._agent) this._agent.destroy();
    if (!child.exit) {
      // Keep the loop alive while waiting for the exit.
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      try {
        await child.kill("SIGTERM");
      } finally {
        clearTimeout(timer);
      }
    }
    child.cleanup();
  }
}

if (typeof Symbol.asyncDispose === "symbol") {
  Emulator.prototype[Symbol.asyncDispose] = function asyncDispose() {
    return this.stop();
  };
}

module.exports = {
  startEmulator,
  binaryPath,
  platformPackage,
  masterKeyHeaders,
  EmulatorError,
  Emulator,
  WELL_KNOWN_KEY,
  version: pkg.version,
};
