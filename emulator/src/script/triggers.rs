//! An item write with triggers (`x-ms-documentdb-pre-trigger-include`,
//! `x-ms-documentdb-post-trigger-include`): the pre-trigger may change the
//! item before it is written, the write is staged, the post-trigger sees
//! it and may fail it; all of it commits as one transaction, or none.
//! Triggers run only when a request names them, at most one of each kind.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use axum::http::StatusCode;
use serde_json::{json, Map, Value};

use super::engine::{self, Ending};
use super::host::Host;
use super::{failure, retry_with, ScriptEngine, MAX_ATTEMPTS};
use crate::error::{ApiError, ApiResult};
use crate::store::{
    Action, Committed, Item, Operation, Script, ScriptKind, Store, TriggerOperation, TriggerType,
};

/// Which write the triggers surround.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    Create,
    Upsert,
    Replace,
    Delete,
}

impl WriteKind {
    /// `getRequest().getOperationType()`.
    fn name(self) -> &'static str {
        match self {
            WriteKind::Create => "Create",
            WriteKind::Upsert => "Upsert",
            WriteKind::Replace => "Replace",
            WriteKind::Delete => "Delete",
        }
    }

    fn matches(self, operation: TriggerOperation) -> bool {
        matches!(
            (operation, self),
            (TriggerOperation::All, _)
                | (TriggerOperation::Create, WriteKind::Create)
                | (TriggerOperation::Upsert, WriteKind::Upsert)
                | (TriggerOperation::Replace, WriteKind::Replace)
                | (TriggerOperation::Delete, WriteKind::Delete)
        )
    }
}

/// An item write as the request asks for it, with the triggers it names.
pub struct TriggeredWrite {
    pub database: String,
    pub container: String,
    pub kind: WriteKind,
    pub partition_key: Option<String>,
    /// The id in the URL (replace, delete).
    pub url_id: Option<String>,
    pub if_match: Option<String>,
    /// The item (create, upsert, replace).
    pub body: Option<Map<String, Value>>,
    pub pre: Option<String>,
    pub post: Option<String>,
}

/// What the write did.
#[derive(Debug)]
pub struct TriggeredResult {
    pub status: StatusCode,
    /// The item written (none for a delete).
    pub item: Option<Item>,
    pub committed: Committed,
}

/// The trigger list of one header: at most one name.
pub fn named_trigger(header: Option<&str>, which: &str) -> ApiResult<Option<String>> {
    let Some(names) = header.map(str::trim).filter(|h| !h.is_empty()) else {
        return Ok(None);
    };
    let names: Vec<&str> = names
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    match names.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one.to_string())),
        _ => Err(ApiError::bad_request(format!(
            "A write operation runs at most one {which}-trigger; the request names {}: {}.",
            names.len(),
            names.join(", ")
        ))),
    }
}

