//! The whole suite against the in-process emulator, one libtest-mimic trial
//! per fixture case: `cargo test -p cosmos-conformance E3` runs the E3 row.
//! The expected outcomes come from the fixtures only; the emulator is just
//! the target (its expectations file, `cosmos-emulator.toml`, is empty).
//! The `throughput` area runs against a second emulator started with rate
//! limiting (`--rate-limit`), and must run there: skipped is a failure.

use cosmos_conformance::client::{Client, Credentials};
use cosmos_conformance::clock::{self, ClockChoice, TimeMode};
use cosmos_conformance::expectations::{self, Expectations};
use cosmos_conformance::report::Status;
use cosmos_conformance::runner::Session;
use cosmos_conformance::{default_fixtures_dir, fixtures};
use cosmos_emulator::{ClockMode, Config, Emulator};
use libtest_mimic::{Arguments, Failed, Trial};
use std::sync::Arc;
use std::time::Duration;

fn main() {
    let mut args = Arguments::from_args();
    // The cases share the emulator's test clock: one at a time.
    args.test_threads = Some(1);

    let fixtures_dir = default_fixtures_dir();
    let cases = fixtures::load_dir(&fixtures_dir.join("cases")).expect("the fixtures load");
    let known = Expectations::load(&Expectations::locate("cosmos-emulator", &fixtures_dir))
        .expect("the emulator's expectations load");

    let emulator = Emulator::start(Config {
        port: 0,
        clock: ClockMode::Manual { start: None },
        ..Config::default()
    })
    .expect("the emulator starts");
    let throttling = Emulator::start(Config {
        port: 0,
        clock: ClockMode::Manual { start: None },
        rate_limit: true,
        ..Config::default()
    })
    .expect("the emulator with rate limiting starts");
    let runtime = Arc::new(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime"),
    );
    let session = |endpoint: &str| {
        let credentials = Credentials {
            endpoint: endpoint.to_string(),
            key: cosmos_emulator::WELL_KNOWN_KEY.to_string(),
        };
        let client = Client::new(&credentials, false, Duration::from_secs(10)).expect("a client");
        Arc::new(runtime.block_on(async {
            let mode = clock::detect(&client, ClockChoice::Auto, 1.0)
                .await
                .expect("the clock is detected");
            assert_eq!(mode, TimeMode::Manual, "the emulator's test clock is found");
            Session::open(client, mode)
                .await
                .expect("the run's database")
        }))
    };
    let sessions = [session(emulator.endpoint()), session(throttling.endpoint())];

    let trials = cases
        .into_iter()
        .enumerate()
        .map(|(index, case)| {
            let runtime = Arc::clone(&runtime);
            let throughput = case.area == "throughput";
            let session = Arc::clone(&sessions[usize::from(throughput)]);
            let reason = known.reason(&case.id).map(str::to_string);
            let (name, kind) = (case.id.clone(), case.area.clone());
            Trial::test(name, move || {
                let run = runtime.block_on(session.run_case(&case, index));
                let verdict = run.verdict();
                match expectations::status(&verdict, reason.is_some()) {
                    Status::Skipped if throughput => Err(Failed::from(format!(
                        "skipped against the emulator with rate limiting: {}",
                        run.observed_text()
                    ))),
                    Status::Passed | Status::ExpectedFailure | Status::Skipped => Ok(()),
                    Status::UnexpectedPass => Err(Failed::from(format!(
                        "passed but listed as a known failure ({}): remove it from cosmos-emulator.toml",
                        reason.unwrap_or_default()
                    ))),
                    Status::Failed => Err(Failed::from(format!(
                        "{}\nsource: {} ({})\nexpected: {}\nobserved: {}",
                        match verdict {
                            cosmos_conformance::outcome::Verdict::Failed(m) => m,
                            _ => String::new(),
                        },
                        case.source,
                        case.file.display(),
                        run.expected_text(),
                        run.observed_text()
                    ))),
                }
            })
            .with_kind(kind)
        })
        .collect();

    let conclusion = libtest_mimic::run(&args, trials);
    for session in &sessions {
        runtime
            .block_on(session.close())
            .expect("the run's database is deleted");
    }
    drop(emulator);
    drop(throttling);
    conclusion.exit();
}
