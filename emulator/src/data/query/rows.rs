//! The rows of a query: what FROM and its JOINs make of each item, or,
//! in a subquery, of the row around it.

use serde_json::Value;

use super::ast::From;
use super::{eval, RunContext};

/// Calls `f` with each row an item gives: `FROM c` one, the item;
/// `FROM x IN c.a` one per element; `FROM c.a x` one, the value at the
/// path; each JOIN multiplies them by its array's elements. Rows are
/// borrowed and made one at a time, so that an item is never copied per row.
pub(super) fn for_each_row(
    cx: &RunContext,
    from: &From,
    item: &Value,
    f: &mut dyn FnMut(&[&Value]),
) {
    cx.budget.next_item();
    match &from.source {
        None => join(cx, from, 0, &[item], f),
        Some(path) => bind_source(cx, from, path, &[item], &[], f),
    }
}

/// The rows of a subquery's FROM within the row `outer` around it: each
/// is `outer` followed by the names this FROM binds.
pub(super) fn for_each_nested_row(
    cx: &RunContext,
    from: &From,
    outer: &[&Value],
    f: &mut dyn FnMut(&[&Value]),
) {
    match &from.source {
        Some(source) => bind_source(cx, from, source, outer, outer, f),
        None => join(cx, from, 0, outer, f),
    }
}

/// Binds the first name to what `source` (evaluated over `scope`) gives,
/// after `prefix`, then makes the JOINs' rows.
fn bind_source(
    cx: &RunContext,
    from: &From,
    source: &super::ast::Expr,
    scope: &[&Value],
    prefix: &[&Value],
    f: &mut dyn FnMut(&[&Value]),
) {
    let bind = |value: &Value, f: &mut dyn FnMut(&[&Value])| {
        let mut row: Vec<&Value> = prefix.to_vec();
        row.push(value);
        join(cx, from, 0, &row, f);
    };
    match eval::eval(cx, source, scope) {
        Some(Value::Array(elements)) if from.source_in => {
            for element in &elements {
                if !cx.budget.charge_row() {
                    return;
                }
                bind(element, f);
            }
        }
        Some(value) if !from.source_in => bind(&value, f),
        _ => {}
    }
}

fn join(cx: &RunContext, from: &From, k: usize, row: &[&Value], f: &mut dyn FnMut(&[&Value])) {
    let Some(source) = from.joins.get(k) else {
        return f(row);
    };
    // Not an array (or undefined): this row gives nothing.
    let Some(Value::Array(elements)) = eval::eval(cx, source, row) else {
        return;
    };
    for element in &elements {
        if !cx.budget.charge_row() {
            return;
        }
        let mut next: Vec<&Value> = row.to_vec();
        next.push(element);
        join(cx, from, k + 1, &next, f);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::run;
    use super::super::{PreparedQuery, QueryBody};

    fn refused(q: &str) -> String {
        match PreparedQuery::prepare(&QueryBody {
            query: q.into(),
            parameters: vec![],
        }) {
            Err(e) => e.message,
            Ok(query) => {
                query
                    .run_values([json!({"a": (0..1000).collect::<Vec<_>>()})].into_iter())
                    .unwrap_err()
                    .message
            }
        }
    }

    /// Issue 10: JOINs over arrays, `FROM x IN path` and `FROM path`.
    #[test]
    fn joins_and_from_forms() {
        let docs = [
            json!({"id": "a", "tags": ["x", "y"], "o": {"k": 1}, "subs": [{"n": [1, 2]}, {"n": [3]}]}),
            json!({"id": "b", "tags": ["z"], "o": {"k": 2}}),
            json!({"id": "c", "tags": "not an array"}),
        ];
        assert_eq!(
            run("SELECT VALUE t FROM c JOIN t IN c.tags", &docs),
            vec![json!("x"), json!("y"), json!("z")]
        );
        assert_eq!(
            run(
                "SELECT c.id, t AS tag FROM c JOIN t IN c.tags WHERE t != 'y'",
                &docs
            ),
            vec![
                json!({"id": "a", "tag": "x"}),
                json!({"id": "b", "tag": "z"})
            ]
        );
        assert_eq!(
            run(
                "SELECT c.id, t FROM c JOIN t IN c.tags WHERE c.id = 'b'",
                &docs
            ),
            vec![json!({"id": "b", "t": "z"})],
            "an alias projected alone is named after itself"
        );
        assert_eq!(
            run(
                "SELECT VALUE [t, n] FROM c JOIN s IN c.subs JOIN n IN s.n JOIN t IN c.tags",
                &docs
            )
            .len(),
            6,
            "JOINs multiply, and may read the names before them"
        );
        assert_eq!(
            run(
                "SELECT VALUE n FROM c JOIN s IN c.subs JOIN n IN s.n ORDER BY n DESC",
                &docs
            ),
            vec![json!(3), json!(2), json!(1)]
        );
        assert_eq!(
            run("SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags", &docs),
            vec![json!(3)]
        );
        assert_eq!(
            run("SELECT * FROM x IN c.tags", &docs),
            vec![json!("x"), json!("y"), json!("z")]
        );
        assert_eq!(
            run("SELECT VALUE x FROM x IN c.tags WHERE x > 'x'", &docs),
            vec![json!("y"), json!("z")]
        );
        assert_eq!(
            run("SELECT * FROM c.o", &docs),
            vec![json!({"k": 1}), json!({"k": 2})]
        );
        assert_eq!(
            run("SELECT VALUE o.k FROM root.o o WHERE o.k > 1", &docs),
            vec![json!(2)]
        );
        assert_eq!(
            run("SELECT VALUE c.k FROM c.o c", &docs),
            vec![json!(1), json!(2)]
        );
    }

    /// A count over JOIN rows reads the items even though `COUNT(1)`
    /// itself reads nothing (found by the Python SDK's single-partition test).
    #[test]
    fn counting_join_rows_reads_the_items() {
        let bodies: Vec<bytes::Bytes> = [
            json!({"id": "a", "tags": [1, 2]}),
            json!({"id": "b", "tags": [3]}),
        ]
        .iter()
        .map(|d| bytes::Bytes::from(d.to_string()))
        .collect();
        let query = PreparedQuery::prepare(&QueryBody {
            query: "SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags".into(),
            parameters: vec![],
        })
        .unwrap();
        let limit = super::super::PageLimit {
            items: 100,
            bytes: usize::MAX,
        };
        let key = crate::protocol::item_key::ItemKey::new("[]", "id");
        let page = query
            .run_page(
                Default::default(),
                bodies.iter().map(|b| (1, &key, b)),
                None,
                None,
                limit,
            )
            .unwrap()
            .0;
        assert_eq!(page.documents, vec![bytes::Bytes::from_static(b"3")]);
    }

    #[test]
    fn what_joins_cannot_do_is_refused() {
        assert!(refused("SELECT * FROM c JOIN t IN c.tags").contains("single input set"));
        let eleven: String = (0..11).map(|i| format!(" JOIN j{i} IN c.a")).collect();
        assert!(refused(&format!("SELECT VALUE 1 FROM c{eleven}")).contains("more than 10 JOINs"));
        assert!(refused("SELECT VALUE 1 FROM c JOIN c IN c.a").contains("bound twice"));
        assert!(
            refused("SELECT VALUE 1 FROM c JOIN x IN c.a JOIN y IN c.a JOIN z IN c.a")
                .contains("1000000 rows")
        );
    }
}
