//! One case's target: where its requests go (its container, in the case's
//! partition), how its values are sent (TTL values scaled on the wall
//! clock), and what its steps keep between them (the stored procedures
//! created, the change feed cursors). [`CaseTarget::perform`] turns each
//! action into its request(s) and the answer into a token.

use crate::client::{
    excerpt, partition_key_header, path, Client, Request, Response, TransportError,
};
use crate::clock::{Timeline, WallClock};
use crate::feed::{self, FeedOutcome, FeedState};
use crate::fixtures::{Action, Expect, Flood, Priority, Sproc, Step};
use crate::outcome::{observe_error, observe_read, observe_rows, observe_write, Observed};
use reqwest::Method;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// The partition key path of every container the suite creates.
const PARTITION_KEY_PATH: &str = "/pk";
/// A query that still has pages after this many is reported as such.
const MAX_QUERY_PAGES: usize = 100;

/// Why a step ends its case before the last step.
pub(super) enum Halt {
    /// No answer (a transport error): the step's token is `no answer`.
    NoAnswer(TransportError),
    /// The target lacks what the step needs (a change feed mode, a purge
    /// on request): the case is skipped with this reason.
    Unsupported(String),
    /// What the step needs could not be set up (the test clock stopped
    /// answering): the case's setup failed.
    Setup(String),
}

impl From<TransportError> for Halt {
    fn from(error: TransportError) -> Halt {
        Halt::NoAnswer(error)
    }
}

/// Where one case's requests go, how its values are sent, and what the
/// case's steps keep between them (its stored procedures, its feed cursors).
pub(super) struct CaseTarget<'a> {
    pub(super) client: &'a Client,
    pub(super) wall: Option<WallClock>,
    pub(super) database_link: String,
    pub(super) collection_link: String,
    pub(super) throughput: Option<u32>,
    /// The logical partition of the case's items: the case's id, so that
    /// on a container of several ranges the cases spread over all of them.
    pub(super) partition_key: String,
    /// On the wall clock, the longest a `purge` step waits.
    pub(super) purge_wait: Duration,
    /// The stored procedures created in the case's container so far.
    pub(super) sprocs: BTreeSet<String>,
    /// The case's change feed cursors and times, from its first `changes`.
    pub(super) feed: Option<FeedState>,
    /// The id each `flood` of the case was refused on, by the flood's name.
    pub(super) refused: BTreeMap<String, String>,
    /// Whether a flood of the case has been refused: the target throttles.
    pub(super) throttled: bool,
}

