//! `--health-port`: /alive, /ready, /status before and after the endpoint
//! serves, on a listener of its own.

use std::time::Duration;

use serde_json::Value;

use super::support::{emulator_command, Emu, Scratch};
use super::{eventually, free_port, start};

/// `(status, JSON body)` of `GET http://127.0.0.1:{port}{path}`; `None` when
/// nothing answers (yet).
fn get(port: u16, path: &str) -> Option<(u16, Value)> {
    let reply = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
        .get(format!("http://127.0.0.1:{port}{path}"))
        .send()
        .ok()?;
    let status = reply.status().as_u16();
    Some((status, reply.json().unwrap_or(Value::Null)))
}

#[track_caller]
fn answer(port: u16, path: &str) -> (u16, Value) {
    get(port, path).unwrap_or_else(|| panic!("{path}: no answer"))
}

/// A data directory whose read-back waits until the test lets it go: its
/// oldest log is a FIFO, whose opening blocks until a writer opens it (the
/// emulator then reads it as empty). A large directory being read back,
/// without the wait for one to be written.
#[cfg(unix)]
struct HeldDirectory {
    fifo: std::path::PathBuf,
}

#[cfg(unix)]
impl HeldDirectory {
    fn new(data: &std::path::Path) -> HeldDirectory {
        use std::os::unix::ffi::OsStrExt;
        std::fs::create_dir_all(data).unwrap();
        // log-g.bin, generations in order (data/persist/directory.rs); the newest,
        // a plain file, is the one the journal then appends to.
        let fifo = data.join("log-00000000.bin");
        std::fs::write(data.join("log-00000001.bin"), b"").unwrap();
        let path = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path that lives across the call.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0, "mkfifo");
        HeldDirectory { fifo }
    }

    /// Lets the read-back go on: opens the FIFO for writing and closes it.
    fn release(&self) {
        drop(
            std::fs::OpenOptions::new()
                .write(true)
                .open(&self.fifo)
                .unwrap(),
        );
    }
}

#[cfg(unix)]
#[test]
fn alive_answers_while_the_data_directory_is_read_back_and_ready_only_after() {
    let scratch = Scratch::new("health-held");
    let data = scratch.data();
    let held = HeldDirectory::new(&data);
    let health = free_port();
    let mut command = emulator_command();
    command.args([
        "--port",
        "0",
        "--clock",
        "manual",
        "--data-dir",
        data.to_str().unwrap(),
        "--health-port",
        &health.to_string(),
    ]);
    // The checks run beside the start, which waits for the line on stdout.
    let before = std::thread::spawn(move || {
        let checked = std::panic::catch_unwind(|| {
            eventually("/alive answers", || get(health, "/alive").is_some());
            let (status, _) = answer(health, "/alive");
            assert_eq!(status, 200);
            let (status, body) = answer(health, "/ready");
            assert_eq!(status, 503, "{body}");
            let (status, body) = answer(health, "/status");
            assert_eq!(status, 200);
            assert_eq!(body["status"], "starting", "{body}");
            assert_eq!(body["endpoint"], Value::Null, "{body}");
            // The HEALTHCHECK command says not yet, and why.
            let (code, stderr) = health_command(&["--port", &health.to_string()], &[]);
            assert_eq!(code, Some(1), "{stderr}");
            assert!(stderr.contains("503"), "{stderr}");
        });
        held.release();
        checked
    });
    let emu = Emu::launch(&scratch, command);
    if let Err(panic) = before.join().unwrap() {
        std::panic::resume_unwind(panic);
    }
    let emu = emu.unwrap_or_else(|f| panic!("the emulator did not start: {f:?}"));
    // The line is printed once the endpoint serves: /ready says so too.
    let (status, body) = answer(health, "/ready");
    assert_eq!(status, 200, "{body}");
    let (_, body) = answer(health, "/status");
    assert_eq!(body["status"], "ready");
    assert_eq!(body["endpoint"], emu.api.endpoint());
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(body["clock"], "manual");
    assert_eq!(body["tls"], false);
    assert_eq!(body["dataDir"], data.to_str().unwrap());
    assert!(body["uptimeSeconds"].is_u64(), "{body}");
    assert_eq!(emu.api.get("/", &[]).status, 200);
}

