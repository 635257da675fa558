//! A table-driven conformance suite for Azure Cosmos DB time to live.
//!
//! The cases are data (`fixtures/cases/*.toml`, see [`fixtures`], whose
//! JSON Schemas [`schema`] generates); the suite runs them against any
//! endpoint over signed HTTP ([`client`]), lets time pass on the target's
//! test clock or the wall clock ([`clock`]), compares outcome texts
//! ([`outcome`]), applies an implementation's known failures
//! ([`expectations`]) and writes reports ([`report`]). It never links the
//! emulator: its expected outcomes come only from the fixtures.

pub mod batch;
pub mod client;
pub mod clock;
pub mod expectations;
pub mod feed;
pub mod fixtures;
pub mod outcome;
pub mod preflight;
pub mod ranges;
pub mod report;
pub mod runner;
pub mod schema;
pub mod snapshot;
pub mod source;
pub mod sproc;
pub mod throughput;
pub mod unobservable;

use client::{Client, Credentials};
use clock::ClockChoice;
use expectations::Expectations;
use fixtures::Case;
use outcome::CaseRun;
use report::{Containers, Report, Target};
use runner::Session;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The fixtures of this source tree (`--fixtures` overrides it).
pub fn default_fixtures_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures"))
}

/// Everything a run needs besides the cases.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub credentials: Credentials,
    pub insecure: bool,
    pub clock: ClockChoice,
    pub time_scale: f64,
    pub request_timeout: Duration,
    /// How many cases run side by side on the wall clock.
    pub concurrency: usize,
    /// A label (name or file) and the known failures.
    pub expectations: Option<(String, Expectations)>,
    pub filter: Option<String>,
    /// On the wall clock, how long a change feed step waits for the purge
    /// (the TTL deletes it expects).
    pub purge_wait: Duration,
    /// The `x-ms-offer-throughput` (RU/s) every container the run creates
    /// gets, e.g. 24000 for four partition key ranges; `None`: the
    /// target's default (400 RU/s, one range).
    pub container_throughput: Option<u32>,
}

/// The cases a `--filter` selects: comma-separated patterns, each matching
/// a case whose id contains it or whose area is it.
pub fn select(cases: Vec<Case>, filter: Option<&str>) -> Vec<Case> {
    let Some(filter) = filter else { return cases };
    let patterns: Vec<&str> = filter
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    cases
        .into_iter()
        .filter(|case| {
            patterns
                .iter()
                .any(|p| case.id.contains(p) || case.area == *p)
        })
        .collect()
}

/// The cases left after `--exclude`: each pattern (comma-separated within
/// an argument) drops the cases whose id contains it or whose area is it,
/// as `--filter` would keep them.
pub fn exclude(cases: Vec<Case>, patterns: &[String]) -> Vec<Case> {
    let patterns: Vec<&str> = patterns
        .iter()
        .flat_map(|p| p.split(','))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    cases
        .into_iter()
        .filter(|case| {
            !patterns
                .iter()
                .any(|p| case.id.contains(p) || case.area == *p)
        })
        .collect()
}

/// `--cases-from FROM --cases-to TO`: the selected cases at positions
/// FROM (0-based, in `--list` order) up to TO excluded; TO past the end
/// means to the end. Two runs `--cases-to N` and `--cases-from N` run every
/// case once, in the order of one run. `Err` when nothing is left.
pub fn slice(
    cases: Vec<Case>,
    from: Option<usize>,
    to: Option<usize>,
) -> Result<Vec<Case>, String> {
    let total = cases.len();
    let from = from.unwrap_or(0);
    let to = to.unwrap_or(total).min(total);
    if from >= to {
        return Err(format!(
            "--cases-from {from} --cases-to {to} selects no case of the {total} selected"
        ));
    }
    Ok(cases.into_iter().skip(from).take(to - from).collect())
}

/// The check before any case: the endpoint answers (over TLS when https)
/// and accepts the key, and has a test clock if `--clock manual` asks for
/// it. An `Err` means the run cannot start.
pub async fn preflight(config: &RunConfig) -> Result<preflight::Account, String> {
    let client = Client::new(&config.credentials, config.insecure, config.request_timeout)?;
    let account = preflight::check(&client).await.map_err(|e| e.to_string())?;
    // Asking for the test clock of a target without one is a usage error,
    // not a failure of every case.
    if config.clock == ClockChoice::Manual {
        clock::detect(&client, config.clock, config.time_scale).await?;
    }
    Ok(account)
}

