//! Which expression of a query reads which path of the item: the
//! [`DocumentPath`] (`data/index/document_path.rs`) that the index and the
//! lookups that read it (`access.rs`), the checks of ORDER BY against the
//! indexing policy (`validate.rs`, `computed.rs`), the partition key a
//! filter pins (`gateway.rs`), and the embedding or text a search function
//! reads (`search/`) all ask for.
//!
//! One walker, [`DocumentPath::of`], decides the two rules once (and
//! [`maps_to_path`], the wider question ORDER BY asks, follows the same
//! FROM rules):
//!
//! - **Steps.** A path is properties and string indexes over the row's
//!   first name: `c.a.b` and `c["a"]["b"]` both read `/a/b`. A numeric
//!   index (`c.a[0]`), a computed index or a function call is not a path,
//!   and nor is a property named `[]`, which index paths spell for an
//!   array's elements ([`ELEMENTS`]): such a read is left to the scan.
//! - **FROM.** The first name is the item when FROM binds it to the item
//!   (`FROM c`). Over a derived table (`FROM (SELECT ...) x`) a path is
//!   followed into the inner query where its projection passes the item's
//!   value through (`SELECT *`, `SELECT VALUE c.a`, `SELECT c.a AS a`; not
//!   an aggregate or a group). `FROM x IN c.a` (the elements of an array)
//!   and a subquery's FROM bind something else: no path of the item.

use serde_json::Value;

use super::ast::{Expr, From, Projection, Select};
use crate::data::index::document_path::{DocumentPath, ELEMENTS};

impl DocumentPath {
    /// The path `expr` reads of the item, in a query whose FROM is `from`
    /// (see the module's rules); `None` where it reads something else.
    /// Without `from` (a search function's argument, read wherever it is
    /// called), the first name is taken for the item.
    pub fn of(expr: &Expr, from: Option<&From>) -> Option<DocumentPath> {
        match from {
            None => steps(expr),
            Some(from) if from.scope != 0 || from.source.is_some() => None,
            Some(from) => match &from.derived {
                None => steps(expr),
                Some(inner) => {
                    let (expr, inner_from) = through_derived(expr, inner)?;
                    DocumentPath::of(&expr, Some(inner_from))
                }
            },
        }
    }

    /// The path `expr` reads, unless it is the item itself.
    pub fn of_property(expr: &Expr, from: Option<&From>) -> Option<DocumentPath> {
        DocumentPath::of(expr, from).filter(|path| !path.is_empty())
    }
}

/// The steps of `expr` from the row's first name (`Var(0)`).
fn steps(expr: &Expr) -> Option<DocumentPath> {
    let mut names: Vec<Box<str>> = Vec::new();
    let mut at = expr;
    loop {
        let name = match at {
            Expr::Var(0) => break,
            Expr::Property(_, name) => name,
            Expr::Index(_, index) => match index.as_ref() {
                Expr::Literal(Value::String(name)) => name,
                _ => return None,
            },
            _ => return None,
        };
        if name.as_str() == ELEMENTS {
            return None;
        }
        names.push(name.as_str().into());
        if let Expr::Property(base, _) | Expr::Index(base, _) = at {
            at = base;
        }
    }
    names.reverse();
    Some(names.into_iter().collect())
}

/// A path over the name that `FROM (SELECT ...) x` binds, written as the
/// inner query's expression it reads (`x.n` over `SELECT VALUE c` is
/// `c.n`), with the inner FROM; `None` when it reads a value the inner
/// query computes (an aggregate, a group, an expression). JOINs after the
/// derived name are not followed.
fn through_derived<'s>(expr: &Expr, inner: &'s Select) -> Option<(Expr, &'s From)> {
    // The steps from the name outwards, innermost first.
    let mut steps = Vec::new();
    let mut at = expr;
    loop {
        match at {
            Expr::Property(base, _) | Expr::Index(base, _) => {
                steps.push(at);
                at = base;
            }
            Expr::Var(0) => break,
            _ => return None,
        }
    }
    let inner_from = inner.from.as_ref()?;
    if !inner.group_by.is_empty() || projected_aggregates(inner) {
        return None;
    }
    let mut steps = steps.into_iter().rev();
    let mut rebuilt = match &inner.projection {
        Projection::Star => Expr::Var(0),
        Projection::Value(e) => e.clone(),
        Projection::Fields(fields) => match steps.next()? {
            Expr::Property(_, name) => fields.iter().find(|(_, n)| n == name)?.0.clone(),
            _ => return None,
        },
    };
    for step in steps {
        rebuilt = match step {
            Expr::Property(_, name) => Expr::Property(Box::new(rebuilt), name.clone()),
            Expr::Index(_, index) => Expr::Index(Box::new(rebuilt), index.clone()),
            _ => return None,
        };
    }
    Some((rebuilt, inner_from))
}

