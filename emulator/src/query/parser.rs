//! A recursive-descent parser for `SELECT [DISTINCT] [TOP n] projection
//! FROM name [[AS] alias] [WHERE expr] [ORDER BY expr [ASC|DESC], ...]
//! [OFFSET n LIMIT m]`, with parameters substituted as literals.

use std::collections::HashMap;

use serde_json::Value;

use super::ast::{BinaryOp, Expr, Projection, Select, SortKey, UnaryOp};
use super::lexer::{syntax_error, tokenize, truncated, Token};
use crate::error::{ApiError, ApiResult};
use crate::limits::{MAX_QUERY_NESTING, MAX_QUERY_TEXT_BYTES, MAX_SUBSTITUTED_BYTES};

const RESERVED: [&str; 22] = [
    "SELECT", "FROM", "WHERE", "ORDER", "BY", "AND", "OR", "NOT", "IN", "BETWEEN", "AS", "TOP",
    "VALUE", "DISTINCT", "OFFSET", "LIMIT", "ASC", "DESC", "JOIN", "GROUP", "LIKE", "ESCAPE",
];

pub fn parse(text: &str, parameters: &HashMap<String, Value>) -> ApiResult<Select> {
    if text.len() > MAX_QUERY_TEXT_BYTES {
        return Err(ApiError::bad_request(format!(
            "The query text is {} bytes long; the limit is {MAX_QUERY_TEXT_BYTES} bytes (512 KB). \
             Pass large values as parameters. Query: {}",
            text.len(),
            truncated(text)
        )));
    }
    let tokens = tokenize(text)?;
    let alias = from_alias(text, &tokens)?;
    let mut parser = Parser {
        text,
        tokens,
        pos: 0,
        alias,
        parameters,
        depth: 0,
        substituted: 0,
    };
    let select = parser.select()?;
    if parser.pos < parser.tokens.len() {
        return Err(parser.error_here());
    }
    Ok(select)
}

/// The name `FROM` binds (its alias if one is given), found before parsing
/// the projection that uses it.
fn from_alias(text: &str, tokens: &[Token]) -> ApiResult<String> {
    let mut depth = 0i32;
    for (i, token) in tokens.iter().enumerate() {
        match token {
            Token::Sym("(") | Token::Sym("[") | Token::Sym("{") => depth += 1,
            Token::Sym(")") | Token::Sym("]") | Token::Sym("}") => depth -= 1,
            Token::Ident(w) if depth == 0 && w.eq_ignore_ascii_case("FROM") => {
                let Some(Token::Ident(source)) = tokens.get(i + 1) else {
                    return Err(syntax_error(text, "FROM: expected a collection name"));
                };
                let alias = match (tokens.get(i + 2), tokens.get(i + 3)) {
                    (Some(Token::Ident(kw)), Some(Token::Ident(alias)))
                        if kw.eq_ignore_ascii_case("AS") =>
                    {
                        alias
                    }
                    (Some(Token::Ident(alias)), _) if !is_reserved(alias) => alias,
                    _ => source,
                };
                if matches!(tokens.get(i + 2), Some(Token::Ident(w)) if w.eq_ignore_ascii_case("JOIN"))
                    || tokens.iter().any(|t| matches!(t, Token::Ident(w) if w.eq_ignore_ascii_case("JOIN") || w.eq_ignore_ascii_case("GROUP")))
                {
                    return Err(ApiError::bad_request(format!(
                        "This emulator does not support JOIN or GROUP BY yet. Query: {}",
                        truncated(text)
                    )));
                }
                return Ok(alias.clone());
            }
            _ => {}
        }
    }
    // `SELECT 1` without FROM is valid: no alias can then be referenced.
    Ok(String::new())
}

