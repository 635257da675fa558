//! A recursive-descent parser for `SELECT [DISTINCT] [TOP n] projection
//! FROM name [[AS] alias] [WHERE expr] [ORDER BY expr [ASC|DESC], ...]
//! [OFFSET n LIMIT m]`, with parameters substituted as literals.

use std::collections::HashMap;

use serde_json::Value;

use super::ast::{Expr, Projection, Select, SortKey, SortKind};
use super::lexer::{syntax_error, tokenize, truncated, Token};

mod expr;
mod from;
mod subquery;
use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::limits::{MAX_QUERY_NESTING, MAX_QUERY_TEXT_BYTES, MAX_SUBSTITUTED_BYTES};

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
}

#[cfg(test)]
mod tests;
