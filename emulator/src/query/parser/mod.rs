//! A recursive-descent parser for `SELECT [DISTINCT] [TOP n] projection
//! FROM name [[AS] alias] [WHERE expr] [ORDER BY expr [ASC|DESC], ...]
//! [OFFSET n LIMIT m]`, with parameters substituted as literals.

use std::collections::HashMap;

use serde_json::Value;

use super::ast::{
    BinaryOp, Expr, Level, Projection, Select, SortKey, SortKind, SubqueryKind, UnaryOp,
};
use super::lexer::{syntax_error, tokenize, truncated, Token};
use super::number as num;
use super::udf;

mod from;
mod subquery;
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
    let from_at = find_top_level(&tokens, "FROM");
    if from_at.is_none() && !balanced(&tokens) {
        // `SELECT f(a, g(b) FROM c`: a bracket left open before FROM,
        // where the service points.
        let from = tokens
            .iter()
            .any(|t| matches!(t, Token::Ident(w) if w.eq_ignore_ascii_case("FROM")));
        if from {
            return Err(syntax_error(text, "'FROM'"));
        }
    }
    let mut parser = Parser {
        text,
        tokens,
        pos: 0,
        aliases: Vec::new(),
        from: None,
        parameters,
        depth: 0,
        substituted: 0,
    };
    // FROM is read first: it names what the projection before it refers to.
    if let Some(at) = from_at {
        parser.pos = at + 1;
        let from = parser.read_from(None)?;
        parser.aliases = from.aliases.clone();
        parser.from = Some((from, parser.pos));
        parser.pos = 0;
    }
    let select = parser.select()?;
    if parser.pos < parser.tokens.len() {
        return Err(parser.error_here());
    }
    Ok(select)
}

/// Where `keyword` stands outside any brackets, if it does.
fn find_top_level(tokens: &[Token], keyword: &str) -> Option<usize> {
    let mut depth = 0i32;
    tokens.iter().position(|token| {
        match token {
            Token::Sym("(") | Token::Sym("[") | Token::Sym("{") => depth += 1,
            Token::Sym(")") | Token::Sym("]") | Token::Sym("}") => depth -= 1,
            Token::Ident(w) => return depth == 0 && w.eq_ignore_ascii_case(keyword),
            _ => {}
        }
        false
    })
}

/// Whether every bracket opened is closed.
fn balanced(tokens: &[Token]) -> bool {
    let depth = tokens.iter().fold(0i64, |depth, token| match token {
        Token::Sym("(") | Token::Sym("[") | Token::Sym("{") => depth + 1,
        Token::Sym(")") | Token::Sym("]") | Token::Sym("}") => depth - 1,
        _ => depth,
    });
    depth == 0
}

