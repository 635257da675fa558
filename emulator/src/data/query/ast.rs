//! The parsed form of a query.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Literal(Value),
    /// A name `FROM` binds, by its position: 0 is the first (`c` in
    /// `SELECT c FROM c`), then one per JOIN.
    Var(usize),
    /// `base.name`
    Property(Box<Expr>, String),
    /// `base[index]`
    Index(Box<Expr>, Box<Expr>),
    Unary(UnaryOp, Box<Expr>),
    /// A comparison, `a = b`, `a < b`, ...
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// A left-associative run of operators of one precedence level,
    /// `a + b - c` or `a AND b AND c`: the first operand, then each operator
    /// with its right operand. Held flat, so that a long run costs no
    /// recursion to evaluate, walk or drop.
    Chain(Box<Expr>, Vec<(BinaryOp, Expr)>),
    /// `x BETWEEN low AND high`
    Between(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `x IN (a, b, ...)`; `negated` for `NOT IN`.
    In(Box<Expr>, Vec<Expr>, bool),
    /// `x [NOT] LIKE pattern [ESCAPE c]`; `negated` for `NOT LIKE`.
    Like(Box<Expr>, Box<Expr>, Option<Box<Expr>>, bool),
    /// `cond ? a : b`
    Conditional(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A function call, name upper-cased.
    Call(String, Vec<Expr>),
    Array(Vec<Expr>),
    Object(Vec<(String, Expr)>),
    /// `EXISTS(SELECT ...)`, `ARRAY(SELECT ...)` or `(SELECT ...)`: a query
    /// evaluated once per row of the query around it, whose names it reads.
    Subquery(SubqueryKind, Box<Select>),
}

/// What a subquery's results become.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubqueryKind {
    /// `EXISTS(...)`: whether it returns any result.
    Exists,
    /// `ARRAY(...)`: its results as an array.
    Array,
    /// `(SELECT ...)`: its first result (undefined without one).
    Scalar,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Not,
    Neg,
    Plus,
    /// `~x`
    BitNot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    And,
    Or,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Concat,
    Coalesce,
    BitAnd,
    BitOr,
    BitXor,
    /// `<<`
    ShiftLeft,
    /// `>>`, keeping the sign
    ShiftRight,
    /// `>>>`, filling with zeros
    ShiftRightZero,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    Count,
    /// `COUNTIF(condition)`: the rows where it is true.
    CountIf,
    Sum,
    Min,
    Max,
    Avg,
    /// `MAKELIST(x)`: every defined value, as an array.
    MakeList,
    /// `MAKESET(x)`: the distinct defined values, as an array.
    MakeSet,
}

