//! What the persistence tests share: a scratch directory, the emulator
//! process, a signed client, and small readers of what it answers.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub(crate) use crate::common::{Api, Reply};
use cosmos_emulator::protocol::auth::MasterKey;
use cosmos_emulator::WELL_KNOWN_KEY;
use serde_json::{json, Value};

/// Where the manual clock starts.
pub(crate) const START: i64 = 1_700_000_000;
/// How long a start may take on a slow, shared machine before it fails.
pub(crate) const STARTUP: Duration = Duration::from_secs(60);
pub(crate) const COLL: &str = "/dbs/db/colls/c";

// ---- a scratch directory, the emulator process and a client -------------

/// A directory of its own for one test: `data/` is the emulator's
/// `--data-dir`, `stderr-N.log` the N-th start's stderr. Removed when the
/// test passes, kept (and named) when it fails.
pub(crate) struct Scratch {
    pub(crate) root: PathBuf,
    pub(crate) starts: AtomicUsize,
}

impl Scratch {
    pub(crate) fn new(name: &str) -> Scratch {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let root = std::env::temp_dir().join(format!(
            "cosmos-persistence-{name}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&root).unwrap();
        Scratch {
            root,
            starts: AtomicUsize::new(0),
        }
    }

    pub(crate) fn data(&self) -> PathBuf {
        self.root.join("data")
    }

    /// The files of the data directory whose names start with `prefix`, sorted.
    pub(crate) fn files(&self, prefix: &str) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.data())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(prefix))
            })
            .collect();
        files.sort();
        files
    }

    /// The newest `log-*.bin` (generations are zero-padded: names sort).
    pub(crate) fn newest_log(&self) -> PathBuf {
        self.files("log-")
            .into_iter()
            .rfind(|p| p.extension().is_some_and(|e| e == "bin"))
            .unwrap_or_else(|| panic!("no log-*.bin in {}", self.data().display()))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("persistence test files kept in {}", self.root.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}

/// One `cosmos-emulator` process on a free port; SIGKILLed when dropped.
pub(crate) struct Emu {
    pub(crate) child: Child,
    pub(crate) stderr_path: PathBuf,
    pub(crate) api: Api,
    /// The lines it writes to stdout after the first, line ends kept.
    stdout: mpsc::Receiver<String>,
}

/// Why a start failed: the exit status (if it exited) and its stderr.
#[derive(Debug)]
pub(crate) struct StartFailure {
    pub(crate) status: Option<ExitStatus>,
    pub(crate) stderr: String,
}

impl Emu {
    /// Starts on the scratch's data directory with `args` besides.
    pub(crate) fn start(scratch: &Scratch, args: &[&str]) -> Emu {
        Emu::try_start(scratch, args)
            .unwrap_or_else(|f| panic!("the emulator did not start: {f:?}"))
    }

    /// Starts with `--data-dir` and `args`; `Err` when it exits (or stays
    /// silent for [`STARTUP`]) instead of printing where it listens.
    pub(crate) fn try_start(scratch: &Scratch, args: &[&str]) -> Result<Emu, StartFailure> {
        let data = scratch.data();
        let mut all = vec!["--data-dir", data.to_str().unwrap()];
        all.extend_from_slice(args);
        Emu::spawn(scratch, &all)
    }

    /// Starts with exactly `args` (plus `--port 0`).
    pub(crate) fn spawn(scratch: &Scratch, args: &[&str]) -> Result<Emu, StartFailure> {
        let mut command = emulator_command();
        command.args(["--port", "0"]).args(args);
        Emu::launch(scratch, command)
    }

    /// Starts `command` (see [`emulator_command`]) and waits for the line
    /// saying where it listens.
    pub(crate) fn launch(scratch: &Scratch, mut command: Command) -> Result<Emu, StartFailure> {
        let n = scratch.starts.fetch_add(1, Ordering::SeqCst);
        let stderr_path = scratch.root.join(format!("stderr-{n}.log"));
        let stderr = std::fs::File::create(&stderr_path).unwrap();
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("the binary starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        // Built first: dropping it (any early return) kills and reaps the child.
        let mut emu = Emu {
            child,
            stderr_path,
            api: api_for(String::new()),
            stdout: rx,
        };
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if tx
                            .send(String::from_utf8_lossy(&line).into_owned())
                            .is_err()
                        {
                            // Nobody reads: drain, so the emulator never blocks on a write.
                            let _ = std::io::copy(&mut reader, &mut std::io::sink());
                            return;
                        }
                    }
                }
            }
        });
        let line = match emu.stdout.recv_timeout(STARTUP) {
            Ok(line) => line,
            _ => {
                // Closed stdout (it exited) or silence: give it a moment to exit.
                let deadline = Instant::now() + Duration::from_secs(10);
                let mut status = None;
                while status.is_none() && Instant::now() < deadline {
                    status = emu.child.try_wait().unwrap();
                    std::thread::sleep(Duration::from_millis(20));
                }
                return Err(StartFailure {
                    status,
                    stderr: emu.stderr(),
                });
            }
        };
        let endpoint = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .trim_end_matches('/')
            .to_string();
        emu.api = api_for(endpoint);
        Ok(emu)
    }

    pub(crate) fn api(&self) -> Api {
        self.api.clone()
    }

    /// The next line it writes to stdout after the first (line end kept);
    /// `None` once stdout is closed or after [`STARTUP`] of silence.
    #[allow(dead_code)] // for the conventions tests, which share this file
    pub(crate) fn next_stdout_line(&self) -> Option<String> {
        self.stdout.recv_timeout(STARTUP).ok()
    }

    pub(crate) fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap()
    }

    /// SIGKILL, and waits for it to be gone.
    pub(crate) fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM, and waits for a clean exit.
    pub(crate) fn terminate(&mut self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let exit = self.child.wait().unwrap();
        assert!(exit.success(), "{exit:?}\n{}", self.stderr());
    }
}

