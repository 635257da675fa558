//! A server process started for a task (the emulator, a peer emulator),
//! stopped when dropped. Its endpoint comes from its first line on stdout.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub struct Server {
    child: Child,
    pub endpoint: String,
}

impl Server {
    /// Starts `program` with `args`, its stderr into `log`, and waits up to
    /// `startup` for the first stdout line naming where it listens.
    pub fn start(
        program: &Path,
        args: &[&str],
        log: &Path,
        startup: Duration,
    ) -> Result<Server, String> {
        let mut command = Command::new(program);
        command.args(args);
        Server::spawn(command, log, startup)
    }

    /// The same for a command the caller prepared (its directory, its
    /// environment); `program` in messages is the command's program.
    pub fn spawn(mut command: Command, log: &Path, startup: Duration) -> Result<Server, String> {
        let program = Path::new(command.get_program()).to_path_buf();
        let log_file = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(log_file)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (line_tx, line_rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let _ = line_tx.send(reader.read_line(&mut line).map(|_| line));
            // Keep draining, so that later output never blocks the server.
            let _ = std::io::copy(&mut reader.by_ref(), &mut std::io::sink());
        });
        // Built first, so that an early return below stops the process.
        let mut server = Server {
            child,
            endpoint: String::new(),
        };
        let line = match line_rx.recv_timeout(startup) {
            Ok(Ok(line)) => line,
            Ok(Err(e)) => return Err(format!("reading {}'s output: {e}", program.display())),
            Err(_) => {
                return Err(format!(
                    "{} did not say where it listens within {startup:?} (its log: {})",
                    program.display(),
                    log.display()
                ))
            }
        };
        server.endpoint =
            endpoint_of(&line).ok_or_else(|| format!("cannot find an address in {line:?}"))?;
        Ok(server)
    }
}

impl Server {
    /// The process id of what was started.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `listening on http://127.0.0.1:PORT` (the emulator), `Ready to accept
/// HTTPS connections at 127.0.0.1:PORT` (the npm peers) or `2026/11/29
/// 03:45:51 Listening and serving HTTP on :PORT` (cosmium, every
/// interface: reached on 127.0.0.1).
pub fn endpoint_of(line: &str) -> Option<String> {
    let line = line.trim();
    if let Some(url) = line.strip_prefix("listening on ") {
        return Some(url.to_string());
    }
    let scheme = if line.contains("HTTPS") {
        "https"
    } else {
        "http"
    };
    let address = line.rsplit(' ').next()?;
    match address.strip_prefix(':') {
        Some(port) => Some(format!("{scheme}://127.0.0.1:{port}")),
        None => Some(format!("{scheme}://{address}")),
    }
}
