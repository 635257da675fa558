//! `cargo xtask conformance`: the suite against the emulator (built and
//! started here, with its test clock, on a free port) or against --endpoint.
//!
//! Against the emulator the suite runs twice on the same emulator: as
//! asked, then with every container created with 24000 RU/s, which gives
//! it four physical partition key ranges; the second run must pass and
//! observe the very same outcomes. It writes its reports to `ranges/` under
//! the report directory and never touches `--snapshot` or
//! `--write-expectations` files (the first run's).
//!
//! The `throughput` area needs an emulator that throttles: those runs leave
//! it out (`--exclude throughput`), and a last run gives it an emulator of
//! its own started with `--rate-limit` (reports in `throughput/`), where
//! every selected throughput case must run and pass, none skipped. The TTL
//! cases stay on an emulator without rate limiting: their outcomes never
//! depend on how many request units a case spends in one second (a batch
//! of 100 writes, or a run of cases that never move the clock, would find
//! a 400 RU/s container's second, or the account's metadata budget, spent).
//!
//! With `--data-dir DIR` the emulator persists into DIR, and after those two
//! runs the suite runs a third time in two halves (`--cases-to`,
//! `--cases-from`) with a SIGKILL and a restart on DIR between them. Data
//! written before the first half (a database, a container with settings,
//! items replaced and deleted), the databases list and the manual clock
//! must read the same before the kill and after the restart (system
//! properties included), and both halves' outcomes together must be the
//! first run's, line for line (reports in `restart/first/` and
//! `restart/second/`).

mod throughput;

use crate::server::Server;
use crate::{cargo, flag, root, target_dir, without};
use cosmos_conformance::report::Report;
use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};
use throughput::THROUGHPUT_AREA;

const STARTUP: Duration = Duration::from_secs(10);
/// The second run's containers: 4 ranges (above 10,000 RU/s, one per 6,000).
const SEVERAL_RANGES_THROUGHPUT: u32 = 24_000;
const SEVERAL_RANGES: usize = 4;
/// Options of the first run the second does not repeat (with their value).
const FIRST_RUN_ONLY: [&str; 3] = ["--report-dir", "--snapshot", "--write-expectations"];