impl ScriptEngine {
    /// Runs the write and its triggers on a blocking thread.
    pub async fn write_with_triggers(
        self: &Arc<Self>,
        store: &Arc<Store>,
        write: TriggeredWrite,
    ) -> ApiResult<TriggeredResult> {
        let (scripts, store) = (self.clone(), store.clone());
        tokio::task::spawn_blocking(move || scripts.run_triggered(&store, write))
            .await
            .unwrap_or_else(|_| {
                Err(ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "The write's triggers failed inside the emulator; nothing was written.",
                ))
            })
    }

    fn run_triggered(
        &self,
        store: &Arc<Store>,
        write: TriggeredWrite,
    ) -> ApiResult<TriggeredResult> {
        let pre = trigger(store, &write, write.pre.as_deref(), TriggerType::Pre)?;
        let post = trigger(store, &write, write.post.as_deref(), TriggerType::Post)?;
        let links = store.container_names(&write.database, &write.container)?;
        let lock = self.container_lock(&links.container_rid);
        let _one_at_a_time = lock.lock().unwrap_or_else(|e| e.into_inner());
        for _ in 0..MAX_ATTEMPTS {
            let tx = store.begin_transaction_for(
                &write.database,
                &write.container,
                write.partition_key.as_deref(),
                write.body.as_ref(),
            )?;
            let started = Instant::now();
            let host = Rc::new(RefCell::new(Host::new(
                store.clone(),
                tx,
                links.clone(),
                self.limits.soft_deadline(started),
            )));
            let setup = |trigger: &str, request: &Value, response: &Value| {
                json!({
                    "kind": "trigger",
                    "trigger": trigger,
                    "operation": write.kind.name(),
                    "logging": false,
                    "requestBody": request,
                    "responseBody": response,
                    "selfLink": links.self_link(),
                    "altLink": links.alt_link(),
                    "quotaUsage": { "collectionSize": 0, "documentsCount": 0 },
                    "quotaMax": { "collectionSize": 10485760 },
                })
                .to_string()
            };
            // The pre-trigger: its request body (serialised once it and
            // its callbacks are done) is the item written.
            let mut body = write.body.clone().map(Value::Object).unwrap_or(Value::Null);
            if let Some(pre) = &pre {
                let ending = run_one(&host, &pre.body, &setup("pre", &body, &Value::Null), self);
                let Ending::Done { body: output } = ending else {
                    return Err(failure(ending));
                };
                body = match output {
                    Some(text) => serde_json::from_str(&text).map_err(|e| {
                        ApiError::bad_request(format!(
                            "The pre-trigger's body could not be read: {e}"
                        ))
                    })?,
                    None => Value::Null,
                };
            }
            let (status, item) = apply(store, &host, &write, &body)?;
            if let Some(post) = &post {
                let response = item
                    .as_ref()
                    .map(|i| serde_json::from_slice(&i.body).unwrap_or(Value::Null))
                    .unwrap_or(Value::Null);
                let ending = run_one(&host, &post.body, &setup("post", &body, &response), self);
                if !matches!(ending, Ending::Done { .. }) {
                    return Err(failure(ending));
                }
            }
            let host = Rc::try_unwrap(host)
                .ok()
                .expect("the engines are gone")
                .into_inner();
            match store.commit_transaction(host.tx)? {
                Ok(committed) => {
                    let item = item.map(|mut item| {
                        item.lsn = committed.lsn;
                        item
                    });
                    return Ok(TriggeredResult {
                        status,
                        item,
                        committed,
                    });
                }
                Err(_conflict) => continue,
            }
        }
        Err(retry_with())
    }
}

/// The trigger a header names, checked against the write: it must be of
/// that type and for that operation (or All).
fn trigger(
    store: &Store,
    write: &TriggeredWrite,
    name: Option<&str>,
    wanted: TriggerType,
) -> ApiResult<Option<Script>> {
    let Some(name) = name else {
        return Ok(None);
    };
    let script = store.script(&write.database, &write.container, ScriptKind::Trigger, name)?;
    let (kind, operation) = script
        .trigger
        .expect("a trigger has a type and an operation");
    let which = |t: TriggerType| if t == TriggerType::Pre { "pre" } else { "post" };
    if kind != wanted {
        return Err(ApiError::bad_request(format!(
            "The trigger '{name}' is a {}-trigger; it was named as a {}-trigger. Name it in \
             x-ms-documentdb-{}-trigger-include instead.",
            which(kind),
            which(wanted),
            which(kind)
        )));
    }
    if !write.kind.matches(operation) {
        return Err(ApiError::bad_request(format!(
            "The trigger '{name}' runs on {operation:?} operations, not on this {} operation.",
            write.kind.name()
        )));
    }
    Ok(Some(script))
}

fn run_one(host: &Rc<RefCell<Host>>, source: &str, setup: &str, scripts: &ScriptEngine) -> Ending {
    let served = host.clone();
    engine::run(
        source,
        setup,
        None,
        move |operation, arguments| served.borrow_mut().call(operation, arguments),
        scripts.limits,
    )
    .ending
}

/// The write itself, within the transaction.
fn apply(
    store: &Store,
    host: &Rc<RefCell<Host>>,
    write: &TriggeredWrite,
    body: &Value,
) -> ApiResult<(StatusCode, Option<Item>)> {
    let object = || match body {
        Value::Object(body) => Ok(body.clone()),
        _ => Err(ApiError::bad_request(
            "The pre-trigger left a body that is not a JSON object: the item must be one.",
        )),
    };
    let action = match write.kind {
        WriteKind::Create => Action::Create(object()?),
        WriteKind::Upsert => Action::Upsert(object()?),
        WriteKind::Replace => Action::Replace(object()?),
        WriteKind::Delete => Action::Delete,
    };
    let operation = Operation {
        action,
        id: write.url_id.clone(),
        partition_key: None,
        if_match: write.if_match.clone(),
        if_none_match: None,
    };
    let mut host = host.borrow_mut();
    let outcome = store.transact(&mut host.tx, operation)?;
    Ok((outcome.status, outcome.item))
}
