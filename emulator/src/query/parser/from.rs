//! The FROM clause: `c`, `root r`, `c.path alias`, `x IN c.path`, then
//! `JOIN x IN expr` up to the service's limit. It is read before the
//! projection, which refers to the names it binds.

use super::super::ast::{Expr, From};
use super::super::lexer::{syntax_error, truncated, Token};
use super::{is_reserved, Parser};
use crate::error::{ApiError, ApiResult};
use crate::limits::MAX_JOINS;

impl Parser<'_> {
    /// `FROM` (already taken) `x IN path | path [[AS] alias]`, then
    /// `JOIN x IN expr` up to the service's limit of JOINs.
    pub(super) fn read_from(&mut self) -> ApiResult<From> {
        let in_form = matches!(self.tokens.get(self.pos + 1), Some(Token::Ident(w)) if w.eq_ignore_ascii_case("IN"))
            && matches!(self.peek(), Some(Token::Ident(w)) if !is_reserved(w));
        let (first, source, source_in) = if in_form {
            let Some(Token::Ident(name)) = self.peek().cloned() else {
                return Err(self.error_here());
            };
            self.pos += 2;
            (name, Some(self.container_path()?), true)
        } else {
            let path = self.container_path()?;
            let named = self.eat_keyword("AS")
                || matches!(self.peek(), Some(Token::Ident(w)) if !is_reserved(w));
            let alias = if named {
                Some(self.alias_name()?)
            } else {
                None
            };
            let (alias, source) = match path {
                Expr::Var(_) => (alias.unwrap_or_else(|| self.aliases[0].clone()), None),
                Expr::Property(_, ref name) => (alias.unwrap_or_else(|| name.clone()), Some(path)),
                other => match alias {
                    Some(alias) => (alias, Some(other)),
                    None => return Err(syntax_error(self.text, "FROM: give the path an alias")),
                },
            };
            (alias, source, false)
        };
        let mut aliases = vec![first];
        let mut joins = Vec::new();
        while self.eat_keyword("JOIN") {
            if joins.len() == MAX_JOINS {
                return Err(ApiError::bad_request(format!(
                    "The query has more than {MAX_JOINS} JOINs, the service's limit. Query: {}",
                    truncated(self.text)
                )));
            }
            let name = self.alias_name()?;
            if !self.eat_keyword("IN") {
                return Err(ApiError::bad_request(format!(
                    "This emulator supports JOINs of the form 'JOIN x IN c.array' only. Query: {}",
                    truncated(self.text)
                )));
            }
            self.aliases = aliases.clone();
            joins.push(self.expr()?);
            if aliases.contains(&name) {
                return Err(ApiError::bad_request(format!(
                    "The name '{name}' is bound twice in FROM; give each JOIN its own name. Query: {}",
                    truncated(self.text)
                )));
            }
            aliases.push(name);
        }
        self.aliases.clear();
        Ok(From {
            aliases,
            source,
            source_in,
            joins,
        })
    }

    /// The container and a path into its items (`c`, `root.a[0]`), with
    /// `Var(0)` for the item; the container's name is in scope only here.
    fn container_path(&mut self) -> ApiResult<Expr> {
        let Some(Token::Ident(container)) = self.peek().cloned() else {
            return Err(syntax_error(self.text, "FROM: expected a container name"));
        };
        if is_reserved(&container) {
            return Err(syntax_error(self.text, "FROM: expected a container name"));
        }
        self.aliases = vec![container];
        self.postfix()
    }

    fn alias_name(&mut self) -> ApiResult<String> {
        match self.peek().cloned() {
            Some(Token::Ident(name)) if !is_reserved(&name) => {
                self.pos += 1;
                Ok(name)
            }
            _ => Err(self.error_here()),
        }
    }
}
