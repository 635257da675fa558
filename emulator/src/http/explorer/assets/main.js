// The explorer's shell: the account key, the emulator's clock, the tree of
// databases and containers, and the selected container's overview and tabs
// (items.js, query.js, settings.js, feed.js).

import { Client, WELL_KNOWN_KEY } from "./api.js";
import { h, fill, track, describe, say, formatInstant } from "./dom.js";
import { defaultTtlLabel } from "./ttl-text.js";
import { itemsTab } from "./items.js";
import { queryTab } from "./query.js";
import { settingsTab } from "./settings.js";
import { feedTab } from "./feed.js";

/** How often the page looks for clock moves and writes made by others. */
const POLL_MS = 2000;

class App {
  constructor() {
    this.client = null;
    this.clock = { mode: "system", now: 0, at: performance.now() };
    this.clockListeners = new Set();
    this.selected = null; // {db, coll, resource}
    this.stats = new Map(); // "db/coll" -> stored items
  }

  /** The emulator's time now, in epoch seconds: a system clock runs on. */
  now() {
    if (this.clock.mode === "manual") return this.clock.now;
    return this.clock.now + (performance.now() - this.clock.at) / 1000;
  }

  /** `listener` runs when items may have come due or gone: the clock moved, or a purge ran. */
  onClock(listener) {
    this.clockListeners.add(listener);
    return () => this.clockListeners.delete(listener);
  }

  timePassed() {
    for (const listener of this.clockListeners) listener(this.now());
  }

  setClock(now, mode = this.clock.mode) {
    const moved = mode === "manual" && now !== this.clock.now;
    this.clock = { mode, now, at: performance.now() };
    renderClock(this);
    if (moved) this.timePassed();
  }
}

const app = new App();
window.explorer = app; // for a developer's console

start();

function start() {
  fill(document.getElementById("endpoint"), location.origin);
  if (location.protocol === "https:") {
    fill(
      document.getElementById("certificate"),
      "· HTTPS with a certificate made at start: have clients trust ",
      h("a", { href: "/_explorer/emulator.pem" }, "emulator.pem"),
    );
  }
  document.getElementById("change-key").addEventListener("click", () => askKey());
  document.getElementById("key-form").addEventListener("submit", connect);
  // Closed with Escape before connecting: say how to come back.
  document.getElementById("key-dialog").addEventListener("close", () => {
    if (app.client) return;
    fill(
      document.getElementById("tree"),
      h("p", {}, "The data is shown once the account key is entered."),
      h("button", { type: "button", onclick: () => askKey() }, "Enter the key"),
    );
  });
  // Connect at once, as Microsoft's explorer does: with the key this tab
  // was last accepted with, else the well-known key, which every emulator
  // started without a key of its own takes. Only a refusal asks for one.
  app.client = new Client(location.origin, Client.savedKey() || WELL_KNOWN_KEY);
  load();
}

/** The key dialog: `message` says why it opened (an error, unless `error` is false). */
function askKey(message, { error = Boolean(message), prefill = Client.savedKey() || WELL_KNOWN_KEY } = {}) {
  const dialog = document.getElementById("key-dialog");
  const input = document.getElementById("key-input");
  input.value = prefill;
  const status = document.getElementById("key-status");
  say(status, message || "The emulator's well-known key is filled in; change it if you started it with --key.", {
    error,
  });
  if (!dialog.open) dialog.showModal();
  input.focus();
}

async function connect(event) {
  event.preventDefault();
  const key = document.getElementById("key-input").value;
  const status = document.getElementById("key-status");
  const button = document.getElementById("key-connect");
  let client;
  try {
    client = new Client(location.origin, key);
  } catch (error) {
    say(status, describe(error), { error: true });
    return;
  }
  const stats = await track(status, () => client.stats(), button);
  if (!stats) return;
  client.remember();
  app.client = client;
  document.getElementById("key-dialog").close();
  load(stats);
}

