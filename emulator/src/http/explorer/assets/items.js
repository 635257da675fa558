// The Items tab: a container's stored items, a page at a time, with each
// one's lifetime as the emulator explains it (rule, effective TTL, expiry,
// time left counting down), and the item editor: create, replace, touch
// (rewrite to restart its TTL) and delete.

import { h, fill, track, formatInstant, formatDuration, partitionKeyOf } from "./dom.js";
import { ruleLabel, ruleExplanation } from "./ttl-text.js";

const PAGE = 100;

export function itemsTab(app, panel, { onChange }) {
  const { db, coll } = app.selected;
  const paths = () => app.selected.resource.partitionKey.paths;
  const status = h("p", { class: "status", id: "items-status" });
  const order = h(
    "select",
    { id: "items-order", "aria-label": "Order of items" },
    h("option", { value: "key" }, "Key order"),
    h("option", { value: "expiry" }, "Soonest expiry first"),
  );
  const refresh = h("button", { type: "button", id: "items-refresh" }, "Refresh");
  const create = h("button", { type: "button", id: "new-item" }, "New item");
  const body = h("tbody", { id: "items-body" });
  const expiresHeader = h(
    "button",
    { type: "button", class: "sort", id: "sort-expiry", title: "Sort by expiry" },
    "Expires at",
  );
  const table = h(
    "table",
    { class: "items", id: "items-table" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "col" }, "id"),
        h("th", { scope: "col" }, "Partition key"),
        h("th", { scope: "col" }, "Last write (_ts)"),
        h("th", { scope: "col" }, "Own ttl"),
        h("th", { scope: "col" }, "Effective TTL"),
        h("th", { scope: "col", "aria-sort": "none", id: "expires-col" }, expiresHeader),
        h("th", { scope: "col" }, "Time left"),
      ),
    ),
    body,
  );
  const more = h("button", { type: "button", id: "items-more", hidden: true }, "Load more");
  const summary = h("p", { class: "summary", id: "items-summary" });
  const editor = h("section", { class: "editor", id: "editor", hidden: true, "aria-label": "Item editor" });

  let rows = []; // [{data, element}]
  let continuation = null;
  // Expired items stay stored until the background purge takes them, a
  // moment after the clock moves: while some are shown, look again (a few
  // times), so that they go without a click on Refresh.
  let purgeWatch = null;
  let purgeLooks = 0;

  async function load(append = false) {
    const page = await track(
      status,
      () =>
        app.client.lifetimes(db, coll, {
          order: order.value,
          continuation: append ? continuation : null,
          maxItems: PAGE,
        }),
      append ? more : refresh,
    );
    if (!page) return;
    app.setClock(page.now);
    continuation = page.continuation;
    more.hidden = !continuation;
    if (!append) {
      rows = [];
      body.replaceChildren();
    }
    for (const item of page.items) {
      const element = row(item);
      rows.push({ data: item, element });
      body.append(element);
    }
    const expired = page.stored - page.live;
    fill(
      summary,
      `${page.live} live item${page.live === 1 ? "" : "s"}`,
      expired ? `, ${expired} expired and not yet purged (shown struck through until the purge removes them)` : "",
      `; showing ${rows.length} of ${page.stored} stored.`,
      page.nextExpiry !== null ? ` Next expiry: ${formatInstant(page.nextExpiry)}.` : "",
    );
    if (page.items.length === 0 && !append) {
      body.append(h("tr", {}, h("td", { colspan: "7", class: "empty" }, "No items. Create one with New item.")));
    }
    const th = document.getElementById("expires-col");
    if (th) th.setAttribute("aria-sort", order.value === "expiry" ? "ascending" : "none");
    tick();
    if (!expired) purgeLooks = 0;
    else if (!append && purgeWatch === null && purgeLooks < 20) {
      purgeLooks += 1;
      purgeWatch = setTimeout(() => {
        purgeWatch = null;
        load();
      }, 500);
    }
  }

  function row(item) {
    const tr = h(
      "tr",
      { "data-id": item.id, class: item.expired ? "expired" : "" },
      h(
        "td",
        {},
        h("button", { type: "button", class: "item-link", onclick: () => edit(item) }, item.id),
      ),
      h("td", { class: "pk" }, JSON.stringify(item.partitionKey.length === 1 ? item.partitionKey[0] : item.partitionKey)),
      h("td", {}, h("time", { datetime: new Date(item._ts * 1000).toISOString() }, formatInstant(item._ts))),
      h("td", { class: "own-ttl" }, item.ttl === null ? "—" : String(item.ttl)),
      h(
        "td",
        { class: `rule rule-${item.rule}`, title: ruleExplanation(item.rule, item.effectiveTtl, item.ttl) },
        ruleLabel(item.rule, item.effectiveTtl),
      ),
      h("td", { class: "expires-at" }, item.expiresAt === null ? "never" : formatInstant(item.expiresAt)),
      h("td", { class: "time-left" }),
    );
    return tr;
  }

  /** Rewrites the time left of every shown row; an item whose time came is marked. */
  function tick() {
    const now = app.now();
    let due = false;
    for (const { data, element } of rows) {
      const cell = element.querySelector(".time-left");
      if (data.expiresAt === null) {
        cell.textContent = "∞";
        continue;
      }
      const left = data.expiresAt - now;
      if (left <= 0 || data.expired) {
        cell.textContent = "expired";
        if (!element.classList.contains("expired")) {
          element.classList.add("expired");
          due = true;
        }
      } else {
        cell.textContent = formatDuration(Math.ceil(left));
      }
    }
    // Items whose time has just come: reload once the purge has had a moment.
    if (due && app.clock.mode === "system") setTimeout(() => load(), 1500);
  }

  // ---- the editor ----

  function openEditor(title, text, actions) {
    const textarea = h("textarea", {
      id: "editor-json",
      rows: "16",
      spellcheck: "false",
      "aria-label": "Item JSON",
      value: text,
    });
    const editorStatus = h("p", { class: "status", id: "editor-status" });
    const validity = h("p", { class: "validity", id: "editor-validity" });
    const validate = () => {
      try {
        const value = JSON.parse(textarea.value);
        if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error("An item is a JSON object.");
        validity.textContent = "";
        textarea.removeAttribute("aria-invalid");
        return value;
      } catch (error) {
        validity.textContent = `Not valid JSON: ${error.message}`;
        textarea.setAttribute("aria-invalid", "true");
        return null;
      }
    };
    textarea.addEventListener("input", validate);
    const buttons = actions.map(([id, label, act, klass]) => {
      const button = h("button", { type: "button", id, class: klass || "" }, label);
      button.addEventListener("click", async () => {
        const value = validate();
        if (!value) return;
        const done = await track(editorStatus, () => act(value, button), button);
        if (done !== undefined && done !== "stay") {
          closeEditor();
          await load();
          onChange();
        }
      });
      return button;
    });
    const close = h("button", { type: "button", id: "editor-close", onclick: closeEditor }, "Close");
    fill(editor, h("h3", {}, title), textarea, validity, h("div", { class: "actions" }, buttons, close), editorStatus);
    editor.hidden = false;
    textarea.focus();
  }

  function closeEditor() {
    editor.hidden = true;
    editor.replaceChildren();
  }

  async function edit(item) {
    editor.hidden = false;
    const loadingStatus = h("p", { class: "status" });
    fill(editor, h("h3", {}, `Item ${item.id}`), loadingStatus);
    const body = await track(loadingStatus, () => app.client.readItem(db, coll, item.id, item.partitionKey));
    if (!body) {
      loadingStatus.append(" ", h("button", { type: "button", onclick: closeEditor }, "Close"));
      return;
    }
    const key = item.partitionKey;
    openEditor(`Item ${item.id}`, JSON.stringify(body, null, 2), [
      // A replace at the item's id and partition key, as an SDK sends it: the
      // service refuses a changed partition key, and the page says why.
      ["editor-save", "Save", (value) => app.client.replaceItem(db, coll, item.id, value, key)],
      [
        "editor-touch",
        "Touch",
        // The stored body rewritten unchanged: a new _ts, so its TTL starts again.
        async () => app.client.replaceItem(db, coll, item.id, await app.client.readItem(db, coll, item.id, key), key),
      ],
      [
        "editor-delete",
        "Delete",
        async (_, button) => {
          if (button.dataset.confirm !== "yes") {
            button.dataset.confirm = "yes";
            button.textContent = "Really delete?";
            return "stay";
          }
          return app.client.deleteItem(db, coll, item.id, key);
        },
        "danger",
      ],
    ]);
  }

  create.addEventListener("click", () => {
    const template = { id: "" };
    for (const path of paths()) {
      const parts = path.split("/").slice(1);
      let at = template;
      parts.forEach((part, i) => {
        at[part] = i === parts.length - 1 ? "" : at[part] || {};
        at = at[part];
      });
    }
    openEditor("New item", JSON.stringify(template, null, 2), [
      ["editor-create", "Create", (value) => app.client.createItem(db, coll, value, partitionKeyOf(value, paths()))],
    ]);
  });

  order.addEventListener("change", () => load());
  expiresHeader.addEventListener("click", () => {
    order.value = order.value === "expiry" ? "key" : "expiry";
    load();
  });
  refresh.addEventListener("click", () => load());
  more.addEventListener("click", () => load(true));

  fill(
    panel,
    h("div", { class: "toolbar" }, create, refresh, h("label", { for: "items-order" }, "Order"), order),
    status,
    summary,
    h("div", { class: "table-wrap" }, table),
    more,
    editor,
  );
  load();
  const timer = setInterval(tick, 1000);
  const stopListening = app.onClock(() => load());
  return () => {
    clearInterval(timer);
    clearTimeout(purgeWatch);
    stopListening();
  };
}

