//! A query prepared to run: its text parsed with its parameters,
//! validated, and what running it needs to know of it (whether it
//! aggregates, streams in write order, reads documents at all, which index
//! paths could serve it, whether it reads the clock). `run/` runs it.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use super::access::Access;
use super::ast::{Expr, From, Projection, Select};
use super::search::nearest::Nearest;
use super::{eval, execute, functions, parser, search, udf, validate};
use crate::data::index::DocumentPath;
use crate::protocol::error::ApiResult;

/// The JSON body of a query request.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryBody {
    pub query: String,
    #[serde(default)]
    pub parameters: Vec<Parameter>,
}

#[derive(Debug, Deserialize)]
pub struct Parameter {
    pub name: String,
    #[serde(default)]
    pub value: Value,
}

#[derive(Debug, Clone)]
pub struct PreparedQuery {
    pub select: Select,
    /// The projection computes aggregates: one row over all matching documents.
    pub(super) aggregate: bool,
    /// What a stored document's JSON must contain to possibly match the filter.
    pub(super) required: Vec<Vec<u8>>,
    /// Whether any part of the query reads document contents (not so for
    /// `SELECT VALUE COUNT(1) FROM c`, which only counts).
    pub(super) reads_documents: bool,
    /// The instant `GetCurrent*` return, in epoch milliseconds (see `now.rs`).
    pub(super) now_millis: Option<i64>,
    /// What of it the container's index can serve (`access.rs`).
    pub(super) access: Access,
}

impl PreparedQuery {
    pub fn prepare(body: &QueryBody) -> ApiResult<Self> {
        let parameters: HashMap<String, Value> = body
            .parameters
            .iter()
            .map(|p| (p.name.clone(), p.value.clone()))
            .collect();
        let select = parser::parse(&body.query, &parameters)?;
        validate::validate(&select, &body.query, &[], false)?;
        Ok(Self::from_select(select))
    }

    /// A validated query, with what running it needs to know of it.
    pub(super) fn from_select(select: Select) -> Self {
        let projected = select.projection.expressions();
        // One row over everything; with GROUP BY, one per group instead.
        let aggregate = execute::aggregates(&select);
        let required = match (&select.filter, &select.from) {
            (Some(filter), Some(from)) => eval::required_fragments(filter, from),
            _ => Vec::new(),
        };
        let reads_documents = select.filter.is_some()
            || !select.order_by.is_empty()
            || matches!(select.projection, Projection::Star)
            || projected.iter().any(|e| eval::reads_document(e))
            // JOINs and FROM paths read the item to know how many rows it makes.
            || select.from.as_ref().is_some_and(|f| !f.is_plain())
            || !select.group_by.is_empty();
        let access = Access::of(&select);
        PreparedQuery {
            select,
            aggregate,
            required,
            reads_documents,
            now_millis: None,
            access,
        }
    }

    /// The property paths whose index could serve this query: the
    /// container builds those it lacks before the query runs.
    pub fn index_paths(&self) -> Vec<DocumentPath> {
        let nearest = Nearest::of(&self.select, &search::Policies::default());
        if search::statistics::needs_statistics(&self.select) || nearest.is_some() {
            return Vec::new();
        }
        self.access.paths()
    }

    /// Whether the query calls a function that reads the clock
    /// (`GetCurrentDateTime`...): its result moves with every page, so it
    /// is never kept between pages.
    pub fn reads_clock(&self) -> bool {
        let mut reads = false;
        self.select.each_expression(&mut |e| {
            if let Expr::Call(name, _) = e {
                reads |= functions::reads_clock(name);
            }
        });
        reads
    }

    /// Refuses ORDER BY that the container's indexing `policy` cannot
    /// serve, as the service does (`validate.rs`).
    pub fn check_order_by_index(&self, policy: &Value) -> ApiResult<()> {
        validate::check_order_by_index(&self.select, policy)
    }

    /// The ids of the user-defined functions the query calls.
    pub fn udf_names(&self) -> Vec<String> {
        udf::names(&self.select)
    }

    /// Whether each item is one row, itself (`FROM c`, no JOIN).
    pub(super) fn is_plain_from(&self) -> bool {
        self.select.from.as_ref().is_some_and(From::is_plain)
    }

    /// Whether results come in write order one document at a time, so that
    /// a page can resume after an item instead of re-running the whole query.
    pub fn streams_in_write_order(&self) -> bool {
        let s = &self.select;
        !self.aggregate
            && self.is_plain_from()
            && s.order_by.is_empty()
            && s.group_by.is_empty()
            && !s.distinct
            && s.top.is_none()
            && s.offset.is_none()
    }

    /// Whether the query returns documents as stored, unfiltered (no parsing needed).
    pub(super) fn is_plain_scan(&self) -> bool {
        self.streams_in_write_order()
            && self.select.filter.is_none()
            && self.select.projection == Projection::Star
    }

    /// Whether pages of this query resume at an offset into its whole
    /// result (ORDER BY, aggregates, ...): [`Self::run_whole`] computes it
    /// once for [`results::ResultCache`].
    pub fn needs_whole_result(&self) -> bool {
        !self.streams_in_write_order()
    }
}
