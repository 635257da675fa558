// The Change feed tab: the latest version of each item from the beginning,
// or all versions and deletes still in the container's log, with the
// deletes made by the TTL purge marked as such.

import { h, fill, track, formatInstant } from "./dom.js";

export function feedTab(app, panel) {
  const { db, coll } = app.selected;
  const mode = h(
    "select",
    { id: "feed-mode", "aria-label": "Change feed mode" },
    h("option", { value: "latest" }, "Latest version"),
    h("option", { value: "all" }, "All versions and deletes"),
  );
  const read = h("button", { type: "button", id: "feed-read" }, "Read from the start");
  const newer = h("button", { type: "button", id: "feed-newer", hidden: true }, "Read newer changes");
  const status = h("p", { class: "status", id: "feed-status" });
  const info = h("p", { class: "summary", id: "feed-info" });
  const body = h("tbody", { id: "feed-body" });
  const head = h("thead");
  const table = h("table", { class: "feed", id: "feed-table" }, head, body);
  let etag = null;
  let count = 0;

  async function load(fresh, button) {
    if (fresh) {
      etag = null;
      count = 0;
      body.replaceChildren();
      fill(
        head,
        mode.value === "all"
          ? h("tr", {}, ["LSN", "Operation", "id", "Time", "Item"].map((c) => h("th", { scope: "col" }, c)))
          : h("tr", {}, ["LSN", "id", "Last write (_ts)", "Item"].map((c) => h("th", { scope: "col" }, c))),
      );
    }
    const page = await track(status, async () => {
      // Read pages until the feed is up to date (a page is 100 changes).
      const changes = [];
      for (;;) {
        const answer = await app.client.changeFeed(db, coll, mode.value, etag);
        etag = answer.etag;
        changes.push(...answer.changes);
        if (answer.changes.length < 100 || changes.length >= 1000) return changes;
      }
    }, button);
    if (!page) return;
    for (const change of page) body.append(mode.value === "all" ? fullRow(change) : latestRow(change));
    count += page.length;
    newer.hidden = false;
    fill(
      info,
      `${count} change${count === 1 ? "" : "s"} read` +
        (page.length === 0 && !fresh ? "; nothing new since the last read." : ".") +
        (mode.value === "all" ? " TTL deletes are the purge removing expired items." : ""),
    );
    if (count === 0) body.append(h("tr", {}, h("td", { colspan: "5", class: "empty" }, "No changes.")));
  }

  function latestRow(item) {
    return h(
      "tr",
      {},
      h("td", {}, String(item._lsn)),
      h("td", {}, item.id),
      h("td", {}, formatInstant(item._ts)),
      h("td", { class: "json-cell" }, h("code", {}, JSON.stringify(stripSystem(item)))),
    );
  }

  function fullRow(change) {
    const meta = change.metadata || {};
    const ttl = meta.operationType === "delete" && meta.timeToLiveExpired === true;
    const item = change.current || change.previous || {};
    const id = item.id ?? (meta.id || "");
    return h(
      "tr",
      { class: `op-${meta.operationType}${ttl ? " ttl-delete" : ""}` },
      h("td", {}, String(meta.lsn)),
      h(
        "td",
        {},
        meta.operationType,
        ttl ? h("span", { class: "badge", title: "Removed by the TTL purge after the item expired" }, "TTL expired") : "",
      ),
      h("td", {}, id),
      h("td", {}, formatInstant(meta.crts)),
      h(
        "td",
        { class: "json-cell" },
        h("code", {}, meta.operationType === "delete" ? `partition key ${JSON.stringify(meta.partitionKey)}` : JSON.stringify(stripSystem(item))),
      ),
    );
  }

  read.addEventListener("click", () => load(true, read));
  newer.addEventListener("click", () => load(false, newer));
  mode.addEventListener("change", () => load(true, read));
  fill(
    panel,
    h("div", { class: "toolbar" }, h("label", { for: "feed-mode" }, "Mode"), mode, read, newer),
    h(
      "p",
      { class: "hint" },
      "All versions and deletes shows every change the container's log still holds (see --change-feed-retention).",
    ),
    status,
    info,
    h("div", { class: "table-wrap" }, table),
  );
  load(true, read);
}

function stripSystem(item) {
  const out = {};
  for (const [k, v] of Object.entries(item)) if (!k.startsWith("_")) out[k] = v;
  return out;
}
