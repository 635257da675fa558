//! `cargo xtask scorecard`: the suite against every implementation that
//! installs here from a package registry, as their maintainers would run
//! it: this emulator (test clock, and system clock on the wall clock),
//! @vercel/cosmosdb-server and @zeit/cosmosdb-server from npm and cosmium
//! from the Go module proxy (`cosmium.rs`), each over HTTP and HTTPS.
//! Writes docs/scorecard.{md,html} and regenerates each peer's
//! fixtures/expectations/ list from its runs.

mod cosmium;
mod render;

use crate::server::Server;
use crate::{cargo, root, target_dir};
use cosmos_conformance::expectations::Expectations;
use cosmos_conformance::report::Report;
use render::{html, markdown, summary_table, table, update_readme};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

const STARTUP: Duration = Duration::from_secs(20);

/// A peer from npm, pinned.
struct Peer {
    /// The expectations name, e.g. `vercel-cosmosdb-server`.
    name: &'static str,
    package: &'static str,
    version: &'static str,
}

const PEERS: [Peer; 2] = [
    Peer {
        name: "vercel-cosmosdb-server",
        package: "@vercel/cosmosdb-server",
        version: "1.0.1",
    },
    Peer {
        name: "zeit-cosmosdb-server",
        package: "@zeit/cosmosdb-server",
        version: "0.13.4",
    },
];

/// One run of the suite: what was run, how, and what came of it.
struct Run {
    implementation: String,
    transport: &'static str,
    /// The suite's options besides --endpoint and --report-dir.
    options: Vec<String>,
    /// How the target was started.
    started_with: String,
    report: Report,
    exit: i32,
    seconds: f64,
}

pub fn run(_args: &[String]) -> Result<ExitCode, String> {
    let started = Instant::now();
    let status = cargo()
        .args([
            "build",
            "--quiet",
            "--bins",
            "-p",
            "cosmos-conformance",
            "-p",
            "cosmos-emulator",
        ])
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("the build failed".to_string());
    }
    let bin = target_dir().join("debug");
    let out = target_dir().join("scorecard");
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let node = on_path("node").ok_or("node is not on PATH: the peers need Node.js")?;

    // The emulator and each peer run on their own thread: the wall-clock
    // runs spend their time waiting, not computing.
    let emulator_version = format!(
        "cosmos-emulator {} ({})",
        env!("CARGO_PKG_VERSION"),
        revision().unwrap_or_else(|| "unknown revision".into())
    );
    let emulator_bin = bin.join("cosmos-emulator");
    let suite = bin.join("cosmos-conformance");
    let threads: Vec<std::thread::JoinHandle<Result<Vec<Run>, String>>> = {
        let mut threads = Vec::new();
        let (suite_e, out_e) = (suite.clone(), out.clone());
        threads.push(std::thread::spawn(move || {
            let mut runs = Vec::new();
            // The whole suite on the test clock and on the wall clock,
            // then the throughput area on an emulator that throttles
            // (`--rate-limit`), as `cargo xtask conformance` runs it: the
            // runs without it skip those cases.
            for (clock, run_clock, rate_limit) in [
                ("manual", "auto", false),
                ("system", "wall", false),
                ("manual", "auto", true),
            ] {
                let mut args = vec!["--host", "127.0.0.1", "--port", "0", "--clock", clock];
                let mut name = format!("emulator-{clock}");
                let mut options = vec![
                    "--clock".to_string(),
                    run_clock.to_string(),
                    "--expectations".to_string(),
                    "cosmos-emulator".to_string(),
                ];
                if rate_limit {
                    args.push("--rate-limit");
                    name.push_str("-rate-limit");
                    options.extend(["--filter".to_string(), "throughput".to_string()]);
                }
                let server = Server::start(
                    &emulator_bin,
                    &args,
                    &out_e.join(format!("{name}.log")),
                    STARTUP,
                )?;
                runs.push(suite_run(
                    &suite_e,
                    &server.endpoint,
                    options,
                    &out_e.join(&name),
                    if rate_limit {
                        format!("{emulator_version} --rate-limit")
                    } else {
                        emulator_version.clone()
                    },
                    "HTTP",
                    format!("cosmos-emulator --port 0 {}", args[4..].join(" ")),
                    None,
                )?);
            }
            Ok(runs)
        }));
        for peer in PEERS {
            let (suite, out, node) = (suite.clone(), out.clone(), node.clone());
            threads.push(std::thread::spawn(move || {
                peer_runs(&peer, &suite, &out, &node)
            }));
        }
        let (suite, out) = (suite.clone(), out.clone());
        threads.push(std::thread::spawn(move || cosmium::runs(&suite, &out)));
        threads
    };
    let mut runs = Vec::new();
    for thread in threads {
        runs.extend(thread.join().map_err(|_| "a scorecard thread panicked")??);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let date = command_output("date", &["-u", "+%Y-%m-%d %H:%M UTC"]).unwrap_or_default();
    let docs = root().join("docs");
    std::fs::create_dir_all(&docs).map_err(|e| e.to_string())?;
    std::fs::write(docs.join("scorecard.md"), markdown(&runs, &date, elapsed))
        .map_err(|e| e.to_string())?;
    std::fs::write(docs.join("scorecard.html"), html(&runs, &date, elapsed))
        .map_err(|e| e.to_string())?;
    update_readme(&summary_table(&runs))?;
    // The README's picture of report.html: a peer's run shows every colour.
    let example = out.join("vercel-cosmosdb-server-https/report.html");
    match on_path("chromium") {
        Some(chromium) => screenshot(&chromium, &example, &docs.join("src/images/report.png"))?,
        None => {
            eprintln!("xtask scorecard: chromium is not installed; docs/src/images/report.png is not updated")
        }
    }
    print!("{}", table(&runs));
    println!(
        "wrote docs/scorecard.md and docs/scorecard.html; reports in {} ({elapsed:.0} s)",
        out.display()
    );
    let emulator_conforms = runs
        .iter()
        .filter(|r| r.implementation.starts_with("cosmos-emulator"))
        .all(|r| r.exit == 0);
    Ok(if emulator_conforms {
        ExitCode::SUCCESS
    } else {
        eprintln!("xtask scorecard: the emulator does not conform (see above)");
        ExitCode::from(1)
    })
}

