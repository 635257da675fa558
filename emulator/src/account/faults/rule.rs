//! One fault rule: what a `POST /_emulator/faults` body says, read and
//! checked field by field ([`Rule::parse`]), whether it matches a request
//! ([`Rule::matches`]), and how it is listed ([`Rule::to_json`]). Every
//! refusal is a 400 naming the field and what it allows.

use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

use super::{Target, OPERATIONS};
use crate::protocol::error::{ApiError, ApiResult};

/// The wait a 429 advertises when its rule gives none: the service always
/// sends `x-ms-retry-after-ms` with a 429, and Python and JavaScript wait
/// what it says (no header: no wait at all).
pub const DEFAULT_RETRY_AFTER_MS: u64 = 100;

/// The longest delay or window a rule may hold: a day, in milliseconds.
const MAX_MS: u64 = 86_400_000;

/// When the answer replaces the request's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Instead of the operation: nothing changes.
    Before,
    /// Once the operation ran (and committed): its answer is replaced.
    After,
}

/// A connection answer: no HTTP answer at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connection {
    /// A TCP reset.
    Reset,
    /// The connection closed without an answer.
    Close,
    /// No answer ever; the client times out.
    Hang,
}

impl Connection {
    fn name(self) -> &'static str {
        match self {
            Connection::Reset => "reset",
            Connection::Close => "close",
            Connection::Hang => "hang",
        }
    }
}

/// Which requests a rule applies to; an absent field matches any.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Match {
    pub region: Option<String>,
    /// Names from [`OPERATIONS`].
    pub operations: Option<Vec<&'static str>>,
    pub database: Option<String>,
    pub container: Option<String>,
    /// The partition key as the `x-ms-documentdb-partitionkey` header
    /// holds it, an array (a bare value is its one component).
    pub partition_key: Option<Value>,
    pub partition_key_range_id: Option<String>,
}

/// What a matching request gets.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Respond {
    /// `None`: the real answer (delayed) or a connection fault.
    pub status: Option<u16>,
    pub sub_status: Option<u32>,
    pub retry_after_ms: Option<u64>,
    pub delay_ms: Option<u64>,
    pub connection: Option<Connection>,
}

/// A rule as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub id: String,
    pub matcher: Match,
    pub respond: Respond,
    pub when: When,
    /// How many requests it applies to; `None`: no limit.
    pub hits: Option<u64>,
    pub probability: f64,
    pub start_after_ms: u64,
    pub for_ms: Option<u64>,
    /// The emulator-clock instant it was made, in milliseconds.
    pub created_ms: i64,
}

/// The rule's numbers, as given.
struct Body {
    hits: Option<u64>,
    probability: Option<f64>,
    start_after_ms: Option<u64>,
    for_ms: Option<u64>,
}

struct MatchBody {
    region: Option<String>,
    operation: Option<Value>,
    database: Option<String>,
    container: Option<String>,
    partition_key: Option<Value>,
    partition_key_range_id: Option<Value>,
}

struct RespondBody {
    status: Option<u16>,
    sub_status: Option<u32>,
    retry_after_ms: Option<u64>,
    delay_ms: Option<u64>,
    connection: Option<String>,
}

/// The fields of an object, each taken once by name: unknown names are
/// refused, and a value of the wrong type is refused naming its field.
struct Fields {
    map: Map<String, Value>,
    /// `match.` or `respond.` for nested objects, to name fields in full.
    prefix: &'static str,
}

impl Fields {
    fn new(value: Value, prefix: &'static str, known: &[&str]) -> ApiResult<Fields> {
        let Value::Object(map) = value else {
            let what = if prefix.is_empty() {
                "A fault rule"
            } else {
                prefix.trim_end_matches('.')
            };
            return Err(refuse(format!(
                "{what} is a JSON object with the fields {}.",
                known.join(", ")
            )));
        };
        if let Some(unknown) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(refuse(format!(
                "`{prefix}{unknown}` is not a fault rule field; the fields here are {}.",
                known.join(", ")
            )));
        }
        Ok(Fields { map, prefix })
    }

    /// The field `name`, absent if missing or null.
    fn take<T: DeserializeOwned>(&mut self, name: &str, expected: &str) -> ApiResult<Option<T>> {
        match self.map.remove(name) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => serde_json::from_value(value.clone())
                .map(Some)
                .map_err(|_| {
                    refuse(format!(
                        "`{}{name}` is {expected}, not {value}.",
                        self.prefix
                    ))
                }),
        }
    }
}

