// The data explorer in a real browser (Debian's chromium): what a developer
// does to find out why an item disappeared. Expectations come from the TTL
// documentation's tables (E1-E3, docs/src/reference/ttl-rules.md#examples), not from the
// emulator's code.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  CLOCK_START,
  connect,
  itemRows,
  newPage,
  openBrowser,
  openContainer,
  startEmulator,
  takeRefusals,
} from "./harness.mjs";

const ID = 0, PK = 1, LAST_WRITE = 2, OWN_TTL = 3, EFFECTIVE = 4, EXPIRES = 5, LEFT = 6;
const at = (seconds) => new Date(seconds * 1000).toISOString().replace("T", " ").replace(/\.000Z$/, "Z");

let browser;
before(async () => {
  browser = await openBrowser();
});
after(async () => {
  await browser?.close();
});

describe("over HTTP with the test clock", () => {
  let emu;
  let page;
  before(async () => {
    emu = await startEmulator();
    // E1 (TTL off) and E2 (defaultTtl -1), seeded as an SDK would write them.
    await emu.client.createDatabase("shop");
    for (const [id, defaultTtl] of [["off", undefined], ["minus", -1]]) {
      const body = { id, partitionKey: { paths: ["/pk"], kind: "Hash", version: 2 } };
      if (defaultTtl !== undefined) body.defaultTtl = defaultTtl;
      await emu.client.createContainer("shop", body);
      for (const [item, ttl] of [["none", undefined], ["never", -1], ["own", 2000]]) {
        const doc = { id: item, pk: "p" };
        if (ttl !== undefined) doc.ttl = ttl;
        await emu.client.createItem("shop", id, doc, ["p"]);
      }
    }
    page = await newPage(browser);
    await connect(page, emu.endpoint);
  });
  after(async () => {
    await page?.context().close();
    await emu?.stop();
  });

  test("the page shows the emulator's time and the tree with stored counts", async () => {
    assert.equal(await page.textContent("#clock-now"), at(CLOCK_START));
    const links = await page.$$eval(".container-link", (ls) => ls.map((l) => l.textContent));
    assert.deepEqual(links, ["minus3", "off3"]);
  });

  test("E1 and E2: the rule that decides each item's lifetime", async () => {
    await openContainer(page, "shop", "off");
    let rows = await itemRows(page);
    for (const id of ["none", "never", "own"]) {
      assert.equal(rows[id].cells[EFFECTIVE], "TTL off", id);
      assert.equal(rows[id].cells[EXPIRES], "never", id);
      assert.equal(rows[id].cells[LEFT], "∞", id);
    }
    // The item's own ttl is shown as written even where TTL is off.
    assert.equal(rows.own.cells[OWN_TTL], "2000");
    assert.match(await page.textContent("#overview"), /defaultTtl\s*off/);

    await openContainer(page, "shop", "minus");
    rows = await itemRows(page);
    assert.equal(rows.none.cells[EFFECTIVE], "container default: -1 (never)");
    assert.equal(rows.none.cells[EXPIRES], "never");
    assert.equal(rows.never.cells[EFFECTIVE], "item ttl: -1 (never)");
    assert.equal(rows.own.cells[EFFECTIVE], "item ttl: 2000 s");
    assert.equal(rows.own.cells[EXPIRES], at(CLOCK_START + 2000));
    assert.equal(rows.own.cells[LEFT], "33m 20s");
    assert.equal(rows.own.cells[LAST_WRITE], at(CLOCK_START));
    assert.equal(rows.own.cells[PK], '"p"');
  });

  test("E3 made in the page: a container with defaultTtl and items with each rule", async () => {
    await page.fill("#new-db", "shop");
    await page.fill("#new-coll", "carts");
    await page.fill("#new-pk", "/user");
    await page.fill("#new-ttl", "1000");
    await page.click("#create-container");
    await page.locator("#items-summary").filter({ hasText: "0 live items" }).waitFor();
    assert.match(await page.textContent("#overview"), /defaultTtl\s*1000 s/);
    for (const item of [
      { id: "none", user: "ann" },
      { id: "never", user: "bob", ttl: -1 },
      { id: "own", user: "cy", ttl: 2000 },
      { id: "short", user: "dee", ttl: 10 },
    ]) {
      await page.click("#new-item");
      await page.fill("#editor-json", JSON.stringify(item));
      await page.click("#editor-create");
      await page.locator(`#items-body tr[data-id="${item.id}"]`).waitFor();
    }
    const rows = await itemRows(page);
    assert.equal(rows.none.cells[EFFECTIVE], "container default: 1000 s");
    assert.equal(rows.none.cells[EXPIRES], at(CLOCK_START + 1000));
    assert.equal(rows.none.cells[LEFT], "16m 40s");
    assert.equal(rows.never.cells[EFFECTIVE], "item ttl: -1 (never)");
    assert.equal(rows.never.cells[EXPIRES], "never");
    assert.equal(rows.own.cells[EFFECTIVE], "item ttl: 2000 s");
    assert.equal(rows.own.cells[EXPIRES], at(CLOCK_START + 2000));
    assert.equal(rows.short.cells[LEFT], "10s");
    // The rule in a sentence, on the cell.
    assert.match(await page.getAttribute('#items-body tr[data-id="none"] .rule', "title"), /defaultTtl \(1000 s\)/);
  });

  test("sorted by expiry across the container, soonest first", async () => {
    await page.click("#sort-expiry");
    await page.waitForFunction(
      () => document.querySelector("#items-body tr[data-id]")?.dataset.id === "short",
    );
    const order = await page.$$eval("#items-body tr[data-id]", (rs) => rs.map((r) => r.dataset.id));
    assert.deepEqual(order, ["short", "none", "own", "never"]);
    assert.equal(await page.getAttribute("#expires-col", "aria-sort"), "ascending");
  });

  test("advancing the clock: expired items go, the others count down", async () => {
    await page.fill("#advance-seconds", "10");
    await page.click("#advance");
    await page.locator("#clock-now").filter({ hasText: at(CLOCK_START + 10) }).waitFor();
    // The purge follows the clock: the row is gone (or struck through until then).
    await page.click("#purge");
    await page.locator("#clock-status").filter({ hasText: /Purged/ }).waitFor();
    await page.waitForFunction(() => !document.querySelector('#items-body tr[data-id="short"]'));
    let rows = await itemRows(page);
    assert.deepEqual(Object.keys(rows).sort(), ["never", "none", "own"]);
    assert.equal(rows.none.cells[LEFT], "16m 30s");
    // Jump to the next expiry: "none", at START + 1000.
    await page.click("#next-expiry");
    await page.locator("#clock-now").filter({ hasText: at(CLOCK_START + 1000) }).waitFor();
    await page.waitForFunction(() => !document.querySelector('#items-body tr[data-id="none"]'));
    rows = await itemRows(page);
    assert.deepEqual(Object.keys(rows).sort(), ["never", "own"]);
    assert.equal(rows.own.cells[LEFT], "16m 40s");
  });

  test("the editor: validated JSON, replace, the service's refusal, touch and delete", async () => {
    await page.click('#items-body tr[data-id="own"] .item-link');
    await page.locator("#editor-json").waitFor();
    const body = JSON.parse(await page.inputValue("#editor-json"));
    assert.equal(body.ttl, 2000);
    // Not JSON: said at once, nothing sent.
    await page.fill("#editor-json", "{ not json");
    assert.match(await page.textContent("#editor-validity"), /Not valid JSON/);
    // A changed partition key: the service refuses, and the page says why.
    await page.fill("#editor-json", JSON.stringify({ ...body, user: "zed" }));
    await page.click("#editor-save");
    await page.locator("#editor-status.error").waitFor();
    assert.match(await page.textContent("#editor-status"), /^400 BadRequest: .*[Pp]artition ?[Kk]ey/);
    takeRefusals(page, 400);
    // A replace: a new field, and its TTL restarts from now (START + 1000).
    await page.fill("#editor-json", JSON.stringify({ ...body, note: "edited", ttl: 60 }));
    await page.click("#editor-save");
    await page.waitForFunction(
      () => document.querySelector('#items-body tr[data-id="own"] .own-ttl')?.textContent === "60",
    );
    let rows = await itemRows(page);
    assert.equal(rows.own.cells[LAST_WRITE], at(CLOCK_START + 1000));
    assert.equal(rows.own.cells[EXPIRES], at(CLOCK_START + 1060));
    const stored = await emu.client.readItem("shop", "carts", "own", ["cy"]);
    assert.equal(stored.note, "edited");
    // Touch, 30 s later: rewritten unchanged, so it expires 60 s from then.
    await emu.client.advanceClock(30);
    await page.locator("#clock-now").filter({ hasText: at(CLOCK_START + 1030) }).waitFor({ timeout: 10_000 });
    await page.click('#items-body tr[data-id="own"] .item-link');
    await page.click("#editor-touch");
    await page.waitForFunction(
      (expected) => document.querySelector('#items-body tr[data-id="own"] .expires-at')?.textContent === expected,
      at(CLOCK_START + 1090),
    );
    // Delete asks twice.
    await page.click('#items-body tr[data-id="never"] .item-link');
    await page.click("#editor-delete");
    assert.equal(await page.textContent("#editor-delete"), "Really delete?");
    await page.click("#editor-delete");
    await page.waitForFunction(() => !document.querySelector('#items-body tr[data-id="never"]'));
    rows = await itemRows(page);
    assert.deepEqual(Object.keys(rows), ["own"]);
  });

  test("a query with parameters, as a table and as JSON, with its charge; a bad query's message", async () => {
    await page.click("#tab-query");
    await page.fill("#query-text", "SELECT c.id, c.ttl FROM c WHERE c.ttl > @min ORDER BY c.id");
    await page.fill("#query-parameters", '{"@min": 30}');
    await page.click("#query-run");
    await page.locator("#query-table").waitFor();
    const cells = await page.$$eval("#query-table tbody td", (tds) => tds.map((td) => td.textContent));
    assert.deepEqual(cells, ["own", "60"]);
    assert.match(await page.textContent("#query-info"), /1 result on page 1 · request charge \d+(\.\d+)? RU/);
    await page.selectOption("#query-view", "json");
    assert.deepEqual(JSON.parse(await page.textContent("#query-results pre")), [{ id: "own", ttl: 60 }]);
    await page.fill("#query-text", "SELECT * FROM c WHERE");
    await page.click("#query-run");
    await page.locator("#query-status.error").waitFor();
    assert.match(await page.textContent("#query-status"), /^400 BadRequest: .*[Ss]yntax error/);
    takeRefusals(page, 400);
  });

  test("a query's pages follow its continuation", async () => {
    for (let i = 0; i < 150; i++) await emu.client.createItem("shop", "off", { id: `bulk${i}`, pk: "q" }, ["q"]);
    await openContainer(page, "shop", "off");
    await page.click("#tab-query");
    await page.fill("#query-text", "SELECT c.id FROM c");
    await page.fill("#query-parameters", "");
    await page.selectOption("#query-view", "table");
    await page.click("#query-run");
    await page.locator("#query-info").filter({ hasText: "more pages follow" }).waitFor();
    assert.match(await page.textContent("#query-info"), /^100 results on page 1/);
    await page.click("#query-next");
    await page.locator("#query-info").filter({ hasText: "page 2" }).waitFor();
    assert.match(await page.textContent("#query-info"), /^53 results on page 2/);
    assert.equal(await page.isHidden("#query-next"), true);
    // The items table pages too: 100 rows, then the rest on demand.
    await page.click("#tab-items");
    await page.locator("#items-more").waitFor();
    assert.equal((await page.$$("#items-body tr[data-id]")).length, 100);
    await page.click("#items-more");
    await page.waitForFunction(() => document.querySelectorAll("#items-body tr[data-id]").length === 153);
  });

  test("the change feed: latest version, and all versions and deletes with the TTL delete marked", async () => {
    await openContainer(page, "shop", "carts");
    await page.click("#tab-feed");
    await page.locator("#feed-info").filter({ hasText: "read" }).waitFor();
    const latest = await page.$$eval("#feed-body tr", (rs) => rs.map((r) => r.children[1].textContent));
    assert.deepEqual(latest, ["own"]);
    await page.selectOption("#feed-mode", "all");
    await page.locator("#feed-body tr.op-delete").first().waitFor();
    const changes = await page.$$eval("#feed-body tr", (rs) =>
      rs.map((r) => [r.children[1].textContent, r.children[2].textContent]),
    );
    // The purged ones ("short", "none") are TTL deletes; "never" was deleted by hand.
    assert.deepEqual(
      changes.filter(([op]) => op.startsWith("delete")),
      [
        ["deleteTTL expired", "short"],
        ["deleteTTL expired", "none"],
        ["delete", "never"],
      ],
    );
    // Newer changes only, from where the last read ended.
    await emu.client.createItem("shop", "carts", { id: "late", user: "eve" }, ["eve"]);
    await page.click("#feed-newer");
    await page.locator("#feed-body tr", { hasText: "late" }).waitFor();
  });

  test("settings: defaultTtl explained and saved; the service's refusal shown", async () => {
    await page.click("#tab-settings");
    assert.match(await page.textContent("#ttl-effect"), /without their own ttl will expire 1000 s after their last write/);
    await page.check("input[name=ttl-mode][value=never]");
    assert.match(await page.textContent("#ttl-effect"), /never expire/);
    await page.click("#settings-save");
    await page.locator("#settings-status").filter({ hasText: "Saved." }).waitFor();
    await page.locator("#overview-ttl").filter({ hasText: "-1" }).waitFor();
    assert.equal((await emu.client.readContainer("shop", "carts")).defaultTtl, -1);
    // defaultTtl with indexing mode none: refused by the service, nothing changes.
    const policy = JSON.parse(await page.inputValue("#indexing-policy"));
    await page.fill("#indexing-policy", JSON.stringify({ ...policy, indexingMode: "none", automatic: false, includedPaths: [], excludedPaths: [] }));
    await page.click("#settings-save");
    await page.locator("#settings-status.error").waitFor();
    assert.match(await page.textContent("#settings-status"), /^400 BadRequest: /);
    takeRefusals(page, 400);
    assert.equal((await emu.client.readContainer("shop", "carts")).indexingPolicy.indexingMode, "consistent");
  });

  test("keyboard only: a container, an item and the tabs", async () => {
    await page.goto(`${emu.endpoint}/_explorer/`);
    // The key stays for the tab's session: no second prompt.
    await page.locator("#tree .databases").waitFor();
    await page.focus('.container-link[data-coll="carts"]');
    await page.keyboard.press("Enter");
    await page.locator("#items-body tr[data-id]").first().waitFor();
    await page.focus("#items-body .item-link");
    await page.keyboard.press("Enter");
    await page.locator("#editor-json").waitFor();
    assert.equal(await page.evaluate(() => document.activeElement.id), "editor-json");
    await page.focus("#tab-items");
    await page.keyboard.press("ArrowRight");
    assert.equal(await page.getAttribute("#tab-query", "aria-selected"), "true");
  });

  test("no console errors", () => {
    assert.deepEqual(page.errors, []);
  });
});

