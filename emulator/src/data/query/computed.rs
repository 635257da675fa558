//! Computed properties: a container's `computedProperties`, each a top-level
//! name and a query `SELECT VALUE <expression> FROM c` evaluated on one item.
//!
//! They are validated as the service documents ("Computed properties in
//! Azure Cosmos DB for NoSQL": at most 20, unique names other than the
//! system properties', a query over the item alone without WHERE, GROUP BY,
//! ORDER BY, TOP, DISTINCT, OFFSET LIMIT, JOIN, subqueries, aggregates,
//! spatial or nondeterministic functions) and never stored in items.
//!
//! A query reads one as `c.name` (or `c["name"]`) of the item's alias. Before
//! the query runs, each such reference is replaced by the property's
//! expression (rebased on the query's name for the item): the value is
//! computed exactly where the query reads it, only for queries that read
//! it, and a query that reads none runs unchanged. `SELECT *` and `VALUE c`
//! give the stored item, without computed properties, as the service does.

use serde_json::{Map, Value};

use super::ast::{Aggregate, Expr, From, Select};
use super::{eval, functions, parser, PreparedQuery};
use crate::data::index::DocumentPath;
use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::limits::MAX_SUBSTITUTED_BYTES;

/// The service's limit of computed properties per container.
pub const MAX_COMPUTED_PROPERTIES: usize = 20;

/// Names a computed property cannot take: the item's system properties.
const RESERVED_NAMES: [&str; 6] = ["id", "_rid", "_self", "_etag", "_attachments", "_ts"];

/// Whether the function `name` gives a value that does not follow from
/// the item alone: one that reads the clock (the function table says
/// which), or `RAND`, which the service has and refuses here too (this
/// engine knows no `RAND`; naming the rule says more than "unknown").
fn nondeterministic(name: &str) -> bool {
    functions::reads_clock(name) || name == "RAND"
}

/// One computed property: its name and the expression of its query, in
/// which `Var(0)` is the item.
#[derive(Debug, Clone, PartialEq)]
struct ComputedProperty {
    name: String,
    expr: Expr,
    /// The length of its query: what one reference copies into a query.
    query_bytes: usize,
}

/// A container's computed properties, validated.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ComputedProperties(Vec<ComputedProperty>);