fn projected_aggregates(select: &Select) -> bool {
    match &select.projection {
        Projection::Star => false,
        Projection::Value(e) => e.contains_aggregate(),
        Projection::Fields(fields) => fields.iter().any(|(e, _)| e.contains_aggregate()),
    }
}

/// Whether the service maps `expr` to a path of the item, as ORDER BY
/// requires ("could not be mapped to a document path"): properties and
/// constant indexes, array positions included (`c.a[0]`), from a name
/// FROM binds to the item, a path of it, or the elements of one (`x IN
/// c.tags`, `JOIN t IN c.tags`), through a derived table as
/// [`DocumentPath::of`] follows one. Wider than [`DocumentPath::of`],
/// whose paths an index reads: those hold no array position and no
/// element of a JOIN.
pub(super) fn maps_to_path(expr: &Expr, from: &From) -> bool {
    if let Some(inner) = &from.derived {
        return through_derived(expr, inner)
            .is_some_and(|(e, inner_from)| maps_to_path(&e, inner_from));
    }
    match expr {
        Expr::Property(base, _) => is_path_base(base, from),
        Expr::Index(base, index) => {
            matches!(index.as_ref(), Expr::Literal(_)) && is_path_base(base, from)
        }
        // A name alone is a path when it stands for part of the item.
        Expr::Var(0) => from.source.as_ref().is_some_and(is_container_path),
        Expr::Var(i) => from
            .joins
            .get(i - 1)
            .is_some_and(|join| maps_to_path(join, from)),
        _ => false,
    }
}

fn is_path_base(expr: &Expr, from: &From) -> bool {
    match expr {
        Expr::Var(0) => from.source.as_ref().is_none_or(is_container_path),
        Expr::Var(i) => from
            .joins
            .get(i - 1)
            .is_some_and(|join| maps_to_path(join, from)),
        other => maps_to_path(other, from),
    }
}

/// A path from the container's items (`Var(0)` is the item in FROM's source).
fn is_container_path(expr: &Expr) -> bool {
    match expr {
        Expr::Var(0) => true,
        Expr::Property(base, _) => is_container_path(base),
        Expr::Index(base, index) => {
            matches!(index.as_ref(), Expr::Literal(_)) && is_container_path(base)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::query::tests::prepared;

    /// The path that `expr` reads in a query `FROM from`, as written.
    fn path(expr: &str, from: &str) -> Option<String> {
        let query = prepared(&format!("SELECT VALUE {expr} FROM {from}"));
        let Projection::Value(expr) = &query.select.projection else {
            unreachable!("a VALUE projection");
        };
        DocumentPath::of(expr, query.select.from.as_ref()).map(|p| p.to_string())
    }

    #[test]
    fn properties_and_string_indexes_are_steps() {
        assert_eq!(path("c.a.b", "c").as_deref(), Some("/a/b"));
        assert_eq!(path("c['a']['b c']", "c").as_deref(), Some("/a/b c"));
        assert_eq!(path("c.a['b']", "c").as_deref(), Some("/a/b"));
        assert_eq!(path("c", "c").as_deref(), Some("/"));
    }

    #[test]
    fn numeric_indexes_elements_and_computed_values_are_not() {
        for expr in ["c.a[0]", "c['[]']", "c.a['[]'].b", "LOWER(c.a)", "c.a[c.i]"] {
            assert_eq!(path(expr, "c"), None, "{expr}");
        }
    }

    #[test]
    fn a_derived_table_passes_the_items_paths_through() {
        for (expr, from, expected) in [
            ("x.a", "(SELECT * FROM c) x", Some("/a")),
            ("x.a", "(SELECT VALUE c.o FROM c) x", Some("/o/a")),
            ("x.p.a", "(SELECT c.o AS p FROM c) x", Some("/o/a")),
            ("x", "(SELECT VALUE LOWER(c.a) FROM c) x", None),
            ("x.q", "(SELECT c.o AS p FROM c) x", None),
            ("x.n", "(SELECT COUNT(1) AS n FROM c) x", None),
        ] {
            assert_eq!(path(expr, from).as_deref(), expected, "{expr} FROM {from}");
        }
    }

    #[test]
    fn the_elements_of_an_array_are_not_the_item() {
        assert_eq!(path("x.a", "x IN c.tags"), None);
        assert_eq!(path("c.a", "c JOIN t IN c.tags").as_deref(), Some("/a"));
    }

    #[test]
    fn a_partition_key_path_is_compared_by_its_names() {
        let path: DocumentPath = ["address", "city"].into_iter().collect();
        assert!(path.is(&["address".into(), "city".into()]));
        assert!(!path.is(&["address".into()]));
        assert_eq!(path.clone().elements().to_string(), "/address/city/[]");
        assert_eq!(DocumentPath::default().to_string(), "/");
    }
}
