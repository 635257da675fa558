//! A container's scripts: its stored procedures, triggers and user-defined
//! functions (`/dbs/{db}/colls/{coll}/sprocs|triggers|udfs`), kept as
//! resources in their container, so that deleting the container deletes
//! them. Only their storage is here: a script's `body` is JavaScript that
//! is stored and served verbatim, as sent, never compiled or checked (the
//! service compiles it only when it runs, the SDKs' tests store non-JS
//! text); running it is another module's.
//!
//! The service's shapes (`docs/src/reference/script-facts.md#resources`): `id` and `body`, plus a
//! trigger's `triggerType` (Pre, Post) and `triggerOperation` (All, Create,
//! Replace, Delete, Upsert), accepted in any case (the Python and
//! JavaScript SDKs send "pre", "all"; .NET "Pre", "All") and echoed as
//! sent. A replace whose body names another id renames the script, as a
//! user's replace renames the user; its RID stays.
//!
//! This file is what a script is and how its body is checked; the store's
//! operations on a container's scripts are `scripts.rs`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::lookup::by_name_or_rid;
use super::{item, validate_name};
use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::rid;

/// The three kinds of script, each a feed of its container.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, Serialize, Deserialize)]
pub enum ScriptKind {
    #[serde(rename = "sprocs")]
    StoredProcedure,
    #[serde(rename = "triggers")]
    Trigger,
    #[serde(rename = "udfs")]
    UserDefinedFunction,
}

impl ScriptKind {
    pub const ALL: [ScriptKind; 3] = [
        ScriptKind::StoredProcedure,
        ScriptKind::Trigger,
        ScriptKind::UserDefinedFunction,
    ];

    /// Its segment of a path (`/dbs/{db}/colls/{coll}/sprocs`), which is
    /// also the resource type the SDKs sign.
    pub fn segment(self) -> &'static str {
        match self {
            ScriptKind::StoredProcedure => "sprocs",
            ScriptKind::Trigger => "triggers",
            ScriptKind::UserDefinedFunction => "udfs",
        }
    }

    pub fn from_segment(segment: &str) -> Option<Self> {
        ScriptKind::ALL.into_iter().find(|k| k.segment() == segment)
    }

    /// The key of its feed's envelope, as the service names it.
    pub fn feed(self) -> &'static str {
        match self {
            ScriptKind::StoredProcedure => "StoredProcedures",
            ScriptKind::Trigger => "Triggers",
            ScriptKind::UserDefinedFunction => "UserDefinedFunctions",
        }
    }

    /// What messages call it.
    pub fn noun(self) -> &'static str {
        match self {
            ScriptKind::StoredProcedure => "stored procedure",
            ScriptKind::Trigger => "trigger",
            ScriptKind::UserDefinedFunction => "user-defined function",
        }
    }

    pub(super) fn rid(self, (database, container): (u32, u32), number: u64) -> String {
        match self {
            ScriptKind::StoredProcedure => rid::stored_procedure(database, container, number),
            ScriptKind::Trigger => rid::trigger(database, container, number),
            ScriptKind::UserDefinedFunction => {
                rid::user_defined_function(database, container, number)
            }
        }
    }
}

/// When a trigger runs: before or after its item's write.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum TriggerType {
    Pre,
    Post,
}

/// Which item writes a trigger may be named on.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum TriggerOperation {
    All,
    Create,
    Replace,
    Delete,
    Upsert,
}

const TRIGGER_TYPES: &[(&str, TriggerType)] =
    &[("Pre", TriggerType::Pre), ("Post", TriggerType::Post)];

/// "Update" is in every SDK's enum (.NET, Java, the management API), yet
/// no item operation has that name: it is taken as Replace (a guess; the
/// service's own answer is not documented) rather than refused.
const TRIGGER_OPERATIONS: &[(&str, TriggerOperation)] = &[
    ("All", TriggerOperation::All),
    ("Create", TriggerOperation::Create),
    ("Replace", TriggerOperation::Replace),
    ("Delete", TriggerOperation::Delete),
    ("Upsert", TriggerOperation::Upsert),
    ("Update", TriggerOperation::Replace),
];

