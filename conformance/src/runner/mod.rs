//! Runs cases against a target: one database of the run's own (random name,
//! deleted at the end), one container per case (a case of
//! `database-throughput` in a database of its own, shared with idle
//! containers, deleted after it), the steps in order; each step's request
//! is `target.rs`'s.

use crate::client::{describe, path, Client, Request};
use crate::clock::{TimeMode, Timeline};
use crate::feed::DEFAULT_PURGE_WAIT;
use crate::fixtures::{Action, Case, Step};
use crate::outcome::{CaseRun, Observed, StepOutcome, NOT_RUN};
use crate::unobservable;
use reqwest::Method;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;

mod target;

use target::{CaseTarget, Halt};

/// A run in progress against one target.
pub struct Session {
    client: Client,
    mode: TimeMode,
    database: String,
    purge_wait: Duration,
    /// `x-ms-offer-throughput` for every container created (`None`: not sent).
    container_throughput: Option<u32>,
    /// With a throughput: the numbers of ranges the cases' containers got.
    ranges_seen: Mutex<BTreeSet<usize>>,
}

impl Session {
    /// Creates the run's database, `conformance-<random>`.
    pub async fn open(client: Client, mode: TimeMode) -> Result<Session, String> {
        let database = format!("conformance-{}", uuid::Uuid::new_v4().simple());
        let request = Request::new(Method::POST, "dbs".to_string(), "dbs", String::new())
            .json(&json!({ "id": database }));
        let response = client.send(request).await.map_err(|e| e.to_string())?;
        if response.status != 201 {
            return Err(format!(
                "creating database {database} answered {}",
                describe(&response)
            ));
        }
        Ok(Session {
            client,
            mode,
            database,
            purge_wait: DEFAULT_PURGE_WAIT,
            container_throughput: None,
            ranges_seen: Mutex::new(BTreeSet::new()),
        })
    }

    /// On the wall clock, the longest a change feed step waits for the
    /// TTL deletes it expects (default [`DEFAULT_PURGE_WAIT`]).
    pub fn with_purge_wait(mut self, purge_wait: Duration) -> Session {
        self.purge_wait = purge_wait;
        self
    }

    /// Creates every container with `x-ms-offer-throughput: throughput`
    /// RU/s (the service gives a new container one physical partition key range
    /// up to 10,000 and one per 6,000 above)
    /// and reads each case's `GET .../pkranges` to know how many it got.
    pub fn with_container_throughput(mut self, throughput: Option<u32>) -> Session {
        self.container_throughput = throughput;
        self
    }

    /// The distinct numbers of partition key ranges the cases' containers
    /// had, ascending (empty without a throughput).
    pub fn ranges_seen(&self) -> Vec<usize> {
        self.ranges_seen
            .lock()
            .expect("never poisoned")
            .iter()
            .copied()
            .collect()
    }

    pub fn mode(&self) -> TimeMode {
        self.mode
    }

    pub fn database(&self) -> &str {
        &self.database
    }

    /// Deletes the run's database (and with it every container it made).
    pub async fn close(&self) -> Result<(), String> {
        let link = format!("dbs/{}", self.database);
        let request = Request::new(Method::DELETE, path(&link), "dbs", link);
        let response = self.client.send(request).await.map_err(|e| e.to_string())?;
        if response.status >= 300 && response.status != 404 {
            return Err(format!(
                "deleting database {} answered {}",
                self.database,
                describe(&response)
            ));
        }
        Ok(())
    }

    /// Runs one case in a container of its own (`index` keeps names
    /// unique); a case of `database-throughput` in a database of its own,
    /// deleted after it.
    pub async fn run_case(&self, case: &Case, index: usize) -> CaseRun {
        let run = self.run_case_in(case, index).await;
        if case.database_throughput.is_some() {
            let link = format!("dbs/{}", case_database(&self.database, index));
            let request = Request::new(Method::DELETE, path(&link), "dbs", link);
            // Best effort: a database left behind is the run's to clean.
            let _ = self.client.send(request).await;
        }
        run
    }