async function load(stats) {
  const tree = document.getElementById("tree");
  fill(tree, h("p", { class: "status loading", role: "status" }, "Loading…"));
  try {
    stats = stats || (await app.client.stats());
    app.client.remember();
  } catch (error) {
    if (error.status === 401 || error.status === 403) {
      // Refused: no client until a key is accepted.
      const wellKnown = app.client.wellKnown;
      app.client = null;
      fill(tree, h("p", {}, "The data is shown once the account key is entered."));
      if (wellKnown) {
        return askKey(
          "This emulator was started with a key of its own (--key, KEY_FILE or AZURE_COSMOS_EMULATOR_KEY), not the well-known one: enter it.",
          { error: false, prefill: "" },
        );
      }
      return askKey(`The emulator refused the key: ${error.message}`);
    }
    fill(tree, h("p", { class: "status error", role: "alert" }, describe(error)));
    return;
  }
  applyStats(stats);
  await renderTree();
  if (!app.polling) {
    app.polling = setInterval(poll, POLL_MS);
    setInterval(() => app.clock.mode === "system" && renderClockTime(), 1000);
  }
}

function applyStats(stats) {
  app.setClock(stats.now, stats.clock);
  app.stats = new Map(stats.containers.map((c) => [`${c.database}/${c.container}`, c.storedItems]));
}

/** Picks up a clock moved by a test and writes made elsewhere. */
async function poll() {
  if (!app.client || document.hidden) return;
  try {
    const stats = await app.client.stats();
    const before = [...app.stats].join();
    applyStats(stats);
    if ([...app.stats].join() !== before) updateCounts();
  } catch {
    // The next poll tries again; the views show their own errors.
  }
}

// ---- the clock ----------------------------------------------------------

function renderClock(app) {
  const section = document.getElementById("clock");
  if (section.dataset.mode !== app.clock.mode) {
    section.dataset.mode = app.clock.mode;
    const status = h("span", { id: "clock-status", class: "status" });
    const time = h("span", { id: "clock-now" });
    if (app.clock.mode === "manual") {
      const seconds = h("input", {
        id: "advance-seconds",
        type: "number",
        min: "1",
        value: "60",
        "aria-label": "Seconds to advance",
        size: "6",
      });
      const advance = h("button", { type: "button", id: "advance" }, "Advance");
      advance.addEventListener("click", async () => {
        const n = Number(seconds.value);
        if (!Number.isInteger(n) || n < 1) {
          say(status, "Advance by a whole number of seconds, 1 or more.", { error: true });
          return;
        }
        const answer = await track(status, () => app.client.advanceClock(n), advance);
        if (answer) app.setClock(answer.now);
      });
      const next = h("button", { type: "button", id: "next-expiry" }, "Next expiry");
      next.addEventListener("click", () => jumpToNextExpiry(status, next));
      fill(
        section,
        h("span", { class: "label" }, "Emulator time (test clock)"),
        time,
        h("span", { class: "controls" }, seconds, h("span", {}, "s"), advance, next, purgeButton(status)),
        status,
      );
    } else {
      fill(
        section,
        h("span", { class: "label" }, "Emulator time (system clock)"),
        time,
        h("span", { class: "controls" }, purgeButton(status)),
        status,
      );
    }
  }
  renderClockTime();
}

function renderClockTime() {
  const time = document.getElementById("clock-now");
  if (time) time.textContent = formatInstant(Math.floor(app.now()));
}

function purgeButton(status) {
  const button = h(
    "button",
    { type: "button", id: "purge", title: "Remove every expired item now, each with its TTL delete in the change feed" },
    "Purge",
  );
  button.addEventListener("click", async () => {
    const answer = await track(status, () => app.client.purge(), button);
    if (!answer) return;
    say(status, `Purged ${answer.purged} item${answer.purged === 1 ? "" : "s"}.`);
    app.timePassed();
  });
  return button;
}

async function jumpToNextExpiry(status, button) {
  if (!app.selected) {
    say(status, "Select a container first: the jump goes to its next expiry.", { error: true });
    return;
  }
  const { db, coll } = app.selected;
  const answer = await track(
    status,
    async () => {
      const page = await app.client.lifetimes(db, coll, { maxItems: 1 });
      if (page.nextExpiry === null) return { none: true };
      return app.client.setClock(page.nextExpiry);
    },
    button,
  );
  if (!answer) return;
  if (answer.none) {
    say(status, `No live item of ${coll} expires.`);
  } else {
    app.setClock(answer.now);
  }
}

// ---- the tree -----------------------------------------------------------

