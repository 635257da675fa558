//! The FROM clause: `c`, `root r`, `c.path alias`, `x IN c.path`, then
//! `JOIN x IN expr` up to the service's limit. It is read before the
//! projection, which refers to the names it binds.

use super::super::ast::{Expr, From, SubqueryKind};
use super::super::lexer::{query_error, syntax_error, truncated, Token};
use super::{is_reserved, Parser};
use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::limits::MAX_JOINS;

impl Parser<'_> {
    /// `FROM` (already taken) `x IN path | path [[AS] alias]`, then
    /// `JOIN x IN expr` or `JOIN (SELECT ...) [AS] x` up to the service's
    /// limit of JOINs. `outer` is `None` for a query, whose paths start at
    /// the container; in a subquery, the names bound around it, which its
    /// paths start from.
    pub(super) fn read_from(&mut self, outer: Option<&[String]>) -> ApiResult<From> {
        let in_form = matches!(self.tokens.get(self.pos + 1), Some(Token::Ident(w)) if w.eq_ignore_ascii_case("IN"))
            && matches!(self.peek(), Some(Token::Ident(w)) if !is_reserved(w));
        let mut derived = None;
        let (first, source, source_in) = if outer.is_none() && self.subquery_follows() {
            // `FROM (SELECT ... FROM c) [AS] x`: a query over the container.
            self.pos += 1;
            derived = Some(Box::new(self.subquery(true)?));
            self.eat_keyword("AS");
            (self.alias_name()?, None, false)
        } else if in_form {
            let Some(Token::Ident(name)) = self.peek().cloned() else {
                return Err(self.error_here());
            };
            self.pos += 2;
            let source = self.source_path(outer)?;
            in_source(&source)?;
            (name, Some(source), true)
        } else {
            let path = self.source_path(outer)?;
            let named = self.eat_keyword("AS")
                || matches!(self.peek(), Some(Token::Ident(w)) if !is_reserved(w));
            let alias = if named {
                Some(self.alias_name()?)
            } else {
                None
            };
            let (alias, source) = match (path, outer) {
                (Expr::Var(_), None) => (alias.unwrap_or_else(|| self.aliases[0].clone()), None),
                (Expr::Var(i), Some(names)) => (
                    alias.unwrap_or_else(|| names[i].clone()),
                    Some(Expr::Var(i)),
                ),
                (path @ Expr::Property(_, _), _) => {
                    let Expr::Property(_, ref name) = path else {
                        unreachable!("matched above")
                    };
                    (alias.unwrap_or_else(|| name.clone()), Some(path))
                }
                (other, _) => match alias {
                    Some(alias) => (alias, Some(other)),
                    None => return Err(syntax_error(self.text, "FROM: give the path an alias")),
                },
            };
            (alias, source, false)
        };
        let outer = outer.unwrap_or_default();
        let mut aliases = vec![first];
        let mut joins = Vec::new();
        while self.eat_keyword("JOIN") {
            if joins.len() == MAX_JOINS {
                return Err(ApiError::bad_request(format!(
                    "The query has more than {MAX_JOINS} JOINs, the service's limit. Query: {}",
                    truncated(self.text)
                )));
            }
            self.aliases = outer.iter().chain(&aliases).cloned().collect();
            let (name, join) = if self.subquery_follows() {
                // `JOIN (SELECT ...) [AS] x`: x ranges over the subquery's results.
                self.pos += 1;
                let select = self.subquery(false)?;
                let name = if self.eat_keyword("AS")
                    || matches!(self.peek(), Some(Token::Ident(w)) if !is_reserved(w))
                {
                    self.alias_name()?
                } else {
                    // Unnamed, it only multiplies the rows.
                    format!("_join{}", joins.len() + 1)
                };
                (name, Expr::Subquery(SubqueryKind::Array, Box::new(select)))
            } else if matches!(self.tokens.get(self.pos + 1), Some(Token::Ident(w)) if w.eq_ignore_ascii_case("IN"))
            {
                let name = self.alias_name()?;
                self.eat_keyword("IN");
                let source = self.expr()?;
                in_source(&source)?;
                (name, source)
            } else {
                // `JOIN f.children [[AS] x]`, the documented form without
                // IN: the value itself, one row when it is defined, none
                // when it is not (`JOIN f.NonExistent` leaves no row).
                let path = self.postfix()?;
                in_source(&path).map_err(|_| {
                    ApiError::bad_request(format!(
                        "A JOIN is 'JOIN x IN c.array', 'JOIN c.path [AS x]' or 'JOIN (SELECT ...) AS x'. Query: {}",
                        truncated(self.text)
                    ))
                })?;
                let named = self.eat_keyword("AS")
                    || matches!(self.peek(), Some(Token::Ident(w)) if !is_reserved(w));
                let name = match (&path, named) {
                    (_, true) => self.alias_name()?,
                    (Expr::Property(_, name), false) => name.clone(),
                    _ => format!("_join{}", joins.len() + 1),
                };
                let defined = Expr::Call("IS_DEFINED".into(), vec![path.clone()]);
                let single = Expr::Conditional(
                    Box::new(defined),
                    Box::new(Expr::Array(vec![path])),
                    Box::new(Expr::Array(Vec::new())),
                );
                (name, single)
            };
            joins.push(join);
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
            scope: outer.len(),
            source,
            source_in,
            joins,
            derived,
        })
    }

    /// What the first name of FROM ranges over: a path into the container's
    /// items, or in a subquery an expression of the names around it.
    fn source_path(&mut self, outer: Option<&[String]>) -> ApiResult<Expr> {
        match outer {
            None => self.container_path(),
            Some(names) => {
                self.aliases = names.to_vec();
                self.postfix()
            }
        }
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

/// What `x IN ...` may range over: a path, or a subquery (measured against
/// Microsoft's emulator: an array literal or a function call there is a
/// syntax error, SC1001; `x IN (SELECT VALUE ObjectToArray(c.m))` is the
/// way to range over a computed array).
fn in_source(expr: &Expr) -> ApiResult<()> {
    fn is_path(expr: &Expr) -> bool {
        match expr {
            Expr::Var(_) => true,
            Expr::Property(base, _) | Expr::Index(base, _) => is_path(base),
            _ => false,
        }
    }
    if is_path(expr) || matches!(expr, Expr::Subquery(..)) {
        return Ok(());
    }
    Err(query_error(
        "SC1001",
        "Syntax error, incorrect syntax near 'IN': what IN ranges over must be a path of the \
         item or a subquery, e.g. x IN (SELECT VALUE ObjectToArray(c.m)).",
    ))
}