    /// A database of `throughput` RU/s shared by the case's container and
    /// `shared_with` empty ones.
    async fn shared_database(
        &self,
        database: &str,
        throughput: u32,
        shared_with: u32,
    ) -> Result<(), String> {
        let request = Request::new(Method::POST, "dbs".to_string(), "dbs", String::new())
            .header("x-ms-offer-throughput", throughput.to_string())
            .json(&json!({ "id": database }));
        let response = self.client.send(request).await.map_err(|e| e.to_string())?;
        if response.status != 201 {
            return Err(format!(
                "creating the case's database of {throughput} RU/s answered {}",
                describe(&response)
            ));
        }
        let link = format!("dbs/{database}");
        for i in 0..shared_with {
            let colls = format!("{link}/colls");
            let body = json!({"id": format!("idle-{i}"), "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
            let request =
                Request::new(Method::POST, path(&colls), "colls", link.clone()).json(&body);
            let response = self.client.send(request).await.map_err(|e| e.to_string())?;
            if response.status != 201 {
                return Err(format!(
                    "creating a container sharing the database answered {}",
                    describe(&response)
                ));
            }
        }
        Ok(())
    }

    async fn run_case_in(&self, case: &Case, index: usize) -> CaseRun {
        let mut run = CaseRun {
            id: case.id.clone(),
            steps: case.steps.iter().map(not_run).collect(),
            setup_error: None,
            skipped: None,
        };
        let wall = match self.mode {
            TimeMode::Wall(_) if case.needs_test_clock() => {
                run.skipped = Some(
                    "counts one second's request units: only a test clock holds the target's second still while the case writes (on the wall clock the budget refills mid-flood)"
                        .to_string(),
                );
                return run;
            }
            TimeMode::Wall(wall) => {
                let unobservable = unobservable::steps(&wall, case);
                if !unobservable.is_empty() {
                    run.skipped = Some(unobservable::skip_reason(&wall, &unobservable));
                    return run;
                }
                if let Some(step) = case.steps.iter().find(|s| waits_for_nothing(s)) {
                    run.skipped = Some(format!(
                        "@{} waits for the purge but expects no TTL delete: on the wall clock nothing tells when the purge has run; only a test clock (POST /_emulator/purge) can observe it",
                        step.at
                    ));
                    return run;
                }
                Some(wall)
            }
            TimeMode::Manual => None,
        };
        let database = match case.database_throughput {
            Some(throughput) => {
                let database = case_database(&self.database, index);
                if let Err(error) = self
                    .shared_database(&database, throughput, case.shared_with)
                    .await
                {
                    run.setup_error = Some(error);
                    return run;
                }
                database
            }
            None => self.database.clone(),
        };
        let mut target = CaseTarget {
            client: &self.client,
            wall,
            collection_link: format!("dbs/{database}/colls/{}", container_id(case, index)),
            database_link: format!("dbs/{database}"),
            throughput: match case.database_throughput {
                Some(_) => None,
                None => case.throughput.or(self.container_throughput),
            },
            partition_key: case.id.clone(),
            purge_wait: self.purge_wait,
            sprocs: BTreeSet::new(),
            feed: None,
            refused: BTreeMap::new(),
            throttled: false,
        };
        if let Some(container) = &case.container {
            match target.write_container(Method::POST, container).await {
                Ok(response) if response.status == 201 => {
                    // A case's own throughput is its own: the run's ranges
                    // are those of the containers the run's throughput made.
                    if self.container_throughput.is_some()
                        && case.throughput.is_none()
                        && case.database_throughput.is_none()
                    {
                        match crate::ranges::count(&self.client, &target.collection_link).await {
                            Ok(count) => {
                                self.ranges_seen
                                    .lock()
                                    .expect("never poisoned")
                                    .insert(count);
                            }
                            Err(error) => {
                                run.setup_error = Some(error);
                                return run;
                            }
                        }
                    }
                }
                Ok(response) => {
                    run.setup_error = Some(format!(
                        "creating the case's container answered {}",
                        describe(&response)
                    ));
                    return run;
                }
                Err(error) => {
                    run.setup_error = Some(error.to_string());
                    return run;
                }
            }
        }
        let mut timeline = Timeline::start(self.mode);
        for (step, outcome) in case.steps.iter().zip(run.steps.iter_mut()) {
            if let Err(error) = timeline.reach(&self.client, step.at).await {
                run.setup_error = Some(format!("letting time reach @{}: {error}", step.at));
                return run;
            }
            match target.perform(step, &timeline).await {
                Ok(observed) => {
                    outcome.observed = observed.token;
                    outcome.detail = observed.detail;
                }
                Err(Halt::NoAnswer(error)) => {
                    let observed = Observed::no_answer(&error);
                    outcome.observed = observed.token;
                    outcome.detail = observed.detail;
                    // A target that does not answer would make every later
                    // step wait for its timeout too: the case has failed already.
                    break;
                }
                Err(Halt::Unsupported(reason)) => {
                    run.skipped = Some(reason);
                    return run;
                }
                Err(Halt::Setup(error)) => {
                    run.setup_error = Some(error);
                    return run;
                }
            }
        }
        run
    }
}

/// A `purge` step that expects no TTL delete: on the wall clock there is
/// nothing to wait for.
fn waits_for_nothing(step: &Step) -> bool {
    match &step.action {
        Action::Changes(changes) => changes.purge && step.expect.ttl_deletes().is_empty(),
        _ => false,
    }
}

/// Runs every case and reports each as it finishes. With the target's test
/// clock cases run one after another (they share the clock); on the wall
/// clock they run side by side, `concurrency` at a time, each with its own
/// timeline. Results come back in the order of `cases`.
pub async fn run_all(
    session: Arc<Session>,
    cases: &[Case],
    concurrency: usize,
    mut progress: impl FnMut(&CaseRun),
) -> Vec<CaseRun> {
    match session.mode() {
        TimeMode::Manual => {
            let mut runs = Vec::with_capacity(cases.len());
            for (index, case) in cases.iter().enumerate() {
                let run = session.run_case(case, index).await;
                progress(&run);
                runs.push(run);
            }
            runs
        }
        TimeMode::Wall(_) => {
            let limit = Arc::new(Semaphore::new(concurrency.max(1)));
            let mut tasks = tokio::task::JoinSet::new();
            for (index, case) in cases.iter().cloned().enumerate() {
                let session = Arc::clone(&session);
                let limit = Arc::clone(&limit);
                tasks.spawn(async move {
                    let _permit = limit.acquire_owned().await.expect("never closed");
                    (index, session.run_case(&case, index).await)
                });
            }
            let mut runs: Vec<Option<CaseRun>> = vec![None; cases.len()];
            while let Some(joined) = tasks.join_next().await {
                let (index, run) = joined.expect("a case task panicked");
                progress(&run);
                runs[index] = Some(run);
            }
            runs.into_iter()
                .map(|r| r.expect("every case ran"))
                .collect()
        }
    }
}

/// A case's run with every step "not run", for cases that could not start.
pub fn not_started(case: &Case, error: &str) -> CaseRun {
    CaseRun {
        id: case.id.clone(),
        steps: case.steps.iter().map(not_run).collect(),
        setup_error: Some(error.to_string()),
        skipped: None,
    }
}

fn not_run(step: &Step) -> StepOutcome {
    let matching = match &step.action {
        Action::Read { matching, .. } | Action::ReadContainer { matching } => matching.as_ref(),
        _ => None,
    };
    StepOutcome {
        at: step.at,
        label: step.label(),
        expected: step.expect.token(matching),
        observed: NOT_RUN.to_string(),
        detail: None,
    }
}

/// The database a case of `database-throughput` runs in: the run's name
/// and the case's index.
fn case_database(run: &str, index: usize) -> String {
    format!("{run}-{index}")
}

/// `c<index>-<id>`: unique in the run, readable in the target's portal.
fn container_id(case: &Case, index: usize) -> String {
    let id: String = case
        .id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(200)
        .collect();
    format!("c{index}-{id}")
}
