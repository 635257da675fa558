// The words for the TTL rules of the documentation. Which rule applies to an
// item is decided by the emulator (`ttl::explain`, served by
// /_emulator/lifetimes); this module only says it in a sentence.

/** A container's `defaultTtl` (absent, -1 or n) in a short label. */
export function defaultTtlLabel(defaultTtl) {
  if (defaultTtl === null || defaultTtl === undefined) return "off";
  if (defaultTtl === -1) return "-1 (on, no default expiry)";
  return `${defaultTtl} s`;
}

/** What a `defaultTtl` setting does, next to the field that edits it. */
export function defaultTtlEffect(defaultTtl) {
  if (defaultTtl === null || defaultTtl === undefined) {
    return "Time to live is off: no item expires, and an item's own ttl is ignored.";
  }
  if (defaultTtl === -1) {
    return "Items without their own ttl never expire; an item with ttl n (n > 0) expires n s after its last write.";
  }
  return `Items without their own ttl will expire ${defaultTtl} s after their last write; an item's own ttl overrides it (-1: never).`;
}

/** The rule that decided an item's lifetime and the TTL in force, e.g. "item ttl: 10 s". */
export function ruleLabel(rule, effectiveTtl) {
  const value = effectiveTtl === -1 ? "-1 (never)" : `${effectiveTtl} s`;
  switch (rule) {
    case "off":
      return "TTL off";
    case "container-default":
      return `container default: ${value}`;
    case "item-override":
      return `item ttl: ${value}`;
    default:
      return rule;
  }
}

/** Why an item lives as long as it does, in a sentence (the row's tooltip). */
export function ruleExplanation(rule, effectiveTtl, ownTtl) {
  switch (rule) {
    case "off":
      return ownTtl === null || ownTtl === undefined
        ? "The container has no defaultTtl: time to live is off and the item never expires."
        : `The container has no defaultTtl: time to live is off, so the item's own ttl (${ownTtl}) is ignored.`;
    case "container-default":
      return effectiveTtl === -1
        ? "The item has no ttl of its own and the container's defaultTtl is -1: it never expires."
        : `The item has no ttl of its own: the container's defaultTtl (${effectiveTtl} s) counts from its last write.`;
    case "item-override":
      return effectiveTtl === -1
        ? "The item's own ttl is -1: it never expires, whatever the container's defaultTtl."
        : `The item's own ttl (${effectiveTtl} s) overrides the container's defaultTtl, counted from its last write.`;
    default:
      return "";
  }
}