pub fn run(args: &[String]) -> Result<ExitCode, String> {
    let started = Instant::now();
    let against_emulator =
        flag(args, "--endpoint").is_none() && flag(args, "--connection-string").is_none();
    let data_dir = flag(args, "--data-dir").map(|dir| root().join(dir));
    if data_dir.is_some() {
        if !against_emulator {
            return Err("--data-dir is for the emulator started here: drop --endpoint".to_string());
        }
        if flag(args, "--cases-from").is_some() || flag(args, "--cases-to").is_some() {
            return Err(
                "--data-dir splits the run in two itself: drop --cases-from and --cases-to"
                    .to_string(),
            );
        }
    }
    // The suite's own options: all but ours.
    let args = &without(args, "--data-dir");
    let mut packages = vec!["-p", "cosmos-conformance"];
    if against_emulator {
        packages.extend(["-p", "cosmos-emulator"]);
    }
    let status = cargo()
        .args(["build", "--quiet", "--bins"])
        .args(&packages)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("the build failed".to_string());
    }
    let bin = target_dir().join("debug");
    let report_dir = flag(args, "--report-dir")
        .map(|dir| root().join(dir))
        .unwrap_or_else(|| target_dir().join("conformance"));
    let mut suite = Command::new(bin.join("cosmos-conformance"));
    suite.args(args);
    if flag(args, "--report-dir").is_none() {
        suite.arg("--report-dir").arg(&report_dir);
    }
    let mut emulator = None;
    let mut extra: Vec<String> = Vec::new();
    let listing = args.iter().any(|a| a == "--list");
    let sliced = flag(args, "--cases-from").is_some() || flag(args, "--cases-to").is_some();
    // The throughput area runs on an emulator of its own (see above).
    let (others, throughput_cases) = if against_emulator && !listing && !sliced {
        extra.extend(["--exclude".to_string(), THROUGHPUT_AREA.to_string()]);
        throughput::selection(args)?
    } else {
        (1, Vec::new())
    };
    if others == 0 && !throughput_cases.is_empty() {
        // Only throughput cases are selected: their run alone.
        std::fs::create_dir_all(&report_dir).map_err(|e| e.to_string())?;
        let code = throughput::run(&bin, args, &report_dir, &throughput_cases)?;
        eprintln!(
            "xtask conformance: {:.1} s in all (build check, start, run, stop)",
            started.elapsed().as_secs_f64()
        );
        return Ok(ExitCode::from(code));
    }
    let mut emulator_args = vec!["--host", "127.0.0.1", "--port", "0", "--clock", "manual"];
    if let Some(dir) = &data_dir {
        let dir = dir
            .to_str()
            .ok_or_else(|| format!("--data-dir {} is not UTF-8", dir.display()))?;
        emulator_args.extend(["--data-dir", dir]);
    }
    if against_emulator {
        std::fs::create_dir_all(&report_dir).map_err(|e| e.to_string())?;
        let running = Server::start(
            &bin.join("cosmos-emulator"),
            &emulator_args,
            &report_dir.join("emulator.log"),
            STARTUP,
        )?;
        extra.extend(["--endpoint".to_string(), running.endpoint.clone()]);
        if flag(args, "--expectations").is_none() {
            extra.extend(["--expectations".to_string(), "cosmos-emulator".to_string()]);
        }
        emulator = Some(running);
    }
    let status = suite
        .args(&extra)
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot run cosmos-conformance: {e}"))?;
    let mut code = exit_code(status.code());
    let several = against_emulator
        && flag(args, "--container-throughput").is_none()
        && !args.iter().any(|a| a == "--list");
    if several {
        let ranges_dir = report_dir.join("ranges");
        println!(
            "\n== the same cases again, every container created with {SEVERAL_RANGES_THROUGHPUT} RU/s ({SEVERAL_RANGES} partition key ranges); reports in {}",
            ranges_dir.display()
        );
        let status = Command::new(bin.join("cosmos-conformance"))
            .args(second_run_args(args))
            .args(&extra)
            .arg("--report-dir")
            .arg(&ranges_dir)
            .arg("--container-throughput")
            .arg(SEVERAL_RANGES_THROUGHPUT.to_string())
            .current_dir(root())
            .status()
            .map_err(|e| format!("cannot run cosmos-conformance: {e}"))?;
        let second = exit_code(status.code());
        match compare(&report_dir, &ranges_dir) {
            Ok(summary) => println!("xtask conformance: {summary}"),
            Err(why) => {
                eprintln!("xtask conformance: the run with several ranges: {why}");
                code = code.max(1);
            }
        }
        code = code.max(second);
    }
    let throttled = !throughput_cases.is_empty();
    if throttled {
        code = code.max(throughput::run(&bin, args, &report_dir, &throughput_cases)?);
    }
    let restart = data_dir.is_some() && !listing;
    if let (true, Some(running)) = (restart, emulator.take()) {
        let mut suite_args = second_run_args(args);
        suite_args.extend(["--exclude".to_string(), THROUGHPUT_AREA.to_string()]);
        let halves = Restart {
            bin: &bin,
            emulator_args: &emulator_args,
            suite_args,
            report_dir: &report_dir,
        };
        let (restart_code, restarted) = halves.run(running)?;
        code = code.max(restart_code);
        emulator = Some(restarted);
    }
    drop(emulator);
    eprintln!(
        "xtask conformance: {:.1} s in all (build check, start, run{}, stop)",
        started.elapsed().as_secs_f64(),
        if several || restart || throttled {
            "s"
        } else {
            ""
        }
    );
    Ok(ExitCode::from(code))
}

/// The cases of the fixtures the suite will read: `--fixtures DIR`, or
/// those built in (the same source tree's).
fn fixture_cases(args: &[String]) -> Result<Vec<cosmos_conformance::fixtures::Case>, String> {
    use cosmos_conformance::source::FixtureSource;
    let source = match flag(args, "--fixtures") {
        Some(dir) => FixtureSource::Dir(root().join(dir)),
        None => FixtureSource::Embedded,
    };
    source.cases().map_err(|e| e.to_string())
}

/// Every value of a repeatable option, `--name VALUE` or `--name=VALUE`.
fn flags(args: &[String], name: &str) -> Vec<String> {
    args.iter()
        .enumerate()
        .filter_map(|(i, arg)| {
            if arg == name {
                args.get(i + 1).cloned()
            } else {
                arg.strip_prefix(name)
                    .and_then(|rest| rest.strip_prefix('='))
                    .map(str::to_string)
            }
        })
        .collect()
}