describe("over HTTPS with the system clock", () => {
  let emu;
  let page;
  before(async () => {
    emu = await startEmulator({ tls: true, clock: "system" });
    page = await newPage(browser, { https: true });
  });
  after(async () => {
    await page?.context().close();
    await emu?.stop();
  });

  test("connects at once with the well-known key; a wrong key entered later is refused and said so", async () => {
    await page.goto(`${emu.endpoint}/_explorer/index.html`);
    assert.match(await page.textContent("#certificate"), /emulator\.pem/);
    await page.locator("#tree .databases").waitFor();
    assert.equal(await page.isVisible("#key-dialog"), false, "no key dialog");
    await page.click("#change-key");
    await page.locator("#key-dialog").waitFor();
    await page.fill("#key-input", btoa("not the key"));
    await page.click("#key-connect");
    await page.locator("#key-status.error").waitFor();
    assert.match(await page.textContent("#key-status"), /^401 Unauthorized/);
    takeRefusals(page, 401);
    await page.fill("#key-input", "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==");
    await page.click("#key-connect");
    await page.locator("#tree .databases").waitFor();
    assert.equal(await page.isVisible("#advance"), false, "no clock controls on the system clock");
  });

  test("time left counts down in real time and the row goes when its time comes", async () => {
    await page.evaluate(async () => {
      const client = window.explorer.client;
      await client.createDatabase("live");
      await client.createContainer("live", { id: "c", partitionKey: { paths: ["/pk"], kind: "Hash" }, defaultTtl: -1 });
      await client.createItem("live", "c", { id: "soon", pk: "a", ttl: 3 }, ["a"]);
      await client.createItem("live", "c", { id: "later", pk: "a", ttl: 3600 }, ["a"]);
    });
    await page.reload();
    await page.locator("#tree .databases").waitFor();
    await openContainer(page, "live", "c");
    const first = (await itemRows(page)).soon.cells[LEFT];
    assert.match(first, /^[1-3]s$/);
    await page.waitForFunction(() => !document.querySelector('#items-body tr[data-id="soon"]'), null, { timeout: 15_000 });
    assert.deepEqual(Object.keys(await itemRows(page)), ["later"]);
    assert.deepEqual(page.errors, []);
  });
});