async function renderTree() {
  const tree = document.getElementById("tree");
  const status = h("p", { class: "status" });
  fill(tree, h("h2", {}, "Databases"), status);
  const databases = await track(status, async () => {
    const dbs = await app.client.listDatabases();
    return Promise.all(dbs.map(async (db) => ({ db, containers: await app.client.listContainers(db.id) })));
  });
  if (!databases) return;
  const list = h("ul", { class: "databases" });
  if (databases.length === 0) list.append(h("li", { class: "empty" }, "No database yet."));
  for (const { db, containers } of databases.sort((a, b) => a.db.id.localeCompare(b.db.id))) {
    const items = h("ul", { class: "containers" });
    for (const coll of containers.sort((a, b) => a.id.localeCompare(b.id))) {
      const current = app.selected && app.selected.db === db.id && app.selected.coll === coll.id;
      items.append(
        h(
          "li",
          {},
          h(
            "button",
            {
              type: "button",
              class: "container-link",
              "data-db": db.id,
              "data-coll": coll.id,
              "aria-current": current ? "true" : false,
              onclick: () => select(db.id, coll.id),
            },
            h("span", { class: "name" }, coll.id),
            h(
              "span",
              { class: "count", "data-count": `${db.id}/${coll.id}`, title: "items stored (expired, not yet purged, included)" },
              countText(db.id, coll.id),
            ),
          ),
        ),
      );
    }
    if (containers.length === 0) items.append(h("li", { class: "empty" }, "No container."));
    list.append(h("li", {}, h("span", { class: "database" }, db.id), items));
  }
  fill(tree, h("h2", {}, "Databases"), status, list, newContainerForm(databases.map((d) => d.db.id)));
}

function countText(db, coll) {
  const stored = app.stats.get(`${db}/${coll}`);
  return stored === undefined ? "" : `${stored}`;
}

function updateCounts() {
  for (const span of document.querySelectorAll("[data-count]")) {
    const [db, ...rest] = span.dataset.count.split("/");
    span.textContent = countText(db, rest.join("/"));
  }
}

function newContainerForm(databases) {
  const status = h("p", { class: "status" });
  const form = h(
    "form",
    { class: "new-container", "aria-label": "New container" },
    h("h2", {}, "New container"),
    h("label", { for: "new-db" }, "Database (new or existing)"),
    h("input", { id: "new-db", name: "db", required: true, list: "known-dbs", value: databases[0] || "" }),
    h("datalist", { id: "known-dbs" }, databases.map((d) => h("option", { value: d }))),
    h("label", { for: "new-coll" }, "Container id"),
    h("input", { id: "new-coll", name: "coll", required: true }),
    h("label", { for: "new-pk" }, "Partition key path"),
    h("input", { id: "new-pk", name: "pk", required: true, value: "/pk" }),
    h("label", { for: "new-ttl" }, "defaultTtl (empty: off, -1, or seconds)"),
    h("input", { id: "new-ttl", name: "ttl", inputmode: "numeric" }),
    h("button", { type: "submit", id: "create-container" }, "Create container"),
    status,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const db = data.get("db").trim();
    const coll = data.get("coll").trim();
    const body = { id: coll, partitionKey: { paths: [data.get("pk").trim()], kind: "Hash", version: 2 } };
    const ttl = data.get("ttl").trim();
    if (ttl !== "") {
      const n = Number(ttl);
      if (!Number.isInteger(n)) {
        say(status, "defaultTtl is -1 or a whole number of seconds.", { error: true });
        return;
      }
      body.defaultTtl = n;
    }
    const done = await track(
      status,
      async () => {
        if (!databases.includes(db)) await app.client.createDatabase(db);
        return app.client.createContainer(db, body);
      },
      form.querySelector("button"),
    );
    if (!done) return;
    applyStats(await app.client.stats());
    app.selected = { db, coll };
    await renderTree();
    select(db, coll);
  });
  return form;
}

// ---- the selected container --------------------------------------------

const TABS = [
  ["items", "Items", itemsTab],
  ["query", "Query", queryTab],
  ["settings", "Settings", settingsTab],
  ["feed", "Change feed", feedTab],
];

