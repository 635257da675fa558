//! User-defined functions in a query (`udf.name(args)`): one sandbox per
//! query run, made on the first call (a query that calls none makes none),
//! each function compiled once, then called per row with its arguments
//! and result passed as JSON. The run's time bound is the service's, from
//! the first call; a UDF has no `getContext()` (it only computes).

use std::collections::HashMap;

use rquickjs::{CatchResultExt, Function, Object, Persistent};
use serde_json::Value;

use super::engine::{self, Ending, Limits, Sandbox, Thrown};
use crate::data::query::pipeline::Host;
use crate::data::query::udf::{missing, Runner};
use crate::protocol::error::{ApiError, ApiResult};

/// Calls a compiled UDF, catching what it throws: `V` and the result's
/// JSON, `U` for undefined, or `T` and the thrown value's record.
const GLUE: &str = r#"(function (describe) {
  'use strict';
  const functions = Object.create(null);
  return {
    add: function (name, fn) {
      if (typeof fn !== 'function') throw new TypeError('The body of a user-defined function must be a function expression, e.g. function (x) { ... }.');
      functions[name] = fn;
    },
    call: function (name, argsJson) {
      try {
        const result = JSON.stringify(functions[name].apply(undefined, JSON.parse(argsJson)));
        return result === undefined ? 'U' : 'V' + result;
      } catch (e) {
        return 'T' + JSON.stringify(describe(e));
      }
    },
  };
})"#;

/// The scripts' side of a query that calls UDFs (the pipeline's
/// [`Host`]): their runner, and a thread bounded as a script's run is.
#[derive(Debug, Clone, Copy)]
pub struct UdfHost {
    pub limits: Limits,
}

impl Host for UdfHost {
    fn runner(&self, bodies: HashMap<String, String>) -> Box<dyn Runner> {
        Box::new(Udfs::new(bodies, self.limits))
    }

    fn bounded<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> ApiResult<T> + Send + 'static,
    ) -> impl std::future::Future<Output = ApiResult<T>> + Send {
        super::bound::run(self.limits.time, move |_| work())
    }
}

/// The UDFs of one query run, by id (their bodies as stored).
pub struct Udfs {
    bodies: HashMap<String, String>,
    limits: Limits,
    /// The glue object before its sandbox: dropped first, while its runtime lives.
    sandbox: Option<(Persistent<Object<'static>>, Sandbox)>,
    compiled: Vec<String>,
}

impl Udfs {
    pub fn new(bodies: HashMap<String, String>, limits: Limits) -> Self {
        Udfs {
            bodies,
            limits,
            sandbox: None,
            compiled: Vec::new(),
        }
    }

    fn glue(&mut self) -> ApiResult<&(Persistent<Object<'static>>, Sandbox)> {
        if self.sandbox.is_none() {
            let sandbox = Sandbox::new(self.limits).map_err(super::failure)?;
            let glue = sandbox.context.with(|ctx| {
                let errors = engine::install_errors(&ctx)?;
                let describe: Function = errors.get("describe")?;
                let make: Function = ctx.eval(GLUE)?;
                let glue: Object = make.call((describe,))?;
                Ok::<_, rquickjs::Error>(Persistent::save(&ctx, glue))
            });
            let glue = glue.map_err(|e| {
                ApiError::bad_request(format!(
                    "The user-defined functions could not be set up: {e}"
                ))
            })?;
            self.sandbox = Some((glue, sandbox));
        }
        Ok(self.sandbox.as_ref().expect("just made"))
    }
}

impl Runner for Udfs {
    fn call(&mut self, name: &str, args: &[Value]) -> ApiResult<Option<Value>> {
        let first = !self.compiled.iter().any(|n| n == name);
        // Its source is needed (copied out of `self`) only to compile it.
        let source = match (first, self.bodies.get(name)) {
            (_, None) => return Err(missing(name)),
            (true, Some(source)) => Some(source.clone()),
            (false, Some(_)) => None,
        };
        let arguments = Value::Array(args.to_vec()).to_string();
        let (glue, sandbox) = self.glue()?;
        let answer = sandbox.context.with(|ctx| -> Result<String, Ending> {
            let glue = glue
                .clone()
                .restore(&ctx)
                .map_err(|e| engine::uncaught(e.into_caught(&ctx)))?;
            if let Some(source) = &source {
                let function = engine::compile(&ctx, source)?;
                let add: Function = glue
                    .get("add")
                    .map_err(|e| engine::uncaught(e.into_caught(&ctx)))?;
                add.call::<_, ()>((name, function))
                    .catch(&ctx)
                    .map_err(engine::uncaught)?;
            }
            let call: Function = glue
                .get("call")
                .map_err(|e| engine::uncaught(e.into_caught(&ctx)))?;
            call.call((name, arguments))
                .catch(&ctx)
                .map_err(engine::uncaught)
        });
        if sandbox.timed_out() {
            return Err(super::failure(Ending::TimedOut));
        }
        if first {
            self.compiled.push(name.to_string());
        }
        let answer = answer.map_err(super::failure)?;
        let what = format!("The result of udf.{name}");
        let (kind, json) = answer.split_at(answer.len().min(1));
        match (kind, json) {
            ("V", json) => Ok(Some(super::script_json(json, &what)?)),
            ("T", json) => {
                let thrown: Thrown = serde_json::from_str(json)
                    .map_err(|e| ApiError::bad_request(format!("{what} could not be read: {e}")))?;
                Err(super::failure(Ending::Threw(thrown)))
            }
            _ => Ok(None),
        }
    }
}

trait IntoCaught<'js> {
    fn into_caught(self, ctx: &rquickjs::Ctx<'js>) -> rquickjs::CaughtError<'js>;
}

impl<'js> IntoCaught<'js> for rquickjs::Error {
    fn into_caught(self, ctx: &rquickjs::Ctx<'js>) -> rquickjs::CaughtError<'js> {
        rquickjs::CaughtError::from_error(ctx, self)
    }
}
