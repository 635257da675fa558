//! The outcome table of a full run against the in-process emulator, as an
//! insta snapshot: review changes with `cargo insta review`; with CI=true a
//! changed table fails the test. The table holds no times, ids or charges.

use crate::common::{all_cases, config};
use cosmos_conformance::default_fixtures_dir;
use cosmos_conformance::expectations::Expectations;
use cosmos_conformance::RunConfig;
use cosmos_emulator::{ClockMode, Config, Emulator};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_run_against_the_emulator() {
    let (_emulator, config) = emulator_with_its_expectations();
    let cases = all_cases();
    let report = crate::common::run(&config, &cases, Duration::from_secs(60)).await;
    assert!(
        report.target.clock.starts_with("manual"),
        "{}",
        report.target.clock
    );
    insta::assert_snapshot!("outcomes", report.outcome_table());
    assert!(
        !report.failed(),
        "{}",
        cosmos_conformance::report::console::render(&report)
    );
    assert_eq!(report.summary.total, cases.len());
}

/// The `throughput` area against the emulator with rate limiting: every
/// case runs and passes (none skipped), and its outcome table is kept too.
/// Against the emulator without it (the full run above) the same cases are
/// skipped: it does not throttle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_throughput_area_passes_against_the_emulator_with_rate_limiting() {
    let emulator = Emulator::start(Config {
        port: 0,
        clock: ClockMode::Manual { start: None },
        rate_limit: true,
        ..Config::default()
    })
    .expect("the emulator starts");
    let mut config = config(emulator.endpoint());
    config.request_timeout = Duration::from_secs(10);
    let cases: Vec<_> = all_cases()
        .into_iter()
        .filter(|c| c.area == "throughput")
        .collect();
    assert!(cases.len() >= 5, "{} throughput cases", cases.len());
    let report = crate::common::run(&config, &cases, Duration::from_secs(120)).await;
    insta::assert_snapshot!("throughput", report.outcome_table());
    assert_eq!(
        report.summary.passed,
        cases.len(),
        "{}",
        cosmos_conformance::report::console::render(&report)
    );
}

/// `--container-throughput 24000`: every case's container has four
/// partition key ranges (read by the suite with `GET .../pkranges`), and
/// the outcome table is the one-range run's, line for line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_ranges_give_the_same_outcomes_as_one() {
    let (_emulator, mut config) = emulator_with_its_expectations();
    let cases = all_cases();
    let one = crate::common::run(&config, &cases, Duration::from_secs(60)).await;
    assert_eq!(one.target.containers, None);
    config.container_throughput = Some(24_000);
    let four = crate::common::run(&config, &cases, Duration::from_secs(60)).await;
    let containers = four.target.containers.clone().expect("named in the report");
    assert_eq!(containers.throughput, 24_000);
    assert_eq!(containers.ranges, vec![4], "{}", containers.describe());
    let console = cosmos_conformance::report::console::render(&four);
    assert!(!four.failed(), "{console}");
    assert!(
        console.contains("containers of 24000 RU/s, 4 partition key ranges each"),
        "{console}"
    );
    assert_eq!(four.summary.total, cases.len());
    assert_eq!(one.outcome_table(), four.outcome_table());
}

/// The in-process emulator on a test clock (kept alive by the caller) and a
/// run configured for it with the emulator's own expected failures.
fn emulator_with_its_expectations() -> (Emulator, RunConfig) {
    let emulator = Emulator::start(Config {
        port: 0,
        clock: ClockMode::Manual { start: None },
        ..Config::default()
    })
    .expect("the emulator starts");
    let known = Expectations::load(&Expectations::locate(
        "cosmos-emulator",
        &default_fixtures_dir(),
    ))
    .expect("the emulator's expectations load");
    let mut config = config(emulator.endpoint());
    config.expectations = Some(("cosmos-emulator".to_string(), known));
    (emulator, config)
}