describe("an emulator started with a key of its own", () => {
  const KEY = btoa("a key of this emulator's own, 32+ bytes long");
  let emu;
  let page;
  before(async () => {
    emu = await startEmulator({ key: KEY });
    await emu.client.createDatabase("own");
    page = await newPage(browser);
  });
  after(async () => {
    await page?.context().close();
    await emu?.stop();
  });

  test("the well-known key is refused, so the page asks for the key; the right one connects", async () => {
    await page.goto(`${emu.endpoint}/_explorer/index.html`);
    await page.locator("#key-dialog").waitFor();
    assert.match(await page.textContent("#key-status"), /key of its own/);
    assert.equal(await page.inputValue("#key-input"), "", "the refused key is not filled in");
    takeRefusals(page, 401);
    await page.fill("#key-input", btoa("not the key either"));
    await page.click("#key-connect");
    await page.locator("#key-status.error").waitFor();
    assert.match(await page.textContent("#key-status"), /^401 Unauthorized/);
    takeRefusals(page, 401);
    await page.fill("#key-input", KEY);
    await page.click("#key-connect");
    await page.locator("#tree .databases").waitFor();
    assert.equal(await page.isVisible("#key-dialog"), false);
    assert.match(await page.textContent("#tree"), /own/);
  });

  test("the accepted key stays for the tab: a reload asks nothing", async () => {
    await page.reload();
    await page.locator("#tree .databases").waitFor();
    assert.equal(await page.isVisible("#key-dialog"), false);
    assert.deepEqual(page.errors, []);
  });
});

