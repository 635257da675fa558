// The Query tab: SQL with parameters, a page of results at a time (as JSON
// or as a table), the request charge, and the service's message when a
// query is refused.
//
// Across partitions the page runs a query as an SDK starts to: in each
// partition key range in turn (`x-ms-documentdb-partitionkeyrangeid`), so
// that ORDER BY, aggregates and DISTINCT, which the gateway does not serve
// across ranges, work too. With one range (a container's usual state here)
// that is the whole answer; with several, each range's results are ordered
// and aggregated on their own (an SDK merges them; the page says so).
// Scoped to a partition key, every query is answered whole.

import { h, fill, track } from "./dom.js";

export function queryTab(app, panel) {
  const { db, coll } = app.selected;
  const sql = h("textarea", { id: "query-text", rows: "4", spellcheck: "false", "aria-label": "SQL query" });
  sql.value = app.lastQuery || "SELECT * FROM c";
  const parameters = h("textarea", {
    id: "query-parameters",
    rows: "2",
    spellcheck: "false",
    "aria-label": "Parameters (JSON)",
    placeholder: '{"@status": "open"}',
  });
  const partitionKey = h("input", {
    id: "query-pk",
    spellcheck: "false",
    "aria-label": "Partition key (JSON, optional)",
    placeholder: 'e.g. "alice" (optional)',
  });
  const run = h("button", { type: "button", id: "query-run" }, "Run");
  const next = h("button", { type: "button", id: "query-next", hidden: true }, "Next page");
  const view = h(
    "select",
    { id: "query-view", "aria-label": "Show results as" },
    h("option", { value: "table" }, "Table"),
    h("option", { value: "json" }, "JSON"),
  );
  const status = h("p", { class: "status", id: "query-status" });
  const info = h("p", { class: "summary", id: "query-info" });
  const results = h("div", { class: "results", id: "query-results" });

  let state = null; // {query, parameters, pk, ranges, range, continuation, page}
  let shown = [];

  function parseInputs() {
    const query = sql.value.trim();
    if (!query) throw new Error("Write a query first, e.g. SELECT * FROM c.");
    let params = [];
    const text = parameters.value.trim();
    if (text) {
      let value;
      try {
        value = JSON.parse(text);
      } catch (error) {
        throw new Error(`Parameters are not valid JSON: ${error.message}`);
      }
      if (Array.isArray(value)) params = value;
      else if (value && typeof value === "object") params = Object.entries(value).map(([name, v]) => ({ name, value: v }));
      else throw new Error('Parameters are a JSON object {"@name": value} or an array [{"name", "value"}].');
    }
    let pk;
    if (partitionKey.value.trim()) {
      try {
        pk = JSON.parse(partitionKey.value);
      } catch (error) {
        throw new Error(`The partition key is JSON, e.g. "alice" or 42: ${error.message}`);
      }
      pk = Array.isArray(pk) ? pk : [pk];
    }
    return { query, params, pk };
  }

  async function page(fresh) {
    if (fresh) {
      const inputs = parseInputs();
      app.lastQuery = inputs.query;
      state = { ...inputs, ranges: null, range: 0, continuation: null, page: 0 };
    }
    const { query, params, pk } = state;
    let answer;
    if (pk) {
      answer = await app.client.query(db, coll, query, params, { partitionKey: pk }, state.continuation);
    } else {
      state.ranges = state.ranges || (await app.client.partitionKeyRanges(db, coll));
      const range = state.ranges[state.range];
      answer = await app.client.query(db, coll, query, params, { range: range.id }, state.continuation);
      answer.range = range.id;
    }
    state.page += 1;
    state.continuation = answer.continuation;
    let more = Boolean(answer.continuation);
    // A range read to its end: the next page is the next range's first.
    if (answer.range !== undefined && !more && state.range + 1 < state.ranges.length) {
      state.range += 1;
      more = true;
    }
    return { ...answer, more };
  }

  async function go(fresh, button) {
    const answer = await track(status, () => page(fresh), button);
    if (!answer) {
      next.hidden = true;
      return;
    }
    shown = answer.items;
    next.hidden = !answer.more;
    const parts = [
      `${answer.items.length} result${answer.items.length === 1 ? "" : "s"} on page ${state.page}`,
      `request charge ${answer.charge} RU`,
    ];
    if (answer.range !== undefined && state.ranges.length > 1) {
      parts.push(
        `from partition key range ${answer.range} (one of ${state.ranges.length}, run in turn: ORDER BY, TOP, ` +
          "DISTINCT and aggregates apply within each range; give a partition key for one answer)",
      );
    }
    fill(info, parts.join(" · ") + (answer.more ? " · more pages follow" : ""));
    render();
  }

  function render() {
    if (view.value === "json") {
      fill(results, h("pre", { class: "json", tabindex: "0" }, JSON.stringify(shown, null, 2)));
      return;
    }
    if (shown.length === 0) {
      fill(results, h("p", { class: "empty" }, "No results."));
      return;
    }
    const objects = shown.every((r) => r !== null && typeof r === "object" && !Array.isArray(r));
    const columns = objects ? [...new Set(shown.flatMap((r) => Object.keys(r)))] : ["value"];
    const cell = (value) => (value === undefined ? "" : typeof value === "object" ? JSON.stringify(value) : String(value));
    fill(
      results,
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "results-table", id: "query-table" },
          h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c)))),
          h(
            "tbody",
            {},
            shown.map((r) => h("tr", {}, (objects ? columns.map((c) => r[c]) : [r]).map((v) => h("td", {}, cell(v))))),
          ),
        ),
      ),
    );
  }

  run.addEventListener("click", () => go(true, run));
  next.addEventListener("click", () => go(false, next));
  view.addEventListener("change", render);
  sql.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) go(true, run);
  });

  fill(
    panel,
    h("label", { for: "query-text" }, "SQL (Ctrl+Enter runs it)"),
    sql,
    h("label", { for: "query-parameters" }, "Parameters, as JSON (optional)"),
    parameters,
    h("label", { for: "query-pk" }, "Partition key, as JSON (optional)"),
    partitionKey,
    h("div", { class: "toolbar" }, run, next, h("label", { for: "query-view" }, "Show as"), view),
    status,
    info,
    results,
  );
}
