//! podman as the image task runs it: a command, its output as text, a free
//! port, and a container that is removed however the test ends.
//!
//! podman reads its configuration as it always does, so `CONTAINERS_CONF`
//! (which `.ci/run` points at `.ci/containers.conf` on machines whose
//! kernel needs runc, cgroupfs and explicit ulimits) reaches every podman
//! started here, the Docker API service included.

use std::path::Path;
use std::process::{Command, Output};

/// `podman ARGS...`
pub fn podman() -> Command {
    Command::new("podman")
}

/// Runs `command` and returns its stdout; a failure carries its stderr.
pub fn output(command: &mut Command) -> Result<String, String> {
    let shown = shown(command);
    let Output {
        status,
        stdout,
        stderr,
    } = command
        .output()
        .map_err(|e| format!("{shown}: cannot run it: {e}"))?;
    if !status.success() {
        return Err(format!(
            "{shown}: failed ({status}):\n{}",
            String::from_utf8_lossy(&stderr).trim_end()
        ));
    }
    String::from_utf8(stdout).map_err(|e| format!("{shown}: output not UTF-8: {e}"))
}

/// The command line, for messages.
pub fn shown(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A port of 127.0.0.1 nobody listens on right now.
pub fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("cannot find a free port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

/// Whether podman can be run at all (its version, else why not).
pub fn version() -> Result<String, String> {
    output(podman().args(["version", "--format", "{{.Client.Version}}"]))
        .map(|v| v.trim().to_string())
        .map_err(|e| {
            format!("{e}\nthe image task needs podman (Debian: apt-get install podman runc)")
        })
}

/// A container started by a test, removed (with its anonymous volumes)
/// when dropped, whatever happened to the test.
pub struct Container {
    pub id: String,
}

impl Container {
    /// Its logs (stdout and stderr) into `file`, for whoever reads the
    /// failure; best effort.
    pub fn save_logs(&self, file: &Path) {
        if let Ok(out) = podman().args(["logs", &self.id]).output() {
            let mut text = out.stdout;
            text.extend_from_slice(&out.stderr);
            let _ = std::fs::write(file, text);
        }
    }

    /// `podman inspect --format TEMPLATE` of the container.
    pub fn inspect(&self, template: &str) -> Result<String, String> {
        output(podman().args(["inspect", "--format", template, &self.id]))
            .map(|s| s.trim().to_string())
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = podman()
            .args(["rm", "--force", "--volumes", "--time", "0", &self.id])
            .output();
    }
}
