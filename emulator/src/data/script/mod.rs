//! Server-side JavaScript: stored procedure executions, pre- and
//! post-triggers around an item write, and user-defined functions in
//! queries.
//!
//! - `engine.rs` runs one execution in a fresh QuickJS runtime, bounded in
//!   time and memory; `prelude.js` is the service's server-side API over
//!   one native call, which `host.rs` serves.
//! - An execution's writes go to a [`Transaction`] (`data/store/transaction.rs`):
//!   staged, then installed together under one LSN when the script ends
//!   well, or dropped. If the container was written meanwhile the script
//!   runs again ([`MAX_ATTEMPTS`]), then the request is 449 RetryWith,
//!   which the SDKs retry.
//! - Executions in one container run one at a time (as the service runs a
//!   partition's scripts on its primary), on a blocking thread, holding no
//!   store lock while the script runs.
//!
//! Nothing here is loaded before the first execution: the engine's runtime
//! is created per execution.

mod bound;
mod engine;
mod host;
mod refusal;
mod triggers;
mod udf;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{json, Value};

use bound::Gate;
use engine::Ending;
pub use engine::Limits;
use host::Host;
use refusal::failure;
pub use triggers::{named_trigger, TriggeredWrite, WriteKind};
pub use udf::UdfHost;

use host::Links;

use crate::data::store::{Committed, Store};
use crate::protocol::error::{ApiError, ApiResult, Status};
use crate::protocol::limits::MAX_SCRIPT_RESPONSE_BYTES;

/// How many times a script runs before a conflicting writer wins (449).
pub const MAX_ATTEMPTS: usize = 5;

/// What executions share: their bounds, and one lock per container that
/// runs them one at a time.
pub struct ScriptEngine {
    pub limits: Limits,
    containers: Mutex<HashMap<String, Arc<Mutex<()>>>>,
}

impl Default for ScriptEngine {
    fn default() -> Self {
        ScriptEngine::new(Limits::SERVICE)
    }
}

impl ScriptEngine {
    pub fn new(limits: Limits) -> Self {
        ScriptEngine {
            limits,
            containers: Mutex::default(),
        }
    }

    fn container_lock(&self, container_rid: &str) -> Arc<Mutex<()>> {
        self.containers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(container_rid.to_string())
            .or_default()
            .clone()
    }
}

/// A stored procedure execution, as the request asks for it.
pub struct SprocCall {
    pub database: String,
    pub container: String,
    /// The stored procedure's body, as stored.
    pub source: String,
    /// `x-ms-documentdb-partitionkey`, as sent.
    pub partition_key: Option<String>,
    /// The request body (a JSON array of arguments), if any.
    pub arguments: Option<String>,
    /// `x-ms-documentdb-script-enable-logging: true`.
    pub logging: bool,
}

/// A stored procedure's answer.
#[derive(Debug)]
pub struct SprocResult {
    /// The response body as JSON text (`""` when the script set none).
    pub body: String,
    /// What `console.log` wrote, with logging on.
    pub log: Option<String>,
    pub committed: Committed,
}

impl ScriptEngine {
    /// Executes a stored procedure in the logical partition the request
    /// names, on a blocking thread.
    pub async fn execute_stored_procedure(
        self: &Arc<Self>,
        store: &Arc<Store>,
        call: SprocCall,
    ) -> ApiResult<SprocResult> {
        let (scripts, store) = (self.clone(), store.clone());
        bound::run(self.limits.time, move |gate| {
            scripts.run_stored_procedure(&store, call, gate)
        })
        .await
    }