/// Runs `cases` against the configured target and builds the report.
/// Only a configuration error (bad endpoint or key) is an `Err`; a target
/// that cannot be reached or refuses the suite fails every case instead,
/// so that the reports say so. The binary calls [`preflight`] first, so
/// that such a target stops the run before any case.
pub async fn run(
    config: &RunConfig,
    cases: &[Case],
    progress: impl FnMut(&CaseRun),
) -> Result<Report, String> {
    let client = Client::new(&config.credentials, config.insecure, config.request_timeout)?;
    let mut target = Target {
        endpoint: client.endpoint().to_string(),
        clock: format!("{:?}", config.clock).to_lowercase(),
        expectations: config.expectations.as_ref().map(|(label, _)| label.clone()),
        filter: config.filter.clone(),
        time_scale: None,
        containers: config.container_throughput.map(|throughput| Containers {
            throughput,
            ranges: Vec::new(),
        }),
    };
    let expectations = config.expectations.as_ref().map(|(_, e)| e);
    let session = match clock::detect(&client, config.clock, config.time_scale).await {
        Ok(mode) => {
            target.clock = mode.describe();
            if let clock::TimeMode::Wall(wall) = mode {
                target.time_scale = Some(wall.scale);
            }
            Session::open(client, mode).await.map(|s| {
                s.with_purge_wait(config.purge_wait)
                    .with_container_throughput(config.container_throughput)
            })
        }
        Err(error) => Err(error),
    };
    let runs = match session {
        Ok(session) => {
            let session = Arc::new(session);
            let runs =
                runner::run_all(Arc::clone(&session), cases, config.concurrency, progress).await;
            if let Some(containers) = target.containers.as_mut() {
                containers.ranges = session.ranges_seen();
            }
            if let Err(error) = session.close().await {
                eprintln!(
                    "warning: {error}; delete database {} by hand",
                    session.database()
                );
            }
            runs
        }
        Err(error) => cases
            .iter()
            .map(|case| runner::not_started(case, &error))
            .collect(),
    };
    Ok(Report::new(target, cases, &runs, expectations))
}

#[cfg(test)]
mod tests {
    use super::*;
    use source::FixtureSource;

    fn ids(cases: &[Case]) -> Vec<String> {
        cases.iter().map(|c| c.id.clone()).collect()
    }

    #[test]
    fn two_slices_at_one_position_run_every_case_once_in_order() {
        let all = FixtureSource::Embedded.cases().unwrap();
        let half = all.len() / 2;
        let first = slice(all.clone(), None, Some(half)).unwrap();
        let second = slice(all.clone(), Some(half), None).unwrap();
        assert_eq!(first.len(), half);
        let mut both = ids(&first);
        both.extend(ids(&second));
        assert_eq!(both, ids(&all));
        // A bound past the end is the end; a middle slice is exactly that.
        assert_eq!(
            ids(&slice(all.clone(), None, Some(all.len() + 5)).unwrap()),
            ids(&all)
        );
        assert_eq!(
            ids(&slice(all.clone(), Some(2), Some(4)).unwrap()),
            ids(&all[2..4])
        );
    }

    #[test]
    fn exclude_drops_an_area_or_ids_and_keeps_the_order() {
        let all = FixtureSource::Embedded.cases().unwrap();
        let kept = exclude(all.clone(), &["throughput".to_string()]);
        assert!(kept.iter().all(|c| c.area != "throughput"));
        assert!(kept.len() < all.len());
        let kept_ids = ids(&kept);
        let expected: Vec<String> = ids(&all)
            .into_iter()
            .filter(|id| kept_ids.contains(id))
            .collect();
        assert_eq!(kept_ids, expected);
        let fewer = exclude(
            all.clone(),
            &["E1,E2".to_string(), "throughput".to_string()],
        );
        assert!(fewer
            .iter()
            .all(|c| !c.id.contains("E1") && !c.id.contains("E2")));
        assert_eq!(ids(&exclude(all.clone(), &[])), ids(&all));
    }

    #[test]
    fn an_empty_slice_is_refused() {
        let all = FixtureSource::Embedded.cases().unwrap();
        let n = all.len();
        for (from, to) in [(Some(3), Some(3)), (Some(5), Some(2)), (Some(n), None)] {
            let error = slice(all.clone(), from, to).unwrap_err();
            assert!(error.contains("selects no case"), "{error}");
        }
    }
}
