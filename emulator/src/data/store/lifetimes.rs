//! What the data explorer shows of items' lifetimes: for a page of a
//! container's stored items (expired ones not yet purged included, marked),
//! the rule of the documentation that decides each one's lifetime, the TTL
//! in force, when it expires and whether it already has, all from
//! `ttl::explain`, the rules the store itself applies.

use serde_json::{json, Value};

use super::Store;
use crate::data::ttl::{self, Ttl};
use crate::protocol::error::ApiResult;
use crate::protocol::item_key::ItemKey;

/// Where a page starts, which also says its order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LifetimeCursor {
    /// Key order (partition key, then id), after this key (from the first
    /// item if none).
    Key(Option<ItemKey>),
    /// Soonest expiry first, items that never expire last (each group in key
    /// order), from this offset: the explorer's "sort by expiry" over the
    /// whole container, not only over the rows it has loaded.
    Expiry(usize),
}

/// One page of lifetimes: `{"now", "defaultTtl", "stored", "live",
/// "nextExpiry", "items": [...]}` and where the next page starts, if any.
pub struct LifetimePage {
    pub body: Value,
    pub next: Option<LifetimeCursor>,
}

impl Store {
    /// The lifetimes of up to `limit` stored items from `cursor`, in its order.
    pub fn lifetimes(
        &self,
        database: &str,
        container: &str,
        cursor: LifetimeCursor,
        limit: usize,
    ) -> ApiResult<LifetimePage> {
        self.with_container(database, container, |c, now| {
            let default = c.default_ttl();
            let explained = |key: &ItemKey, item: &super::Item| {
                let expiry = ttl::explain(default, item.ttl, item.ts);
                let pk: Value = serde_json::from_str(key.pk()).unwrap_or(Value::Null);
                json!({
                    "id": key.id(),
                    "partitionKey": pk,
                    "_ts": item.ts,
                    "ttl": item.ttl.map(Ttl::to_i64),
                    "rule": expiry.rule.as_str(),
                    "effectiveTtl": expiry.effective.map(Ttl::to_i64),
                    "expiresAt": expiry.expires_at,
                    "expired": ttl::is_expired(default, item.ttl, item.ts, now),
                })
            };
            let (items, next) = match cursor {
                LifetimeCursor::Key(after) => {
                    let mut rows = c.stored_in_key_order(after.as_ref(), limit + 1);
                    let more = rows.len() > limit;
                    rows.truncate(limit);
                    let items: Vec<(ItemKey, Value)> = rows
                        .into_iter()
                        .map(|(key, item)| (key.clone(), explained(key, item)))
                        .collect();
                    let next = items
                        .last()
                        .filter(|_| more)
                        .map(|(key, _)| LifetimeCursor::Key(Some(key.clone())));
                    (items.into_iter().map(|(_, v)| v).collect(), next)
                }
                LifetimeCursor::Expiry(offset) => {
                    let mut all: Vec<(i64, &ItemKey, &super::Item)> = c
                        .stored_items()
                        .map(|(key, item)| {
                            let at = ttl::explain(default, item.ttl, item.ts).expires_at;
                            (at.unwrap_or(i64::MAX), key, item)
                        })
                        .collect();
                    // Equal instants in key order.
                    all.sort_unstable_by_key(|&(at, key, _)| (at, key));
                    let items: Vec<Value> = all
                        .iter()
                        .skip(offset)
                        .take(limit)
                        .map(|(_, key, item)| explained(key, item))
                        .collect();
                    let end = offset.saturating_add(items.len());
                    let next = (end < all.len()).then_some(LifetimeCursor::Expiry(end));
                    (items, next)
                }
            };
            let body = json!({
                "now": now,
                "defaultTtl": default.map(Ttl::to_i64),
                "stored": c.stored_count(),
                "live": c.live_count(now),
                // From the expiry index the purge follows: "jump to the next
                // expiry" moves the test clock to this instant.
                "nextExpiry": c.next_expiry_after(now),
                "items": items,
            });
            Ok(LifetimePage { body, next })
        })
    }
}
