//! The path of the item that a query expression reads, one type for every
//! part of the emulator that asks: the indexes and the lookups that read
//! them (this module, `data/query/access.rs`), the indexing policy's paths and
//! the checks of ORDER BY against it (`indexing_policy/coverage.rs`,
//! `data/query/validate.rs`), the partition key a filter pins
//! (`data/query/gateway.rs`), and the embedding or text a search function reads
//! (`data/query/search/`). Which expression reads which path is the query
//! language's rule: `data/query/paths.rs` ([`DocumentPath::of`]).

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

/// The step of an index path that reads the elements of the array before
/// it (`tags/[]`: each element of `tags`), as indexing policies write it.
/// A query's path never holds it as a property name.
pub const ELEMENTS: &str = "[]";

/// A path of property names from the item's root: `c.address.city` is
/// `["address", "city"]`, written `/address/city`; empty for the item
/// itself. An index's path may end in [`ELEMENTS`] (`["tags", "[]"]`:
/// what `ARRAY_CONTAINS(c.tags, x)` and `JOIN t IN c.tags ... t = x` read).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DocumentPath(Vec<Box<str>>);

impl DocumentPath {
    /// This path's array elements: `tags` becomes `tags/[]`.
    pub fn elements(mut self) -> DocumentPath {
        self.0.push(ELEMENTS.into());
        self
    }

    /// Whether this is `names` (a partition key's path, as its definition
    /// splits it).
    pub fn is(&self, names: &[String]) -> bool {
        self.0.len() == names.len() && self.0.iter().zip(names).all(|(a, b)| **a == **b)
    }
}

impl Deref for DocumentPath {
    type Target = [Box<str>];

    fn deref(&self) -> &[Box<str>] {
        &self.0
    }
}

/// So that a map keyed by paths is looked up by a slice of steps.
impl Borrow<[Box<str>]> for DocumentPath {
    fn borrow(&self) -> &[Box<str>] {
        &self.0
    }
}

impl<S: Into<Box<str>>> FromIterator<S> for DocumentPath {
    fn from_iter<I: IntoIterator<Item = S>>(steps: I) -> Self {
        DocumentPath(steps.into_iter().map(Into::into).collect())
    }
}

/// `/a/b`, as policies write paths; `/` for the item itself.
impl fmt::Display for DocumentPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("/");
        }
        for step in &self.0 {
            write!(f, "/{step}")?;
        }
        Ok(())
    }
}
