//! `cosmos-conformance`: runs the TTL conformance suite against an endpoint.

use clap::Parser;
use cosmos_conformance::client::{Credentials, WELL_KNOWN_KEY};
use cosmos_conformance::clock::ClockChoice;
use cosmos_conformance::expectations::Expectations;
use cosmos_conformance::report::console::{self, Progress};
use cosmos_conformance::{default_fixtures_dir, fixtures, select, RunConfig};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Azure Cosmos DB time-to-live conformance suite.
///
/// Exit status: 0 when nothing failed unexpectedly, 1 when a case failed or
/// a listed known failure passed, 2 on a usage or fixture error.
#[derive(Debug, Parser)]
#[command(name = "cosmos-conformance", version)]
struct Args {
    /// The target, e.g. http://127.0.0.1:8081, or a connection string
    /// `AccountEndpoint=...;AccountKey=...;`.
    #[arg(long, env = "COSMOS_ENDPOINT")]
    endpoint: Option<String>,
    /// The master key (base64); default: the emulators' well-known key.
    #[arg(long, env = "COSMOS_KEY", hide_env_values = true)]
    key: Option<String>,
    /// An Azure connection string, instead of --endpoint and --key.
    #[arg(long, env = "COSMOS_CONNECTION_STRING", hide_env_values = true)]
    connection_string: Option<String>,
    /// Accept any TLS certificate (self-signed emulators).
    #[arg(long)]
    insecure: bool,
    /// How time passes: the target's test clock, the wall clock, or
    /// whichever the target supports.
    #[arg(long, value_enum, default_value = "auto")]
    clock: ClockChoice,
    /// On the wall clock, real seconds per fixture second (0.01: 1000 s
    /// become 10 s). TTL values sent are scaled the same way.
    #[arg(long, default_value_t = 0.01)]
    time_scale: f64,
    /// Known failures: a NAME in <fixtures>/expectations/ or a FILE.
    #[arg(long)]
    expectations: Option<String>,
    /// Run only cases whose id contains PATTERN or whose area is PATTERN
    /// (comma-separated).
    #[arg(long)]
    filter: Option<String>,
    /// Where report.json, report.xml and report.md go.
    #[arg(long, default_value = "target/conformance")]
    report_dir: PathBuf,
    /// The fixtures directory (cases/ and expectations/).
    #[arg(long)]
    fixtures: Option<PathBuf>,
    /// Seconds before a request without an answer fails its step.
    #[arg(long, default_value_t = 10.0)]
    request_timeout: f64,
    /// Cases run side by side on the wall clock.
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(error) => {
            eprintln!("cosmos-conformance: {error}");
            ExitCode::from(2)
        }
    }
}

/// Ok(true) when nothing failed unexpectedly.
fn run(args: Args) -> Result<bool, String> {
    let credentials = credentials(&args)?;
    let fixtures_dir = args.fixtures.clone().unwrap_or_else(default_fixtures_dir);
    let cases = fixtures::load_dir(&fixtures_dir.join("cases")).map_err(|e| e.to_string())?;
    let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    let expectations = match &args.expectations {
        Some(name) => {
            let file = Expectations::locate(name, &fixtures_dir);
            let expectations = Expectations::load(&file)?;
            for id in expectations.unknown(&ids) {
                eprintln!(
                    "warning: {} lists {id}, which is not a case",
                    file.display()
                );
            }
            Some((name.clone(), expectations))
        }
        None => None,
    };
    let cases = select(cases, args.filter.as_deref());
    if cases.is_empty() {
        return Err(format!(
            "--filter {:?} selects no case",
            args.filter.unwrap_or_default()
        ));
    }
    if !(args.request_timeout.is_finite() && args.request_timeout > 0.0) {
        return Err("--request-timeout must be a positive number of seconds".to_string());
    }
    let config = RunConfig {
        credentials,
        insecure: args.insecure,
        clock: args.clock,
        time_scale: args.time_scale,
        request_timeout: Duration::from_secs_f64(args.request_timeout),
        concurrency: args.concurrency,
        expectations,
        filter: args.filter.clone(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let mut progress = Progress::new(cases.len());
    let report = runtime.block_on(cosmos_conformance::run(&config, &cases, |run| {
        progress.case_done(run)
    }))?;
    print!("{}", console::render(&report));
    report.write(&args.report_dir).map_err(|e| {
        format!(
            "cannot write the reports to {}: {e}",
            args.report_dir.display()
        )
    })?;
    println!(
        "reports: {}/report.{{json,xml,md}}",
        args.report_dir.display()
    );
    Ok(!report.failed())
}

fn credentials(args: &Args) -> Result<Credentials, String> {
    let connection_string = args.connection_string.clone().or_else(|| {
        args.endpoint
            .clone()
            .filter(|e| e.contains("AccountEndpoint="))
    });
    if let Some(text) = connection_string {
        return Credentials::from_connection_string(&text);
    }
    let endpoint = args
        .endpoint
        .clone()
        .ok_or("no target: give --endpoint URL (or COSMOS_ENDPOINT), or a connection string")?;
    Ok(Credentials {
        endpoint,
        key: args
            .key
            .clone()
            .unwrap_or_else(|| WELL_KNOWN_KEY.to_string()),
    })
}
