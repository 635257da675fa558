//! The executor: what one SELECT makes of the rows its FROM gives, for a
//! query over a container's items and for a subquery over the values of
//! one outer row alike.
//!
//! Rows are filtered, then each kept row leaves only what the result needs:
//! its sort keys and projection, or its contribution to its group's
//! aggregates (folded at once, so an aggregate holds one value, not one per
//! row). ORDER BY with TOP or LIMIT keeps only the rows that can still be
//! among the first; DISTINCT remembers each result by a canonical key.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::ast::{Aggregate, Expr, Projection, Select, SortKind};
use super::{eval, number, order, rows, search, RunContext};

/// Whether `select` computes aggregates without GROUP BY: one result over
/// all rows, even none.
pub(super) fn aggregates(select: &Select) -> bool {
    select.group_by.is_empty() && projected(select).any(Expr::contains_aggregate)
}

/// One SELECT, ready to run over rows in one run.
pub(super) struct Executor<'q> {
    pub select: &'q Select,
    pub cx: &'q RunContext,
    /// Aggregates without GROUP BY: one result over all rows, even none.
    pub aggregate: bool,
    /// A subquery: evaluated within an outer row, whose budget it shares.
    nested: bool,
    /// The names bound outside this SELECT (a subquery's outer rows).
    scope: usize,
}

impl<'q> Executor<'q> {
    pub fn new(cx: &'q RunContext, select: &'q Select) -> Self {
        Executor {
            select,
            cx,
            aggregate: aggregates(select),
            nested: false,
            scope: 0,
        }
    }

    /// Each row starts a fresh copy budget, except within a subquery,
    /// whose copies count against the outer row they are made for.
    fn next_row(&self) {
        if !self.nested {
            self.cx.budget.next_row();
        }
    }

    pub fn matches(&self, row: &[&Value]) -> bool {
        self.next_row();
        self.select
            .filter
            .as_ref()
            .is_none_or(|f| eval::is_true(self.cx, f, row))
    }

    pub fn project(&self, row: &[&Value]) -> Option<Value> {
        self.next_row();
        let result = match &self.select.projection {
            // One name only (the parser refuses `*` with JOINs): this
            // SELECT's first, after those of the rows around it.
            Projection::Star => row.get(self.scope).map(|v| (*v).clone()),
            Projection::Value(e) => eval::eval(self.cx, e, row),
            Projection::Fields(fields) => Some(Value::Object(
                fields
                    .iter()
                    .filter_map(|(e, name)| Some((name.clone(), eval::eval(self.cx, e, row)?)))
                    .collect::<Map<_, _>>(),
            )),
        };
        self.writable(result)
    }

    /// A result of the query, checked to be JSON: one holding NaN or an
    /// infinity fails the query (a subquery's may, until it is returned).
    fn writable(&self, result: Option<Value>) -> Option<Value> {
        let computed = !matches!(self.select.projection, Projection::Star);
        if computed && !self.nested && result.as_ref().is_some_and(number::holds_non_finite) {
            self.cx.budget.found_non_finite();
        }
        result
    }

    fn sort_keys(&self, row: &[&Value]) -> Vec<Option<Value>> {
        self.next_row();
        self.select
            .order_by
            .iter()
            .map(|k| match k.kind {
                SortKind::Value => eval::eval(self.cx, &k.expr, row),
                SortKind::Similarity | SortKind::Rank => {
                    search::rank::sort_value(self.cx, &k.expr, &|e| eval::eval(self.cx, e, row))
                }
            })
            .collect()
    }

    /// The projection of one aggregated row (everything, or a group whose
    /// first row is `row`), its aggregates replaced by `results` in
    /// [`eval::aggregate_calls`]' order.
    fn project_aggregated(
        &self,
        row: &[&Value],
        mut results: impl Iterator<Item = Option<Value>>,
    ) -> Option<Value> {
        let mut value =
            |e: &Expr| eval::eval(self.cx, &eval::substitute_aggregates(e, &mut results), row);
        let result = match &self.select.projection {
            Projection::Value(e) => value(e),
            Projection::Fields(fields) => Some(Value::Object(
                fields
                    .iter()
                    .map(|(e, name)| (name.clone(), value(e)))
                    .filter_map(|(name, v)| Some((name, v?)))
                    .collect::<Map<_, _>>(),
            )),
            Projection::Star => None,
        };
        self.writable(result)
    }

