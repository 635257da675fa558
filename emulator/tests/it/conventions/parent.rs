//! `--parent-pid`: the emulator stops once the process that started it is
//! gone, also when that process is SIGKILLed.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use super::eventually;
use super::support::{emulator_command, Scratch};

/// Whether process `pid` has ended: gone, or a zombie nobody reaped yet (Linux /proc).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command's closing parenthesis.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => true,
    }
}

/// SIGKILLs process `pid` when dropped unless it ended: a failing test
/// leaves no orphan emulator behind.
struct Orphan(u32);

impl Drop for Orphan {
    fn drop(&mut self) {
        if !ended(self.0) {
            // SAFETY: kill takes a pid and a signal number, no memory.
            unsafe { libc::kill(self.0 as libc::pid_t, libc::SIGKILL) };
        }
    }
}

#[test]
fn the_emulator_stops_when_its_parent_is_killed() {
    let scratch = Scratch::new("parent");
    let stderr = scratch.root.join("emulator-stderr.log");
    // sh starts the emulator with its own pid, says the emulator's, waits.
    let mut parent = std::process::Command::new("sh");
    for name in cosmos_emulator::binary::settings::VARIABLES {
        parent.env_remove(name);
    }
    let mut parent = parent
        .arg("-c")
        .arg(r#""$1" --port 0 --parent-pid $$ 2>"$2" & echo "pid $!"; wait"#)
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_cosmos-emulator"))
        .arg(&stderr)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(parent.stdout.take().unwrap()).lines();
    let (mut pid, mut endpoint) = (None, None);
    while pid.is_none() || endpoint.is_none() {
        let line = lines.next().expect("a line").unwrap();
        if let Some(p) = line.strip_prefix("pid ") {
            pid = Some(p.parse::<u32>().unwrap());
        } else if let Some(e) = line.strip_prefix("listening on ") {
            endpoint = Some(e.to_string());
        }
    }
    let (pid, endpoint) = (pid.unwrap(), endpoint.unwrap());
    let _orphan = Orphan(pid);
    assert_eq!(
        reqwest::blocking::get(format!("{endpoint}/_explorer/index.html"))
            .unwrap()
            .status(),
        200
    );
    assert!(!ended(pid));
    parent.kill().unwrap();
    parent.wait().unwrap();
    eventually("the emulator exits after its parent", || ended(pid));
    let log = std::fs::read_to_string(&stderr).unwrap();
    assert!(log.contains("stopped"), "a clean stop: {log}");
    // Nothing answers any more.
    let gone = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
        .get(format!("{endpoint}/_explorer/index.html"))
        .send();
    assert!(gone.is_err(), "{gone:?}");
}

#[test]
fn a_parent_pid_that_is_not_the_parent_stops_the_start_at_once() {
    let mut command = emulator_command();
    // The emulator's parent is this test process, never this pid.
    let not_parent = std::process::id() + 1_000_000;
    command.args(["--port", "0", "--parent-pid", &not_parent.to_string()]);
    let output = super::run_to_exit(command);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--parent-pid"), "{stderr}");
    assert!(output.stdout.is_empty());
    // With the right pid it serves.
    let scratch = Scratch::new("parent-self");
    let me = std::process::id().to_string();
    let emu = super::start(&scratch, &["--port", "0", "--parent-pid", &me], &[]);
    assert_eq!(emu.api.get("/", &[]).status, 200);
}
