//! Fault rules (`POST /_emulator/faults`, `docs/src/faults.md`): the rules
//! in creation order, which request each matches, how many it has hit, and
//! their windows on the emulator clock. Nothing here knows HTTP: the steps
//! around every operation (`operations/around.rs`) describe a request as a
//! [`Target`], ask [`Faults::hit`] and answer as the rule says.
//!
//! With no rule, [`Faults::is_empty`] is one atomic load: the layer does
//! nothing more. A hit is counted under the rules' lock, so a rule with
//! `hits: 3` applies to exactly three requests however many arrive at once.
//! An `after` rule's hit is counted when the request starts and given back
//! ([`Faults::give_back`]) when its operation did not run (refused by the
//! budget, or failed): only what ran and committed counts.

mod rule;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use crate::protocol::error::{ApiError, ApiResult};

pub use rule::{Connection, Rule, When};

/// The operations a rule may name, as `http/operation.rs` names them.
pub const OPERATIONS: [&str; 12] = [
    "read",
    "query",
    "create",
    "upsert",
    "replace",
    "patch",
    "delete",
    "batch",
    "changeFeed",
    "script",
    "account",
    "metadata",
];

/// A request, as the rules see it.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The region of the endpoint it came to.
    pub region: &'a str,
    /// One of [`OPERATIONS`].
    pub operation: &'a str,
    pub database: Option<&'a str>,
    pub container: Option<&'a str>,
    /// The `x-ms-documentdb-partitionkey` header, as sent.
    pub partition_key: Option<&'a str>,
}

/// The rules of one account.
#[derive(Default)]
pub struct Faults {
    /// How many rules there are: read without the lock.
    count: AtomicUsize,
    rules: Mutex<Rules>,
}

struct Rules {
    entries: Vec<Entry>,
    /// The number in the next generated id (`f1`, `f2`...).
    next_id: u64,
    /// The state of the draws of rules with a probability below 1.
    seed: u64,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            entries: Vec::new(),
            next_id: 1,
            seed: SEED,
        }
    }
}

/// The draws start from a fixed seed: a run with the same requests in the
/// same order draws the same.
const SEED: u64 = 0x5eed_fa17_0000_0001;

struct Entry {
    rule: Arc<Rule>,
    hit_count: u64,
}

impl Faults {
    /// Whether there is no rule: one atomic load, no lock.
    pub fn is_empty(&self) -> bool {
        self.count.load(Ordering::Acquire) == 0
    }

    fn lock(&self) -> MutexGuard<'_, Rules> {
        // A panic under the lock leaves the list whole (each change is one push or remove).
        self.rules.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds the rule `body` describes, made at `now_ms` on the emulator
    /// clock: the rule as listed. 400 for a bad body, 409 for a taken id;
    /// either way nothing changes.
    pub fn add(&self, body: Value, now_ms: i64) -> ApiResult<Value> {
        let mut rules = self.lock();
        let mut next = rules.next_id;
        let taken = |id: &str, entries: &[Entry]| entries.iter().any(|e| e.rule.id == id);
        let rule = Rule::parse(body, now_ms, || loop {
            let id = format!("f{next}");
            next += 1;
            if !taken(&id, &rules.entries) {
                return id;
            }
        })?;
        if taken(&rule.id, &rules.entries) {
            return Err(ApiError::conflict().with_message(format!(
                "A fault rule with id \"{}\" already exists: delete it first, or give another id.",
                rule.id
            )));
        }
        rules.next_id = next;
        let listed = rule.to_json(0);
        rules.entries.push(Entry {
            rule: Arc::new(rule),
            hit_count: 0,
        });
        self.count.store(rules.entries.len(), Ordering::Release);
        Ok(listed)
    }

    /// Every rule, in creation order, with its hit count.
    pub fn list(&self) -> Vec<Value> {
        let rules = self.lock();
        rules
            .entries
            .iter()
            .map(|e| e.rule.to_json(e.hit_count))
            .collect()
    }

    /// The rule `id`, or 404.
    pub fn get(&self, id: &str) -> ApiResult<Value> {
        let rules = self.lock();
        rules
            .entries
            .iter()
            .find(|e| e.rule.id == id)
            .map(|e| e.rule.to_json(e.hit_count))
            .ok_or_else(|| not_found(id))
    }

    /// Gives back the hit [`Faults::hit`] counted for `rule`: an `after`
    /// rule whose request was refused or failed, so never answered by it.
    /// Nothing when the rule has been deleted since (a rule made again
    /// under its id is another rule).
    pub fn give_back(&self, rule: &Arc<Rule>) {
        let mut rules = self.lock();
        if let Some(entry) = rules
            .entries
            .iter_mut()
            .find(|e| Arc::ptr_eq(&e.rule, rule))
        {
            entry.hit_count = entry.hit_count.saturating_sub(1);
        }
    }

    /// Removes the rule `id`, or 404.
    pub fn remove(&self, id: &str) -> ApiResult<()> {
        let mut rules = self.lock();
        let at = rules
            .entries
            .iter()
            .position(|e| e.rule.id == id)
            .ok_or_else(|| not_found(id))?;
        rules.entries.remove(at);
        self.count.store(rules.entries.len(), Ordering::Release);
        Ok(())
    }

    /// Removes every rule (ids start again from `f1`): how many there were.
    pub fn clear(&self) -> usize {
        let mut rules = self.lock();
        let removed = rules.entries.len();
        *rules = Rules::default();
        self.count.store(0, Ordering::Release);
        removed
    }

    /// The first rule, in creation order, that applies to `target` at
    /// `now_ms`: it matches, its window holds `now_ms`, it has hits left
    /// and its draw (for a probability below 1) succeeds. That rule's hit
    /// is counted. `range` tells the request's partition key range id,
    /// asked only when a rule names one.
    pub fn hit(
        &self,
        target: &Target<'_>,
        now_ms: i64,
        mut range: impl FnMut() -> Option<String>,
    ) -> Option<Arc<Rule>> {
        let mut known_range: Option<Option<String>> = None;
        let mut range = || known_range.get_or_insert_with(&mut range).clone();
        let mut rules = self.lock();
        let Rules { entries, seed, .. } = &mut *rules;
        for entry in entries.iter_mut() {
            let rule = &entry.rule;
            let used_up = rule.hits.is_some_and(|hits| entry.hit_count >= hits);
            if used_up || !rule.in_window(now_ms) || !rule.matches(target, &mut range) {
                continue;
            }
            if !draw(seed, rule.probability) {
                continue;
            }
            entry.hit_count += 1;
            return Some(Arc::clone(rule));
        }
        None
    }
}

fn not_found(id: &str) -> ApiError {
    ApiError::not_found().with_message(format!(
        "There is no fault rule with id \"{id}\" (GET /_emulator/faults lists them)."
    ))
}

/// Whether a draw with probability `p` succeeds: 1 always, 0 never, else
/// the next number of a splitmix64 sequence.
fn draw(seed: &mut u64, p: f64) -> bool {
    if p >= 1.0 {
        return true;
    }
    if p <= 0.0 {
        return false;
    }
    *seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *seed;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    ((z >> 11) as f64 / (1u64 << 53) as f64) < p
}

#[cfg(test)]
mod tests;