#[test]
fn the_health_server_serves_three_routes_unauthenticated_and_404_elsewhere() {
    let scratch = Scratch::new("health-routes");
    let health = free_port();
    let emu = start(
        &scratch,
        &["--port", "0", "--tls", "--health-port", &health.to_string()],
        &[],
    );
    assert_eq!(answer(health, "/alive").0, 200);
    assert_eq!(answer(health, "/ready").0, 200);
    let (status, body) = answer(health, "/status");
    assert_eq!(status, 200);
    assert_eq!(body["tls"], true);
    assert_eq!(body["clock"], "system");
    assert_eq!(body["dataDir"], Value::Null);
    assert_eq!(body["endpoint"], emu.api.endpoint());
    for path in ["/", "/health", "/dbs", "/alive/x", "/_explorer/index.html"] {
        assert_eq!(answer(health, path).0, 404, "{path}");
    }
}

#[test]
fn a_health_port_in_use_stops_the_start_naming_it() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let mut command = emulator_command();
    command.args(["--port", "0", "--health-port", &port]);
    let output = super::run_to_exit(command);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("--health-port"), "{stderr}");
}

/// `cosmos-emulator health` with `args` and `vars`: its exit code and stderr.
fn health_command(args: &[&str], vars: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut command = emulator_command();
    command.arg("health").args(args).envs(vars.iter().copied());
    let output = super::run_to_exit(command);
    assert!(output.stdout.is_empty(), "nothing on stdout");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_health_command_exits_0_when_ready_and_1_with_a_reason_otherwise() {
    use cosmos_emulator::binary::settings::{COSMOS_EMULATOR_HEALTH_PORT, COSMOS_EMULATOR_HOST};
    let scratch = Scratch::new("health-command");
    let health = free_port();
    let port = health.to_string();
    let mut emu = start(
        &scratch,
        &["--port", "0"],
        &[(COSMOS_EMULATOR_HEALTH_PORT, &port)],
    );
    assert_eq!(answer(health, "/ready").0, 200);
    // The port from the flag, or from the variable the server read too
    // (with the host a container gives it).
    assert_eq!(
        health_command(&["--port", &port], &[]),
        (Some(0), String::new())
    );
    assert_eq!(
        health_command(
            &[],
            &[
                (COSMOS_EMULATOR_HEALTH_PORT, &port),
                (COSMOS_EMULATOR_HOST, "0.0.0.0")
            ]
        ),
        (Some(0), String::new())
    );
    assert_eq!(
        health_command(&["--port", &port, "--path", "/alive"], &[]).0,
        Some(0)
    );
    // Not a 200: 1, and the answer in one line.
    let (code, stderr) = health_command(&["--port", &port, "--path", "/nowhere"], &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("404"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    // The emulator's own port is no health server: it answers 401, not 200.
    let main_port = emu.api.endpoint().rsplit(':').next().unwrap().to_string();
    assert_eq!(health_command(&["--port", &main_port], &[]).0, Some(1));
    emu.terminate();
    // Nothing listening: 1, quickly, saying so.
    let started = std::time::Instant::now();
    let (code, stderr) = health_command(&["--port", &port], &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("cannot connect"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn the_health_command_refuses_bad_input_with_exit_code_2() {
    use cosmos_emulator::binary::settings::{COSMOS_EMULATOR_HEALTH_PORT, COSMOS_EMULATOR_HOST};
    for (args, vars, named) in [
        (
            &[][..],
            &[(COSMOS_EMULATOR_HEALTH_PORT, "http")][..],
            COSMOS_EMULATOR_HEALTH_PORT,
        ),
        (
            &[],
            &[(COSMOS_EMULATOR_HEALTH_PORT, "0")],
            COSMOS_EMULATOR_HEALTH_PORT,
        ),
        (&[], &[(COSMOS_EMULATOR_HOST, "a b")], COSMOS_EMULATOR_HOST),
        (&["--port", "x"], &[], "--port"),
        (&["--path", "ready"], &[], "--path"),
    ] {
        let (code, stderr) = health_command(args, vars);
        assert_eq!(code, Some(2), "{args:?} {vars:?}: {stderr}");
        assert!(stderr.contains(named), "{args:?} {vars:?}: {stderr}");
    }
}