fn is_reserved(word: &str) -> bool {
    RESERVED.iter().any(|r| r.eq_ignore_ascii_case(word))
}

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    /// The names FROM binds, in scope for the expression being parsed.
    aliases: Vec<String>,
    /// The FROM clause, read first, and the position just after it.
    from: Option<(super::ast::From, usize)>,
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

    fn is_sym(&self, sym: &str) -> bool {
        matches!(self.peek(), Some(Token::Sym(s)) if *s == sym)
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
                        Expr::Var(i) => self.aliases[*i].clone(),
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
        let from = match self.from.take() {
            Some((from, end)) => {
                // Already read by `read_from`: continue after it.
                self.expect_keyword("FROM")?;
                self.pos = end;
                Some(from)
            }
            None => None,
        };
        if from.is_none() && projection == Projection::Star {
            return Err(ApiError::bad_request(format!(
                "'SELECT *' is not valid if FROM clause is omitted. Query: {}",
                truncated(self.text)
            )));
        }
        if from.as_ref().is_some_and(|f| f.aliases.len() > 1) && projection == Projection::Star {
            return Err(ApiError::bad_request(format!(
                "'SELECT *' is only valid with a single input set: name what to select, e.g. SELECT {} ... Query: {}",
                from.as_ref().map_or(String::new(), |f| f.aliases.join(", ")),
                truncated(self.text)
            )));
        }
        let filter = if self.eat_keyword("WHERE") {
            Some(self.expr()?)
        } else {
            None
        };
        let mut group_by = Vec::new();
        if self.eat_keyword("GROUP") {
            self.expect_keyword("BY")?;
            loop {
                group_by.push(self.expr()?);
                if !self.eat_sym(",") {
                    break;
                }
            }
            if projection == Projection::Star {
                return Err(ApiError::bad_request(format!(
                    "'SELECT *' is not valid with GROUP BY: select the grouped expressions and aggregates. Query: {}",
                    truncated(self.text)
                )));
            }
        }
        let mut order_by = Vec::new();
        if self.eat_keyword("ORDER") {
            self.expect_keyword("BY")?;
            if self.is_rank() {
                order_by.push(self.rank_key()?);
            } else {
                loop {
                    order_by.push(self.sort_key()?);
                    if !self.eat_sym(",") {
                        break;
                    }
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
            from,
            group_by,
            distinct,
            top,
            projection,
            filter,
            order_by,
            offset,
            limit,
        })
    }

    /// `expr [ASC|DESC]`; `VectorDistance(...)` takes no direction: it
    /// sorts most similar first.
    fn sort_key(&mut self) -> ApiResult<SortKey> {
        let expr = self.expr()?;
        let direction = if self.eat_keyword("DESC") {
            Some(true)
        } else if self.eat_keyword("ASC") {
            Some(false)
        } else {
            None
        };
        let similarity = matches!(&expr, Expr::Call(name, _) if name == "VECTORDISTANCE");
        match (similarity, direction) {
            (true, Some(_)) => Err(ApiError::bad_request(format!(
                "Specifying a sorting order (ASC or DESC) with VectorDistance function is not supported. \
                 ORDER BY VectorDistance(...) sorts the most similar items first. Query: {}",
                truncated(self.text)
            ))),
            (true, None) => Ok(SortKey {
                expr,
                descending: true,
                kind: SortKind::Similarity,
            }),
            (false, direction) => Ok(SortKey {
                expr,
                descending: direction.unwrap_or(false),
                kind: SortKind::Value,
            }),
        }
    }

    /// Whether ORDER BY is followed by `RANK` and an expression (`RANK`
    /// alone is a name: `ORDER BY rank`, `ORDER BY rank DESC`).
    fn is_rank(&self) -> bool {
        self.is_keyword("RANK")
            && matches!(self.tokens.get(self.pos + 1), Some(Token::Ident(w))
                if !["ASC", "DESC", "OFFSET", "LIMIT"].iter().any(|k| w.eq_ignore_ascii_case(k)))
    }

    /// `RANK score`: one key, most relevant first, no direction.
    fn rank_key(&mut self) -> ApiResult<SortKey> {
        self.expect_keyword("RANK")?;
        let expr = self.expr()?;
        if self.is_keyword("ASC") || self.is_keyword("DESC") {
            return Err(ApiError::bad_request(format!(
                "Specifying a sort order (ASC or DESC) in the ORDER BY RANK clause is not allowed. \
                 It sorts the most relevant items first. Query: {}",
                truncated(self.text)
            )));
        }
        if self.is_sym(",") {
            return Err(ApiError::bad_request(format!(
                "ORDER BY RANK takes one scoring expression; combine several with RRF(...). Query: {}",
                truncated(self.text)
            )));
        }
        Ok(SortKey {
            expr,
            descending: true,
            kind: SortKind::Rank,
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
    fn binary(&mut self, min: Level) -> ApiResult<Expr> {
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
    fn peek_operator(&self) -> Option<(BinaryOp, Level)> {
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
    fn comparison(&mut self, left: Expr, op: BinaryOp) -> ApiResult<Expr> {
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

    fn unary(&mut self) -> ApiResult<Expr> {
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
    fn call_arguments(&mut self) -> ApiResult<Vec<Expr>> {
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

#[cfg(test)]
mod tests;