impl CaseTarget<'_> {
    /// Sends the step's request(s) and renders the answer as a token;
    /// `timeline` is the case's (a change feed step reads its origin).
    pub(super) async fn perform(
        &mut self,
        step: &Step,
        timeline: &Timeline,
    ) -> Result<Observed, Halt> {
        Ok(match &step.action {
            Action::Create(body) => {
                observe_write(&self.create_item(body, false, step.priority).await?, true)
            }
            Action::Upsert(body) => observe_write(&self.create_item(body, true, None).await?, true),
            Action::Flood(flood) => self.flood(flood, step).await?,
            Action::ReadRefused(name) => match self.refused.get(name) {
                Some(id) => {
                    let response = self.client.send(self.item_request(Method::GET, id)).await?;
                    observe_read(&response, Some(id), None, None)
                }
                None => Observed {
                    token: "nothing refused".to_string(),
                    detail: Some(format!("flood {name} was refused no write")),
                },
            },
            Action::Replace(body) => {
                let id = body["id"].as_str().unwrap_or_default();
                let request = self
                    .item_request(Method::PUT, id)
                    .json(&Value::Object(self.item_body(body)));
                observe_write(&self.client.send(request).await?, true)
            }
            Action::Patch { id, operations } => {
                let operations = match &self.wall {
                    Some(wall) => wall.operations(operations),
                    None => operations.clone(),
                };
                let request = self.item_request(Method::PATCH, id).body(
                    "application/json-patch+json",
                    &json!({ "operations": operations }),
                );
                observe_write(&self.client.send(request).await?, true)
            }
            Action::Delete(id) => observe_write(
                &self
                    .client
                    .send(self.item_request(Method::DELETE, id))
                    .await?,
                false,
            ),
            Action::Read { id, matching } => {
                let response = self.client.send(self.item_request(Method::GET, id)).await?;
                let sent = matching.as_ref().map(|m| self.scaled(m));
                observe_read(&response, Some(id), sent.as_ref(), matching.as_ref())
            }
            Action::Query { sql, parameters } => self.query(sql, parameters).await?,
            Action::CreateContainer(body) => {
                observe_write(&self.write_container(Method::POST, body).await?, true)
            }
            Action::ReplaceContainer(body) => {
                observe_write(&self.write_container(Method::PUT, body).await?, true)
            }
            Action::Batch(operations) => {
                let body = crate::batch::body(operations, &self.partition_key, self.wall.as_ref());
                let request = Request::new(
                    Method::POST,
                    path(&self.docs_link()),
                    "docs",
                    self.collection_link.clone(),
                )
                .header("x-ms-cosmos-is-batch-request", "True")
                .header("x-ms-cosmos-batch-atomic", "True")
                .header("x-ms-cosmos-batch-continue-on-error", "False")
                .header(
                    "x-ms-documentdb-partitionkey",
                    partition_key_header(&self.partition_key),
                )
                .json(&body);
                crate::batch::observe(&self.client.send(request).await?)
            }
            Action::Sproc(sproc) => self.run_sproc(sproc).await?,
            Action::Changes(changes) => {
                let state = match &mut self.feed {
                    Some(state) => state,
                    None => self.feed.insert(
                        FeedState::open(self.client, timeline)
                            .await
                            .map_err(Halt::Setup)?,
                    ),
                };
                let read = feed::read(
                    self.client,
                    &self.collection_link,
                    &self.partition_key,
                    changes,
                    &step.expect,
                    state,
                    self.purge_wait,
                );
                match read.await? {
                    FeedOutcome::Observed(observed) => observed,
                    FeedOutcome::Unsupported(reason) => return Err(Halt::Unsupported(reason)),
                }
            }
            Action::ReadContainer { matching } => {
                let link = self.collection_link.clone();
                let request = Request::new(Method::GET, path(&link), "colls", link);
                let response = self.client.send(request).await?;
                let sent = matching.as_ref().map(|m| self.scaled(m));
                observe_read(&response, None, sent.as_ref(), matching.as_ref())
            }
        })
    }

    /// Creates the stored procedure in the case's container on its first
    /// use (its id a hash of its text), then executes it in the case's
    /// partition.
    async fn run_sproc(&mut self, sproc: &Sproc) -> Result<Observed, TransportError> {
        let id = crate::sproc::id(&sproc.body);
        let sprocs = format!("{}/sprocs", self.collection_link);
        if !self.sprocs.contains(&id) {
            let request = Request::new(
                Method::POST,
                path(&sprocs),
                "sprocs",
                self.collection_link.clone(),
            )
            .json(&json!({ "id": id, "body": sproc.body }));
            let response = self.client.send(request).await?;
            if response.status != 201 && response.status != 409 {
                return Ok(crate::sproc::not_created(&response));
            }
            self.sprocs.insert(id.clone());
        }
        let link = format!("{sprocs}/{id}");
        let args = crate::sproc::arguments(sproc, &self.partition_key, self.wall.as_ref());
        let request = Request::new(Method::POST, path(&link), "sprocs", link)
            .header(
                "x-ms-documentdb-partitionkey",
                partition_key_header(&self.partition_key),
            )
            .json(&args);
        Ok(crate::sproc::observe(&self.client.send(request).await?))
    }

    fn scaled(&self, body: &Map<String, Value>) -> Map<String, Value> {
        match &self.wall {
            Some(wall) => wall.body(body),
            None => body.clone(),
        }
    }

    /// An item body as sent: scaled, with the partition key added.
    fn item_body(&self, body: &Map<String, Value>) -> Map<String, Value> {
        let mut body = self.scaled(body);
        body.entry("pk")
            .or_insert_with(|| json!(self.partition_key));
        body
    }

    fn docs_link(&self) -> String {
        format!("{}/docs", self.collection_link)
    }

    fn item_request(&self, method: Method, id: &str) -> Request<'static> {
        let link = format!("{}/{}", self.docs_link(), id);
        Request::new(method, path(&link), "docs", link).header(
            "x-ms-documentdb-partitionkey",
            partition_key_header(&self.partition_key),
        )
    }

    /// Writes `<prefix>.1`, `<prefix>.2`... in the case's partition until
    /// the first answer that is not a 201 (see `throughput.rs`). The case
    /// is skipped when its first flood shows a target without throttling.
    async fn flood(&mut self, flood: &Flood, step: &Step) -> Result<Observed, Halt> {
        let Expect::Flood { budget, bound } = step.expect else {
            unreachable!("the loader gives a flood a flood's expectation")
        };
        let mut run = crate::throughput::Flood {
            charges: Vec::new(),
            end: crate::throughput::End::NoRefusal { writes: 0 },
        };
        let mut n = 0;
        while run.may_continue(budget) {
            n += 1;
            let id = format!("{}.{n}", flood.prefix);
            let mut body = flood.body.clone();
            body.insert("id".to_string(), json!(id));
            let response = self.create_item(&body, false, step.priority).await?;
            match (response.status, response.charge) {
                (201, Some(charge)) => run.charges.push(charge),
                (201, None) => {
                    run.end = crate::throughput::End::Uncharged { n };
                    break;
                }
                (429, _) => {
                    self.refused.insert(flood.prefix.clone(), id.clone());
                    run.end = crate::throughput::End::Refused { id, response };
                    break;
                }
                _ => {
                    run.end = crate::throughput::End::Failed { n, response };
                    break;
                }
            }
        }
        if let crate::throughput::End::NoRefusal { writes } = &mut run.end {
            *writes = n;
        }
        if matches!(run.end, crate::throughput::End::Refused { .. }) {
            self.throttled = true;
        } else if !self.throttled {
            if let Some(reason) = run.unsupported(budget) {
                return Err(Halt::Unsupported(reason));
            }
        }
        Ok(run.observe(budget, bound))
    }

    async fn create_item(
        &self,
        body: &Map<String, Value>,
        upsert: bool,
        priority: Option<Priority>,
    ) -> Result<Response, TransportError> {
        let mut request = Request::new(
            Method::POST,
            path(&self.docs_link()),
            "docs",
            self.collection_link.clone(),
        )
        .header(
            "x-ms-documentdb-partitionkey",
            partition_key_header(&self.partition_key),
        )
        .json(&Value::Object(self.item_body(body)));
        if upsert {
            request = request.header("x-ms-documentdb-is-upsert", "True");
        }
        if let Some(priority) = priority {
            request = request.header("x-ms-cosmos-priority-level", priority.header());
        }
        self.client.send(request).await
    }

    /// POST creates the case's container, PUT replaces it (full body).
    pub(super) async fn write_container(
        &self,
        method: Method,
        body: &Map<String, Value>,
    ) -> Result<Response, TransportError> {
        let mut body = self.scaled(body);
        let id = self
            .collection_link
            .rsplit('/')
            .next()
            .expect("a link has a last segment")
            .to_string();
        body.insert("id".to_string(), json!(id));
        body.insert(
            "partitionKey".to_string(),
            json!({ "paths": [PARTITION_KEY_PATH], "kind": "Hash" }),
        );
        let request = if method == Method::POST {
            let colls = format!("{}/colls", self.database_link);
            let request = Request::new(method, path(&colls), "colls", self.database_link.clone());
            match self.throughput {
                Some(throughput) => request.header("x-ms-offer-throughput", throughput.to_string()),
                None => request,
            }
        } else {
            let link = self.collection_link.clone();
            Request::new(method, path(&link), "colls", link)
        };
        self.client.send(request.json(&Value::Object(body))).await
    }

    async fn query(&self, sql: &str, parameters: &[Value]) -> Result<Observed, TransportError> {
        let body = json!({ "query": sql, "parameters": parameters });
        let mut rows = Vec::new();
        let mut continuation: Option<String> = None;
        for _ in 0..MAX_QUERY_PAGES {
            let mut request = Request::new(
                Method::POST,
                path(&self.docs_link()),
                "docs",
                self.collection_link.clone(),
            )
            .header("x-ms-documentdb-isquery", "True")
            // Scoped to the case's partition by the key header; the flag is
            // what SDKs send too, and some targets refuse queries without it.
            .header("x-ms-documentdb-query-enablecrosspartition", "True")
            .header(
                "x-ms-documentdb-partitionkey",
                partition_key_header(&self.partition_key),
            )
            .body("application/query+json", &body);
            if let Some(token) = &continuation {
                request = request.header("x-ms-continuation", token.clone());
            }
            let response = self.client.send(request).await?;
            if response.status != 200 {
                return Ok(observe_error(&response));
            }
            match response
                .json()
                .and_then(|v| v.get("Documents").and_then(Value::as_array).cloned())
            {
                Some(page) => rows.extend(page),
                None => {
                    return Ok(Observed {
                        token: "200 (no Documents array)".to_string(),
                        detail: Some(format!("body: {}", excerpt(&response.body))),
                    })
                }
            }
            continuation = response.continuation;
            if continuation.is_none() {
                return Ok(observe_rows(&rows));
            }
        }
        Ok(Observed {
            token: format!("more than {MAX_QUERY_PAGES} pages"),
            detail: Some("the target kept answering x-ms-continuation".to_string()),
        })
    }
}