async function select(db, coll) {
  for (const button of document.querySelectorAll(".container-link")) {
    const current = button.dataset.db === db && button.dataset.coll === coll;
    if (current) button.setAttribute("aria-current", "true");
    else button.removeAttribute("aria-current");
  }
  if (app.unmount) app.unmount();
  const main = document.getElementById("main");
  const status = h("p", { class: "status" });
  fill(main, h("h2", {}, `${db} / ${coll}`), status);
  const loaded = await track(status, () => overviewOf(db, coll));
  if (!loaded) return;
  app.selected = { db, coll, resource: loaded.resource };
  const overview = h("dl", { class: "overview", id: "overview" });
  renderOverview(overview, loaded);
  const panel = h("section", { class: "tab-panel", id: "tab-panel", role: "tabpanel" });
  const tabs = h("div", { class: "tabs", role: "tablist", "aria-label": "Container views" });
  const cleanups = [];
  const show = (name) => {
    for (const cleanup of cleanups.splice(0)) cleanup();
    for (const tab of tabs.children) tab.setAttribute("aria-selected", String(tab.dataset.tab === name));
    const [, , view] = TABS.find(([n]) => n === name);
    fill(panel);
    panel.setAttribute("aria-labelledby", `tab-${name}`);
    const cleanup = view(app, panel, { onChange: () => refreshOverview(overview) });
    if (cleanup) cleanups.push(cleanup);
  };
  for (const [name, label] of TABS) {
    tabs.append(
      h("button", { type: "button", role: "tab", id: `tab-${name}`, "data-tab": name, onclick: () => show(name) }, label),
    );
  }
  // Arrow keys move between tabs, as in a tab list.
  tabs.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowRight" && event.key !== "ArrowLeft") return;
    const buttons = [...tabs.children];
    const at = buttons.indexOf(document.activeElement);
    const next = buttons[(at + (event.key === "ArrowRight" ? 1 : buttons.length - 1)) % buttons.length];
    next.focus();
    next.click();
  });
  const remove = h("button", { type: "button", id: "delete-container", class: "danger" }, "Delete container");
  remove.addEventListener("click", async () => {
    if (remove.dataset.confirm !== "yes") {
      remove.dataset.confirm = "yes";
      remove.textContent = `Really delete ${coll} and its items?`;
      return;
    }
    const done = await track(status, () => app.client.deleteContainer(db, coll), remove);
    if (done === undefined) return;
    app.selected = null;
    fill(main, h("p", {}, `Deleted ${db} / ${coll}.`));
    applyStats(await app.client.stats());
    renderTree();
  });
  fill(main, h("div", { class: "container-head" }, h("h2", {}, `${db} / ${coll}`), remove), status, overview, tabs, panel);
  app.unmount = () => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  };
  show("items");
}

async function refreshOverview(overview) {
  if (!app.selected) return;
  const { db, coll } = app.selected;
  try {
    const loaded = await overviewOf(db, coll);
    app.selected.resource = loaded.resource;
    renderOverview(overview, loaded);
    app.stats.set(`${db}/${coll}`, loaded.lifetimes.stored);
    updateCounts();
  } catch {
    // The overview keeps its last values; the tab shows the error.
  }
}

/** What the overview shows of a container: the resource, its ranges, the offers and its item counts. */
async function overviewOf(db, coll) {
  const [resource, ranges, offers, lifetimes] = await Promise.all([
    app.client.readContainer(db, coll),
    app.client.partitionKeyRanges(db, coll),
    app.client.offers(),
    app.client.lifetimes(db, coll, { maxItems: 1 }),
  ]);
  return { resource, ranges, offers, lifetimes };
}

function renderOverview(overview, { resource, ranges, offers, lifetimes }) {
  const offer =
    offers.find((o) => o.offerResourceId === resource._rid) ||
    offers.find((o) => resource._self && resource._self.startsWith(o.resource));
  const content = offer && offer.content;
  let throughput = "none (serverless)";
  if (content) {
    const autoscale = content.offerAutopilotSettings;
    const kind = offer.offerResourceId === resource._rid ? "" : " (shared by the database)";
    throughput = autoscale
      ? `autoscale up to ${autoscale.maxThroughput} RU/s${kind}`
      : `${content.offerThroughput} RU/s${kind}`;
  }
  const expired = lifetimes.stored - lifetimes.live;
  const row = (term, value, id) => h("div", {}, h("dt", {}, term), h("dd", id ? { id } : {}, value));
  fill(
    overview,
    row("Partition key", resource.partitionKey.paths.join(", ")),
    row("defaultTtl", defaultTtlLabel(resource.defaultTtl), "overview-ttl"),
    row("Indexing", resource.indexingPolicy ? resource.indexingPolicy.indexingMode : "consistent"),
    row("Throughput", throughput),
    row("Partition key ranges", String(ranges.length)),
    row(
      "Items",
      h(
        "span",
        { id: "overview-items" },
        `${lifetimes.live} live`,
        expired > 0 ? h("span", { class: "expired-note" }, ` + ${expired} expired, not yet purged`) : "",
        ` (${lifetimes.stored} stored)`,
      ),
    ),
  );
}