/// The run in two halves around a SIGKILL and a restart of the emulator on
/// its `--data-dir` (see the module's documentation).
struct Restart<'a> {
    bin: &'a Path,
    emulator_args: &'a [&'a str],
    /// The suite's options, without those of the first run alone.
    suite_args: Vec<String>,
    report_dir: &'a Path,
}

impl Restart<'_> {
    /// Returns the exit code it calls for and the restarted emulator.
    fn run(&self, emulator: Server) -> Result<(u8, Server), String> {
        let whole = Report::load(&self.report_dir.join("report.json"))?;
        let half = whole.cases.len() / 2;
        let dir = self.report_dir.join("restart");
        let (first_dir, second_dir) = (dir.join("first"), dir.join("second"));
        println!(
            "\n== the first {half} cases, SIGKILL, a restart on the same --data-dir, the other {}; reports in {}",
            whole.cases.len() - half,
            dir.display()
        );
        Control::new(&emulator.endpoint)?.write_kept_data()?;
        let mut code = self.suite(&emulator.endpoint, "--cases-to", half, &first_dir)?;
        let before = Control::new(&emulator.endpoint)?.durable_state()?;
        drop(emulator); // SIGKILL, then waits for it
        let emulator = Server::start(
            &self.bin.join("cosmos-emulator"),
            self.emulator_args,
            &self.report_dir.join("emulator-restarted.log"),
            STARTUP,
        )?;
        let after = Control::new(&emulator.endpoint)?.durable_state()?;
        if before == after {
            println!("xtask conformance: the same after the restart:\n  {after}");
        } else {
            eprintln!(
                "xtask conformance: the restart changed what the first half left:\n  before the kill: {before}\n  after the restart: {after}"
            );
            code = code.max(1);
        }
        code = code.max(self.suite(&emulator.endpoint, "--cases-from", half, &second_dir)?);
        match compare_halves(self.report_dir, &first_dir, &second_dir) {
            Ok(summary) => println!("xtask conformance: {summary}"),
            Err(why) => {
                eprintln!("xtask conformance: the run with a restart: {why}");
                code = code.max(1);
            }
        }
        Ok((code, emulator))
    }

    /// One half: `bound` is `--cases-to` or `--cases-from`.
    fn suite(
        &self,
        endpoint: &str,
        bound: &str,
        half: usize,
        report_dir: &Path,
    ) -> Result<u8, String> {
        let mut suite = Command::new(self.bin.join("cosmos-conformance"));
        suite
            .args(&self.suite_args)
            .args(["--endpoint", endpoint, bound, &half.to_string()])
            .arg("--report-dir")
            .arg(report_dir);
        if flag(&self.suite_args, "--expectations").is_none() {
            suite.args(["--expectations", "cosmos-emulator"]);
        }
        let status = suite
            .current_dir(root())
            .status()
            .map_err(|e| format!("cannot run cosmos-conformance: {e}"))?;
        Ok(exit_code(status.code()))
    }
}

/// The database the run with a restart writes before its first half, so
/// that the restart has data to keep (each case deletes its own).
const KEPT_DATABASE: &str = "xtask-restart";

/// A signed client of the emulator and a runtime to drive it.
struct Control {
    client: cosmos_conformance::client::Client,
    runtime: tokio::runtime::Runtime,
}

impl Control {
    fn new(endpoint: &str) -> Result<Control, String> {
        use cosmos_conformance::client::{Client, Credentials, WELL_KNOWN_KEY};
        let credentials = Credentials {
            endpoint: endpoint.to_string(),
            key: WELL_KNOWN_KEY.to_string(),
        };
        Ok(Control {
            client: Client::new(&credentials, false, Duration::from_secs(30))?,
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the async runtime: {e}"))?,
        })
    }

