//! The parsed form of a query.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Literal(Value),
    /// The `FROM` alias itself (`c` in `SELECT c FROM c`).
    Root,
    /// `base.name`
    Property(Box<Expr>, String),
    /// `base[index]`
    Index(Box<Expr>, Box<Expr>),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `x BETWEEN low AND high`
    Between(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `x IN (a, b, ...)`; `negated` for `NOT IN`.
    In(Box<Expr>, Vec<Expr>, bool),
    /// `cond ? a : b`
    Conditional(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A function call, name upper-cased.
    Call(String, Vec<Expr>),
    Array(Vec<Expr>),
    Object(Vec<(String, Expr)>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Not,
    Neg,
    Plus,
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    Count,
    Sum,
    Min,
    Max,
    Avg,
}

impl Aggregate {
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "COUNT" => Aggregate::Count,
            "SUM" => Aggregate::Sum,
            "MIN" => Aggregate::Min,
            "MAX" => Aggregate::Max,
            "AVG" => Aggregate::Avg,
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
}

#[derive(Debug, Clone, PartialEq)]
pub struct Select {
    pub distinct: bool,
    pub top: Option<usize>,
    pub projection: Projection,
    pub filter: Option<Expr>,
    pub order_by: Vec<SortKey>,
    pub offset: Option<usize>,
    pub limit: Option<usize>,
}
