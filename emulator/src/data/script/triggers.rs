//! An item write with triggers (`x-ms-documentdb-pre-trigger-include`,
//! `x-ms-documentdb-post-trigger-include`): the pre-trigger may change the
//! item before it is written, the write is staged, the post-trigger sees
//! it and may fail it; all of it commits as one transaction, or none.
//! Triggers run only when a request names them, at most one of each kind.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::bound::{self, Gate};
use super::engine::Ending;
use super::host::Host;
use super::{failure, script_json, Scope, ScriptEngine};
use crate::data::store::{
    Action, Committed, Item, Operation, Script, ScriptKind, Store, TriggerOperation, TriggerType,
};
use crate::protocol::error::{ApiError, ApiResult, Status};

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
    pub status: Status,
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
        bound::run(self.limits.time, move |gate| {
            scripts.run_triggered(&store, write, gate)
        })
        .await
    }

    fn run_triggered(
        &self,
        store: &Arc<Store>,
        write: TriggeredWrite,
        gate: &Gate,
    ) -> ApiResult<TriggeredResult> {
        let pre = trigger(store, &write, write.pre.as_deref(), TriggerType::Pre)?;
        let post = trigger(store, &write, write.post.as_deref(), TriggerType::Post)?;
        let scope = Scope {
            database: &write.database,
            container: &write.container,
            partition_key: write.partition_key.as_deref(),
            item: write.body.as_ref(),
        };
        let ((status, item), committed) = self.transact(store, scope, gate, |host, links| {
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
                let setup = setup("pre", &body, &Value::Null);
                let ending = self.run_script(host, &pre.body, &setup, None).ending;
                let Ending::Done { body: output } = ending else {
                    return Err(failure(ending));
                };
                body = match output {
                    Some(text) => script_json(&text, "The pre-trigger's body")?,
                    None => Value::Null,
                };
            }
            let (status, item) = apply(store, host, &write, &body)?;
            if let Some(post) = &post {
                let response = item
                    .as_ref()
                    .map_or(Value::Null, |i| Value::Object(i.parse()));
                let setup = setup("post", &body, &response);
                let ending = self.run_script(host, &post.body, &setup, None).ending;
                if !matches!(ending, Ending::Done { .. }) {
                    return Err(failure(ending));
                }
            }
            Ok((status, item))
        })?;
        let item = item.map(|mut item| {
            item.range_lsn = committed.lsn;
            item
        });
        Ok(TriggeredResult {
            status,
            item,
            committed,
        })
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

/// The write itself, within the transaction.
fn apply(
    store: &Store,
    host: &Rc<RefCell<Host>>,
    write: &TriggeredWrite,
    body: &Value,
) -> ApiResult<(Status, Option<Item>)> {
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