    /// Every result, in order, of the rows `feed` gives to the sink.
    pub fn results(&self, feed: impl FnOnce(&mut Sink<'_, 'q>)) -> Vec<Value> {
        let calls: Vec<(Aggregate, Expr)> = if self.aggregate || !self.select.group_by.is_empty() {
            projected(self.select)
                .flat_map(eval::aggregate_calls)
                .collect()
        } else {
            Vec::new()
        };
        let mut sink = Sink {
            executor: self,
            calls,
            kept: Kept::new(self.select),
            groups: Vec::new(),
            group_of: HashMap::new(),
        };
        feed(&mut sink);
        sink.finish()
    }
}

/// The expressions of the projection.
fn projected(select: &Select) -> impl Iterator<Item = &Expr> {
    select.projection.expressions().into_iter()
}

/// Every result of a query over the container's items `docs`.
pub(super) fn run_select(
    cx: &RunContext,
    select: &Select,
    docs: impl Iterator<Item = Value>,
) -> Vec<Value> {
    let executor = Executor::new(cx, select);
    let Some(from) = &select.from else {
        return executor.results(|sink| sink.row(&[]));
    };
    if let Some(inner) = &from.derived {
        // `FROM (SELECT ...) x`: x ranges over the inner query's results.
        let inner_results = run_select(cx, inner, docs);
        return executor.results(|sink| {
            for result in &inner_results {
                rows::for_each_row(cx, from, result, &mut |row| sink.row(row));
            }
        });
    }
    executor.results(|sink| {
        if from.is_plain() {
            docs.for_each(|item| sink.item(item));
        } else {
            for item in docs {
                rows::for_each_row(cx, from, &item, &mut |row| sink.row(row));
            }
        }
    })
}

/// Runs a subquery within the row `outer` of the query around it.
pub(super) fn subquery(cx: &RunContext, select: &Select, outer: &[&Value]) -> Vec<Value> {
    let executor = Executor {
        nested: true,
        scope: outer.len(),
        ..Executor::new(cx, select)
    };
    executor.results(|sink| match &select.from {
        None => sink.row(outer),
        Some(from) => rows::for_each_nested_row(cx, from, outer, &mut |row| sink.row(row)),
    })
}

/// Where the rows of one SELECT go.
pub(super) struct Sink<'e, 'q> {
    executor: &'e Executor<'q>,
    /// The aggregate calls of the projection, each with its argument.
    calls: Vec<(Aggregate, Expr)>,
    kept: Kept,
    /// Each group's first row (owned) and its aggregates so far. Without
    /// GROUP BY, an aggregate query is one group: every row has the empty key.
    groups: Vec<(Vec<Value>, Vec<Accumulator>)>,
    group_of: HashMap<String, usize>,
}

impl Sink<'_, '_> {
    fn grouping(&self) -> bool {
        self.executor.aggregate || !self.executor.select.group_by.is_empty()
    }

    /// A row of names bound by FROM (and the rows around a subquery).
    pub fn row(&mut self, row: &[&Value]) {
        let ex = self.executor;
        if !ex.matches(row) {
            return;
        }
        if self.grouping() {
            ex.next_row();
            let key = group_key(ex.select.group_by.iter().map(|e| eval::eval(ex.cx, e, row)));
            let calls = &self.calls;
            let groups = &mut self.groups;
            let g = *self.group_of.entry(key).or_insert_with(|| {
                let first: Vec<Value> = row.iter().map(|v| (*v).clone()).collect();
                let accumulators = calls.iter().map(|(a, _)| Accumulator::new(*a)).collect();
                groups.push((first, accumulators));
                groups.len() - 1
            });
            for ((_, arg), accumulator) in self.calls.iter().zip(self.groups[g].1.iter_mut()) {
                ex.next_row();
                if let Some(value) = eval::eval(ex.cx, arg, row) {
                    accumulator.add(value);
                }
            }
            return;
        }
        let sort = ex.sort_keys(row);
        if let Some(result) = ex.project(row) {
            self.kept.push(sort, result);
        }
    }

