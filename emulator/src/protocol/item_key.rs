//! An item's address within its container, the key every map, index and
//! column of the store and the query engine orders items by. A leaf: both
//! layers name it, neither owns it.

use std::sync::Arc;

use crate::protocol::partition_key::KeyScope;

/// An item's address within its container: (partition key, id), held as
/// one shared string `pk NUL id`. Cheap to clone into the indexes, one
/// pointer to follow per comparison, and ordered by partition then id:
/// canonical partition key JSON never holds a raw NUL, and no JSON array's
/// text is a proper prefix of another's.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ItemKey(Arc<str>);

impl ItemKey {
    pub fn new(pk: &str, id: &str) -> Self {
        let mut key = String::with_capacity(pk.len() + 1 + id.len());
        key.push_str(pk);
        key.push('\0');
        key.push_str(id);
        ItemKey(key.into())
    }

    /// A key below every item's (theirs hold at least the NUL): where a
    /// range of the index that starts at a value begins.
    pub fn least() -> Self {
        ItemKey(Arc::from(""))
    }

    /// The smallest key of a partition, where a scan of it starts.
    pub fn partition_start(pk: &str) -> Self {
        Self::new(pk, "")
    }

    /// Where a scan of the keys in `scope` starts: at or before the first.
    pub fn scope_start(scope: &KeyScope) -> Self {
        match scope {
            KeyScope::Exact(pk) => Self::partition_start(pk),
            // `text NUL`: below every `pk NUL id` whose pk starts with the
            // text (a value follows the text's comma, and NUL is the least).
            KeyScope::Prefix { text, .. } => Self::partition_start(text),
        }
    }

    fn split(&self) -> (&str, &str) {
        self.0.split_once('\0').expect("built by ItemKey::new")
    }

    /// The canonical partition key, e.g. `["a"]`.
    pub fn pk(&self) -> &str {
        self.split().0
    }

    pub fn id(&self) -> &str {
        self.split().1
    }
}

impl std::fmt::Debug for ItemKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.pk(), self.id())
    }
}