fn refuse(message: impl Into<String>) -> ApiError {
    ApiError::bad_request(message)
}

impl Rule {
    /// Reads a rule from its body, made at `now_ms`; its id is the body's,
    /// or `generated` when it gives none.
    pub fn parse(body: Value, now_ms: i64, generated: impl FnOnce() -> String) -> ApiResult<Rule> {
        let mut fields = Fields::new(
            body,
            "",
            &[
                "id",
                "match",
                "respond",
                "when",
                "hits",
                "probability",
                "startAfterMs",
                "forMs",
            ],
        )?;
        let id = match fields.take::<String>("id", "a string")? {
            Some(id) => valid_id(id)?,
            None => generated(),
        };
        let matcher = match fields.take::<Value>("match", "an object")? {
            Some(m) => parse_match(m)?,
            None => Match::default(),
        };
        let respond = parse_respond(fields.take::<Value>("respond", "an object")?.ok_or_else(|| {
            refuse("A fault rule needs `respond`: {\"status\", \"subStatus\", \"retryAfterMs\", \"delayMs\", \"connection\"}.")
        })?)?;
        let when = match fields
            .take::<String>("when", "\"before\" or \"after\"")?
            .as_deref()
        {
            None | Some("before") => When::Before,
            Some("after") => When::After,
            Some(other) => {
                return Err(refuse(format!(
                    "`when` is \"before\" (the default: the operation does not run) or \"after\" \
                     (it runs, then the fault answers), not \"{other}\"."
                )))
            }
        };
        let milliseconds = "a whole number of milliseconds";
        let body = Body {
            hits: fields.take("hits", "a whole number of requests, at least 1")?,
            probability: fields.take("probability", "a number between 0 and 1")?,
            start_after_ms: fields.take("startAfterMs", milliseconds)?,
            for_ms: fields.take("forMs", milliseconds)?,
        };
        if body.hits == Some(0) {
            return Err(refuse("`hits` is how many requests the rule applies to: at least 1 (leave it out for no limit)."));
        }
        let probability = body.probability.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&probability) {
            return Err(refuse(format!(
                "`probability` is between 0 and 1, not {probability}."
            )));
        }
        for (name, value) in [
            ("startAfterMs", body.start_after_ms),
            ("forMs", body.for_ms),
        ] {
            if value.is_some_and(|v| v > MAX_MS) {
                return Err(refuse(format!(
                    "`{name}` is at most {MAX_MS} (a day, in milliseconds)."
                )));
            }
        }
        Ok(Rule {
            id,
            matcher,
            respond,
            when,
            hits: body.hits,
            probability,
            start_after_ms: body.start_after_ms.unwrap_or(0),
            for_ms: body.for_ms,
            created_ms: now_ms,
        })
    }

    /// Whether the rule's window on the emulator clock holds `now_ms`.
    pub fn in_window(&self, now_ms: i64) -> bool {
        let start = self.created_ms.saturating_add(self.start_after_ms as i64);
        if now_ms < start {
            return false;
        }
        match self.for_ms {
            Some(duration) => now_ms < start.saturating_add(duration as i64),
            None => true,
        }
    }

    /// Whether the request `target` is one the rule names.
    pub fn matches(&self, target: &Target<'_>, range: &mut impl FnMut() -> Option<String>) -> bool {
        let m = &self.matcher;
        match &m.operations {
            Some(operations) if !operations.contains(&target.operation) => return false,
            // The account read only when named: a client must be able to
            // start while a catch-all rule fails everything else.
            None if target.operation == "account" => return false,
            _ => {}
        }
        let same = |wanted: &Option<String>, actual: Option<&str>| {
            wanted.as_deref().is_none_or(|w| Some(w) == actual)
        };
        if !same(&m.region, Some(target.region))
            || !same(&m.database, target.database)
            || !same(&m.container, target.container)
        {
            return false;
        }
        if let Some(wanted) = &m.partition_key {
            let sent = target
                .partition_key
                .and_then(|text| serde_json::from_str::<Value>(text).ok())
                .map(as_components);
            if sent.as_ref() != Some(wanted) {
                return false;
            }
        }
        if let Some(wanted) = &m.partition_key_range_id {
            if range().as_deref() != Some(wanted.as_str()) {
                return false;
            }
        }
        true
    }

    /// The rule as `GET /_emulator/faults` lists it, with its hits so far.
    pub fn to_json(&self, hit_count: u64) -> Value {
        let mut matcher = Map::new();
        let m = &self.matcher;
        let put = |map: &mut Map<String, Value>, name: &str, value: Option<Value>| {
            if let Some(value) = value {
                map.insert(name.into(), value);
            }
        };
        put(&mut matcher, "region", m.region.clone().map(Value::from));
        put(
            &mut matcher,
            "operation",
            m.operations.clone().map(|o| json!(o)),
        );
        put(
            &mut matcher,
            "database",
            m.database.clone().map(Value::from),
        );
        put(
            &mut matcher,
            "container",
            m.container.clone().map(Value::from),
        );
        put(&mut matcher, "partitionKey", m.partition_key.clone());
        put(
            &mut matcher,
            "partitionKeyRangeId",
            m.partition_key_range_id.clone().map(Value::from),
        );
        let r = &self.respond;
        let mut respond = Map::new();
        put(&mut respond, "status", r.status.map(Value::from));
        put(&mut respond, "subStatus", r.sub_status.map(Value::from));
        put(
            &mut respond,
            "retryAfterMs",
            r.retry_after_ms.map(Value::from),
        );
        put(&mut respond, "delayMs", r.delay_ms.map(Value::from));
        put(
            &mut respond,
            "connection",
            r.connection.map(|c| c.name().into()),
        );
        json!({
            "id": self.id,
            "match": matcher,
            "respond": respond,
            "when": if self.when == When::After { "after" } else { "before" },
            "hits": self.hits,
            "probability": self.probability,
            "startAfterMs": self.start_after_ms,
            "forMs": self.for_ms,
            "createdAtMs": self.created_ms,
            "hitCount": hit_count,
        })
    }
}