/// The binary, with none of the environment variables it reads inherited
/// from the test's environment (add a test's own with `.env`).
pub(crate) fn emulator_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cosmos-emulator"));
    for name in cosmos_emulator::binary::settings::VARIABLES {
        command.env_remove(name);
    }
    command
}

impl Drop for Emu {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A signed client of an emulator process at `endpoint` (the common
/// [`Api`]), patient with a slow machine.
pub(crate) fn api_for(endpoint: String) -> Api {
    Api::new(
        endpoint,
        MasterKey::from_base64(WELL_KNOWN_KEY).unwrap(),
        reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap(),
    )
}

/// What the persistence tests ask of an emulator beyond the common client.
impl Api {
    /// A 2xx answer's body; panics with the answer otherwise.
    #[track_caller]
    pub(crate) fn ok(&self, reply: Reply) -> Value {
        assert!(
            (200..300).contains(&reply.status),
            "{}: {}",
            reply.status,
            reply.body
        );
        reply.body
    }

    /// Database `db` and container `c` partitioned on `/pk` (with `extra`
    /// properties, e.g. `defaultTtl`).
    pub(crate) fn create_db_and_container(&self, extra: Value) {
        self.ok(self.post("/dbs", &json!({"id": "db"}), &[]));
        let mut body = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let reply = self.post("/dbs/db/colls", &body, &[]);
        assert_eq!(reply.status, 201, "{}", reply.body);
    }

    /// The all-versions-and-deletes feed of `c` after `start` (an etag, or
    /// `*` for now), every page; returns the changes and the last etag.
    pub(crate) fn all_versions(&self, start: &str) -> (Vec<Value>, String) {
        let mut changes = Vec::new();
        let mut token = start.to_string();
        loop {
            let reply = self.get(
                &format!("{COLL}/docs"),
                &[
                    ("a-im", "Full-Fidelity Feed"),
                    ("x-ms-cosmos-changefeed-wire-format-version", "2021-09-15"),
                    ("if-none-match", &token),
                ],
            );
            let etag = reply.header("etag").expect("an etag").to_string();
            match reply.status {
                304 => return (changes, etag),
                200 => {
                    let docs = reply.body["Documents"].as_array().unwrap();
                    assert!(!docs.is_empty(), "a 200 with no change: {}", reply.body);
                    changes.extend(docs.iter().cloned());
                    token = etag;
                }
                other => panic!("change feed answered {other}: {}", reply.body),
            }
        }
    }

    pub(crate) fn purge(&self) -> i64 {
        let reply = self.post("/_emulator/purge", &json!({}), &[]);
        self.ok(reply)["purged"].as_i64().unwrap()
    }

    pub(crate) fn stored_items(&self) -> u64 {
        let reply = self.get("/_emulator/stats", &[]);
        let stats = self.ok(reply);
        stats["containers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["container"] == "c")
            .unwrap_or_else(|| panic!("no container c in {stats}"))["storedItems"]
            .as_u64()
            .unwrap()
    }
}

/// `(operationType, id, timeToLiveExpired)` of each change.
pub(crate) fn summary(changes: &[Value]) -> Vec<(String, String, bool)> {
    changes
        .iter()
        .map(|d| {
            let m = &d["metadata"];
            let id = d["current"]["id"]
                .as_str()
                .or_else(|| m["id"].as_str())
                .unwrap_or_else(|| panic!("a change without an id: {d}"));
            (
                m["operationType"].as_str().unwrap().to_string(),
                id.to_string(),
                m["timeToLiveExpired"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

/// An item without its system properties (`_rid`, `_etag`, ...).
pub(crate) fn user_part(item: &Value) -> Value {
    let mut item = item.clone();
    item.as_object_mut()
        .unwrap()
        .retain(|k, _| !k.starts_with('_'));
    item
}

pub(crate) fn session_lsn(reply: &Reply) -> u64 {
    let token = reply.header("x-ms-session-token").expect("a session token");
    let lsn = token.rsplit('#').next().unwrap();
    lsn.parse()
        .unwrap_or_else(|_| panic!("session token {token:?}"))
}

/// The `items=N` of the `recovered` line in a start's stderr.
pub(crate) fn recovered_items(stderr: &str) -> Option<u64> {
    // Logs to a pipe are plain text: no terminal colours to read past.
    assert!(
        !stderr.contains('\u{1b}'),
        "the log to a pipe carries terminal escape sequences: {stderr:?}"
    );
    let line = stderr.lines().find(|l| l.contains("recovered"))?;
    let rest = &line[line.find("items=")? + "items=".len()..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// A tiny deterministic generator (xorshift), one per writer.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}
