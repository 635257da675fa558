//! `cosmos-conformance`: runs the TTL conformance suite against an endpoint.

use clap::Parser;
use cosmos_conformance::client::{Credentials, WELL_KNOWN_KEY};
use cosmos_conformance::clock::ClockChoice;
use cosmos_conformance::expectations::Expectations;
use cosmos_conformance::fixtures::Case;
use cosmos_conformance::report::console::{self, Progress};
use cosmos_conformance::report::Report;
use cosmos_conformance::snapshot::{self, Comparison};
use cosmos_conformance::source::FixtureSource;
use cosmos_conformance::{exclude, select, slice, RunConfig};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Azure Cosmos DB time-to-live conformance suite.
///
/// Exit status: 0 the target conforms (with its expectations); 1 a case
/// failed, a listed failure passed or did not run to the end, or the
/// --snapshot differs; 2 the run could not start (usage, fixtures, the
/// endpoint unreachable, a TLS failure, the key refused).
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
    /// Known failures: a NAME of the fixtures' expectations/ (built in, or
    /// in --fixtures) or a FILE.
    #[arg(long)]
    expectations: Option<String>,
    /// Run only cases whose id contains PATTERN or whose area is PATTERN
    /// (comma-separated).
    #[arg(long)]
    filter: Option<String>,
    /// Leave out the cases whose id contains PATTERN or whose area is
    /// PATTERN (comma-separated; may be repeated), after --filter.
    #[arg(long, value_name = "PATTERN")]
    exclude: Vec<String>,
    /// Skip the first N cases selected (0-based positions in --list order),
    /// e.g. to run the second half of the suite in a separate run.
    #[arg(long, value_name = "N")]
    cases_from: Option<usize>,
    /// Stop before the case at position N of those selected.
    #[arg(long, value_name = "N")]
    cases_to: Option<usize>,
    /// Where report.{json,xml,md,html} go.
    #[arg(long, default_value = "target/conformance")]
    report_dir: PathBuf,
    /// Compare the outcome table with this insta snapshot (.snap): written
    /// when missing; when it differs, FILE.new is written for review and
    /// the run fails.
    #[arg(long, value_name = "FILE")]
    snapshot: Option<PathBuf>,
    /// After the run, write (or update) an expectations list at FILE: every
    /// case that failed to the end, with its failing steps; reasons already
    /// in FILE are kept.
    #[arg(long, value_name = "FILE")]
    write_expectations: Option<PathBuf>,
    /// A fixtures directory (cases/, expectations/) instead of the fixtures
    /// built into this binary.
    #[arg(long, value_name = "DIR")]
    fixtures: Option<PathBuf>,
    /// Print the cases (id, area, cites, title) and exit.
    #[arg(long)]
    list: bool,
    /// Write the JSON Schemas of the fixture files (cases.schema.json,
    /// expectations.schema.json) into DIR and exit; this repository keeps
    /// them in fixtures/schema/.
    #[arg(long, value_name = "DIR")]
    schemas: Option<PathBuf>,
    /// Seconds before a request without an answer fails its step.
    #[arg(long, default_value_t = 10.0)]
    request_timeout: f64,
    /// Cases run side by side on the wall clock.
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
    /// On the wall clock, the longest a change feed step waits (real
    /// seconds) for the TTL deletes of the purge it expects.
    #[arg(long, default_value_t = 300.0)]
    purge_wait: f64,
    /// Create every container with `x-ms-offer-throughput: RU` (RU/s), so
    /// that it has several physical partition key ranges (above 10,000 RU/s
    /// one per 6,000: 24000 gives four); the ranges each got are read (`GET .../pkranges`)
    /// and named in the reports. Against a real account this throughput is
    /// billed while the run lasts.
    #[arg(long, value_name = "RU")]
    container_throughput: Option<u32>,
}

/// How a run ended.
enum End {
    /// Every case as expected, and the snapshot (if any) unchanged.
    Conforming,
    /// A case failed, a listed failure passed or errored, the snapshot differs.
    Failed,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(End::Conforming) => ExitCode::SUCCESS,
        Ok(End::Failed) => ExitCode::from(1),
        Err(error) => {
            eprintln!("cosmos-conformance: {error}");
            ExitCode::from(2)
        }
    }
}