    /// An item that is its own row (`FROM c`), owned: `SELECT *` moves it
    /// into the results instead of copying it.
    pub fn item(&mut self, item: Value) {
        let ex = self.executor;
        if ex.select.projection != Projection::Star || self.grouping() {
            return self.row(&[&item]);
        }
        if ex.matches(&[&item]) {
            let sort = ex.sort_keys(&[&item]);
            self.kept.push(sort, item);
        }
    }

    fn finish(mut self) -> Vec<Value> {
        let ex = self.executor;
        let groups = std::mem::take(&mut self.groups);
        if ex.aggregate {
            // One result even over no rows (COUNT is then 0); what is not
            // aggregated reads no row, as without GROUP BY nothing is grouped.
            let accumulators = groups.into_iter().next().map_or_else(
                || {
                    self.calls
                        .iter()
                        .map(|(a, _)| Accumulator::new(*a))
                        .collect()
                },
                |(_, accumulators)| accumulators,
            );
            let results = accumulators.into_iter().map(Accumulator::result);
            return ex.project_aggregated(&[], results).into_iter().collect();
        }
        for (first, accumulators) in groups {
            let row: Vec<&Value> = first.iter().collect();
            let sort = ex.sort_keys(&row);
            let results = accumulators.into_iter().map(Accumulator::result);
            if let Some(result) = ex.project_aggregated(&row, results) {
                self.kept.push(sort, result);
            }
        }
        self.kept.finish(ex.select)
    }
}

/// The results kept so far, with their sort keys.
struct Kept {
    rows: Vec<(Vec<Option<Value>>, Value)>,
    descending: Vec<bool>,
    /// With ORDER BY and a bound on the results (TOP, OFFSET + LIMIT) and no
    /// DISTINCT, only that many rows can be returned: the rest are dropped
    /// whenever twice as many are held.
    bound: Option<usize>,
}

impl Kept {
    fn new(select: &Select) -> Self {
        let bound = select
            .top
            .into_iter()
            .chain(
                select
                    .limit
                    .map(|limit| limit.saturating_add(select.offset.unwrap_or(0))),
            )
            .min()
            // Fused ranks (RRF) exist only over every row.
            .filter(|_| {
                !select.order_by.is_empty() && !select.distinct && fusion(select).is_none()
            });
        Kept {
            rows: Vec::new(),
            descending: select.order_by.iter().map(|k| k.descending).collect(),
            bound,
        }
    }

    fn push(&mut self, sort: Vec<Option<Value>>, result: Value) {
        self.rows.push((sort, result));
        if let Some(bound) = self.bound {
            if self.rows.len() >= bound.saturating_mul(2).max(1024) {
                self.sort();
                self.rows.truncate(bound);
            }
        }
    }

    /// Sorts by the keys; stable, so equal keys keep their arrival order.
    fn sort(&mut self) {
        if self.descending.is_empty() {
            return;
        }
        let descending = &self.descending;
        self.rows.sort_by(|(a, _), (b, _)| {
            descending
                .iter()
                .zip(a.iter().zip(b.iter()))
                .map(|(desc, (x, y))| {
                    let o = order::sort_order(x, y);
                    if *desc {
                        o.reverse()
                    } else {
                        o
                    }
                })
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        });
    }

