// Small DOM and formatting helpers shared by the explorer's views.

/**
 * `h("button", {class: "x", onclick}, "text", child)`: an element with
 * attributes (functions become listeners, `false`/`null` are skipped) and
 * children (strings become text, never HTML).
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === false || value === null || value === undefined) continue;
    if (typeof value === "function") element.addEventListener(name.replace(/^on/, ""), value);
    else if (name === "value") element.value = value;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** Replace an element's children. */
export function fill(element, ...children) {
  element.replaceChildren();
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** Shows `text` in a status element: an error (announced) or a plain note. */
export function say(status, text, { error = false } = {}) {
  status.className = error ? "status error" : "status";
  if (error) status.setAttribute("role", "alert");
  status.textContent = text;
}

/**
 * The loading and error state of one request: `status` is the element that
 * says "Loading…" while `work` runs and the service's message if it fails;
 * `busy` (a button or a region) is disabled/marked busy meanwhile. Resolves
 * to the work's result, or undefined after showing the error.
 */
export async function track(status, work, busy) {
  status.className = "status loading";
  status.setAttribute("role", "status");
  status.textContent = "Loading…";
  if (busy) {
    busy.setAttribute("aria-busy", "true");
    if ("disabled" in busy) busy.disabled = true;
  }
  try {
    const result = await work();
    say(status, "");
    return result;
  } catch (error) {
    say(status, describe(error), { error: true });
    return undefined;
  } finally {
    if (busy) {
      busy.removeAttribute("aria-busy");
      if ("disabled" in busy) busy.disabled = false;
    }
  }
}

/** An error as a person reads it: the service's status, code and message. */
export function describe(error) {
  if (error && error.status) return `${error.status} ${error.code}: ${error.message}`;
  return error && error.message ? error.message : String(error);
}

/** Epoch seconds as a date and time in UTC, e.g. "2026-11-24 21:16:13Z". */
export function formatInstant(seconds) {
  if (seconds === null || seconds === undefined) return "never";
  return new Date(seconds * 1000).toISOString().replace("T", " ").replace(/\.000Z$/, "Z");
}

/** A duration in seconds as "1d 2h", "3h 4m", "5m 6s" or "7s". */
export function formatDuration(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const units = [
    ["d", 86400],
    ["h", 3600],
    ["m", 60],
    ["s", 1],
  ];
  const parts = [];
  let rest = s;
  for (const [name, size] of units) {
    if (rest >= size || (name === "s" && parts.length === 0)) {
      parts.push(`${Math.floor(rest / size)}${name}`);
      rest %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(" ");
}

/** The value at a partition key path ("/a/b") of an item, or undefined. */
export function valueAt(item, path) {
  let value = item;
  for (const part of path.split("/").slice(1)) {
    if (value === null || typeof value !== "object") return undefined;
    value = value[part.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  return value;
}

/** The partition key of an item as the header carries it: one value per path, `{}` for none. */
export function partitionKeyOf(item, paths) {
  return paths.map((path) => {
    const value = valueAt(item, path);
    return value === undefined ? {} : value;
  });
}