impl ComputedProperties {
    /// Reads and validates a container's `computedProperties` (absent or
    /// null: none). Every refusal names the property and the rule.
    pub fn parse(value: Option<&Value>) -> ApiResult<Self> {
        let Some(value) = value.filter(|v| !v.is_null()) else {
            return Ok(Self::default());
        };
        let Some(entries) = value.as_array() else {
            return Err(shape_error(
                "computedProperties is an array of {\"name\", \"query\"} objects",
            ));
        };
        if entries.len() > MAX_COMPUTED_PROPERTIES {
            return Err(ApiError::bad_request(format!(
                "The container defines {} computed properties; a container can have at most {MAX_COMPUTED_PROPERTIES}.",
                entries.len()
            )));
        }
        let mut definitions: Vec<(String, String)> = Vec::with_capacity(entries.len());
        for entry in entries {
            let (name, query) = name_and_query(entry)?;
            check_name(&name)?;
            if definitions.iter().any(|(other, _)| *other == name) {
                return Err(ApiError::bad_request(format!(
                    "The computed property name '{name}' is used more than once: computed property names must be unique."
                )));
            }
            definitions.push((name, query));
        }
        let names: Vec<&str> = definitions.iter().map(|(n, _)| n.as_str()).collect();
        let properties = definitions
            .iter()
            .map(|(name, query)| {
                let expr = parse_query(name, query, &names)?;
                Ok(ComputedProperty {
                    name: name.clone(),
                    expr,
                    query_bytes: query.len(),
                })
            })
            .collect::<ApiResult<Vec<_>>>()?;
        Ok(ComputedProperties(properties))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn property(&self, name: &str) -> Option<&ComputedProperty> {
        self.0.iter().find(|p| p.name == name)
    }

    /// The computed property `expr` reads from the item named `Var(root)`.
    fn referenced(&self, expr: &Expr, root: usize) -> Option<&ComputedProperty> {
        let name = match expr {
            Expr::Property(base, name) if **base == Expr::Var(root) => name,
            Expr::Index(base, index) if **base == Expr::Var(root) => match index.as_ref() {
                Expr::Literal(Value::String(name)) => name,
                _ => return None,
            },
            _ => return None,
        };
        self.property(name)
    }

    /// Replaces, in `select`, each reference to a computed property by its
    /// expression; whether there was any. `root` is the index of the name
    /// bound to the item: `None` at the top (found from the FROM clause),
    /// the outer query's in a subquery (whose outer names come first).
    /// `copied` counts the bytes of query text the references copy, and
    /// substitution stops past [`MAX_SUBSTITUTED_BYTES`].
    fn resolve_select(
        &self,
        select: &mut Select,
        outer_root: Option<usize>,
        top: bool,
        copied: &mut usize,
    ) -> bool {
        let mut changed = false;
        let (source_root, clause_root) = match &select.from {
            Some(from) if top => (Some(0), item_is_first_name(from).then_some(0)),
            Some(_) => (outer_root, outer_root),
            None => (None, outer_root),
        };
        if let Some(from) = &mut select.from {
            if let Some(inner) = &mut from.derived {
                // `FROM (SELECT ... FROM c) x`: a query over the container.
                changed |= self.resolve_select(inner, None, true, copied);
            }
            if let Some(source) = &mut from.source {
                changed |= self.resolve_expr(source, source_root, copied);
            }
            for join in &mut from.joins {
                changed |= self.resolve_expr(join, clause_root, copied);
            }
        }
        let mut clauses: Vec<&mut Expr> = Vec::new();
        match &mut select.projection {
            super::Projection::Star => {}
            super::Projection::Value(e) => clauses.push(e),
            super::Projection::Fields(fields) => clauses.extend(fields.iter_mut().map(|(e, _)| e)),
        }
        clauses.extend(select.filter.as_mut());
        clauses.extend(select.group_by.iter_mut());
        clauses.extend(select.order_by.iter_mut().map(|k| &mut k.expr));
        for e in clauses {
            changed |= self.resolve_expr(e, clause_root, copied);
        }
        changed
    }

    fn resolve_expr(&self, expr: &mut Expr, root: Option<usize>, copied: &mut usize) -> bool {
        if let Some(root) = root {
            if let Some(property) = self.referenced(expr, root) {
                *copied = copied.saturating_add(property.query_bytes);
                if *copied > MAX_SUBSTITUTED_BYTES {
                    return false;
                }
                *expr = rebased(&property.expr, root);
                return true;
            }
        }
        match expr {
            Expr::Subquery(_, select) => self.resolve_select(select, root, false, copied),
            _ => children_mut(expr)
                .into_iter()
                .fold(false, |changed, child| {
                    self.resolve_expr(child, root, copied) | changed
                }),
        }
    }
}

/// Whether the first name FROM binds is the item itself (`FROM c`,
/// `FROM root r`), not a path of it or a derived query's results.
fn item_is_first_name(from: &From) -> bool {
    from.source.is_none() && from.derived.is_none()
}

/// `expr` (whose item is `Var(0)`) reading the item from `Var(root)`.
fn rebased(expr: &Expr, root: usize) -> Expr {
    let mut expr = expr.clone();
    if root != 0 {
        fn visit(e: &mut Expr, root: usize) {
            if let Expr::Var(i) = e {
                *i = root;
            }
            for child in children_mut(e) {
                visit(child, root);
            }
        }
        visit(&mut expr, root);
    }
    expr
}

/// The expressions directly inside `expr`, mutably (as [`Expr::children`]).
fn children_mut(expr: &mut Expr) -> Vec<&mut Expr> {
    match expr {
        Expr::Literal(_) | Expr::Var(_) | Expr::Subquery(..) => Vec::new(),
        Expr::Property(base, _) | Expr::Unary(_, base) => vec![base],
        Expr::Index(a, b) | Expr::Binary(_, a, b) => vec![a, b],
        Expr::Between(a, b, c) | Expr::Conditional(a, b, c) => vec![a, b, c],
        Expr::In(a, list, _) => std::iter::once(a.as_mut()).chain(list).collect(),
        Expr::Chain(first, rest) => std::iter::once(first.as_mut())
            .chain(rest.iter_mut().map(|(_, e)| e))
            .collect(),
        Expr::Like(x, pattern, escape, _) => {
            let mut children = vec![x.as_mut(), pattern.as_mut()];
            children.extend(escape.as_deref_mut());
            children
        }
        Expr::Call(_, args) | Expr::Array(args) => args.iter_mut().collect(),
        Expr::Object(fields) => fields.iter_mut().map(|(_, e)| e).collect(),
    }
}

/// A body of the wrong shape, in the service's words for one (the Python
/// SDK's tests look for them).
fn shape_error(what: &str) -> ApiError {
    ApiError::bad_request(format!(
        "One of the specified inputs is invalid: {what}, e.g. [{{\"name\": \"cp_lowerName\", \"query\": \"SELECT VALUE LOWER(c.name) FROM c\"}}]."
    ))
}

fn name_and_query(entry: &Value) -> ApiResult<(String, String)> {
    let fields: &Map<String, Value> = entry.as_object().ok_or_else(|| {
        shape_error("each computed property is an object with a name and a query")
    })?;
    let text = |field: &str| {
        fields.get(field).and_then(Value::as_str).ok_or_else(|| {
            shape_error(&format!(
                "the computed property {entry} needs a string '{field}'"
            ))
        })
    };
    Ok((text("name")?.to_owned(), text("query")?.to_owned()))
}

fn check_name(name: &str) -> ApiResult<()> {
    if name.is_empty() {
        return Err(ApiError::bad_request(
            "A computed property's name cannot be empty: it is the top-level property name queries read, e.g. 'cp_lowerName'.",
        ));
    }
    if RESERVED_NAMES.contains(&name) {
        return Err(ApiError::bad_request(format!(
            "The computed property name '{name}' is reserved: system property names ({}) cannot be computed property names.",
            RESERVED_NAMES.join(", ")
        )));
    }
    Ok(())
}

/// The expression of a computed property's query, checked against the
/// documented limitations; `names` are the container's computed properties,
/// which the query may not read.
fn parse_query(name: &str, query: &str, names: &[&str]) -> ApiResult<Expr> {
    let invalid = |rule: &str| {
        ApiError::bad_request(format!(
            "The query of computed property '{name}' is invalid: {rule}. A computed property's query is \
             'SELECT VALUE <expression> FROM c' over the item alone, e.g. 'SELECT VALUE LOWER(c.name) FROM c'. Query: {query}"
        ))
    };
    let select = parser::parse(query, &Default::default()).map_err(|e| {
        ApiError::bad_request(format!(
            "The query of computed property '{name}' is not a valid query: {}",
            e.message
        ))
    })?;
    let Some(from) = &select.from else {
        return Err(invalid("it has no FROM clause; name the item, e.g. FROM c"));
    };
    if from.derived.is_some() || from.source.is_some() {
        return Err(invalid(
            "its FROM clause must name the root item (FROM c, FROM root c), not a path or a subquery",
        ));
    }
    for (present, clause) in [
        (!from.joins.is_empty(), "JOIN"),
        (select.filter.is_some(), "WHERE"),
        (!select.group_by.is_empty(), "GROUP BY"),
        (!select.order_by.is_empty(), "ORDER BY"),
        (select.top.is_some(), "TOP"),
        (select.distinct, "DISTINCT"),
        (
            select.offset.is_some() || select.limit.is_some(),
            "OFFSET LIMIT",
        ),
    ] {
        if present {
            return Err(invalid(&format!("it cannot use {clause}")));
        }
    }
    let super::Projection::Value(expr) = select.projection else {
        return Err(invalid(
            "its projection must be a VALUE clause, SELECT VALUE <expression>",
        ));
    };
    check_expression(&expr, names).map_err(|rule| invalid(&rule))?;
    eval::check_functions(&expr, false).map_err(|e| invalid(&e.message))?;
    Ok(expr)
}

/// What a computed property's expression cannot hold, as the rule broken.
fn check_expression(expr: &Expr, names: &[&str]) -> Result<(), String> {
    let mut problem = None;
    let mut visit = |e: &Expr| {
        let found = match e {
            Expr::Subquery(..) => Some("it cannot use a subquery (scalar, EXISTS or ARRAY)".into()),
            Expr::Call(f, _) if Aggregate::from_name(f).is_some() => {
                Some(format!("it cannot use the aggregate function {f}"))
            }
            Expr::Call(f, _) if f.starts_with("ST_") => {
                Some(format!("it cannot use the spatial function {f}"))
            }
            Expr::Call(f, _) if nondeterministic(f) => Some(format!(
                "it cannot use the nondeterministic function {f}: its value must follow from the item alone"
            )),
            Expr::Property(base, read) if **base == Expr::Var(0) && names.contains(&read.as_str()) => {
                Some(format!(
                    "it reads the computed property '{read}': computed properties cannot rely on other computed properties"
                ))
            }
            _ => None,
        };
        if problem.is_none() {
            problem = found;
        }
    };
    walk_all(expr, &mut visit);
    problem.map_or(Ok(()), Err)
}

/// Calls `f` on `expr` and every expression inside it (not inside subqueries,
/// which are refused anyway).
fn walk_all(expr: &Expr, f: &mut impl FnMut(&Expr)) {
    f(expr);
    if let Expr::Index(base, index) = expr {
        // `c["name"]` reads a property as `c.name` does.
        if let (Expr::Var(0), Expr::Literal(Value::String(name))) = (base.as_ref(), index.as_ref())
        {
            f(&Expr::Property(base.clone(), name.clone()));
        }
    }
    for child in expr.children() {
        walk_all(child, f);
    }
}

impl PreparedQuery {
    /// This query with the container's computed properties resolved, or
    /// `None` when it reads none (then it runs as prepared, at no cost).
    /// Ordering by a computed property needs it indexed, as in the service:
    /// computed properties are not indexed by default, nor by wildcard paths.
    pub fn resolve_computed(
        &self,
        computed: &ComputedProperties,
        indexing_policy: &Value,
    ) -> ApiResult<Option<PreparedQuery>> {
        if computed.is_empty() {
            return Ok(None);
        }
        self.check_computed_order_by(computed, indexing_policy)?;
        let mut select = self.select.clone();
        let mut copied = 0;
        let changed = computed.resolve_select(&mut select, None, true, &mut copied);
        if copied > MAX_SUBSTITUTED_BYTES {
            // Each reference copies the property's expression into the query.
            return Err(ApiError::bad_request(format!(
                "The query's computed property references copy more than {MAX_SUBSTITUTED_BYTES} bytes \
                 of their definitions' queries: reference computed properties fewer times."
            )));
        }
        if !changed {
            return Ok(None);
        }
        let mut resolved = PreparedQuery::from_select(select);
        resolved.now_millis = self.now_millis;
        Ok(Some(resolved))
    }