    fn finish(mut self, select: &Select) -> Vec<Value> {
        if let Some(weights) = fusion(select) {
            let mut keys: Vec<Option<Value>> = self
                .rows
                .iter_mut()
                .map(|(sort, _)| sort.first_mut().and_then(Option::take))
                .collect();
            search::rank::fuse(&mut keys, weights.as_deref());
            for ((sort, _), key) in self.rows.iter_mut().zip(keys) {
                sort[0] = key;
            }
        }
        self.sort();
        let mut results: Vec<Value> = self.rows.into_iter().map(|(_, v)| v).collect();
        if select.distinct {
            let mut seen = HashSet::new();
            results.retain(|v| seen.insert(canonical(v)));
        }
        let skip = select.offset.unwrap_or(0);
        let take = select
            .limit
            .unwrap_or(usize::MAX)
            .min(select.top.unwrap_or(usize::MAX));
        results.into_iter().skip(skip).take(take).collect()
    }
}

/// For `ORDER BY RANK RRF(...)`: its weights, if given.
fn fusion(select: &Select) -> Option<Option<Vec<f64>>> {
    let key = select
        .order_by
        .first()
        .filter(|k| k.kind == SortKind::Rank)?;
    search::rank::rrf_components(&key.expr).map(|(_, weights)| weights)
}

/// One aggregate, folded one value at a time.
enum Accumulator {
    Count(u64),
    /// The rows whose condition was true.
    CountIf(u64),
    /// The sum so far; `None` once a value was not a number.
    Sum(Option<f64>),
    Avg {
        sum: Option<f64>,
        count: u64,
    },
    /// The least (or greatest) value so far; `Err` once a value could not
    /// be compared (an array or an object).
    Extreme {
        wanted: Ordering,
        best: Result<Option<Value>, ()>,
    },
    /// MAKELIST's values in the order met; MAKESET's without repeats (equal
    /// as values: `1` and `1.0` are one).
    List {
        values: Vec<Value>,
        distinct: Option<HashSet<String>>,
    },
}

impl Accumulator {
    fn new(aggregate: Aggregate) -> Self {
        match aggregate {
            Aggregate::Count => Accumulator::Count(0),
            Aggregate::CountIf => Accumulator::CountIf(0),
            Aggregate::Sum => Accumulator::Sum(Some(0.0)),
            Aggregate::Avg => Accumulator::Avg {
                sum: Some(0.0),
                count: 0,
            },
            Aggregate::Min => Accumulator::Extreme {
                wanted: Ordering::Less,
                best: Ok(None),
            },
            Aggregate::Max => Accumulator::Extreme {
                wanted: Ordering::Greater,
                best: Ok(None),
            },
            Aggregate::MakeList => Accumulator::List {
                values: Vec::new(),
                distinct: None,
            },
            Aggregate::MakeSet => Accumulator::List {
                values: Vec::new(),
                distinct: Some(HashSet::new()),
            },
        }
    }

    /// Adds a defined value (undefined values are ignored by every aggregate).
    fn add(&mut self, value: Value) {
        match self {
            Accumulator::Count(n) => *n += 1,
            Accumulator::CountIf(n) => *n += u64::from(value == Value::Bool(true)),
            Accumulator::Sum(sum) => *sum = sum.and_then(|s| Some(s + value.as_f64()?)),
            Accumulator::Avg { sum, count } => {
                *sum = sum.and_then(|s| Some(s + value.as_f64()?));
                *count += 1;
            }
            Accumulator::Extreme { wanted, best } => {
                if value.is_array() || value.is_object() {
                    *best = Err(());
                } else if let Ok(best) = best {
                    let better = best.as_ref().is_none_or(|b| {
                        order::sort_order(&Some(value.clone()), &Some(b.clone())) == *wanted
                    });
                    if better {
                        *best = Some(value);
                    }
                }
            }
            Accumulator::List { values, distinct } => {
                if distinct
                    .as_mut()
                    .is_none_or(|seen| seen.insert(canonical(&value)))
                {
                    values.push(value);
                }
            }
        }
    }

    fn result(self) -> Option<Value> {
        match self {
            Accumulator::Count(n) | Accumulator::CountIf(n) => Some(Value::from(n)),
            Accumulator::Sum(sum) => sum.filter(|s| s.is_finite()).map(eval::number),
            Accumulator::Avg { sum, count } => (count > 0)
                .then_some(sum?)
                .map(|s| s / count as f64)
                .filter(|a| a.is_finite())
                .map(eval::number),
            Accumulator::Extreme { best, .. } => best.ok().flatten(),
            Accumulator::List { values, .. } => Some(Value::Array(values)),
        }
    }
}

