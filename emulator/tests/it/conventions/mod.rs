//! What container tools and test runners expect of the binary (issue 21),
//! from outside: the real `cosmos-emulator` process, started with
//! environment variables and flags, asked over HTTP.
//!
//! - each environment variable takes effect, its flag beats it, and an
//!   invalid value stops the start with exit code 2 naming it (`env.rs`);
//! - the health server answers before the endpoint is ready and after
//!   (`health.rs`);
//! - the three lines on stdout, and the explorer page (`lines.rs`);
//! - `--protocol auto`, and requests in flight finished on SIGTERM
//!   (`auto.rs`);
//! - `--parent-pid`: the emulator stops when its parent is SIGKILLed
//!   (`parent.rs`).
//!
//! Waits poll with generous deadlines: nothing depends on how fast a
//! shared machine is.
use super::persistence::support;

mod auto;
mod env;
mod health;
mod lines;
#[cfg(target_os = "linux")]
mod parent;

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use support::{emulator_command, Emu, Scratch};

/// A port nothing listens on now (the kernel's pick, released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts the binary with `args` and the environment `vars` (nothing else
/// of the emulator's variables inherited).
fn start(scratch: &Scratch, args: &[&str], vars: &[(&str, &str)]) -> Emu {
    let mut command = emulator_command();
    command.args(args).envs(vars.iter().copied());
    Emu::launch(scratch, command).unwrap_or_else(|f| panic!("the emulator did not start: {f:?}"))
}

/// Runs `command` to its end; fails the test if it is still running after
/// a minute (a start that should have been refused).
fn run_to_exit(mut command: Command) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!(
                "still running after a minute; stdout: {}",
                String::from_utf8_lossy(&output.stdout)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Polls `check` every 50 ms until it holds; fails after a minute.
#[track_caller]
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !check() {
        assert!(Instant::now() < deadline, "{what}: not within a minute");
        std::thread::sleep(Duration::from_millis(50));
    }
}