impl Aggregate {
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "COUNT" => Aggregate::Count,
            "COUNTIF" => Aggregate::CountIf,
            "SUM" => Aggregate::Sum,
            "MIN" => Aggregate::Min,
            "MAX" => Aggregate::Max,
            "AVG" => Aggregate::Avg,
            "MAKELIST" => Aggregate::MakeList,
            "MAKESET" => Aggregate::MakeSet,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Projection {
    /// `SELECT *`
    Star,
    /// `SELECT VALUE expr`
    Value(Expr),
    /// `SELECT a, b AS x`: (expression, output name)
    Fields(Vec<(Expr, String)>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct SortKey {
    pub expr: Expr,
    pub descending: bool,
    pub kind: SortKind,
}

/// What an ORDER BY key sorts by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKind {
    /// The value, ascending or descending.
    Value,
    /// `ORDER BY VectorDistance(...)`: most similar first, whichever way
    /// the distance function counts (greater cosines, smaller Euclidean
    /// distances); written without ASC or DESC.
    Similarity,
    /// `ORDER BY RANK FullTextScore(...)`, `VectorDistance(...)` or
    /// `RRF(...)`: most relevant first.
    Rank,
}

/// `FROM c`, `FROM c.children ch`, `FROM x IN c.tags`, each with JOINs.
#[derive(Debug, Clone, PartialEq)]
pub struct From {
    /// The names bound, in order: the first names each item (or what
    /// `source` gives of it), each further one the elements of a JOIN.
    pub aliases: Vec<String>,
    /// How many names are bound outside this FROM: 0 for a query, the
    /// names of the rows around it for a subquery. A name is `Var(i)` with
    /// `i` counted over both, outer names first.
    pub scope: usize,
    /// What the first name ranges over: at the top an expression of the
    /// item (`Var(0)` is the item), `None` for the item itself; in a
    /// subquery an expression of the outer names.
    pub source: Option<Expr>,
    /// `x IN path`: the first name ranges over the array's elements.
    pub source_in: bool,
    /// `JOIN x IN expr`: the arrays the further names range over, each an
    /// expression of the names before it.
    pub joins: Vec<Expr>,
    /// `FROM (SELECT ... FROM c) x`: the first name ranges over the results
    /// of a query over the container (then `source` is `None`).
    pub derived: Option<Box<Select>>,
}

impl From {
    /// Whether each item gives exactly one row, itself (`FROM c`).
    pub fn is_plain(&self) -> bool {
        self.source.is_none() && self.joins.is_empty() && self.derived.is_none()
    }

    /// The clause as query text this parser reads back; `outer` are the
    /// names bound around it (none at the top).
    pub fn to_sql(&self, outer: &[String]) -> String {
        let item = ["root".to_string()];
        let source_scope = if self.scope == 0 { &item[..] } else { outer };
        let first = &self.aliases[0];
        let mut text = match (&self.source, self.source_in) {
            (None, _) => match &self.derived {
                Some(inner) => format!("FROM ({}) {first}", inner.to_sql(&[])),
                None => format!("FROM {first}"),
            },
            (Some(path), true) => format!("FROM {first} IN {}", path.to_sql(source_scope)),
            (Some(path), false) => format!("FROM {} {first}", path.to_sql(source_scope)),
        };
        let mut names: Vec<String> = outer.to_vec();
        names.push(first.clone());
        for (i, join) in self.joins.iter().enumerate() {
            let name = &self.aliases[i + 1];
            match single_value_join(join) {
                Some(path) => text.push_str(&format!(" JOIN {} {name}", path.to_sql(&names))),
                None => text.push_str(&format!(" JOIN {name} IN {}", join.to_sql(&names))),
            }
            names.push(name.clone());
        }
        text
    }
}

/// The path of a `JOIN c.path [x]` (the form without IN), which the parser
/// reads as `IS_DEFINED(path) ? [path] : []`: one row of the value itself.
fn single_value_join(join: &Expr) -> Option<&Expr> {
    let Expr::Conditional(test, then, otherwise) = join else {
        return None;
    };
    match (&**test, &**then, &**otherwise) {
        (Expr::Call(f, args), Expr::Array(one), Expr::Array(none))
            if f == "IS_DEFINED"
                && args.len() == 1
                && one.len() == 1
                && none.is_empty()
                && args[0] == one[0] =>
        {
            Some(&one[0])
        }
        _ => None,
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Select {
    /// The FROM clause; `None` for a query without one (evaluated once).
    pub from: Option<From>,
    pub distinct: bool,
    pub top: Option<usize>,
    pub projection: Projection,
    pub filter: Option<Expr>,
    /// `GROUP BY a, b`: one result per distinct tuple of their values.
    pub group_by: Vec<Expr>,
    pub order_by: Vec<SortKey>,
    pub offset: Option<usize>,
    pub limit: Option<usize>,
}

/// Precedence levels of the binary operators, loosest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Coalesce,
    Or,
    And,
    Comparison,
    BitOr,
    BitXor,
    BitAnd,
    Shift,
    Concat,
    Additive,
    Multiplicative,
    /// Above every operator: an operand alone.
    Operand,
}

impl Level {
    /// The level right operands are parsed at (left-associative operators).
    pub fn next(self) -> Level {
        match self {
            Level::Coalesce => Level::Or,
            Level::Or => Level::And,
            Level::And => Level::Comparison,
            Level::Comparison => Level::BitOr,
            Level::BitOr => Level::BitXor,
            Level::BitXor => Level::BitAnd,
            Level::BitAnd => Level::Shift,
            Level::Shift => Level::Concat,
            Level::Concat => Level::Additive,
            Level::Additive => Level::Multiplicative,
            Level::Multiplicative | Level::Operand => Level::Operand,
        }
    }
}

impl BinaryOp {
    pub fn level(self) -> Level {
        match self {
            BinaryOp::Coalesce => Level::Coalesce,
            BinaryOp::Or => Level::Or,
            BinaryOp::And => Level::And,
            BinaryOp::Eq
            | BinaryOp::Ne
            | BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge => Level::Comparison,
            BinaryOp::BitOr => Level::BitOr,
            BinaryOp::BitXor => Level::BitXor,
            BinaryOp::BitAnd => Level::BitAnd,
            BinaryOp::ShiftLeft | BinaryOp::ShiftRight | BinaryOp::ShiftRightZero => Level::Shift,
            BinaryOp::Concat => Level::Concat,
            BinaryOp::Add | BinaryOp::Sub => Level::Additive,
            BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => Level::Multiplicative,
        }
    }

    pub fn to_sql(self) -> &'static str {
        match self {
            BinaryOp::And => "AND",
            BinaryOp::Or => "OR",
            BinaryOp::Eq => "=",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Mod => "%",
            BinaryOp::Concat => "||",
            BinaryOp::Coalesce => "??",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::ShiftLeft => "<<",
            BinaryOp::ShiftRight => ">>",
            BinaryOp::ShiftRightZero => ">>>",
        }
    }
}

impl Expr {
    /// Whether the expression is built of literals, operators, arrays and
    /// objects only (it reads nothing of a row).
    pub fn is_constant(&self) -> bool {
        match self {
            Expr::Literal(_) => true,
            Expr::Array(items) => items.iter().all(Expr::is_constant),
            Expr::Object(fields) => fields.iter().all(|(_, e)| e.is_constant()),
            Expr::Unary(_, e) => e.is_constant(),
            Expr::Binary(_, a, b) => a.is_constant() && b.is_constant(),
            Expr::Chain(first, rest) => {
                first.is_constant() && rest.iter().all(|(_, e)| e.is_constant())
            }
            _ => false,
        }
    }

    /// Whether an aggregate function (`COUNT`, `SUM`...) is called in this
    /// expression, outside its subqueries.
    pub fn contains_aggregate(&self) -> bool {
        let own = matches!(self, Expr::Call(name, _) if Aggregate::from_name(name).is_some());
        own || self.children().into_iter().any(Expr::contains_aggregate)
    }

    /// The expressions directly inside this one, in order (not those of a
    /// subquery, which is a query of its own).
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::Literal(_) | Expr::Var(_) | Expr::Subquery(..) => Vec::new(),
            Expr::Property(base, _) | Expr::Unary(_, base) => vec![base],
            Expr::Index(a, b) | Expr::Binary(_, a, b) => vec![a, b],
            Expr::Between(a, b, c) | Expr::Conditional(a, b, c) => vec![a, b, c],
            Expr::In(a, list, _) => std::iter::once(a.as_ref()).chain(list).collect(),
            Expr::Chain(first, rest) => std::iter::once(first.as_ref())
                .chain(rest.iter().map(|(_, e)| e))
                .collect(),
            Expr::Like(x, pattern, escape, _) => {
                let mut children = vec![x.as_ref(), pattern.as_ref()];
                children.extend(escape.as_deref());
                children
            }
            Expr::Call(_, args) | Expr::Array(args) => args.iter().collect(),
            Expr::Object(fields) => fields.iter().map(|(_, e)| e).collect(),
        }
    }

