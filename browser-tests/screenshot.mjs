// Makes docs/src/images/explorer.png, the items view of the guide:
// node screenshot.mjs (COSMOS_EMULATOR_BIN: the emulator, debug build by default)

import { fileURLToPath } from "node:url";
import { connect, newPage, openBrowser, openContainer, startEmulator } from "./harness.mjs";

const emu = await startEmulator();
const browser = await openBrowser();
try {
  const c = emu.client;
  await c.createDatabase("shop");
  await c.createContainer("shop", { id: "sessions", partitionKey: { paths: ["/user"], kind: "Hash", version: 2 }, defaultTtl: 3600 });
  await c.createContainer("shop", { id: "orders", partitionKey: { paths: ["/customer"], kind: "Hash", version: 2 } });
  const items = [
    { id: "cart-ann", user: "ann" },
    { id: "cart-bob", user: "bob", ttl: 600 },
    { id: "token-cy", user: "cy", ttl: 30 },
    { id: "profile-dee", user: "dee", ttl: -1 },
    { id: "cart-eve", user: "eve", ttl: 86400 },
  ];
  for (const item of items) await c.createItem("shop", "sessions", item, [item.user]);
  await c.advanceClock(20);
  await c.createItem("shop", "sessions", { id: "cart-fay", user: "fay" }, ["fay"]);
  const page = await newPage(browser, { viewport: { width: 1280, height: 640 } });
  await connect(page, emu.endpoint);
  await openContainer(page, "shop", "sessions");
  await page.selectOption("#items-order", "expiry");
  await page.waitForFunction(() => document.getElementById("expires-col")?.getAttribute("aria-sort") === "ascending");
  await page.screenshot({ path: fileURLToPath(new URL("../docs/src/images/explorer.png", import.meta.url)) });
} finally {
  await browser.close();
  await emu.stop();
}