    /// Sends a signed request; its body if the status is 2xx.
    fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        (resource_type, link): (&str, &str),
        body: Option<serde_json::Value>,
        partition_key: Option<&str>,
    ) -> Result<String, String> {
        use cosmos_conformance::client::Request;
        let mut request = Request::new(method, path.to_string(), resource_type, link.to_string());
        if let Some(body) = &body {
            request = request.json(body);
        }
        if let Some(key) = partition_key {
            request = request.header("x-ms-documentdb-partitionkey", key);
        }
        let response = self
            .runtime
            .block_on(self.client.send(request))
            .map_err(|e| e.to_string())?;
        if !(200..300).contains(&response.status) {
            return Err(format!(
                "/{path} answered {}: {}",
                response.status, response.body
            ));
        }
        Ok(response.body)
    }

    /// Writes [`KEPT_DATABASE`]: a container with settings, items, a
    /// replace and a delete (so that its change log has every kind).
    fn write_kept_data(&self) -> Result<(), String> {
        use reqwest::Method;
        use serde_json::json;
        let db = format!("dbs/{KEPT_DATABASE}");
        let coll = format!("{db}/colls/kept");
        // Left by an earlier run on the same directory: written afresh.
        if let Err(e) = self.send(Method::DELETE, &db, ("dbs", &db), None, None) {
            if !e.contains("answered 404") {
                return Err(e);
            }
        }
        self.send(
            Method::POST,
            "dbs",
            ("dbs", ""),
            Some(json!({"id": KEPT_DATABASE})),
            None,
        )?;
        let container = json!({
            "id": "kept",
            "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2},
            "defaultTtl": -1,
            "indexingPolicy": {"indexingMode": "consistent", "excludedPaths": [{"path": "/big/*"}]},
        });
        self.send(
            Method::POST,
            &format!("{db}/colls"),
            ("colls", &db),
            Some(container),
            None,
        )?;
        let docs = format!("{coll}/docs");
        for i in 0..5 {
            let item = json!({"id": format!("i{i}"), "pk": "p", "n": i});
            self.send(
                Method::POST,
                &docs,
                ("docs", &coll),
                Some(item),
                Some("[\"p\"]"),
            )?;
        }
        let replaced = json!({"id": "i1", "pk": "p", "n": "replaced"});
        let i1 = format!("{docs}/i1");
        self.send(
            Method::PUT,
            &i1,
            ("docs", &i1),
            Some(replaced),
            Some("[\"p\"]"),
        )?;
        let i2 = format!("{docs}/i2");
        self.send(Method::DELETE, &i2, ("docs", &i2), None, Some("[\"p\"]"))?;
        Ok(())
    }

    /// What must survive the restart, as the emulator answers it: the
    /// databases, the kept container and its items with their system
    /// properties, and the manual clock's position.
    fn durable_state(&self) -> Result<String, String> {
        use reqwest::Method;
        let coll = format!("dbs/{KEPT_DATABASE}/colls/kept");
        let docs = format!("{coll}/docs");
        let mut state = Vec::new();
        for (path, resource) in [
            ("dbs", ("dbs", "")),
            (coll.as_str(), ("colls", coll.as_str())),
            (docs.as_str(), ("docs", coll.as_str())),
            ("_emulator/clock", ("", "")),
        ] {
            let body = self.send(Method::GET, path, resource, None, None)?;
            state.push(format!("GET /{path}: {body}"));
        }
        Ok(state.join("\n  "))
    }
}

/// The two halves' outcome tables, one after the other, are the whole
/// run's (in `whole`).
fn compare_halves(whole: &Path, first: &Path, second: &Path) -> Result<String, String> {
    let load = |dir: &Path| Report::load(&dir.join("report.json"));
    let (whole, first, second) = (load(whole)?, load(first)?, load(second)?);
    let a = whole.outcome_table();
    let b = first.outcome_table() + &second.outcome_table();
    if a != b {
        let mut diff: Vec<String> = a
            .lines()
            .zip(b.lines())
            .filter(|(x, y)| x != y)
            .take(10)
            .map(|(x, y)| format!("  one run:      {x}\n  with restart: {y}"))
            .collect();
        if a.lines().count() != b.lines().count() {
            diff.push(format!(
                "  {} lines in one run, {} with the restart",
                a.lines().count(),
                b.lines().count()
            ));
        }
        return Err(format!(
            "its outcomes differ from those of one run:\n{}",
            diff.join("\n")
        ));
    }
    Ok(format!(
        "{} + {} cases, {} passed, with a SIGKILL and a restart on the --data-dir between them: the same outcomes as one run",
        first.summary.total,
        second.summary.total,
        first.summary.passed + second.summary.passed
    ))
}