    fn run_stored_procedure(
        &self,
        store: &Arc<Store>,
        call: SprocCall,
        gate: &Gate,
    ) -> ApiResult<SprocResult> {
        let scope = Scope {
            database: &call.database,
            container: &call.container,
            partition_key: call.partition_key.as_deref(),
            item: None,
        };
        let ((body, log), committed) = self.transact(store, scope, gate, |host, links| {
            let setup = json!({
                "kind": "sproc",
                "logging": call.logging,
                "requestBody": Value::Null,
                "responseBody": "",
                "selfLink": links.self_link(),
                "altLink": links.alt_link(),
            })
            .to_string();
            let outcome = self.run_script(host, &call.source, &setup, call.arguments.as_deref());
            let body = match outcome.ending {
                Ending::Done { body } => body.unwrap_or_default(),
                failed => return Err(failure(failed)),
            };
            if body.len() > MAX_SCRIPT_RESPONSE_BYTES {
                return Err(ApiError::too_large(format!(
                    "Resulting message would be too large: the stored procedure's response body is {} bytes, \
                     more than {MAX_SCRIPT_RESPONSE_BYTES}; nothing it wrote was kept. Return from the script \
                     with part of the result and a continuation, and call it again.",
                    body.len()
                )));
            }
            Ok((body, outcome.log))
        })?;
        Ok(SprocResult {
            body,
            log: call.logging.then_some(log),
            committed,
        })
    }

    /// Runs `attempt` against a transaction in the partition `scope` names
    /// until it commits: one execution at a time per container; a conflict
    /// with another writer runs it again ([`MAX_ATTEMPTS`], then 449); the
    /// gate keeps an execution answered 408 from committing. An `Err` from
    /// `attempt` rolls back (the transaction is dropped).
    fn transact<T>(
        &self,
        store: &Arc<Store>,
        scope: Scope<'_>,
        gate: &Gate,
        mut attempt: impl FnMut(&Rc<RefCell<Host>>, &Links) -> ApiResult<T>,
    ) -> ApiResult<(T, Committed)> {
        let links = store.container_names(scope.database, scope.container)?;
        let lock = self.container_lock(&links.container_rid);
        let _one_at_a_time = bound::lock_within(&lock, self.limits.time);
        for _ in 0..MAX_ATTEMPTS {
            let tx = store.begin_transaction_for(
                scope.database,
                scope.container,
                scope.partition_key,
                scope.item,
            )?;
            let soft_deadline = self.limits.soft_deadline(Instant::now());
            let host = Rc::new(RefCell::new(Host::new(
                store.clone(),
                tx,
                links.clone(),
                soft_deadline,
            )));
            let value = attempt(&host, &links)?;
            let host = Rc::try_unwrap(host)
                .ok()
                .expect("the engines are gone: they held the only other references")
                .into_inner();
            if !gate.begin_commit() {
                return Err(bound::timed_out());
            }
            match store.commit_transaction(host.tx)? {
                Ok(committed) => return Ok((value, committed)),
                Err(_conflict) => gate.resume(),
            }
        }
        Err(retry_with())
    }

    /// One script, its collection calls served by `host`.
    fn run_script(
        &self,
        host: &Rc<RefCell<Host>>,
        source: &str,
        setup: &str,
        arguments: Option<&str>,
    ) -> engine::Outcome {
        let served = host.clone();
        engine::run(
            source,
            setup,
            arguments,
            move |operation, arguments| served.borrow_mut().call(operation, arguments),
            self.limits,
        )
    }
}

/// Where a transaction runs: the container, and the partition the header
/// names, or else the item's own.
struct Scope<'a> {
    database: &'a str,
    container: &'a str,
    partition_key: Option<&'a str>,
    item: Option<&'a serde_json::Map<String, Value>>,
}

/// JSON a script produced (`what`: whose, for the message), read within
/// the service's nesting limit as a request body is.
fn script_json(text: &str, what: &str) -> ApiResult<Value> {
    crate::protocol::json::parse_bounded(text.as_bytes()).map_err(|e| match e {
        crate::protocol::json::JsonError::Invalid(e) => {
            ApiError::bad_request(format!("{what} could not be read: {e}"))
        }
        crate::protocol::json::JsonError::TooDeep(depth) => ApiError::bad_request(format!(
            "{what} nests {depth} levels deep, more than a document may."
        )),
    })
}

/// The 449 of a script that lost to concurrent writers every time it ran.
fn retry_with() -> ApiError {
    ApiError::new(
        Status::RETRY_WITH,
        format!(
            "The script's writes conflicted with concurrent writes to the container {MAX_ATTEMPTS} times; \
             nothing was written. Retry the request."
        ),
    )
}

#[cfg(test)]
mod tests;