    /// Refuses a single ORDER BY key on a computed property that no
    /// included path indexes (several keys need a composite index, which
    /// `check_order_by_index` checks).
    fn check_computed_order_by(
        &self,
        computed: &ComputedProperties,
        indexing_policy: &Value,
    ) -> ApiResult<()> {
        let [key] = self.select.order_by.as_slice() else {
            return Ok(());
        };
        let Some(from) = self.select.from.as_ref().filter(|f| item_is_first_name(f)) else {
            return Ok(());
        };
        let Some(path) = DocumentPath::of(&key.expr, Some(from)).map(|p| p.to_string()) else {
            return Ok(());
        };
        let name = path[1..].split('/').next().unwrap_or_default();
        if computed.property(name).is_none() || is_indexed(&path, indexing_policy) {
            return Ok(());
        }
        Err(ApiError::bad_request(format!(
            "The index path corresponding to the specified order-by item is excluded. \
             The computed property '{name}' must be indexed to be ordered by: add \"/{name}/?\" \
             to the container's includedPaths (computed properties are not covered by \"/*\")."
        )))
    }
}

/// Whether an included path of the policy, other than the root wildcard
/// `/*`, indexes `path` (`/name` or `/name/more`).
fn is_indexed(path: &str, policy: &Value) -> bool {
    let included = policy["includedPaths"].as_array().into_iter().flatten();
    included.filter_map(|p| p["path"].as_str()).any(|included| {
        if included == format!("{path}/?") {
            return true;
        }
        match included.strip_suffix("/*") {
            Some(prefix) if !prefix.is_empty() => {
                path == prefix || path.starts_with(&format!("{prefix}/"))
            }
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests;
