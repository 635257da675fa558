// `cargo xtask bench --only explorer`: how long the data explorer takes to
// show a container of 10,000 items in chromium, from navigation to the first
// page of rows, in key order and in expiry order; printed and written as
// JSON. A measurement, not a test: nothing here fails on a slow machine.
//
// node load-time.mjs [--items N] [--runs N] [--out file.json]
// (COSMOS_EMULATOR_BIN: the emulator to start, the release build by default)

import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { connect, newPage, openBrowser, startEmulator } from "./harness.mjs";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
};
const ITEMS = Number(option("--items", 10_000));
const RUNS = Number(option("--runs", 5));
const OUT = option("--out", null);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const emu = await startEmulator();
const browser = await openBrowser();
try {
  const client = emu.client;
  await client.createDatabase("bench");
  await client.createContainer("bench", {
    id: "items",
    partitionKey: { paths: ["/pk"], kind: "Hash", version: 2 },
    defaultTtl: 86_400,
  });
  // 10,000 items of ~200 bytes over 100 partition keys, a third with their own ttl.
  const seedStart = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < ITEMS) {
        const i = next++;
        const item = { id: `item-${String(i).padStart(6, "0")}`, pk: `p${i % 100}`, n: i, text: "x".repeat(150) };
        if (i % 3 === 0) item.ttl = 60 + (i % 5000);
        await client.createItem("bench", "items", item, [item.pk]);
      }
    }),
  );
  const seedMs = performance.now() - seedStart;

  const runs = { keyOrder: [], expiryOrder: [], navigation: [] };
  for (let run = 0; run < RUNS; run++) {
    const page = await newPage(browser);
    // The key is entered once a session: enter it, then measure a fresh load.
    await connect(page, emu.endpoint);
    const start = performance.now();
    await page.goto(`${emu.endpoint}/_explorer/index.html`);
    await page.locator('.container-link[data-coll="items"]').waitFor();
    const treeShown = performance.now();
    await page.click('.container-link[data-coll="items"]');
    await page.locator("#items-body tr[data-id]").first().waitFor();
    const rowsShown = performance.now();
    await page.selectOption("#items-order", "expiry");
    await page.waitForFunction(() => document.getElementById("expires-col")?.getAttribute("aria-sort") === "ascending");
    const sorted = performance.now();
    runs.navigation.push(treeShown - start);
    runs.keyOrder.push(rowsShown - start);
    runs.expiryOrder.push(sorted - rowsShown);
    if (page.errors.length) throw new Error(`console errors: ${page.errors.join("; ")}`);
    await page.context().close();
  }
  const result = {
    items: ITEMS,
    runs: RUNS,
    seed_ms: Math.round(seedMs),
    median_ms: {
      navigation_to_tree: median(runs.navigation),
      navigation_to_first_rows: median(runs.keyOrder),
      resort_by_expiry: median(runs.expiryOrder),
    },
    runs_ms: runs,
  };
  console.log(`data explorer, ${ITEMS} items, median of ${RUNS} loads in chromium:`);
  console.log(`  navigation → tree shown                 ${result.median_ms.navigation_to_tree.toFixed(0)} ms`);
  console.log(`  navigation → first page of rows shown   ${result.median_ms.navigation_to_first_rows.toFixed(0)} ms`);
  console.log(`  re-sorted by expiry (whole container)   ${result.median_ms.resort_by_expiry.toFixed(0)} ms`);
  if (OUT) writeFileSync(OUT, JSON.stringify(result, null, 2));
} finally {
  await browser.close();
  await emu.stop();
}
