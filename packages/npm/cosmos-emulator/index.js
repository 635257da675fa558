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
const { Control, EmulatorError, WELL_KNOWN_KEY, masterKeyHeaders, request } = require("./lib/control.js");

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

/** A running emulator (see index.d.ts); its control API is Control's (lib/control.js). */
class Emulator extends Control {
  constructor(child, { endpoint, key, certificate, certificatePem, tls }) {
    super(endpoint, { key, certificatePem });
    this._child = child;
    this.tls = tls;
    this.certificate = certificate;
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

  _unreachable(method, route, error) {
    if (this._child.exit) {
      const { code, signal } = this._child.exit;
      return new EmulatorError(
        `${method} /${route}: the emulator ${howExited(code, signal)}` +
          (this._child.stderr.trim() ? `\n--- emulator stderr ---\n${this._child.stderr.trim()}` : ""),
      );
    }
    return super._unreachable(method, route, error);
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
  Control,
  EmulatorError,
  Emulator,
  WELL_KNOWN_KEY,
  version: pkg.version,
};
