// Start cosmos-emulator and Debian's chromium (through playwright-core, which
// downloads no browser), open the data explorer, and watch the console.

import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { Client, WELL_KNOWN_KEY } from "../emulator/src/http/explorer/assets/api.js";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const CLOCK_START = 1_700_000_000;

export function emulatorBinary() {
  return process.env.COSMOS_EMULATOR_BIN || join(REPO, "target", "debug", "cosmos-emulator");
}

export function chromiumPath() {
  return process.env.CHROMIUM || "/usr/bin/chromium";
}

/**
 * One emulator process; `tls` serves HTTPS, `clock` is "manual" (at
 * CLOCK_START) or "system", `key` the account key (passed as --key unless
 * it is the well-known one).
 */
export async function startEmulator({ tls = false, clock = "manual", key = WELL_KNOWN_KEY, args = [] } = {}) {
  const all = ["--port", "0", "--clock", clock, ...args];
  if (key !== WELL_KNOWN_KEY) all.push("--key", key);
  if (clock === "manual") all.push("--clock-start", String(CLOCK_START));
  if (tls) all.push("--tls", "--cert-out", join(mkdtempSync(join(tmpdir(), "explorer-")), "cert.pem"));
  const proc = spawn(emulatorBinary(), all, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  proc.stderr.on("data", (d) => (stderr = (stderr + d).slice(-4000)));
  const endpoint = await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`no 'listening on' line in 30 s\n${stderr}`)), 30_000);
    proc.on("exit", (code) => fail(new Error(`the emulator exited with ${code}\n${stderr}`)));
    let out = "";
    proc.stdout.on("data", (d) => {
      out += d;
      const m = /^listening on (\S+)/m.exec(out);
      if (m) {
        clearTimeout(timer);
        proc.removeAllListeners("exit");
        ok(m[1].replace(/\/$/, ""));
      }
    });
  });
  // The harness's own client: the explorer's api.js, run in node (over
  // HTTPS node would not trust the emulator's certificate: seed through the
  // page's client there, `window.explorer.client`).
  const client = tls ? null : new Client(endpoint, key);
  return {
    endpoint,
    client,
    stop: () =>
      new Promise((done) => {
        if (proc.exitCode !== null) return done();
        proc.on("exit", done);
        proc.kill("SIGTERM");
      }),
  };
}

/** Chromium, and a page with the console's errors collected in `page.errors`. */
export async function openBrowser(extraArgs = []) {
  const browser = await chromium.launch({
    executablePath: chromiumPath(),
    args: ["--no-sandbox", "--disable-gpu", ...extraArgs],
  });
  return browser;
}

export async function newPage(browser, { viewport = { width: 1280, height: 800 }, https = false } = {}) {
  const context = await browser.newContext({ viewport, ignoreHTTPSErrors: https });
  const page = await context.newPage();
  page.errors = [];
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") page.errors.push(message.text());
  });
  page.on("pageerror", (error) => page.errors.push(error.message));
  page.setDefaultTimeout(15_000);
  return page;
}

/** Open the explorer, which connects at once with the well-known key: no key dialog. */
export async function connect(page, endpoint) {
  await page.goto(`${endpoint}/_explorer/index.html`);
  await page.locator("#tree .databases").waitFor();
  if (await page.isVisible("#key-dialog")) throw new Error("the key dialog opened with the well-known key");
}

/** Select a container in the tree and wait for its items. */
export async function openContainer(page, db, coll) {
  await page.click(`.container-link[data-db="${db}"][data-coll="${coll}"]`);
  await page.locator("#items-summary").filter({ hasText: "stored" }).waitFor();
}

/** The shown rows of the items table, by id: {cells, expired}. */
export async function itemRows(page) {
  return page.$$eval("#items-body tr[data-id]", (rows) =>
    Object.fromEntries(
      rows.map((row) => [
        row.dataset.id,
        {
          cells: [...row.children].map((td) => td.textContent.trim()),
          expired: row.classList.contains("expired"),
        },
      ]),
    ),
  );
}

/**
 * The browser logs every refused request ("Failed to load resource: the
 * server responded with a status of 400"), also those a test makes on
 * purpose to see the page show the service's message: take exactly the
 * `count` expected ones out of `page.errors`, and fail if they are not there.
 */
export function takeRefusals(page, status, count = 1) {
  for (let i = 0; i < count; i++) {
    const at = page.errors.findIndex((e) => e.includes(`status of ${status}`));
    if (at < 0) throw new Error(`expected a refused request (${status}) in the console: ${JSON.stringify(page.errors)}`);
    page.errors.splice(at, 1);
  }
}
