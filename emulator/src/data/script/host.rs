//! The native side of a script's collection calls (`prelude.js`'s
//! `__host`): each one applied to the execution's transaction, its result
//! or failure handed back as JSON for the callback.

use std::sync::Arc;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::data::query::{PreparedQuery, QueryBody, Setting};
use crate::data::store::{Action, ContainerNames, Operation, Store, Transaction};
use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::json;

/// The feed page a read or query gives when the script names none.
const DEFAULT_PAGE_SIZE: usize = 100;

/// The container a script runs in, by name and by RID, for its links.
pub type Links = ContainerNames;

impl Links {
    /// `getSelfLink()`: the container's RID link.
    pub fn self_link(&self) -> String {
        format!("dbs/{}/colls/{}/", self.database_rid, self.container_rid)
    }

    /// `getAltLink()`: the container's name link.
    pub fn alt_link(&self) -> String {
        format!("dbs/{}/colls/{}", self.database, self.container)
    }

    /// Whether a link's database and container segments are this
    /// container's, and whether by RID.
    fn names_this(&self, database: &str, container: &str) -> Option<bool> {
        if database == self.database && container == self.container {
            Some(false)
        } else if database == self.database_rid && container == self.container_rid {
            Some(true)
        } else {
            None
        }
    }
}

/// One execution's collection: the transaction and what bounds it.
pub struct Host {
    store: Arc<Store>,
    pub tx: Transaction,
    links: Links,
    /// After this instant calls are not accepted (the script ends by itself).
    soft_deadline: Instant,
}

/// The arguments of a call, as the prelude sends them.
#[derive(Deserialize)]
struct Call {
    #[serde(default)]
    link: Option<String>,
    #[serde(default)]
    body: Option<Value>,
    #[serde(default)]
    query: Option<Value>,
    #[serde(default)]
    options: Map<String, Value>,
}

impl Host {
    pub fn new(store: Arc<Store>, tx: Transaction, links: Links, soft_deadline: Instant) -> Self {
        Host {
            store,
            tx,
            links,
            soft_deadline,
        }
    }

    /// Serves `__host(operation, arguments)`.
    pub fn call(&mut self, operation: &str, arguments: &str) -> String {
        if Instant::now() >= self.soft_deadline {
            return r#"{"notAccepted":true}"#.to_string();
        }
        let call = json::parse_bounded::<Call>(arguments.as_bytes())
            .map_err(|_| ApiError::bad_request("The arguments of a collection call are invalid."));
        match call.and_then(|call| self.dispatch(operation, call)) {
            Ok(result) => result,
            Err(error) => failure(&error),
        }
    }

