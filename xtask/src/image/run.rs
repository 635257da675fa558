//! One platform's image run as a user runs it, and checked from outside:
//! `podman run -d` with both ports published on 127.0.0.1 (free ports) and
//! the test clock (`COSMOS_EMULATOR_CLOCK=manual`: a variable, as the
//! image's defaults are); the time from `podman run` to the first 200 of
//! `/ready`; the conformance suite through the published port; the
//! certificate at the older image's path, trusted by a client of HTTPS on
//! the same port; the image's HEALTHCHECK (`podman healthcheck run`), and
//! the health command failing against a port nothing serves; `podman stop`
//! (SIGTERM) ending it cleanly, well within podman's 10 s before SIGKILL.
//! The container is removed however this ends.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::context::{Platform, GEN1_CERT_DIR};
use super::podman::{free_port, output, podman, Container};
use crate::root;
use cosmos_conformance::report::Report;

/// How long the image may take to answer `/ready` (qemu-user is slower).
const STARTUP: Duration = Duration::from_secs(60);
/// podman stop's grace before SIGKILL; a clean stop takes far less.
const STOP_GRACE: u64 = 10;

/// What the run measured.
pub struct Outcome {
    pub platform: String,
    pub ready: Duration,
    pub conformance: String,
    pub stop: Duration,
}

