//! One run of a query, and everything it reads and counts while it runs,
//! in one value the evaluator is handed: the instant `GetCurrent*` return,
//! the copy budget (`budget.rs`), the container's search policies and the
//! statistics `FullTextScore` ranks with (`search/`), the runner of its
//! user-defined functions and their first failure (`udf.rs`), and the
//! documents it retrieved (`retrieved.rs`).
//!
//! A context is made where the run starts and lives on that thread only
//! (its parts are cells; a UDF runner is a JavaScript engine, which stays
//! on the thread that made it): a page that runs on a blocking thread
//! makes its context there, from a [`Setting`] that can travel. Nothing of
//! a run is kept per thread, so no run reads another's state.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use serde_json::Value;

use super::ast::Select;
use super::budget::Budget;
use super::retrieved::{Counter, Retrieved};
use super::search::bm25::{Statistics, TermsKey};
use super::udf::{Calls, Runner};
use crate::data::index::search_policy::Policies;
use crate::protocol::error::ApiResult;

/// What a run is given by whoever starts it, besides the query and its
/// items: the container's search policies and, for a query that calls
/// user-defined functions, their runner. The default is a run outside a
/// container (a feed of resources, a patch condition): default policies,
/// no UDFs.
#[derive(Default)]
pub struct Setting {
    pub policies: Arc<Policies>,
    pub udfs: Option<Box<dyn Runner>>,
}

/// Everything one run of a query reads and counts.
#[derive(Default)]
pub struct RunContext {
    /// The instant of `GetCurrent*`, in epoch milliseconds (`None` for an
    /// expression evaluated outside a query, where they are undefined).
    pub(super) now_millis: Option<i64>,
    pub(super) budget: Budget,
    pub(super) policies: Arc<Policies>,
    /// `FullTextScore`'s statistics, of the documents in scope.
    statistics: RefCell<Rc<HashMap<TermsKey, Statistics>>>,
    pub(super) udfs: Calls,
    pub(super) retrieved: Counter,
    /// How the evaluator runs a subquery: the executor's
    /// (`execute::subquery`), which sits above the evaluator and is handed
    /// to it here; none outside a run, where a subquery is undefined.
    subqueries: Option<Subqueries>,
}

/// Runs a subquery within the row `outer` of the query around it.
pub(super) type Subqueries = fn(&RunContext, &Select, &[&Value]) -> Vec<Value>;

impl RunContext {
    /// The context of a run at `now_millis`, in `setting`.
    pub(super) fn new(now_millis: i64, setting: Setting, subqueries: Subqueries) -> Self {
        RunContext {
            now_millis: Some(now_millis),
            subqueries: Some(subqueries),
            policies: setting.policies,
            udfs: Calls::new(setting.udfs),
            ..RunContext::default()
        }
    }

    /// The context of an expression that reads nothing of a run (a
    /// constant of a query being prepared or planned).
    pub(super) fn outside_a_run() -> Self {
        RunContext::default()
    }

    /// The results of the subquery `select` within the row `outer`;
    /// `None` outside a run (a constant of a query being planned).
    pub(super) fn subquery(&self, select: &Select, outer: &[&Value]) -> Option<Vec<Value>> {
        self.subqueries.map(|run| run(self, select, outer))
    }

    /// The run's verdict once it is over: a UDF's failure, else a row over
    /// budget or a result JSON cannot hold; else what it retrieved.
    pub(super) fn verdict(&self) -> ApiResult<Retrieved> {
        self.udfs.verdict()?;
        self.budget.verdict()?;
        Ok(self.retrieved.take())
    }

    /// Runs `run` with the statistics `FullTextScore` reads.
    pub(super) fn with_statistics<T>(
        &self,
        statistics: HashMap<TermsKey, Statistics>,
        run: impl FnOnce() -> T,
    ) -> T {
        let previous = self.statistics.replace(Rc::new(statistics));
        let result = run();
        self.statistics.replace(previous);
        result
    }

    /// The statistics of `FullTextScore(path, terms)` in this run.
    pub(super) fn statistics(&self, key: &TermsKey) -> Option<Statistics> {
        self.statistics.borrow().get(key).cloned()
    }
}