/// `Err`: the run could not start (exit 2).
fn run(args: Args) -> Result<End, String> {
    if let Some(dir) = &args.schemas {
        for path in cosmos_conformance::schema::write(dir)? {
            println!("{}", path.display());
        }
        return Ok(End::Conforming);
    }
    let source = match &args.fixtures {
        Some(dir) => FixtureSource::Dir(dir.clone()),
        None => FixtureSource::Embedded,
    };
    let cases = source.cases().map_err(|e| e.to_string())?;
    if args.list {
        let cases = exclude(select(cases, args.filter.as_deref()), &args.exclude);
        print!("{}", list(&slice(cases, args.cases_from, args.cases_to)?));
        return Ok(End::Conforming);
    }
    let credentials = credentials(&args)?;
    let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    let expectations = match &args.expectations {
        Some(name) => {
            let expectations = source.expectations(name)?;
            for id in expectations.unknown(&ids) {
                eprintln!("warning: expectations {name} list {id}, which is not a case");
            }
            Some((name.clone(), expectations))
        }
        None => None,
    };
    let cases = exclude(select(cases, args.filter.as_deref()), &args.exclude);
    if cases.is_empty() {
        return Err(format!(
            "--filter {:?} --exclude {:?} selects no case",
            args.filter.unwrap_or_default(),
            args.exclude.join(",")
        ));
    }
    // The reports say what was left out.
    let selection = match (&args.filter, args.exclude.is_empty()) {
        (filter, true) => filter.clone(),
        (Some(filter), false) => Some(format!("{filter}, not {}", args.exclude.join(","))),
        (None, false) => Some(format!("not {}", args.exclude.join(","))),
    };
    let sliced = args.cases_from.is_some() || args.cases_to.is_some();
    let cases = slice(cases, args.cases_from, args.cases_to)?;
    // The reports say which cases ran when not all that the filter selects.
    let filter = if sliced {
        let from = args.cases_from.unwrap_or(0);
        let range = format!("cases {from}..{}", from + cases.len());
        Some(match &selection {
            Some(filter) => format!("{filter}, {range}"),
            None => range,
        })
    } else {
        selection
    };
    if !(args.request_timeout.is_finite() && args.request_timeout > 0.0) {
        return Err("--request-timeout must be a positive number of seconds".to_string());
    }
    if !(args.purge_wait.is_finite() && args.purge_wait >= 0.0) {
        return Err("--purge-wait must be a number of seconds".to_string());
    }
    let config = RunConfig {
        credentials,
        insecure: args.insecure,
        clock: args.clock,
        time_scale: args.time_scale,
        request_timeout: Duration::from_secs_f64(args.request_timeout),
        concurrency: args.concurrency,
        expectations,
        filter,
        purge_wait: Duration::from_secs_f64(args.purge_wait),
        container_throughput: args.container_throughput,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(cosmos_conformance::preflight(&config))?;
    let known = config.expectations.as_ref().map(|(_, e)| e);
    let mut progress = Progress::new(cases.len(), known);
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
        "reports: {}/report.{{json,xml,md,html}}",
        args.report_dir.display()
    );
    if let Some(file) = &args.write_expectations {
        write_expectations(file, &report)?;
    }
    let mut end = if report.failed() {
        End::Failed
    } else {
        End::Conforming
    };
    if let Some(file) = &args.snapshot {
        match snapshot::compare(file, &report.outcome_table())? {
            Comparison::Written => println!("snapshot: wrote {}", file.display()),
            Comparison::Matches => println!("snapshot: {} matches", file.display()),
            Comparison::Differs { diff, pending } => {
                println!(
                    "\nsnapshot: the outcome table differs from {}:\n{diff}\nThe new table is in {}: review it with `cargo insta review`, or accept it with `mv {} {}`.",
                    file.display(),
                    pending.display(),
                    pending.display(),
                    file.display()
                );
                end = End::Failed;
            }
        }
    }
    Ok(end)
}

/// `--write-expectations FILE`: the list this run calls for.
fn write_expectations(file: &std::path::Path, report: &Report) -> Result<(), String> {
    let previous = if file.exists() {
        Some(Expectations::load(file)?)
    } else {
        None
    };
    let implementation = previous
        .as_ref()
        .map(|p| p.implementation.clone())
        .unwrap_or_else(|| report.target.endpoint.clone());
    let generated = format!(
        "cosmos-conformance --write-expectations, from a run on the {} clock",
        report.target.clock.split(' ').next().unwrap_or("")
    );
    let list = Expectations::from_report(report, previous.as_ref(), &implementation, &generated);
    // As the snapshot does: the guide's `conformance/expectations.toml` names
    // a directory a new project does not have yet.
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(file, list.to_toml())
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    println!(
        "expectations: wrote {} ({} known failures)",
        file.display(),
        list.failures.len()
    );
    Ok(())
}

/// `--list`: one case a line, aligned.
fn list(cases: &[Case]) -> String {
    let width = |f: &dyn Fn(&Case) -> usize| cases.iter().map(f).max().unwrap_or(0);
    let id_width = width(&|c| c.id.len()).max(2);
    let area_width = width(&|c| c.area.len()).max(4);
    let cites = |c: &Case| c.source.cites.join(",");
    let cites_width = width(&|c| cites(c).len()).max(5);
    let mut out = format!(
        "{:id_width$}  {:area_width$}  {:cites_width$}  title\n",
        "id", "area", "cites"
    );
    for case in cases {
        out.push_str(&format!(
            "{:id_width$}  {:area_width$}  {:cites_width$}  {}\n",
            case.id,
            case.area,
            cites(case),
            case.title
        ));
    }
    out
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