/// One script as stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Script {
    pub id: String,
    pub rid: String,
    /// The JavaScript source, exactly as the client sent it.
    pub body: String,
    /// A trigger's type and operation; `None` for the other kinds.
    pub trigger: Option<(TriggerType, TriggerOperation)>,
    pub ts: i64,
    pub etag: String,
    /// A trigger's `triggerType` and `triggerOperation` as the client wrote
    /// them ("pre" stays "pre"), for the echo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trigger_as_sent: Option<(String, String)>,
}

impl Script {
    pub(super) fn new(parsed: Parsed, rid: String, now: i64) -> Self {
        Script {
            id: parsed.id,
            rid,
            body: parsed.body,
            trigger: parsed.trigger,
            ts: now,
            etag: item::new_etag(),
            trigger_as_sent: parsed.trigger_as_sent,
        }
    }

    /// Takes a checked body's fields; a new etag and `_ts`.
    pub(super) fn update(&mut self, parsed: Parsed, now: i64) {
        self.id = parsed.id;
        self.body = parsed.body;
        self.trigger = parsed.trigger;
        self.trigger_as_sent = parsed.trigger_as_sent;
        self.ts = now;
        self.etag = item::new_etag();
    }

    /// The resource as served; `owner` is the container's RID link
    /// `dbs/{db rid}/colls/{coll rid}`.
    pub(super) fn to_json(&self, kind: ScriptKind, owner: &str) -> Value {
        let mut json = Map::new();
        json.insert("id".into(), self.id.clone().into());
        json.insert("body".into(), self.body.clone().into());
        if let Some((trigger_type, operation)) = &self.trigger_as_sent {
            json.insert("triggerType".into(), trigger_type.clone().into());
            json.insert("triggerOperation".into(), operation.clone().into());
        }
        json.insert("_rid".into(), self.rid.clone().into());
        json.insert(
            "_self".into(),
            format!("{owner}/{}/{}/", kind.segment(), self.rid).into(),
        );
        json.insert("_etag".into(), self.etag.clone().into());
        json.insert("_ts".into(), self.ts.into());
        Value::Object(json)
    }
}

/// How many scripts of each kind a container holds (`x-ms-resource-usage`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScriptCounts {
    pub stored_procedures: usize,
    pub triggers: usize,
    pub user_defined_functions: usize,
}

/// A script as served, with its container's counts.
#[derive(Debug)]
pub struct ScriptView {
    pub json: Value,
    pub counts: ScriptCounts,
}

/// The scripts of one container, by id, and the numbers behind their RIDs,
/// which only grow: a deleted script's RID is never handed out again.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scripts {
    #[serde(default)]
    stored_procedures: BTreeMap<String, Script>,
    #[serde(default)]
    triggers: BTreeMap<String, Script>,
    #[serde(default)]
    user_defined_functions: BTreeMap<String, Script>,
    /// The last number given to a stored procedure, trigger, function.
    #[serde(default)]
    last_numbers: [u64; 3],
}

impl Scripts {
    /// Nothing was ever created: the container's metadata leaves it out.
    pub fn is_empty(&self) -> bool {
        self.last_numbers == [0; 3]
    }

    pub(super) fn of(&self, kind: ScriptKind) -> &BTreeMap<String, Script> {
        match kind {
            ScriptKind::StoredProcedure => &self.stored_procedures,
            ScriptKind::Trigger => &self.triggers,
            ScriptKind::UserDefinedFunction => &self.user_defined_functions,
        }
    }

    pub(super) fn of_mut(&mut self, kind: ScriptKind) -> &mut BTreeMap<String, Script> {
        match kind {
            ScriptKind::StoredProcedure => &mut self.stored_procedures,
            ScriptKind::Trigger => &mut self.triggers,
            ScriptKind::UserDefinedFunction => &mut self.user_defined_functions,
        }
    }

