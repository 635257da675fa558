// The Settings tab: the container's defaultTtl and indexing policy, edited
// and replaced as an SDK replaces a container, with what the TTL setting
// does said next to it and the service's message when it refuses.

import { h, fill, track } from "./dom.js";
import { defaultTtlEffect } from "./ttl-text.js";

export function settingsTab(app, panel, { onChange }) {
  const { db, coll } = app.selected;
  const resource = app.selected.resource;
  const current = resource.defaultTtl;
  const mode = (value) => (value === undefined || value === null ? "off" : value === -1 ? "never" : "seconds");
  const radio = (value, label) =>
    h(
      "label",
      { class: "choice" },
      h("input", { type: "radio", name: "ttl-mode", value, checked: mode(current) === value }),
      " ",
      label,
    );
  const seconds = h("input", {
    id: "ttl-seconds",
    type: "number",
    min: "1",
    max: "2147483647",
    "aria-label": "defaultTtl in seconds",
    value: current > 0 ? String(current) : "3600",
  });
  const effect = h("p", { class: "effect", id: "ttl-effect", "aria-live": "polite" });
  const policy = h("textarea", {
    id: "indexing-policy",
    rows: "12",
    spellcheck: "false",
    "aria-label": "Indexing policy (JSON)",
    value: JSON.stringify(resource.indexingPolicy || {}, null, 2),
  });
  const validity = h("p", { class: "validity", id: "policy-validity" });
  const save = h("button", { type: "button", id: "settings-save" }, "Save settings");
  const status = h("p", { class: "status", id: "settings-status" });
  const fieldset = h(
    "fieldset",
    {},
    h("legend", {}, "Time to live (defaultTtl)"),
    radio("off", "Off (absent)"),
    radio("never", "On, items do not expire by default (-1)"),
    h("span", { class: "choice" }, radio("seconds", "On, items expire after"), " ", seconds, " s"),
  );

  const chosen = () => {
    const picked = fieldset.querySelector("input[name=ttl-mode]:checked").value;
    if (picked === "off") return { ok: true, value: undefined };
    if (picked === "never") return { ok: true, value: -1 };
    const n = Number(seconds.value);
    if (!Number.isInteger(n) || n < 1) return { ok: false, message: "defaultTtl in seconds is a whole number, 1 or more." };
    return { ok: true, value: n };
  };
  const explain = () => {
    const ttl = chosen();
    seconds.disabled = fieldset.querySelector("input[name=ttl-mode]:checked").value !== "seconds";
    effect.textContent = ttl.ok ? defaultTtlEffect(ttl.value) : ttl.message;
    effect.classList.toggle("error", !ttl.ok);
  };
  fieldset.addEventListener("input", explain);
  fieldset.addEventListener("change", explain);
  explain();

  save.addEventListener("click", async () => {
    const ttl = chosen();
    if (!ttl.ok) return;
    let indexingPolicy;
    try {
      indexingPolicy = JSON.parse(policy.value);
      validity.textContent = "";
    } catch (error) {
      validity.textContent = `The indexing policy is not valid JSON: ${error.message}`;
      return;
    }
    const body = { ...app.selected.resource, indexingPolicy };
    if (ttl.value === undefined) delete body.defaultTtl;
    else body.defaultTtl = ttl.value;
    const replaced = await track(status, () => app.client.replaceContainer(db, coll, body), save);
    if (!replaced) return;
    app.selected.resource = replaced;
    status.textContent = "Saved.";
    onChange();
  });

  fill(
    panel,
    fieldset,
    effect,
    h("label", { for: "indexing-policy" }, "Indexing policy (JSON)"),
    policy,
    validity,
    h("div", { class: "toolbar" }, save),
    status,
  );
}