fn is_reserved(word: &str) -> bool {
    RESERVED.iter().any(|r| r.eq_ignore_ascii_case(word))
}

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    alias: String,
    parameters: &'a HashMap<String, Value>,
    /// How deeply the expression being parsed nests (see [`Parser::nested`]).
    depth: usize,
    /// Bytes of parameter values copied into the tree so far, each
    /// reference counted: bounded, so that a short query cannot copy a large
    /// parameter thousands of times.
    substituted: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn error_here(&self) -> ApiError {
        let what = match self.peek() {
            None => "the end of the query".to_string(),
            Some(Token::Ident(w)) => format!("'{w}'"),
            Some(Token::Number(n)) => format!("'{n}'"),
            Some(Token::Str(s)) => format!("'{s}'"),
            Some(Token::Param(p)) => format!("'{p}'"),
            Some(Token::Sym(s)) => format!("'{s}'"),
        };
        syntax_error(self.text, &what)
    }

    fn is_keyword(&self, keyword: &str) -> bool {
        matches!(self.peek(), Some(Token::Ident(w)) if w.eq_ignore_ascii_case(keyword))
    }

    fn eat_keyword(&mut self, keyword: &str) -> bool {
        let found = self.is_keyword(keyword);
        if found {
            self.pos += 1;
        }
        found
    }

    fn expect_keyword(&mut self, keyword: &str) -> ApiResult<()> {
        if self.eat_keyword(keyword) {
            Ok(())
        } else {
            Err(self.error_here())
        }
    }

    fn eat_sym(&mut self, sym: &str) -> bool {
        let found = matches!(self.peek(), Some(Token::Sym(s)) if *s == sym);
        if found {
            self.pos += 1;
        }
        found
    }

    fn expect_sym(&mut self, sym: &str) -> ApiResult<()> {
        if self.eat_sym(sym) {
            Ok(())
        } else {
            Err(self.error_here())
        }
    }

    fn count(&mut self) -> ApiResult<usize> {
        match self.peek().cloned() {
            Some(Token::Number(n)) if n >= 0.0 && n.fract() == 0.0 => {
                self.pos += 1;
                Ok(n as usize)
            }
            Some(Token::Param(p)) => {
                self.pos += 1;
                match self.parameters.get(&p).and_then(Value::as_u64) {
                    Some(n) => Ok(n as usize),
                    None => Err(ApiError::bad_request(format!(
                        "The parameter {p} must be a non-negative integer here. Query: {}",
                        truncated(self.text)
                    ))),
                }
            }
            _ => Err(self.error_here()),
        }
    }

    fn select(&mut self) -> ApiResult<Select> {
        self.expect_keyword("SELECT")?;
        let distinct = self.eat_keyword("DISTINCT");
        let top = if self.eat_keyword("TOP") {
            Some(self.count()?)
        } else {
            None
        };
        let projection = if self.eat_sym("*") {
            Projection::Star
        } else if self.eat_keyword("VALUE") {
            Projection::Value(self.expr()?)
        } else {
            let mut fields = Vec::new();
            loop {
                let expr = self.expr()?;
                let name = if self.eat_keyword("AS") {
                    match self.peek().cloned() {
                        Some(Token::Ident(n)) => {
                            self.pos += 1;
                            n
                        }
                        _ => return Err(self.error_here()),
                    }
                } else {
                    match &expr {
                        Expr::Property(_, name) => name.clone(),
                        _ => format!("${}", fields.len() + 1),
                    }
                };
                fields.push((expr, name));
                if !self.eat_sym(",") {
                    break;
                }
            }
            Projection::Fields(fields)
        };
        if self.eat_keyword("FROM") {
            // Already read by `from_alias`: skip `name [AS] [alias]`.
            self.pos += 1;
            self.eat_keyword("AS");
            if matches!(self.peek(), Some(Token::Ident(w)) if !is_reserved(w)) {
                self.pos += 1;
            }
        }
        let filter = if self.eat_keyword("WHERE") {
            Some(self.expr()?)
        } else {
            None
        };
        let mut order_by = Vec::new();
        if self.eat_keyword("ORDER") {
            self.expect_keyword("BY")?;
            loop {
                let expr = self.expr()?;
                let descending = if self.eat_keyword("DESC") {
                    true
                } else {
                    self.eat_keyword("ASC");
                    false
                };
                order_by.push(SortKey { expr, descending });
                if !self.eat_sym(",") {
                    break;
                }
            }
        }
        let (mut offset, mut limit) = (None, None);
        if self.eat_keyword("OFFSET") {
            offset = Some(self.count()?);
            self.expect_keyword("LIMIT")?;
            limit = Some(self.count()?);
        }
        Ok(Select {
            alias: self.alias.clone(),
            distinct,
            top,
            projection,
            filter,
            order_by,
            offset,
            limit,
        })
    }

    /// Runs `parse` one nesting level deeper, refusing a query that nests
    /// more than [`MAX_QUERY_NESTING`] levels: the bound on the recursion of
    /// this parser and of everything that walks the tree it builds.
    fn nested<T>(&mut self, parse: impl FnOnce(&mut Self) -> ApiResult<T>) -> ApiResult<T> {
        self.deeper(1)?;
        let result = parse(self);
        self.depth -= 1;
        result
    }

    fn deeper(&mut self, levels: usize) -> ApiResult<()> {
        self.depth += levels;
        if self.depth > MAX_QUERY_NESTING {
            return Err(ApiError::bad_request(format!(
                "The query nests expressions more than {MAX_QUERY_NESTING} levels deep (parentheses, \
                 function arguments, array and object literals, NOT, signs and property steps count); \
                 flatten it. Query: {}",
                truncated(self.text)
            )));
        }
        Ok(())
    }

    fn substitute(&mut self, name: &str, value: &Value) -> ApiResult<()> {
        let size = serde_json::to_vec(value).map_or(0, |v| v.len());
        self.substituted = self.substituted.saturating_add(size);
        if self.substituted > MAX_SUBSTITUTED_BYTES {
            return Err(ApiError::bad_request(format!(
                "The query's parameter references copy more than {MAX_SUBSTITUTED_BYTES} bytes of \
                 parameter values (each reference counts, {name} is {size} bytes): reference large \
                 parameters fewer times. Query: {}",
                truncated(self.text)
            )));
        }
        Ok(())
    }

    fn expr(&mut self) -> ApiResult<Expr> {
        self.nested(|p| {
            let condition = p.coalesce()?;
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

    /// A left-associative run `operand (op operand)*` of the operators
    /// `next_op` recognises, held flat (see [`Expr::Chain`]).
    fn chain(
        &mut self,
        operand: fn(&mut Self) -> ApiResult<Expr>,
        next_op: fn(&mut Self) -> Option<BinaryOp>,
    ) -> ApiResult<Expr> {
        let first = operand(self)?;
        let mut rest = Vec::new();
        while let Some(op) = next_op(self) {
            rest.push((op, operand(self)?));
        }
        Ok(if rest.is_empty() {
            first
        } else {
            Expr::Chain(Box::new(first), rest)
        })
    }

    fn coalesce(&mut self) -> ApiResult<Expr> {
        self.chain(Self::or, |p| p.eat_sym("??").then_some(BinaryOp::Coalesce))
    }

    fn or(&mut self) -> ApiResult<Expr> {
        self.chain(Self::and, |p| p.eat_keyword("OR").then_some(BinaryOp::Or))
    }

    fn and(&mut self) -> ApiResult<Expr> {
        self.chain(Self::not, |p| p.eat_keyword("AND").then_some(BinaryOp::And))
    }

    fn not(&mut self) -> ApiResult<Expr> {
        if self.eat_keyword("NOT") {
            let operand = self.nested(Self::not)?;
            return Ok(Expr::Unary(UnaryOp::Not, Box::new(operand)));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> ApiResult<Expr> {
        let left = self.concat()?;
        let op = match self.peek() {
            Some(Token::Sym("=")) => BinaryOp::Eq,
            Some(Token::Sym("!=")) | Some(Token::Sym("<>")) => BinaryOp::Ne,
            Some(Token::Sym("<")) => BinaryOp::Lt,
            Some(Token::Sym("<=")) => BinaryOp::Le,
            Some(Token::Sym(">")) => BinaryOp::Gt,
            Some(Token::Sym(">=")) => BinaryOp::Ge,
            _ => {
                let negated = self.is_keyword("NOT")
                    && matches!(self.tokens.get(self.pos + 1), Some(Token::Ident(w)) if w.eq_ignore_ascii_case("IN"));
                if negated {
                    self.pos += 1;
                }
                if self.eat_keyword("IN") {
                    self.expect_sym("(")?;
                    let mut list = vec![self.expr()?];
                    while self.eat_sym(",") {
                        list.push(self.expr()?);
                    }
                    self.expect_sym(")")?;
                    return Ok(Expr::In(Box::new(left), list, negated));
                }
                if self.eat_keyword("BETWEEN") {
                    let low = self.concat()?;
                    self.expect_keyword("AND")?;
                    let high = self.concat()?;
                    return Ok(Expr::Between(Box::new(left), Box::new(low), Box::new(high)));
                }
                return Ok(left);
            }
        };
        self.pos += 1;
        let right = self.concat()?;
        Ok(Expr::Binary(op, Box::new(left), Box::new(right)))
    }

    fn concat(&mut self) -> ApiResult<Expr> {
        self.chain(Self::additive, |p| {
            p.eat_sym("||").then_some(BinaryOp::Concat)
        })
    }

    fn additive(&mut self) -> ApiResult<Expr> {
        self.chain(Self::multiplicative, |p| {
            if p.eat_sym("+") {
                Some(BinaryOp::Add)
            } else if p.eat_sym("-") {
                Some(BinaryOp::Sub)
            } else {
                None
            }
        })
    }

    fn multiplicative(&mut self) -> ApiResult<Expr> {
        self.chain(Self::unary, |p| {
            if p.eat_sym("*") {
                Some(BinaryOp::Mul)
            } else if p.eat_sym("/") {
                Some(BinaryOp::Div)
            } else if p.eat_sym("%") {
                Some(BinaryOp::Mod)
            } else {
                None
            }
        })
    }

    fn unary(&mut self) -> ApiResult<Expr> {
        let op = if self.eat_sym("-") {
            UnaryOp::Neg
        } else if self.eat_sym("+") {
            UnaryOp::Plus
        } else {
            return self.postfix();
        };
        let operand = self.nested(Self::unary)?;
        Ok(Expr::Unary(op, Box::new(operand)))
    }

    /// A primary followed by property and index steps; each step nests the
    /// tree one level deeper, so each counts toward the nesting limit.
    fn postfix(&mut self) -> ApiResult<Expr> {
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

    fn primary(&mut self) -> ApiResult<Expr> {
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
                if matches!(self.peek(), Some(Token::Sym("("))) {
                    self.pos += 1;
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
                    return Ok(Expr::Call(word.to_uppercase(), args));
                }
                match word.to_lowercase().as_str() {
                    "true" => Ok(Expr::Literal(Value::Bool(true))),
                    "false" => Ok(Expr::Literal(Value::Bool(false))),
                    "null" => Ok(Expr::Literal(Value::Null)),
                    "undefined" => Ok(Expr::Call("UNDEFINED".into(), Vec::new())),
                    _ if word == self.alias => Ok(Expr::Root),
                    _ => Err(ApiError::bad_request(format!(
                        "Identifier '{word}' could not be resolved: properties are read through the FROM alias, e.g. {}.{word}. Query: {}",
                        if self.alias.is_empty() { "c" } else { &self.alias },
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

fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                Box::new(Expr::Property(Box::new(Expr::Root), "id".into())),
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
}