/// The exit status of the suite as ours: its code, 1 when killed.
fn exit_code(code: Option<i32>) -> u8 {
    match code {
        Some(code) => u8::try_from(code).unwrap_or(1),
        None => 1,
    }
}

/// The first run's arguments without those it alone uses (see [`FIRST_RUN_ONLY`]).
fn second_run_args(args: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    let mut skip_value = false;
    for arg in args {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if FIRST_RUN_ONLY.contains(&arg.as_str()) {
            skip_value = true;
        } else if !FIRST_RUN_ONLY
            .iter()
            .any(|name| arg.starts_with(&format!("{name}=")))
        {
            kept.push(arg.clone());
        }
    }
    kept
}

/// Both runs' reports: the second's containers had [`SEVERAL_RANGES`]
/// ranges, and its outcome table is the first's, line for line.
fn compare(first: &Path, second: &Path) -> Result<String, String> {
    let load = |dir: &Path| Report::load(&dir.join("report.json"));
    let (first, second) = (load(first)?, load(second)?);
    let containers = second
        .target
        .containers
        .as_ref()
        .ok_or("its report does not name the containers' throughput")?;
    if containers.ranges != [SEVERAL_RANGES] {
        return Err(format!(
            "the containers were to have {SEVERAL_RANGES} partition key ranges: {}",
            containers.describe()
        ));
    }
    let (a, b) = (first.outcome_table(), second.outcome_table());
    if a != b {
        let diff: Vec<String> = a
            .lines()
            .zip(b.lines())
            .filter(|(x, y)| x != y)
            .take(10)
            .map(|(x, y)| format!("  1 range:  {x}\n  {SEVERAL_RANGES} ranges: {y}"))
            .collect();
        return Err(format!(
            "its outcomes differ from those with one range:\n{}",
            diff.join("\n")
        ));
    }
    Ok(format!(
        "{} cases, {} passed, with one range and with {}: the same outcomes",
        second.summary.total,
        second.summary.passed,
        containers.describe()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_run_drops_the_first_runs_files() {
        let args: Vec<String> = [
            "--snapshot",
            "a.snap",
            "--filter",
            "E1",
            "--report-dir=x",
            "--write-expectations",
            "e.toml",
            "--clock",
            "manual",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            second_run_args(&args),
            ["--filter", "E1", "--clock", "manual"]
        );
    }

    #[test]
    fn a_repeated_option_gives_every_value() {
        let args: Vec<String> = ["--exclude", "a", "--filter", "E1", "--exclude=b,c"]
            .map(String::from)
            .to_vec();
        assert_eq!(flags(&args, "--exclude"), ["a", "b,c"]);
        assert!(flags(&args, "--list").is_empty());
    }

    #[test]
    fn the_throughput_area_is_what_the_options_select() {
        let (others, all) = throughput::selection(&[]).unwrap();
        assert!(others >= 100, "{others}");
        assert!(all.len() >= 5, "{all:?}");
        let args = |list: &[&str]| list.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        let (others, throughput) = throughput::selection(&args(&["--filter", "E1"])).unwrap();
        assert!(others > 0 && throughput.is_empty());
        let (_, throughput) = throughput::selection(&args(&["--exclude", "throughput"])).unwrap();
        assert!(throughput.is_empty());
        assert_eq!(
            throughput::selection(&args(&["--filter", "T.refusal"])).unwrap(),
            (
                0,
                vec!["T.refusal".to_string(), "T.refusal.no-change".to_string()]
            )
        );
        let others = throughput::other_areas(&[]).unwrap();
        assert!(others.contains(&"examples".to_string()));
        assert!(!others.contains(&THROUGHPUT_AREA.to_string()));
        // No throughput case's id contains another area's name, so that
        // excluding the areas by name leaves every throughput case.
        for id in &all {
            assert!(
                others.iter().all(|area| !id.contains(area.as_str())),
                "{id}"
            );
        }
    }

    #[test]
    fn the_data_dir_is_not_the_suites() {
        let args: Vec<String> = ["--data-dir", "d", "--filter", "E1", "--data-dir=e", "x"]
            .map(String::from)
            .to_vec();
        assert_eq!(without(&args, "--data-dir"), ["--filter", "E1", "x"]);
    }
}
