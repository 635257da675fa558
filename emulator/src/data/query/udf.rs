//! User-defined functions in queries: `udf.name(args)`, evaluated per row
//! by a [`Runner`] that the caller gives the query's run
//! (`data/script/udf.rs`: JavaScript, bounded as a stored procedure is).
//!
//! Evaluation is synchronous and infallible (undefined on any mismatch),
//! so the runner and the first failure are kept in the run's context
//! ([`Calls`]): a UDF that throws or runs out of time makes the rest of
//! the run undefined, and [`Calls::verdict`] turns it into the query's
//! refusal.

use std::cell::RefCell;

use serde_json::Value;

use super::ast::{Expr, Select};
use crate::protocol::error::{ApiError, ApiResult};

/// How a call names a user-defined function: `udf.` then its id.
pub const PREFIX: &str = "udf.";

/// The refusal of a query that calls a UDF the container does not have.
pub fn missing(name: &str) -> ApiError {
    ApiError::bad_request(format!(
        "The user-defined function 'udf.{name}' does not exist in this container: create it \
         (POST .../udfs) or correct the name; the prefix udf. and the id are case-sensitive."
    ))
}

/// Evaluates the user-defined functions of one query run.
pub trait Runner {
    /// Calls the function `name` (its id) with defined arguments; `None`
    /// for an undefined result.
    fn call(&mut self, name: &str, args: &[Value]) -> ApiResult<Option<Value>>;
}

/// The user-defined function calls of one run: its runner (none where
/// UDFs cannot run) and its first failure.
#[derive(Default)]
pub(super) struct Calls {
    runner: RefCell<Option<Box<dyn Runner>>>,
    failure: RefCell<Option<ApiError>>,
}

impl Calls {
    pub fn new(runner: Option<Box<dyn Runner>>) -> Self {
        Calls {
            runner: RefCell::new(runner),
            failure: RefCell::new(None),
        }
    }

    /// `udf.name(args)` for one row: undefined if an argument is (the call
    /// is skipped, as the service does) or once a call of this run failed.
    pub fn call(&self, name: &str, args: &[Option<Value>]) -> Option<Value> {
        if self.failure.borrow().is_some() {
            return None;
        }
        let args: Vec<Value> = args.iter().cloned().collect::<Option<_>>()?;
        let result = match self.runner.borrow_mut().as_mut() {
            Some(runner) => runner.call(name, &args),
            None => Err(ApiError::bad_request(format!(
                "The user-defined function 'udf.{name}' cannot be called here: UDFs run in queries of a container's items."
            ))),
        };
        match result {
            Ok(value) => value,
            Err(failure) => {
                self.failure.replace(Some(failure));
                None
            }
        }
    }

    /// The run's verdict once it is over: the first UDF failure, if any.
    pub fn verdict(&self) -> ApiResult<()> {
        match self.failure.take() {
            Some(failure) => Err(failure),
            None => Ok(()),
        }
    }
}

/// The ids of the user-defined functions a query calls, each once.
pub fn names(select: &Select) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    select.each_expression(&mut |e| {
        if let Expr::Call(name, _) = e {
            if let Some(id) = name.strip_prefix(PREFIX) {
                if !names.iter().any(|n| n == id) {
                    names.push(id.to_string());
                }
            }
        }
    });
    names
}
