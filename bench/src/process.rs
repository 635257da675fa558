//! Server processes under test: spawn one, wait for its `listening on URL`
//! line, read its resident memory and CPU time from /proc, stop it. And
//! the bench's own CPU time, from getrusage.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// How long a server may take to say where it listens.
const STARTUP_LIMIT: Duration = Duration::from_secs(20);

/// A running server; killed when dropped.
pub struct ServerProcess {
    child: Child,
    /// The URL from its first stdout line.
    pub url: String,
    /// From spawn to that line.
    pub spawned_to_line: Duration,
    /// When `spawn` was called.
    pub spawned_at: Instant,
    /// Its stdout lines, read on a thread so that waiting can time out.
    lines: Receiver<String>,
}

impl ServerProcess {
    /// Spawns `command` (stdout piped, no stdin, stderr as the command has
    /// it) and waits for `listening on URL`.
    pub fn spawn(mut command: Command) -> Result<ServerProcess, String> {
        let program = command.get_program().to_string_lossy().into_owned();
        // A server must not outlive the bench, however the bench ends.
        // SAFETY: prctl is async-signal-safe; nothing else runs in the hook.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let spawned_at = Instant::now();
        let mut child = command
            .stdout(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {program}: {e}"))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut process = ServerProcess {
            child,
            url: String::new(),
            spawned_to_line: Duration::ZERO,
            spawned_at,
            lines,
        };
        let line = match process.lines.recv_timeout(STARTUP_LIMIT) {
            Ok(line) => line,
            Err(_) => {
                // Closed stdout: say how it ended, if it did.
                std::thread::sleep(Duration::from_millis(50));
                return Err(match process.child.try_wait() {
                    Ok(Some(status)) => {
                        format!("{program} exited ({status}) before printing `listening on URL`")
                    }
                    _ => format!(
                        "{program} did not print `listening on URL` within {STARTUP_LIMIT:?}"
                    ),
                });
            }
        };
        process.spawned_to_line = spawned_at.elapsed();
        process.url = line
            .trim()
            .strip_prefix("listening on ")
            .ok_or_else(|| format!("{program}'s first line is {line:?}, not `listening on URL`"))?
            .to_string();
        Ok(process)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM and waits up to `limit` for the process to exit;
    /// `Err` unless it exits with status 0. Returns the time it took.
    pub fn terminate(mut self, limit: Duration) -> Result<Duration, String> {
        let pid = libc::pid_t::try_from(self.pid()).map_err(|e| e.to_string())?;
        let sent = Instant::now();
        // SAFETY: kill has no memory preconditions; the child is ours and
        // not yet reaped, so the pid is still its own.
        if unsafe { libc::kill(pid, libc::SIGTERM) } == -1 {
            return Err(format!(
                "SIGTERM to {pid}: {}",
                std::io::Error::last_os_error()
            ));
        }
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(sent.elapsed()),
                Ok(Some(status)) => {
                    return Err(format!("process {pid} ended on SIGTERM with {status}"))
                }
                Ok(None) if sent.elapsed() > limit => {
                    return Err(format!(
                        "process {pid} still ran {limit:?} after SIGTERM (killed)"
                    ))
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                Err(e) => return Err(format!("waiting for process {pid}: {e}")),
            }
        }
    }

    /// Resident memory (VmRSS), in bytes.
    pub fn rss(&self) -> Result<u64, String> {
        let path = format!("/proc/{}/status", self.pid());
        let status = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
        vm_rss(&status).ok_or_else(|| format!("{path} has no VmRSS line"))
    }

    /// User plus system CPU time of all its threads so far.
    pub fn cpu_time(&self) -> Result<Duration, String> {
        let path = format!("/proc/{}/stat", self.pid());
        let stat = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
        let ticks =
            cpu_ticks(&stat).ok_or_else(|| format!("{path} is not in the expected form"))?;
        // SAFETY: sysconf has no preconditions.
        let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
        Ok(Duration::from_nanos(ticks * 1_000_000_000 / per_second))
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The VmRSS line of /proc/PID/status, in bytes.
pub fn vm_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let mut words = line["VmRSS:".len()..].split_whitespace();
    let value: u64 = words.next()?.parse().ok()?;
    match words.next()? {
        "kB" => Some(value * 1024),
        _ => None,
    }
}

/// utime + stime (fields 14 and 15, in clock ticks) of /proc/PID/stat.
/// The command name (field 2) may hold spaces and parentheses: fields are
/// counted after its closing parenthesis.
pub fn cpu_ticks(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // after_name starts at field 3 (state): field n is fields[n - 3].
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// The bench process's own CPU time (user + system, all threads).
pub fn own_cpu_time() -> Duration {
    // SAFETY: getrusage writes into the struct we pass and nothing else.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    Duration::from_micros(micros(usage.ru_utime) + micros(usage.ru_stime))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("Name:\tx\nVmRSS:\t   12345 kB\nVmSwap:\t0 kB\n", Some(12345 * 1024))]
    #[case("Name:\tx\n", None)]
    #[case("VmRSS:\t12 MB\n", None)]
    fn rss_from_status(#[case] status: &str, #[case] expected: Option<u64>) {
        assert_eq!(vm_rss(status), expected);
    }

    #[test]
    fn cpu_ticks_skip_a_command_name_with_spaces_and_parentheses() {
        let stat = "4242 (tokio (worker) 1) S 1 4242 4242 0 -1 4194560 100 0 0 0 \
                    731 42 0 0 20 0 3 0 123 456 789";
        assert_eq!(cpu_ticks(stat), Some(731 + 42));
        assert_eq!(cpu_ticks("4242 (x) S 1"), None);
    }

    #[test]
    fn own_cpu_time_grows() {
        let before = own_cpu_time();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(own_cpu_time() >= before);
    }
}
