//! The parser's tests: the shapes the SDKs send, refusals, precedence.

use super::*;
use crate::data::query::ast::BinaryOp;

fn p(q: &str) -> Select {
    parse(q, &HashMap::from([("@id".to_string(), Value::from("a"))])).unwrap()
}

#[test]
fn parses_the_shapes_the_sdks_send() {
    assert_eq!(p("SELECT * FROM c").projection, Projection::Star);
    assert!(
        matches!(p("SELECT VALUE COUNT(1) FROM c").projection, Projection::Value(Expr::Call(ref n, _)) if n == "COUNT")
    );
    let s = p("SELECT * FROM root r WHERE r.id = @id");
    assert_eq!(
        s.filter,
        Some(Expr::Binary(
            BinaryOp::Eq,
            Box::new(Expr::Property(Box::new(Expr::Var(0)), "id".into())),
            Box::new(Expr::Literal(Value::from("a")))
        ))
    );
    let s = p("select top 5 c.id, c['n'] as n from c order by c.n desc offset 1 limit 2");
    assert_eq!(s.top, Some(5));
    assert_eq!(s.order_by.len(), 1);
    assert!(s.order_by[0].descending);
    assert_eq!((s.offset, s.limit), (Some(1), Some(2)));
}

#[test]
fn refuses_bad_queries_with_a_clear_message() {
    let none = HashMap::new();
    for bad in [
        "SELECT",
        "SELECT * FROM c WHERE",
        "SELECT * FROM c WHERE x.id = 1",
        "SELECT * FROM c WHERE c.id = @missing",
        "SELECT * FROM c WHERE c.id = 'open",
    ] {
        let err = parse(bad, &none).unwrap_err();
        assert_eq!(err.status.as_u16(), 400, "{bad}");
    }
}

mod precedence {
    use super::*;
    use crate::data::query::eval::constant;

    fn value(q: &str) -> Option<Value> {
        let s = parse(&format!("SELECT VALUE {q}"), &HashMap::new()).unwrap();
        match s.projection {
            Projection::Value(e) => constant(&e),
            _ => unreachable!(),
        }
    }

    /// Left associativity, precedence and the flat runs give the usual results.
    #[test]
    fn operators_associate_and_bind_as_in_the_dialect() {
        assert_eq!(value("8 / 4 / 2"), Some(Value::from(1)));
        assert_eq!(value("10 - 4 - 3"), Some(Value::from(3)));
        assert_eq!(value("(10 - 4) - 3"), Some(Value::from(3)));
        assert_eq!(value("10 - (4 - 3)"), Some(Value::from(9)));
        assert_eq!(value("2 + 3 * 4 - 1"), Some(Value::from(13)));
        assert_eq!(value("17 % 5 * 2"), Some(Value::from(4)));
        assert_eq!(value("1 + 2 = 3 AND NOT 2 > 3"), Some(Value::Bool(true)));
        assert_eq!(value("NOT 1 = 2 OR false"), Some(Value::Bool(true)));
        assert_eq!(value("false AND true OR true"), Some(Value::Bool(true)));
        assert_eq!(value("'a' || 'b' = 'ab'"), Some(Value::Bool(true)));
        assert_eq!(
            value("2 BETWEEN 1 AND 3 AND 5 IN (4, 5)"),
            Some(Value::Bool(true))
        );
        assert_eq!(value("5 NOT IN (4, 5)"), Some(Value::Bool(false)));
        assert_eq!(value("undefined ?? 1 + 1"), Some(Value::from(2)));
        assert_eq!(value("true ? 1 : 2"), Some(Value::from(1)));
        assert_eq!(value("- 2 * 3"), Some(Value::from(-6)));
        assert_eq!(
            value("1 / 0")
                .as_ref()
                .and_then(crate::data::query::number::read),
            Some(f64::INFINITY),
            "an infinity while evaluating"
        );
        for bad in ["1 = 1 = 1", "1 + NOT true", "NOT", "1 +", "1 BETWEEN 2"] {
            assert!(
                parse(&format!("SELECT VALUE {bad}"), &HashMap::new()).is_err(),
                "{bad}"
            );
        }
    }
}