/// A partition key as compared: the components' array.
fn as_components(value: Value) -> Value {
    match value {
        Value::Array(_) => value,
        other => Value::Array(vec![other]),
    }
}

fn valid_id(id: String) -> ApiResult<String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if (1..=128).contains(&id.len()) && id.chars().all(allowed) {
        Ok(id)
    } else {
        Err(refuse(format!(
            "`id` is 1 to 128 of A-Z a-z 0-9 . _ - (it goes in the rule's URL), not \"{id}\"."
        )))
    }
}

fn parse_match(body: Value) -> ApiResult<Match> {
    let mut fields = Fields::new(
        body,
        "match.",
        &[
            "region",
            "operation",
            "database",
            "container",
            "partitionKey",
            "partitionKeyRangeId",
        ],
    )?;
    let body = MatchBody {
        region: fields.take("region", "a region's name")?,
        operation: fields.take("operation", "an operation's name or an array of them")?,
        database: fields.take("database", "a database id")?,
        container: fields.take("container", "a container id")?,
        partition_key: fields.take("partitionKey", "a partition key")?,
        partition_key_range_id: fields.take("partitionKeyRangeId", "a range id")?,
    };
    let operations = match body.operation {
        None => None,
        Some(Value::String(name)) => Some(vec![operation(&name)?]),
        Some(Value::Array(names)) if !names.is_empty() => Some(
            names
                .iter()
                .map(|n| match n {
                    Value::String(name) => operation(name),
                    other => Err(unknown_operation(&other.to_string())),
                })
                .collect::<ApiResult<_>>()?,
        ),
        Some(other) => return Err(unknown_operation(&other.to_string())),
    };
    let partition_key =
        match body.partition_key {
            Some(Value::Object(_)) => return Err(refuse(
                "`match.partitionKey` is the partition key as the x-ms-documentdb-partitionkey \
                 header holds it: an array of components like [\"a\"] (or one value like \"a\").",
            )),
            other => other.map(as_components),
        };
    let partition_key_range_id = match body.partition_key_range_id {
        None => None,
        Some(Value::String(id)) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) => {
            Some(id)
        }
        Some(Value::Number(n)) if n.is_u64() => Some(n.to_string()),
        Some(other) => {
            return Err(refuse(format!(
                "`match.partitionKeyRangeId` is a range's id as pkranges lists it, like \"0\", not {other}."
            )))
        }
    };
    Ok(Match {
        region: body.region,
        operations,
        database: body.database,
        container: body.container,
        partition_key,
        partition_key_range_id,
    })
}