    /// The expression as query text that this parser reads back to the same
    /// tree (used to write the rewritten queries of query plans).
    pub fn to_sql(&self, aliases: &[String]) -> String {
        let sql = |e: &Expr| e.to_sql(aliases);
        match self {
            Expr::Literal(v) => match super::number::read(v).filter(|n| !n.is_finite()) {
                // NaN and the infinities as the language writes them.
                Some(n) if n.is_nan() => "NaN".to_string(),
                Some(n) if n > 0.0 => "Infinity".to_string(),
                Some(_) => "-Infinity".to_string(),
                None => v.to_string(),
            },
            Expr::Var(i) => aliases.get(*i).map_or("root", String::as_str).to_string(),
            Expr::Property(base, name) => {
                let simple = name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if simple {
                    format!("{}.{name}", sql(base))
                } else {
                    format!("{}[{}]", sql(base), Value::from(name.as_str()))
                }
            }
            Expr::Index(base, index) => format!("{}[{}]", sql(base), sql(index)),
            Expr::Unary(UnaryOp::Not, e) => format!("(NOT {})", sql(e)),
            Expr::Unary(UnaryOp::Neg, e) => format!("(-{})", sql(e)),
            Expr::Unary(UnaryOp::Plus, e) => format!("(+{})", sql(e)),
            Expr::Unary(UnaryOp::BitNot, e) => format!("(~{})", sql(e)),
            Expr::Binary(op, a, b) => format!("({} {} {})", sql(a), op.to_sql(), sql(b)),
            Expr::Chain(first, rest) => {
                let mut text = format!("({}", sql(first));
                for (op, e) in rest {
                    text.push_str(&format!(" {} {}", op.to_sql(), sql(e)));
                }
                text.push(')');
                text
            }
            Expr::Between(x, low, high) => {
                format!("({} BETWEEN {} AND {})", sql(x), sql(low), sql(high))
            }
            Expr::In(x, list, negated) => format!(
                "({} {}IN ({}))",
                sql(x),
                if *negated { "NOT " } else { "" },
                list.iter().map(sql).collect::<Vec<_>>().join(", ")
            ),
            Expr::Like(x, pattern, escape, negated) => format!(
                "({} {}LIKE {}{})",
                sql(x),
                if *negated { "NOT " } else { "" },
                sql(pattern),
                escape
                    .as_ref()
                    .map(|e| format!(" ESCAPE {}", sql(e)))
                    .unwrap_or_default()
            ),
            Expr::Conditional(c, a, b) => format!("({} ? {} : {})", sql(c), sql(a), sql(b)),
            Expr::Call(name, args) => format!(
                "{name}({})",
                args.iter().map(sql).collect::<Vec<_>>().join(", ")
            ),
            Expr::Array(items) => {
                format!("[{}]", items.iter().map(sql).collect::<Vec<_>>().join(", "))
            }
            Expr::Object(fields) => format!(
                "{{{}}}",
                fields
                    .iter()
                    .map(|(k, e)| format!("{}: {}", Value::from(k.as_str()), sql(e)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Expr::Subquery(kind, select) => {
                let text = select.to_sql(aliases);
                match kind {
                    SubqueryKind::Exists => format!("EXISTS({text})"),
                    SubqueryKind::Array => format!("ARRAY({text})"),
                    SubqueryKind::Scalar => format!("({text})"),
                }
            }
        }
    }
}

impl Projection {
    /// The expressions it projects (none for `*`).
    pub fn expressions(&self) -> Vec<&Expr> {
        match self {
            Projection::Star => Vec::new(),
            Projection::Value(e) => vec![e],
            Projection::Fields(fields) => fields.iter().map(|(e, _)| e).collect(),
        }
    }
}

impl Select {
    /// Calls `f` on every expression of the query: its clauses', those
    /// inside them, and those of its subqueries and derived FROM.
    pub fn each_expression(&self, f: &mut impl FnMut(&Expr)) {
        fn visit(expr: &Expr, f: &mut impl FnMut(&Expr)) {
            f(expr);
            if let Expr::Subquery(_, select) = expr {
                select.each_expression(f);
            }
            for child in expr.children() {
                visit(child, f);
            }
        }
        let projected = self.projection.expressions();
        for e in projected.into_iter().chain(self.clause_expressions()) {
            visit(e, f);
        }
        if let Some(inner) = self.from.as_ref().and_then(|f| f.derived.as_deref()) {
            inner.each_expression(f);
        }
    }

    /// The ORDER BY payload: what the query returns per document, as SQL
    /// (a plan's rewritten queries carry it).
    pub fn payload_sql(&self, alias: &[String]) -> String {
        match &self.projection {
            Projection::Star => alias.first().map_or("c", String::as_str).to_string(),
            Projection::Value(e) => e.to_sql(alias),
            Projection::Fields(fields) => format!(
                "{{{}}}",
                fields
                    .iter()
                    .map(|(e, name)| {
                        format!(
                            "{}: {}",
                            serde_json::Value::from(name.as_str()),
                            e.to_sql(alias)
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// The expressions of its clauses other than the projection: WHERE,
    /// ORDER BY, GROUP BY, and what FROM and its JOINs range over (not a
    /// derived table's query, nor the inside of subqueries).
    pub fn clause_expressions(&self) -> impl Iterator<Item = &Expr> {
        self.filter
            .iter()
            .chain(self.order_by.iter().map(|k| &k.expr))
            .chain(&self.group_by)
            .chain(
                self.from
                    .iter()
                    .flat_map(|f| f.source.iter().chain(&f.joins)),
            )
    }

    /// The names FROM binds (none without FROM).
    pub fn aliases(&self) -> &[String] {
        self.from.as_ref().map_or(&[], |f| f.aliases.as_slice())
    }

    /// The query as text this parser reads back; `outer` are the names
    /// bound around it (a subquery's), none for a query.
    pub fn to_sql(&self, outer: &[String]) -> String {
        let names: Vec<String> = outer.iter().chain(self.aliases()).cloned().collect();
        let sql = |e: &Expr| e.to_sql(&names);
        let list = |exprs: &mut dyn Iterator<Item = String>| exprs.collect::<Vec<_>>().join(", ");
        let mut text = String::from("SELECT ");
        if self.distinct {
            text.push_str("DISTINCT ");
        }
        if let Some(top) = self.top {
            text.push_str(&format!("TOP {top} "));
        }
        text.push_str(&match &self.projection {
            Projection::Star => "*".to_string(),
            Projection::Value(e) => format!("VALUE {}", sql(e)),
            Projection::Fields(fields) => list(
                &mut fields
                    .iter()
                    // A generated name (`$1`) is generated again in the same place.
                    .map(|(e, name)| match name.starts_with('$') {
                        true => sql(e),
                        false => format!("{} AS {name}", sql(e)),
                    }),
            ),
        });
        if let Some(from) = &self.from {
            text.push(' ');
            text.push_str(&from.to_sql(outer));
        }
        if let Some(filter) = &self.filter {
            text.push_str(&format!(" WHERE {}", sql(filter)));
        }
        if !self.group_by.is_empty() {
            text.push_str(&format!(
                " GROUP BY {}",
                list(&mut self.group_by.iter().map(sql))
            ));
        }
        if !self.order_by.is_empty() {
            text.push_str(&format!(
                " ORDER BY {}",
                list(&mut self.order_by.iter().map(|k| match k.kind {
                    SortKind::Value => format!(
                        "{} {}",
                        sql(&k.expr),
                        if k.descending { "DESC" } else { "ASC" }
                    ),
                    SortKind::Similarity => sql(&k.expr),
                    SortKind::Rank => format!("RANK {}", sql(&k.expr)),
                }))
            ));
        }
        if let (Some(offset), Some(limit)) = (self.offset, self.limit) {
            text.push_str(&format!(" OFFSET {offset} LIMIT {limit}"));
        }
        text
    }
}