/// A group's key: its values as text, numbers canonical (`1` and `1.0`
/// group together) and undefined apart from every value.
fn group_key(values: impl Iterator<Item = Option<Value>>) -> String {
    let mut key = String::new();
    for value in values {
        match value {
            None => key.push_str("\u{0}undefined"),
            Some(value) => key.push_str(&canonical(&value)),
        }
        key.push('\u{1}');
    }
    key
}

/// A value as text that is equal for equal values: numbers in one form
/// (`1` and `1.0` are one value), object properties sorted.
fn canonical(value: &Value) -> String {
    match value {
        Value::Number(n) => n
            .as_f64()
            .map_or_else(|| n.to_string(), |f| eval::number(f).to_string()),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        Value::Object(map) => {
            let mut fields: Vec<(&String, String)> =
                map.iter().map(|(k, v)| (k, canonical(v))).collect();
            fields.sort_unstable_by(|a, b| a.0.cmp(b.0));
            let fields: Vec<String> = fields
                .into_iter()
                .map(|(k, v)| format!("{}:{v}", Value::from(k.as_str())))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_keys_equal_exactly_the_equal_values() {
        assert_eq!(canonical(&json!(1)), canonical(&json!(1.0)));
        assert_eq!(
            canonical(&json!({"a": 1, "b": [2.0]})),
            canonical(&json!({"b": [2], "a": 1.0}))
        );
        assert_ne!(canonical(&json!("1")), canonical(&json!(1)));
        assert_ne!(canonical(&json!([1, 2])), canonical(&json!([2, 1])));
        assert_ne!(
            canonical(&json!({"a": "b,c"})),
            canonical(&json!({"a": "b", "c": 1}))
        );
    }

    #[test]
    fn accumulators_follow_the_service() {
        let fold = |aggregate, values: Vec<Value>| {
            let mut a = Accumulator::new(aggregate);
            values.into_iter().for_each(|v| a.add(v));
            a.result()
        };
        assert_eq!(fold(Aggregate::Count, vec![]), Some(json!(0)));
        assert_eq!(fold(Aggregate::Sum, vec![]), Some(json!(0)));
        assert_eq!(fold(Aggregate::Avg, vec![]), None);
        assert_eq!(fold(Aggregate::Min, vec![]), None);
        assert_eq!(
            fold(Aggregate::Sum, vec![json!(1), json!(2.5)]),
            Some(json!(3.5))
        );
        assert_eq!(
            fold(Aggregate::Sum, vec![json!(1), json!("2")]),
            None,
            "mixed types"
        );
        assert_eq!(
            fold(Aggregate::Avg, vec![json!(1), json!(2)]),
            Some(json!(1.5))
        );
        // MIN and MAX compare across types in the documented order:
        // null < boolean < number < string.
        let mixed = vec![json!("a"), json!(3), json!(null), json!(true)];
        assert_eq!(fold(Aggregate::Min, mixed.clone()), Some(json!(null)));
        assert_eq!(fold(Aggregate::Max, mixed), Some(json!("a")));
        assert_eq!(fold(Aggregate::Max, vec![json!(1), json!([2])]), None);
        assert_eq!(fold(Aggregate::Sum, vec![json!(1e308), json!(1e308)]), None);
        // MAKELIST keeps every value in order, MAKESET each value once.
        let values = vec![
            json!(1),
            json!("a"),
            json!(1.0),
            json!({"b": 2}),
            json!("a"),
        ];
        assert_eq!(
            fold(Aggregate::MakeList, values.clone()),
            Some(json!([1, "a", 1.0, {"b": 2}, "a"]))
        );
        assert_eq!(
            fold(Aggregate::MakeSet, values),
            Some(json!([1, "a", {"b": 2}]))
        );
        assert_eq!(fold(Aggregate::MakeList, vec![]), Some(json!([])));
    }
}
