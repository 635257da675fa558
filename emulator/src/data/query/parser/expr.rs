//! Expressions: precedence climbing over the binary operators (their
//! levels are `ast.rs`'s `Level`), comparisons and their chains, unary
//! operators, property and index steps, and the primaries (literals,
//! parameters, names, calls, arrays, objects, subqueries).

use serde_json::Value;

use super::super::ast::{BinaryOp, Expr, Level, SubqueryKind, UnaryOp};
use super::super::lexer::{truncated, Token};
use super::super::number as num;
use super::super::udf;
use super::Parser;
use crate::protocol::error::{ApiError, ApiResult};

impl Parser<'_> {
    pub(super) fn expr(&mut self) -> ApiResult<Expr> {
        self.nested(|p| {
            let condition = p.binary(Level::Coalesce)?;
            if p.eat_sym("?") {
                let then = p.expr()?;
                p.expect_sym(":")?;
                let otherwise = p.expr()?;
                return Ok(Expr::Conditional(
                    Box::new(condition),
                    Box::new(then),
                    Box::new(otherwise),
                ));
            }
            Ok(condition)
        })
    }

    /// Binary operators by precedence climbing: operators of at least
    /// `min` precedence, each right operand parsed one level up. Left runs of
    /// one level are held flat in an [`Expr::Chain`] (`(a + b) + c` is the
    /// same left fold as `a + b + c`), so a long run costs no recursion.
    /// NOT binds looser than comparisons and stands only where a comparison may.
    pub(super) fn binary(&mut self, min: Level) -> ApiResult<Expr> {
        let mut left = if min <= Level::Comparison && self.eat_keyword("NOT") {
            let operand = self.nested(|p| p.binary(Level::Comparison))?;
            Expr::Unary(UnaryOp::Not, Box::new(operand))
        } else {
            self.unary()?
        };
        let mut compared = false;
        while let Some((op, level)) = self.peek_operator() {
            if level < min || (level == Level::Comparison && compared) {
                break;
            }
            if level == Level::Comparison {
                compared = true;
                left = self.comparison(left, op)?;
                continue;
            }
            self.pos += 1;
            let right = self.binary(level.next())?;
            left = match left {
                Expr::Chain(first, mut rest) if rest[0].0.level() == level => {
                    rest.push((op, right));
                    Expr::Chain(first, rest)
                }
                other => Expr::Chain(Box::new(other), vec![(op, right)]),
            };
        }
        Ok(left)
    }

    /// The binary operator at the current token, without taking it. `IN`,
    /// `NOT IN`, `LIKE`, `NOT LIKE` and `BETWEEN` are comparisons (taken by [`Self::comparison`]).
    pub(super) fn peek_operator(&self) -> Option<(BinaryOp, Level)> {
        let op = match self.peek()? {
            Token::Sym("??") => BinaryOp::Coalesce,
            Token::Sym("|") => BinaryOp::BitOr,
            Token::Sym("^") => BinaryOp::BitXor,
            Token::Sym("&") => BinaryOp::BitAnd,
            Token::Sym("<<") => BinaryOp::ShiftLeft,
            Token::Sym(">>") => BinaryOp::ShiftRight,
            Token::Sym(">>>") => BinaryOp::ShiftRightZero,
            Token::Sym("||") => BinaryOp::Concat,
            Token::Sym("+") => BinaryOp::Add,
            Token::Sym("-") => BinaryOp::Sub,
            Token::Sym("*") => BinaryOp::Mul,
            Token::Sym("/") => BinaryOp::Div,
            Token::Sym("%") => BinaryOp::Mod,
            Token::Sym("=") => BinaryOp::Eq,
            Token::Sym("!=") | Token::Sym("<>") => BinaryOp::Ne,
            Token::Sym("<") => BinaryOp::Lt,
            Token::Sym("<=") => BinaryOp::Le,
            Token::Sym(">") => BinaryOp::Gt,
            Token::Sym(">=") => BinaryOp::Ge,
            Token::Ident(w) if w.eq_ignore_ascii_case("OR") => BinaryOp::Or,
            Token::Ident(w) if w.eq_ignore_ascii_case("AND") => BinaryOp::And,
            Token::Ident(w)
                if w.eq_ignore_ascii_case("IN")
                    || w.eq_ignore_ascii_case("LIKE")
                    || w.eq_ignore_ascii_case("BETWEEN")
                    || (w.eq_ignore_ascii_case("NOT")
                        && matches!(self.tokens.get(self.pos + 1), Some(Token::Ident(n)) if n.eq_ignore_ascii_case("IN") || n.eq_ignore_ascii_case("LIKE"))) =>
            {
                BinaryOp::Eq // stands for the comparison level; `comparison` reads the keyword
            }
            _ => return None,
        };
        Some((op, op.level()))
    }

    /// `left op right`, `left [NOT] IN (...)` or `left BETWEEN low AND high`,
    /// at the current token; the operands are of the levels above comparisons.
    pub(super) fn comparison(&mut self, left: Expr, op: BinaryOp) -> ApiResult<Expr> {
        let negated = self.eat_keyword("NOT");
        if self.eat_keyword("IN") {
            self.expect_sym("(")?;
            let mut list = vec![self.expr()?];
            while self.eat_sym(",") {
                list.push(self.expr()?);
            }
            self.expect_sym(")")?;
            return Ok(Expr::In(Box::new(left), list, negated));
        }
        if self.eat_keyword("LIKE") {
            let pattern = self.binary(Level::BitOr)?;
            let escape = if self.eat_keyword("ESCAPE") {
                Some(Box::new(self.binary(Level::BitOr)?))
            } else {
                None
            };
            return Ok(Expr::Like(
                Box::new(left),
                Box::new(pattern),
                escape,
                negated,
            ));
        }
        if self.eat_keyword("BETWEEN") {
            let low = self.binary(Level::BitOr)?;
            self.expect_keyword("AND")?;
            let high = self.binary(Level::BitOr)?;
            return Ok(Expr::Between(Box::new(left), Box::new(low), Box::new(high)));
        }
        self.pos += 1;
        let right = self.binary(Level::BitOr)?;
        Ok(Expr::Binary(op, Box::new(left), Box::new(right)))
    }

    pub(super) fn unary(&mut self) -> ApiResult<Expr> {
        let op = if self.eat_sym("-") {
            UnaryOp::Neg
        } else if self.eat_sym("+") {
            UnaryOp::Plus
        } else if self.eat_sym("~") {
            UnaryOp::BitNot
        } else {
            return self.postfix();
        };
        let operand = self.nested(Self::unary)?;
        Ok(Expr::Unary(op, Box::new(operand)))
    }

    /// A primary followed by property and index steps; each step nests the
    /// tree one level deeper, so each counts toward the nesting limit.
    pub(super) fn postfix(&mut self) -> ApiResult<Expr> {
        let mut expr = self.primary()?;
        let mut steps = 0;
        let result = loop {
            let step = if self.eat_sym(".") {
                match self.peek().cloned() {
                    Some(Token::Ident(name)) => {
                        self.pos += 1;
                        Ok(Expr::Property(Box::new(expr), name))
                    }
                    _ => Err(self.error_here()),
                }
            } else if self.eat_sym("[") {
                self.expr().and_then(|index| {
                    self.expect_sym("]")?;
                    Ok(match index {
                        Expr::Literal(Value::String(name)) => Expr::Property(Box::new(expr), name),
                        other => Expr::Index(Box::new(expr), Box::new(other)),
                    })
                })
            } else {
                break Ok(expr);
            };
            match step.and_then(|e| self.deeper(1).map(|()| e)) {
                Ok(e) => {
                    steps += 1;
                    expr = e;
                }
                Err(e) => break Err(e),
            }
        };
        self.depth -= steps;
        result
    }

    pub(super) fn primary(&mut self) -> ApiResult<Expr> {
        let Some(token) = self.peek().cloned() else {
            return Err(self.error_here());
        };
        self.pos += 1;
        match token {
            Token::Number(n) => Ok(Expr::Literal(number(n))),
            Token::Str(s) => Ok(Expr::Literal(Value::String(s))),
            Token::Param(p) => match self.parameters.get(&p) {
                Some(v) => {
                    self.substitute(&p, v)?;
                    Ok(Expr::Literal(v.clone()))
                }
                None => Err(ApiError::bad_request(format!(
                    "The query parameter {p} is not defined: add it to 'parameters'. Query: {}",
                    truncated(self.text)
                ))),
            },
            Token::Sym("(") if self.is_keyword("SELECT") => {
                let select = self.subquery(false)?;
                Ok(Expr::Subquery(SubqueryKind::Scalar, Box::new(select)))
            }
            Token::Sym("(") => {
                let inner = self.expr()?;
                self.expect_sym(")")?;
                Ok(inner)
            }
            Token::Sym("[") => {
                let mut items = Vec::new();
                if !self.eat_sym("]") {
                    loop {
                        items.push(self.expr()?);
                        if self.eat_sym("]") {
                            break;
                        }
                        self.expect_sym(",")?;
                    }
                }
                Ok(Expr::Array(items))
            }
            Token::Sym("{") => {
                let mut fields = Vec::new();
                if !self.eat_sym("}") {
                    loop {
                        let name = match self.peek().cloned() {
                            Some(Token::Ident(n)) | Some(Token::Str(n)) => n,
                            _ => return Err(self.error_here()),
                        };
                        self.pos += 1;
                        self.expect_sym(":")?;
                        fields.push((name, self.expr()?));
                        if self.eat_sym("}") {
                            break;
                        }
                        self.expect_sym(",")?;
                    }
                }
                Ok(Expr::Object(fields))
            }
            Token::Ident(word) => {
                let kind = match word.to_uppercase().as_str() {
                    "EXISTS" => Some(SubqueryKind::Exists),
                    "ARRAY" => Some(SubqueryKind::Array),
                    _ => None,
                };
                let select_follows = matches!(self.tokens.get(self.pos + 1), Some(Token::Ident(w)) if w.eq_ignore_ascii_case("SELECT"));
                if let (Some(kind), true, Some(Token::Sym("("))) =
                    (kind, select_follows, self.peek())
                {
                    self.pos += 1;
                    let select = self.subquery(false)?;
                    return Ok(Expr::Subquery(kind, Box::new(select)));
                }
                if matches!(self.peek(), Some(Token::Sym("("))) {
                    self.pos += 1;
                    let args = self.call_arguments()?;
                    return Ok(Expr::Call(word.to_uppercase(), args));
                }
                // `udf.name(...)`: a user-defined function (the prefix is
                // case-sensitive and not an alias), named as stored.
                if word == "udf" && !self.aliases.contains(&word) {
                    if let (
                        Some(Token::Sym(".")),
                        Some(Token::Ident(name)),
                        Some(Token::Sym("(")),
                    ) = (
                        self.tokens.get(self.pos),
                        self.tokens.get(self.pos + 1),
                        self.tokens.get(self.pos + 2),
                    ) {
                        let name = format!("{}{name}", udf::PREFIX);
                        self.pos += 3;
                        let args = self.call_arguments()?;
                        return Ok(Expr::Call(name, args));
                    }
                }
                match word.to_lowercase().as_str() {
                    "true" => Ok(Expr::Literal(Value::Bool(true))),
                    "false" => Ok(Expr::Literal(Value::Bool(false))),
                    "null" => Ok(Expr::Literal(Value::Null)),
                    "undefined" => Ok(Expr::Call("UNDEFINED".into(), Vec::new())),
                    // The language's names for the non-finite numbers (the
                    // documented `ToString(NaN)`, `ToString(Infinity)`).
                    _ if word == "NaN" => Ok(Expr::Literal(num::to_value(f64::NAN))),
                    _ if word == "Infinity" => Ok(Expr::Literal(num::to_value(f64::INFINITY))),
                    _ if self.aliases.contains(&word) => Ok(Expr::Var(
                        self.aliases.iter().rposition(|a| *a == word).unwrap_or(0),
                    )),
                    _ => Err(ApiError::bad_request(format!(
                        "Identifier '{word}' could not be resolved: properties are read through the FROM alias, e.g. {}.{word}. Query: {}",
                        self.aliases.first().map_or("c", String::as_str),
                        truncated(self.text)
                    ))),
                }
            }
            Token::Sym(_) => {
                self.pos -= 1;
                Err(self.error_here())
            }
        }
    }
}

impl Parser<'_> {
    /// A call's arguments, after its `(`, through its `)`.
    pub(super) fn call_arguments(&mut self) -> ApiResult<Vec<Expr>> {
        let mut args = Vec::new();
        if !self.eat_sym(")") {
            loop {
                if self.eat_sym("*") {
                    // COUNT(*) counts rows, like COUNT(1).
                    args.push(Expr::Literal(Value::from(1)));
                } else {
                    args.push(self.expr()?);
                }
                if self.eat_sym(")") {
                    break;
                }
                self.expect_sym(",")?;
            }
        }
        Ok(args)
    }
}

fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}