    /// A script by id, or by RID for RID-based paths; 404 if absent.
    pub(super) fn get(&self, kind: ScriptKind, id: &str) -> ApiResult<&Script> {
        by_name_or_rid(self.of(kind), id, |s| &s.rid, kind.noun())
    }

    /// The RID of a script named by id or RID; 404 if absent.
    pub fn rid_of(&self, kind: ScriptKind, id: &str) -> ApiResult<&str> {
        self.get(kind, id).map(|s| s.rid.as_str())
    }

    pub fn counts(&self) -> ScriptCounts {
        ScriptCounts {
            stored_procedures: self.stored_procedures.len(),
            triggers: self.triggers.len(),
            user_defined_functions: self.user_defined_functions.len(),
        }
    }

    /// After a restore: the numbers stay above any handed out before.
    pub fn keep_numbers_growing(&mut self, before: &Scripts) {
        for (mine, theirs) in self.last_numbers.iter_mut().zip(before.last_numbers) {
            *mine = (*mine).max(theirs);
        }
    }

    pub(super) fn next_number(&mut self, kind: ScriptKind) -> u64 {
        let slot = &mut self.last_numbers[kind as usize];
        *slot += 1;
        *slot
    }
}

/// A script's body, checked.
pub(super) struct Parsed {
    pub(super) id: String,
    body: String,
    trigger: Option<(TriggerType, TriggerOperation)>,
    trigger_as_sent: Option<(String, String)>,
}

pub(super) fn parse(kind: ScriptKind, body: &Map<String, Value>) -> ApiResult<Parsed> {
    let mut required = vec!["id", "body"];
    if kind == ScriptKind::Trigger {
        required.extend(["triggerType", "triggerOperation"]);
    }
    let missing: String = required
        .iter()
        .filter(|field| body.get(**field).is_none_or(Value::is_null))
        .map(|field| format!("{field}; "))
        .collect();
    if !missing.is_empty() {
        return Err(ApiError::bad_request(format!(
            "The input content is invalid because the required properties - '{missing}' - are \
             missing."
        )));
    }
    let id = validate_name(body.get("id"))?.to_string();
    let text = match &body["body"] {
        Value::String(text) => text.clone(),
        other => {
            return Err(ApiError::bad_request(format!(
                "The input content is invalid: the {}'s 'body' must be a string (its JavaScript \
                 source, e.g. \"function () {{ ... }}\"), got {other}.",
                kind.noun()
            )))
        }
    };
    let (trigger, trigger_as_sent) = if kind == ScriptKind::Trigger {
        let (trigger_type, type_sent) = choice("triggerType", &body["triggerType"], TRIGGER_TYPES)?;
        let (operation, operation_sent) = choice(
            "triggerOperation",
            &body["triggerOperation"],
            TRIGGER_OPERATIONS,
        )?;
        (
            Some((trigger_type, operation)),
            Some((type_sent, operation_sent)),
        )
    } else {
        (None, None)
    };
    Ok(Parsed {
        id,
        body: text,
        trigger,
        trigger_as_sent,
    })
}

/// One of `choices` by name in any case, with the text as sent.
fn choice<T: Copy>(field: &str, value: &Value, choices: &[(&str, T)]) -> ApiResult<(T, String)> {
    let found = value.as_str().and_then(|sent| {
        choices
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(sent))
            .map(|(_, choice)| (*choice, sent.to_string()))
    });
    found.ok_or_else(|| {
        let names: Vec<&str> = choices.iter().map(|(name, _)| *name).collect();
        ApiError::bad_request(format!(
            "The input content is invalid: '{field}' must be one of {} (in any case), got {value}.",
            names.join(", ")
        ))
    })
}

#[cfg(test)]
mod tests;
