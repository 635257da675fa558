// Start cosmos-emulator as a child process, build SDK clients for it and drive
// its control API (the npm package's client, `Control`, from this tree:
// packages/npm/cosmos-emulator/lib/control.js). Shared by every *.test.mjs file.

import { spawn } from "node:child_process";
import { createHmac, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe } from "node:test";
import { CosmosClient } from "@azure/cosmos";
// The package's own client (CommonJS), by its path: the tree's, not a release's.
import cosmosEmulator from "../../packages/npm/cosmos-emulator/index.js";

const { Control } = cosmosEmulator;

export const KEY =
  "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
// A fixed start keeps runs identical; far from the wall clock on purpose.
export const CLOCK_START = 1_700_000_000;
const STARTUP_TIMEOUT_MS = 30_000;

// These tests check that HTTPS works with verification on; refuse to run with it off.
if (process.env.NODE_TLS_REJECT_UNAUTHORIZED === "0") {
  throw new Error("NODE_TLS_REJECT_UNAUTHORIZED=0 disables certificate verification; unset it");
}

export function emulatorBinary() {
  return process.env.COSMOS_EMULATOR_BIN || join(REPO, "target", "debug", "cosmos-emulator");
}

/** One emulator process (HTTP, or HTTPS with --tls --cert-out) on a manual clock. */
export class Emulator {
  static async start({ tls, args: extra = [] }) {
    const dir = mkdtempSync(join(tmpdir(), "cosmos-sdk-tests-js-"));
    const certPath = tls ? join(dir, "cert.pem") : undefined;
    const args = ["--port", "0", "--clock", "manual", "--clock-start", String(CLOCK_START)];
    if (tls) args.push("--tls", "--cert-out", certPath);
    args.push(...extra);
    const proc = spawn(emulatorBinary(), args, { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    proc.stderr.on("data", (d) => {
      stderr = (stderr + d).slice(-4000);
    });
    const endpoint = await new Promise((resolvePromise, reject) => {
      let out = "";
      const fail = (why) => {
        clearTimeout(timer);
        proc.kill("SIGTERM");
        reject(new Error(`${why}: ${emulatorBinary()} ${args.join(" ")}\n--- emulator stderr ---\n${stderr}`));
      };
      const timer = setTimeout(() => fail(`no 'listening on' line within ${STARTUP_TIMEOUT_MS} ms`), STARTUP_TIMEOUT_MS);
      proc.on("error", (e) => fail(`cannot start the emulator (${e.message})`));
      proc.on("exit", (code) => fail(`the emulator exited with ${code} before listening`));
      proc.stdout.on("data", (d) => {
        out += d;
        const nl = out.indexOf("\n");
        if (nl < 0) return;
        clearTimeout(timer);
        proc.removeAllListeners("exit");
        const line = out.slice(0, nl).trim();
        const m = /^listening on (\S+)$/.exec(line);
        if (!m) return fail(`unexpected first stdout line ${JSON.stringify(line)}`);
        resolvePromise(m[1].replace(/\/?$/, "/"));
      });
    });
    const emu = new Emulator(proc, endpoint, tls, certPath);
    const scheme = tls ? "https://" : "http://";
    if (!endpoint.startsWith(scheme)) {
      await emu.stop();
      throw new Error(`expected an ${scheme} endpoint, the emulator printed ${endpoint}`);
    }
    if (tls && !existsSync(certPath)) {
      await emu.stop();
      throw new Error(`--cert-out ${certPath} did not write a certificate`);
    }
    return emu;
  }

  constructor(proc, endpoint, tls, certPath) {
    this.proc = proc;
    this.endpoint = endpoint;
    this.tls = tls;
    this.certPath = certPath;
    this.pem = tls ? readFileSync(certPath, "utf8") : undefined;
    // Trust exactly the emulator's certificate; verification stays on.
    this.agent = tls ? new https.Agent({ ca: this.pem, keepAlive: true }) : undefined;
    /** The control API: clock, purge, split, fault rules, regions... (a refusal rejects). */
    this.control = new Control(endpoint, { key: KEY, certificatePem: this.pem });
    this.clock = this.control;
  }

  /** CosmosClient options for this emulator (endpoint discovery left on, the default). */
  clientOptions(extra = {}) {
    return { endpoint: this.endpoint, key: KEY, ...(this.agent ? { agent: this.agent } : {}), ...extra };
  }

  client(extra = {}) {
    return new CosmosClient(this.clientOptions(extra));
  }

  /** SIGKILL, as a crash: no clean stop. */
  async kill() {
    this.agent?.destroy();
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    await new Promise((r) => {
      this.proc.once("exit", r);
      this.proc.kill("SIGKILL");
    });
  }

  async stop() {
    this.agent?.destroy();
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    await new Promise((r) => {
      this.proc.once("exit", r);
      this.proc.kill("SIGTERM");
    });
  }
}

/** Master-key authorization headers, signed as docs/src/reference/protocol.md#authentication says. */
export function masterKeyHeaders(verb, resourceType, resourceLink, key = KEY) {
  const date = new Date().toUTCString();
  const payload = `${verb.toLowerCase()}\n${resourceType.toLowerCase()}\n${resourceLink}\n${date.toLowerCase()}\n\n`;
  const sig = createHmac("sha256", Buffer.from(key, "base64")).update(payload, "utf8").digest("base64");
  return {
    authorization: encodeURIComponent(`type=master&ver=1.0&sig=${sig}`),
    "x-ms-date": date,
    "x-ms-version": "2020-07-15",
  };
}

/**
 * A small request helper on node:http/node:https: Node 20's global fetch cannot be
 * told to trust one extra CA without an undici dispatcher, which is not a dependency.
 */
export function request(url, { method = "GET", headers = {}, body, agent } = {}) {
  const u = new URL(url);
  const mod = u.protocol === "https:" ? https : http;
  return new Promise((resolvePromise, reject) => {
    const req = mod.request(u, { method, headers, agent }, (res) => {
      let data = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (data += d));
      res.on("end", () => resolvePromise({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export function unique(prefix) {
  return `${prefix}-${randomUUID().slice(0, 12)}`;
}

/**
 * Run the suite `body` once over HTTP and once over HTTPS, each against its own
 * emulator process. `body(ctx)` registers tests; ctx.emulator, ctx.client and
 * ctx.clock are set before they run; ctx.newDatabase() makes a database with a
 * random name that is deleted after the suite.
 */
export function forEachScheme(name, body) {
  for (const scheme of ["http", "https"]) {
    describe(`${name} [${scheme}]`, () => {
      const ctx = { scheme, databases: [] };
      ctx.newDatabase = async () => {
        const { database } = await ctx.client.databases.create({ id: unique("db") });
        ctx.databases.push(database);
        return database;
      };
      before(async () => {
        ctx.emulator = await Emulator.start({ tls: scheme === "https" });
        ctx.client = ctx.emulator.client();
        ctx.clock = ctx.emulator.clock;
      });
      after(async () => {
        if (!ctx.emulator) return;
        try {
          for (const db of ctx.databases) await db.delete().catch(() => {});
          ctx.client.dispose?.();
        } finally {
          await ctx.emulator.stop();
        }
      });
      body(ctx);
    });
  }
}