/// A peer over HTTP then HTTPS: the list is regenerated from the HTTP run,
/// and the HTTPS run is gated on it (its exit status shows whether the
/// list holds), then regenerated again from both.
fn peer_runs(peer: &Peer, suite: &Path, out: &Path, node: &Path) -> Result<Vec<Run>, String> {
    let prefix = out.join(peer.name);
    install(peer, &prefix)?;
    let cli = prefix
        .join("node_modules")
        .join(peer.package)
        .join("lib/cli.js");
    let list = root()
        .join("fixtures/expectations")
        .join(format!("{}.toml", peer.name));
    let implementation = format!("{} {} (npm)", peer.package, peer.version);
    let mut runs = Vec::new();
    for (transport, tls) in [("HTTP", false), ("HTTPS", true)] {
        let mut args = vec![
            cli.display().to_string(),
            "--host".into(),
            "127.0.0.1".into(),
            "-p".into(),
            "0".into(),
        ];
        if !tls {
            args.push("--no-ssl".into());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let log = out.join(format!("{}-{}.log", peer.name, transport.to_lowercase()));
        let server = Server::start(node, &args, &log, STARTUP)?;
        let options = peer_options(&list, peer.name, tls);
        let cli_flags = if tls { "" } else { " --no-ssl" };
        let run = suite_run(
            suite,
            &server.endpoint,
            options,
            &out.join(format!("{}-{}", peer.name, transport.to_lowercase())),
            implementation.clone(),
            transport,
            format!("npx cosmosdb-server --host 127.0.0.1 -p PORT{cli_flags}"),
            None,
        )?;
        drop(server);
        regenerate(&list, &run, &implementation)?;
        runs.push(run);
    }
    Ok(runs)
}

/// Rewrites a peer's list from a run, keeping the reasons written before.
/// The suite's options for a peer's run: its expectations list `name`
/// when `list` exists (a peer without one yet runs without; its list is
/// made from the run), and `--insecure` over HTTPS (its own certificate).
fn peer_options(list: &Path, name: &str, tls: bool) -> Vec<String> {
    let mut options = Vec::new();
    if list.exists() {
        options.extend(["--expectations".to_string(), name.to_string()]);
    }
    if tls {
        options.push("--insecure".into());
    }
    options
}

fn regenerate(list: &Path, run: &Run, implementation: &str) -> Result<(), String> {
    let previous = if list.exists() {
        Some(Expectations::load(list)?)
    } else {
        None
    };
    let generated = format!(
        "cargo xtask scorecard, from a run over {} on the {} clock",
        run.transport,
        run.report.target.clock.split(' ').next().unwrap_or("")
    );
    let expectations =
        Expectations::from_report(&run.report, previous.as_ref(), implementation, &generated);
    std::fs::write(list, expectations.to_toml()).map_err(|e| format!("{}: {e}", list.display()))
}

/// `npm install PACKAGE@VERSION --prefix DIR`, unless it is there.
fn install(peer: &Peer, prefix: &Path) -> Result<(), String> {
    let installed = prefix
        .join("node_modules")
        .join(peer.package)
        .join("package.json");
    if std::fs::read_to_string(&installed)
        .is_ok_and(|text| text.contains(&format!("\"version\": \"{}\"", peer.version)))
    {
        return Ok(());
    }
    let npm = on_path("npm").ok_or("npm is not on PATH")?;
    std::fs::create_dir_all(prefix).map_err(|e| e.to_string())?;
    let spec = format!("{}@{}", peer.package, peer.version);
    eprintln!("xtask scorecard: npm install {spec}");
    let status = Command::new(npm)
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(prefix)
        .arg(&spec)
        .status()
        .map_err(|e| format!("cannot run npm: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("npm install {spec} failed"))
    }
}

/// The suite against `endpoint`; `namespace`: the process whose network
/// namespace the suite joins to reach it (cosmium's).
#[allow(clippy::too_many_arguments)]
fn suite_run(
    suite: &Path,
    endpoint: &str,
    options: Vec<String>,
    report_dir: &Path,
    implementation: String,
    transport: &'static str,
    started_with: String,
    namespace: Option<u32>,
) -> Result<Run, String> {
    let started = Instant::now();
    let mut command = match namespace {
        Some(pid) => {
            let mut command = cosmium::enter(pid);
            command.arg(suite);
            command
        }
        None => Command::new(suite),
    };
    let output = command
        .arg("--endpoint")
        .arg(endpoint)
        .args(&options)
        .arg("--fixtures")
        .arg(root().join("fixtures"))
        .arg("--report-dir")
        .arg(report_dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run cosmos-conformance: {e}"))?;
    let exit = output.status.code().unwrap_or(-1);
    std::fs::write(report_dir.join("console.txt"), &output.stdout).ok();
    if exit == 2 {
        return Err(format!(
            "{implementation} over {transport}: the run could not start: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let report = Report::load(&report_dir.join("report.json"))?;
    eprintln!(
        "xtask scorecard: {implementation} over {transport}: exit {exit} in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(Run {
        implementation,
        transport,
        options,
        started_with,
        report,
        exit,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Headless Chromium's screenshot of a page (the top of it).
fn screenshot(chromium: &Path, page: &Path, png: &Path) -> Result<(), String> {
    let profile = target_dir().join("scorecard/chromium-profile");
    let _ = std::fs::remove_dir_all(&profile);
    let status = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1100,1000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run chromium: {e}"))?;
    let _ = std::fs::remove_dir_all(&profile);
    if status.success() {
        Ok(())
    } else {
        Err("chromium could not take the screenshot of report.html".to_string())
    }
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}

fn command_output(program: &str, args: &[&str]) -> Option<String> {
    Command::new(program)
        .args(args)
        .current_dir(root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn revision() -> Option<String> {
    command_output("git", &["rev-parse", "--short", "HEAD"])
}

#[cfg(test)]
mod tests {
    use crate::server::endpoint_of;

    #[test]
    fn the_endpoint_comes_from_the_servers_first_line() {
        assert_eq!(
            endpoint_of("listening on http://127.0.0.1:4321\n").as_deref(),
            Some("http://127.0.0.1:4321")
        );
        assert_eq!(
            endpoint_of("Ready to accept HTTPS connections at 127.0.0.1:3000").as_deref(),
            Some("https://127.0.0.1:3000")
        );
        assert_eq!(
            endpoint_of("Ready to accept HTTP connections at 127.0.0.1:3001").as_deref(),
            Some("http://127.0.0.1:3001")
        );
        assert_eq!(
            endpoint_of("2026/11/29 03:45:51 Listening and serving HTTPS on :8081\n").as_deref(),
            Some("https://127.0.0.1:8081")
        );
    }
}