/// Runs `image` for `platform`; reports and logs go to `dir`.
pub fn test(
    image: &str,
    platform: &Platform,
    dir: &Path,
    conformance: &Path,
) -> Result<Outcome, String> {
    crate::package::fresh_dir(dir)?;
    let (port, health_port) = (free_port()?, free_port()?);
    let name = format!(
        "cosmos-image-test-{}-{}",
        platform.architecture(),
        std::process::id()
    );
    // Before `podman run`: whatever happens next, the container goes.
    let container = Container { id: name.clone() };
    eprintln!(
        "\n== xtask image: run {image} for {} on 127.0.0.1:{port} (health 127.0.0.1:{health_port})",
        platform.name
    );
    let started = Instant::now();
    let mut run = podman()
        .args([
            "run",
            "--detach",
            "--name",
            &name,
            "--platform",
            platform.name,
        ])
        .args(["--publish", &format!("127.0.0.1:{port}:8081")])
        .args(["--publish", &format!("127.0.0.1:{health_port}:8080")])
        .args(["--env", "COSMOS_EMULATOR_CLOCK=manual", image])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("podman run: {e}"))?;
    let log = dir.join("container.log");
    let mut looked = Instant::now();
    let ready = loop {
        if http_status(health_port, "/ready") == Some(200) {
            break started.elapsed();
        }
        if let Ok(Some(status)) = run.try_wait() {
            if !status.success() {
                let mut stderr = String::new();
                let _ = run.stderr.take().map(|mut e| e.read_to_string(&mut stderr));
                return Err(format!("podman run failed ({status}): {stderr}"));
            }
            // Started: has it stopped already? (A refused setting exits 2.)
            if looked.elapsed() > Duration::from_millis(500) {
                looked = Instant::now();
                if container.inspect("{{.State.Status}}").as_deref() == Ok("exited") {
                    container.save_logs(&log);
                    return Err(format!(
                        "{image} ({}) exited at start ({}); its log:\n{}",
                        platform.name,
                        container.inspect("exit code {{.State.ExitCode}}")?,
                        std::fs::read_to_string(&log).unwrap_or_default().trim_end()
                    ));
                }
            }
        }
        if started.elapsed() > STARTUP {
            container.save_logs(&log);
            return Err(format!(
                "{image} ({}) did not answer 200 on /ready within {STARTUP:?}; its log: {}",
                platform.name,
                log.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let _ = run.wait();
    eprintln!(
        "   {}: /ready answered 200 {:.3} s after `podman run`",
        platform.name,
        ready.as_secs_f64()
    );

    let result = checks(&container, port, dir, conformance);
    container.save_logs(&log);
    let conformance = result?;

    let stopping = Instant::now();
    output(podman().args(["stop", "--time", &STOP_GRACE.to_string(), &name]))?;
    let stop = stopping.elapsed();
    let exit = container.inspect("{{.State.ExitCode}}")?;
    container.save_logs(&log);
    if exit != "0" || stop >= Duration::from_secs(STOP_GRACE) {
        return Err(format!(
            "podman stop: the emulator exited with {exit} after {:.1} s (a clean stop exits 0 at once; its log: {})",
            stop.as_secs_f64(),
            log.display()
        ));
    }
    eprintln!(
        "   {}: podman stop (SIGTERM): exited 0 after {:.2} s",
        platform.name,
        stop.as_secs_f64()
    );
    Ok(Outcome {
        platform: platform.name.to_string(),
        ready,
        conformance,
        stop,
    })
}

/// The checks on the running container; the conformance summary.
fn checks(
    container: &Container,
    port: u16,
    dir: &Path,
    conformance: &Path,
) -> Result<String, String> {
    let endpoint = format!("http://127.0.0.1:{port}");
    let reports = dir.join("conformance");
    let status = Command::new(conformance)
        .args(["--endpoint", &endpoint, "--expectations", "cosmos-emulator"])
        .arg("--report-dir")
        .arg(&reports)
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot run {}: {e}", conformance.display()))?;
    let report = Report::load(&reports.join("report.json"))?;
    let s = &report.summary;
    let summary = format!(
        "{} of {} cases as expected ({} passed, {} expected failures, {} skipped)",
        s.passed + s.expected_failure + s.skipped,
        s.total,
        s.passed,
        s.expected_failure,
        s.skipped
    );
    if !status.success() || report.failed() {
        return Err(format!(
            "the conformance suite through the published port: {summary}; {} failed, {} passed unexpectedly (reports in {})",
            s.failed,
            s.unexpected_pass,
            reports.display()
        ));
    }
    eprintln!("   conformance through the published port: {summary}");

    let pem = dir.join("emulator.pem");
    output(
        podman()
            .arg("cp")
            .arg(format!("{}:/{GEN1_CERT_DIR}/emulator.pem", container.id))
            .arg(&pem),
    )?;
    let pem = std::fs::read(&pem).map_err(|e| format!("{}: {e}", pem.display()))?;
    if !pem.starts_with(b"-----BEGIN CERTIFICATE-----") {
        return Err(format!(
            "/{GEN1_CERT_DIR}/emulator.pem is not a PEM certificate"
        ));
    }
    let fetched = https_get_trusting(&pem, port, "/_explorer/emulator.pem")?;
    if fetched.trim() != String::from_utf8_lossy(&pem).trim() {
        return Err(
            "the certificate served over HTTPS is not the one written to the gen1 path".into(),
        );
    }
    eprintln!(
        "   /{GEN1_CERT_DIR}/emulator.pem written; HTTPS on the same port verifies against it"
    );

    output(podman().args(["healthcheck", "run", &container.id]))
        .map_err(|e| format!("the image's HEALTHCHECK: {e}"))?;
    let unhealthy = podman()
        .args([
            "exec",
            &container.id,
            "/cosmos-emulator",
            "health",
            "--port",
            "1",
        ])
        .output()
        .map_err(|e| format!("podman exec: {e}"))?;
    if unhealthy.status.code() != Some(1) {
        return Err(format!(
            "`cosmos-emulator health --port 1` (nothing there) exited {}, expected 1",
            unhealthy.status
        ));
    }
    eprintln!("   HEALTHCHECK: healthy; `cosmos-emulator health` against a closed port: exit 1");
    Ok(summary)
}

/// The status of `GET http://127.0.0.1:port/path`, if anything answered.
pub fn http_status(port: u16, path: &str) -> Option<u16> {
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_millis(200)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).ok()?;
    // HTTP/1.1 200
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

/// `GET https://127.0.0.1:port/path` trusting only `pem`: its body.
fn https_get_trusting(pem: &[u8], port: u16, path: &str) -> Result<String, String> {
    let certificate =
        reqwest::Certificate::from_pem(pem).map_err(|e| format!("emulator.pem: {e}"))?;
    let client = reqwest::Client::builder()
        .tls_certs_only([certificate])
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| format!("an HTTPS client: {e}"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let url = format!("https://127.0.0.1:{port}{path}");
    runtime.block_on(async {
        let response = client
            .get(&url)
            .send()
            .await
            .map_err(|e| format!("GET {url}: {e:?}"))?;
        if !response.status().is_success() {
            return Err(format!("GET {url}: {}", response.status()));
        }
        response.text().await.map_err(|e| format!("GET {url}: {e}"))
    })
}