fn operation(name: &str) -> ApiResult<&'static str> {
    OPERATIONS
        .iter()
        .find(|known| **known == name)
        .copied()
        .ok_or_else(|| unknown_operation(&format!("\"{name}\"")))
}

fn unknown_operation(what: &str) -> ApiError {
    refuse(format!(
        "`match.operation` is one of {} or a non-empty array of them, not {what}.",
        OPERATIONS.join(", ")
    ))
}

fn parse_respond(body: Value) -> ApiResult<Respond> {
    let mut fields = Fields::new(
        body,
        "respond.",
        &[
            "status",
            "subStatus",
            "retryAfterMs",
            "delayMs",
            "connection",
        ],
    )?;
    let milliseconds = "a whole number of milliseconds";
    let body = RespondBody {
        status: fields.take("status", "an HTTP status, 400 to 599")?,
        sub_status: fields.take("subStatus", "a whole number")?,
        retry_after_ms: fields.take("retryAfterMs", milliseconds)?,
        delay_ms: fields.take("delayMs", milliseconds)?,
        connection: fields.take("connection", "\"reset\", \"close\" or \"hang\"")?,
    };
    let connection = match body.connection.as_deref() {
        None => None,
        Some("reset") => Some(Connection::Reset),
        Some("close") => Some(Connection::Close),
        Some("hang") => Some(Connection::Hang),
        Some(other) => {
            return Err(refuse(format!(
                "`respond.connection` is \"reset\", \"close\" or \"hang\", not \"{other}\"."
            )))
        }
    };
    match body.status {
        Some(status) if !(400..=599).contains(&status) => {
            return Err(refuse(format!(
                "`respond.status` is an error status, 400 to 599, not {status} (for a slow \
                 success, give only `delayMs`)."
            )))
        }
        Some(_) if connection.is_some() => {
            return Err(refuse(
                "`respond.connection` sends no answer: give it without `status`.",
            ))
        }
        None if body.sub_status.is_some() || body.retry_after_ms.is_some() => {
            return Err(refuse(
                "`respond.subStatus` and `respond.retryAfterMs` go with a `status`.",
            ))
        }
        None if connection.is_none() && body.delay_ms.is_none() => {
            return Err(refuse(
                "`respond` needs a `status` (400 to 599), a `delayMs` or a `connection`.",
            ))
        }
        _ => {}
    }
    for (name, value) in [
        ("retryAfterMs", body.retry_after_ms),
        ("delayMs", body.delay_ms),
    ] {
        if value.is_some_and(|v| v > MAX_MS) {
            return Err(refuse(format!(
                "`respond.{name}` is at most {MAX_MS} (a day, in milliseconds)."
            )));
        }
    }
    let retry_after_ms = match (body.status, body.retry_after_ms) {
        (Some(429), None) => Some(DEFAULT_RETRY_AFTER_MS),
        (_, given) => given,
    };
    Ok(Respond {
        status: body.status,
        sub_status: body.sub_status,
        retry_after_ms,
        delay_ms: body.delay_ms,
        connection,
    })
}