    fn dispatch(&mut self, operation: &str, call: Call) -> ApiResult<String> {
        match operation {
            "read" => {
                let id = self.document_id(call.link.as_deref())?;
                let operation = Operation {
                    if_none_match: string_option(&call.options, "ifNoneMatch"),
                    ..addressed(Action::Read, id, None)
                };
                let outcome = self.store.transact(&mut self.tx, operation)?;
                Ok(match outcome.item {
                    Some(item) => resource(&String::from_utf8_lossy(&item.body)),
                    None => r#"{"resource":null,"options":{"notModified":true}}"#.to_string(),
                })
            }
            "create" | "upsert" => {
                self.collection(call.link.as_deref())?;
                let mut body = document_body(call.body)?;
                let generate = !call
                    .options
                    .get("disableAutomaticIdGeneration")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                if generate && !body.contains_key("id") {
                    body.insert("id".into(), uuid::Uuid::new_v4().to_string().into());
                }
                let action = if operation == "create" {
                    Action::Create(body)
                } else {
                    Action::Upsert(body)
                };
                let operation = Operation {
                    id: None,
                    ..addressed(action, String::new(), string_option(&call.options, "etag"))
                };
                self.written(operation)
            }
            "replace" => {
                let id = self.document_id(call.link.as_deref())?;
                let body = document_body(call.body)?;
                let etag = string_option(&call.options, "etag");
                self.written(addressed(Action::Replace(body), id, etag))
            }
            "delete" => {
                let id = self.document_id(call.link.as_deref())?;
                let etag = string_option(&call.options, "etag");
                self.store
                    .transact(&mut self.tx, addressed(Action::Delete, id, etag))?;
                Ok(r#"{"options":{}}"#.to_string())
            }
            "readFeed" => {
                self.collection(call.link.as_deref())?;
                let items = self.store.transaction_items(&mut self.tx)?;
                page(items, &call.options)
            }
            "query" => {
                self.collection(call.link.as_deref())?;
                let body = query_body(call.query)?;
                let query = PreparedQuery::prepare_at(&body, self.store.clock.now_millis())?;
                let items = self.store.transaction_items(&mut self.tx)?;
                // The container's policies: its distance functions, its languages.
                let setting = Setting {
                    policies: self.store.transaction_search_policies(&self.tx)?.into(),
                    udfs: None,
                };
                page(
                    query.run_values_in(setting, items.into_iter())?,
                    &call.options,
                )
            }
            // The JavaScript query API (`__`) filters the partition itself.
            "all" => {
                let items = self.store.transaction_items(&mut self.tx)?;
                Ok(format!(r#"{{"resources":{}}}"#, Value::Array(items)))
            }
            other => Err(ApiError::bad_request(format!(
                "Unknown collection operation '{other}'."
            ))),
        }
    }

    fn written(&mut self, operation: Operation) -> ApiResult<String> {
        let outcome = self.store.transact(&mut self.tx, operation)?;
        let item = outcome.item.expect("a write returns its item");
        Ok(resource(&String::from_utf8_lossy(&item.body)))
    }

    /// Checks a collection link: this container's, by name or by RID.
    fn collection(&self, link: Option<&str>) -> ApiResult<()> {
        let link = link.unwrap_or_default();
        match segments(link).as_slice() {
            ["dbs", database, "colls", container]
                if self.links.names_this(database, container).is_some() =>
            {
                Ok(())
            }
            _ => Err(outside(link)),
        }
    }

    /// The id a document link names: `.../docs/{id}` under the name link,
    /// `.../docs/{rid}` under the RID link (the `_self` of an item).
    fn document_id(&self, link: Option<&str>) -> ApiResult<String> {
        let link = link.unwrap_or_default();
        match segments(link).as_slice() {
            ["dbs", database, "colls", container, "docs", document] => {
                match self.links.names_this(database, container) {
                    Some(false) => Ok(document.to_string()),
                    Some(true) => self
                        .store
                        .transaction_id_by_rid(&self.tx, document)
                        .ok_or_else(ApiError::not_found),
                    None => Err(outside(link)),
                }
            }
            _ => Err(outside(link)),
        }
    }
}

fn segments(link: &str) -> Vec<&str> {
    link.trim_matches('/').split('/').collect()
}

fn outside(link: &str) -> ApiError {
    ApiError::bad_request(format!(
        "Function is not allowed to operate on resources outside current collection: '{link}' is not a link of this collection or of one of its documents."
    ))
}

fn addressed(action: Action, id: String, if_match: Option<String>) -> Operation {
    Operation {
        action,
        id: Some(id),
        partition_key: None,
        if_match,
        if_none_match: None,
    }
}

fn string_option(options: &Map<String, Value>, name: &str) -> Option<String> {
    options
        .get(name)
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn document_body(body: Option<Value>) -> ApiResult<Map<String, Value>> {
    match body {
        Some(Value::Object(body)) => Ok(body),
        _ => Err(ApiError::bad_request("The document must be a JSON object.")),
    }
}

fn query_body(query: Option<Value>) -> ApiResult<QueryBody> {
    match query {
        Some(Value::String(text)) => Ok(QueryBody {
            query: text,
            parameters: Vec::new(),
        }),
        Some(spec @ Value::Object(_)) => serde_json::from_value(spec).map_err(|e| {
            ApiError::bad_request(format!(
                "The query must be {{\"query\": \"SELECT ...\", \"parameters\": [...]}}: {e}."
            ))
        }),
        _ => Err(ApiError::bad_request(
            "The query must be a string or an object {query, parameters}.",
        )),
    }
}

/// One page of a feed: `pageSize` results (100 unless given; -1 for all)
/// from the offset `continuation` names.
fn page(results: Vec<Value>, options: &Map<String, Value>) -> ApiResult<String> {
    let size = match options.get("pageSize").and_then(Value::as_i64) {
        Some(n) if n > 0 => n as usize,
        Some(_) => usize::MAX,
        None => DEFAULT_PAGE_SIZE,
    };
    let start = match options.get("continuation") {
        None | Some(Value::Null) => 0,
        Some(Value::String(token)) => token.parse::<usize>().map_err(|_| {
            ApiError::bad_request(format!(
                "Invalid Continuation Token: '{token}' was not given by a read or query of this script."
            ))
        })?,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "Invalid Continuation Token: {other} is not a string."
            )))
        }
    };
    let end = start.saturating_add(size).min(results.len());
    let continuation = (end < results.len()).then(|| end.to_string());
    let page: Vec<Value> = results
        .into_iter()
        .skip(start)
        .take(end.saturating_sub(start))
        .collect();
    Ok(serde_json::json!({
        "resource": page,
        "options": { "continuation": continuation },
    })
    .to_string())
}

fn resource(item_json: &str) -> String {
    format!(r#"{{"resource":{item_json},"options":{{}}}}"#)
}

fn failure(error: &ApiError) -> String {
    serde_json::json!({
        "error": {
            "status": error.status.as_u16(),
            "message": error.message,
            "substatus": error.substatus,
        }
    })
    .to_string()
}
