//! Subqueries: `EXISTS(SELECT ...)`, `ARRAY(SELECT ...)`, `(SELECT ...)`
//! and `JOIN (SELECT ...) x`. Each is a whole query whose FROM ranges over
//! values of the rows around it (only correlated subqueries exist), read
//! with those rows' names in scope.

use super::super::ast::Select;
use super::super::lexer::Token;
use super::{find_top_level, Parser};
use crate::protocol::error::ApiResult;

impl Parser<'_> {
    /// Whether the tokens at hand are `( SELECT`.
    pub(super) fn subquery_follows(&self) -> bool {
        matches!(self.peek(), Some(Token::Sym("(")))
            && matches!(self.tokens.get(self.pos + 1), Some(Token::Ident(w)) if w.eq_ignore_ascii_case("SELECT"))
    }

    /// The subquery whose `SELECT` is at hand, its `(` already taken, up to
    /// and including its `)`. Its FROM is read first, as a query's is, with
    /// the names of the enclosing rows in scope; then those names and its
    /// own are in scope for the rest. With `over_container` (`FROM (SELECT
    /// ...) x`) it is a query of its own over the container instead.
    pub(super) fn subquery(&mut self, over_container: bool) -> ApiResult<Select> {
        let start = self.pos;
        let end = self.closing_paren(start).ok_or_else(|| self.error_here())?;
        let outer = std::mem::take(&mut self.aliases);
        let enclosing_from = self.from.take();
        let result = self.nested(|p| {
            if let Some(at) = find_top_level(&p.tokens[start..end], "FROM") {
                p.pos = start + at + 1;
                let from = p.read_from((!over_container).then_some(outer.as_slice()))?;
                if p.pos > end {
                    return Err(p.error_here());
                }
                p.aliases = outer.iter().chain(&from.aliases).cloned().collect();
                p.from = Some((from, p.pos));
                p.pos = start;
            } else {
                p.aliases = outer.clone();
            }
            p.select()
        });
        self.aliases = outer;
        self.from = enclosing_from;
        let select = result?;
        if self.pos != end {
            return Err(self.error_here());
        }
        self.pos = end + 1;
        Ok(select)
    }

    /// The index of the `)` that closes the bracket open before `from`.
    fn closing_paren(&self, from: usize) -> Option<usize> {
        let mut depth = 0usize;
        for (i, token) in self.tokens.iter().enumerate().skip(from) {
            match token {
                Token::Sym("(") | Token::Sym("[") | Token::Sym("{") => depth += 1,
                Token::Sym(")") if depth == 0 => return Some(i),
                Token::Sym(")") | Token::Sym("]") | Token::Sym("}") => {
                    depth = depth.checked_sub(1)?;
                }
                _ => {}
            }
        }
        None
    }
}