describe("on a narrow window", () => {
  let emu;
  let page;
  before(async () => {
    emu = await startEmulator();
    await emu.client.createDatabase("db");
    await emu.client.createContainer("db", { id: "a-container-with-a-long-name", partitionKey: { paths: ["/pk"], kind: "Hash" }, defaultTtl: 100 });
    await emu.client.createItem("db", "a-container-with-a-long-name", { id: "x".repeat(40), pk: "p" }, ["p"]);
    page = await newPage(browser, { viewport: { width: 420, height: 800 } });
    await connect(page, emu.endpoint);
  });
  after(async () => {
    await page?.context().close();
    await emu?.stop();
  });

  test("nothing but the tables scrolls sideways", async () => {
    await openContainer(page, "db", "a-container-with-a-long-name");
    const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.ok(widths[0] <= widths[1], `the page is ${widths[0]} px wide in a ${widths[1]} px window`);
    assert.deepEqual(page.errors, []);
  });
});

describe("reached by a host name, where the browser offers no Web Crypto", () => {
  let emu;
  let page;
  let other;
  before(async () => {
    emu = await startEmulator();
    await emu.client.createDatabase("db");
    await emu.client.createContainer("db", { id: "c", partitionKey: { paths: ["/pk"], kind: "Hash" }, defaultTtl: 100 });
    await emu.client.createItem("db", "c", { id: "one", pk: "p" }, ["p"]);
    // http://cosmos.test is not a secure context (http://localhost is):
    // crypto.subtle is absent there, as for an emulator in another container.
    other = await openBrowser(["--host-resolver-rules=MAP cosmos.test 127.0.0.1"]);
    page = await newPage(other);
  });
  after(async () => {
    await page?.context().close();
    await other?.close();
    await emu?.stop();
  });

  test("requests are signed with the page's own HMAC", async () => {
    const port = new URL(emu.endpoint).port;
    await connect(page, `http://cosmos.test:${port}`);
    assert.equal(await page.evaluate(() => Boolean(globalThis.crypto?.subtle)), false);
    await openContainer(page, "db", "c");
    assert.equal((await itemRows(page)).one.cells[EFFECTIVE], "container default: 100 s");
    assert.deepEqual(page.errors, []);
  });
});
