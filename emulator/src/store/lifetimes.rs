//! What the data explorer shows of items' lifetimes: for a page of a
//! container's stored items (expired ones not yet purged included, marked),
//! the rule of the documentation that decides each one's lifetime, the TTL
//! in force, when it expires and whether it already has, all from
//! `ttl::explain`, the rules the store itself applies.

use serde_json::{json, Value};

use super::{ItemKey, Store};
use crate::error::ApiResult;
use crate::ttl::{self, Ttl};

/// One page of lifetimes: `{"now", "defaultTtl", "stored", "live",
/// "items": [...]}` and the key the next page starts after, if any.
pub struct LifetimePage {
    pub body: Value,
    pub next: Option<ItemKey>,
}

impl Store {
    /// The lifetimes of up to `limit` stored items after `after`, in key order.
    pub fn lifetimes(
        &self,
        database: &str,
        container: &str,
        after: Option<&ItemKey>,
        limit: usize,
    ) -> ApiResult<LifetimePage> {
        self.with_container(database, container, |c, now| {
            let default = c.default_ttl();
            let mut items = Vec::new();
            let mut next = None;
            for (key, item) in c.stored_items(after) {
                if items.len() == limit {
                    next = items.last().map(|(k, _): &(ItemKey, Value)| k.clone());
                    break;
                }
                let expiry = ttl::explain(default, item.ttl, item.ts);
                let pk: Value = serde_json::from_str(key.pk()).unwrap_or(Value::Null);
                items.push((
                    key.clone(),
                    json!({
                        "id": key.id(),
                        "partitionKey": pk,
                        "_ts": item.ts,
                        "ttl": item.ttl.map(Ttl::to_i64),
                        "rule": expiry.rule.as_str(),
                        "effectiveTtl": expiry.effective.map(Ttl::to_i64),
                        "expiresAt": expiry.expires_at,
                        "expired": ttl::is_expired(default, item.ttl, item.ts, now),
                    }),
                ));
            }
            let body = json!({
                "now": now,
                "defaultTtl": default.map(Ttl::to_i64),
                "stored": c.stored_count(),
                "live": c.live_count(now),
                "items": items.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
            });
            Ok(LifetimePage { body, next })
        })
    }
}
