//! Persistence (issue 14), from outside: the real `cosmos-emulator` binary
//! started with `--data-dir`, driven over signed HTTP on loopback, killed
//! with SIGKILL (or stopped) and started again on the same directory.
//!
//! - every acknowledged write survives a SIGKILL under load (items and a
//!   container replace), for each `--sync` mode and among compactions; a
//!   transactional batch cut by the kill is all or nothing; a purge cut by
//!   it still ends with one TTL delete per item;
//! - a restart keeps container settings, offers, users and permissions,
//!   ranges after a split, items with their system properties, the
//!   all-versions-and-deletes change feed, session and resource tokens, the
//!   manual clock, time to live (manual and system clock) and the RID
//!   counters;
//! - a torn or corrupt log is cut where it goes bad, and said so; a damaged
//!   snapshot stops the start;
//! - a second emulator on the same directory refuses to start;
//! - `POST /_emulator/compact` writes a snapshot the log then continues.
//!
//! No assertion depends on timing: the clocks that matter are manual, or the
//! waits are generous and their outcomes are checked, not their durations.

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::Reply;
use cosmos_emulator::auth::{authorization_header, payload, signed_resource, MasterKey};
use cosmos_emulator::WELL_KNOWN_KEY;
use reqwest::Method;
use serde_json::{json, Value};

/// Where the manual clock starts.
const START: i64 = 1_700_000_000;
/// How long a start may take on a slow, shared machine before it fails.
const STARTUP: Duration = Duration::from_secs(60);
const COLL: &str = "/dbs/db/colls/c";

// ---- a scratch directory, the emulator process and a client -------------

/// A directory of its own for one test: `data/` is the emulator's
/// `--data-dir`, `stderr-N.log` the N-th start's stderr. Removed when the
/// test passes, kept (and named) when it fails.
struct Scratch {
    root: PathBuf,
    starts: AtomicUsize,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
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

    fn data(&self) -> PathBuf {
        self.root.join("data")
    }

    /// The files of the data directory whose names start with `prefix`, sorted.
    fn files(&self, prefix: &str) -> Vec<PathBuf> {
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
    fn newest_log(&self) -> PathBuf {
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
struct Emu {
    child: Child,
    stderr_path: PathBuf,
    api: Api,
}

/// Why a start failed: the exit status (if it exited) and its stderr.
#[derive(Debug)]
struct StartFailure {
    status: Option<ExitStatus>,
    stderr: String,
}

impl Emu {
    /// Starts on the scratch's data directory with `args` besides.
    fn start(scratch: &Scratch, args: &[&str]) -> Emu {
        Emu::try_start(scratch, args)
            .unwrap_or_else(|f| panic!("the emulator did not start: {f:?}"))
    }

    /// Starts with `--data-dir` and `args`; `Err` when it exits (or stays
    /// silent for [`STARTUP`]) instead of printing where it listens.
    fn try_start(scratch: &Scratch, args: &[&str]) -> Result<Emu, StartFailure> {
        let data = scratch.data();
        let mut all = vec!["--data-dir", data.to_str().unwrap()];
        all.extend_from_slice(args);
        Emu::spawn(scratch, &all)
    }

    /// Starts with exactly `args` (plus `--port 0`).
    fn spawn(scratch: &Scratch, args: &[&str]) -> Result<Emu, StartFailure> {
        let n = scratch.starts.fetch_add(1, Ordering::SeqCst);
        let stderr_path = scratch.root.join(format!("stderr-{n}.log"));
        let stderr = std::fs::File::create(&stderr_path).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_cosmos-emulator"))
            .args(["--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("the binary starts");
        let stdout = child.stdout.take().unwrap();
        // Built first: dropping it (any early return) kills and reaps the child.
        let mut emu = Emu {
            child,
            stderr_path,
            api: Api::new(String::new()),
        };
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let _ = tx.send(reader.read_line(&mut line).map(|_| line));
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
        });
        let line = match rx.recv_timeout(STARTUP) {
            Ok(Ok(line)) if !line.is_empty() => line,
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
        emu.api = Api::new(endpoint);
        Ok(emu)
    }

    fn api(&self) -> Api {
        self.api.clone()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap()
    }

    /// SIGKILL, and waits for it to be gone.
    fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM, and waits for a clean exit.
    fn terminate(&mut self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let exit = self.child.wait().unwrap();
        assert!(exit.success(), "{exit:?}\n{}", self.stderr());
    }
}

impl Drop for Emu {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A signed client for one emulator process; clones share connections.
#[derive(Clone)]
struct Api {
    http: reqwest::blocking::Client,
    endpoint: String,
    key: MasterKey,
}

impl Api {
    fn new(endpoint: String) -> Api {
        Api {
            http: reqwest::blocking::Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .unwrap(),
            endpoint,
            key: MasterKey::from_base64(WELL_KNOWN_KEY).unwrap(),
        }
    }

    /// `Err`: no whole answer (the process died before or while answering).
    fn try_send(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Result<Reply, reqwest::Error> {
        let date = httpdate::fmt_http_date(SystemTime::now());
        let resource = signed_resource(path);
        let auth = authorization_header(
            &self.key,
            &payload(
                method.as_str(),
                &resource.resource_type,
                &resource.links[0],
                &date,
                "",
            ),
        );
        let mut request = self
            .http
            .request(method, format!("{}{}", self.endpoint, path))
            .header("x-ms-date", &date)
            .header("x-ms-version", "2020-07-15")
            .header("authorization", auth);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.body(body.to_string());
        }
        let response = request.send()?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response.bytes()?;
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                panic!(
                    "response is not JSON ({e}): {}",
                    String::from_utf8_lossy(&bytes)
                )
            })
        };
        Ok(Reply {
            status,
            headers,
            body,
        })
    }

    fn send(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Reply {
        self.try_send(method.clone(), path, headers, body)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    fn get(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        self.send(Method::GET, path, headers, None)
    }

    fn post(&self, path: &str, body: &Value, headers: &[(&str, &str)]) -> Reply {
        self.send(Method::POST, path, headers, Some(body))
    }

    fn delete(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        self.send(Method::DELETE, path, headers, None)
    }

    /// A 2xx answer's body; panics with the answer otherwise.
    #[track_caller]
    fn ok(&self, reply: Reply) -> Value {
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
    fn create_db_and_container(&self, extra: Value) {
        self.ok(self.post("/dbs", &json!({"id": "db"}), &[]));
        let mut body = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let reply = self.post("/dbs/db/colls", &body, &[]);
        assert_eq!(reply.status, 201, "{}", reply.body);
    }

    fn create_item(&self, item: &Value) -> Reply {
        let pk = json!([item["pk"]]).to_string();
        self.post(
            &format!("{COLL}/docs"),
            item,
            &[("x-ms-documentdb-partitionkey", &pk)],
        )
    }

    fn read_item(&self, id: &str, pk: &str) -> Reply {
        let pk = json!([pk]).to_string();
        self.get(
            &format!("{COLL}/docs/{id}"),
            &[("x-ms-documentdb-partitionkey", &pk)],
        )
    }

    /// Every result of a query over `c`'s one range, following continuations.
    fn query(&self, query: &str) -> Vec<Value> {
        let mut results = Vec::new();
        let mut continuation: Option<String> = None;
        loop {
            let mut headers = vec![
                ("x-ms-documentdb-isquery", "True"),
                ("content-type", "application/query+json"),
                ("x-ms-documentdb-query-enablecrosspartition", "True"),
                ("x-ms-documentdb-partitionkeyrangeid", "0"),
            ];
            if let Some(token) = &continuation {
                headers.push(("x-ms-continuation", token));
            }
            let reply = self.post(
                &format!("{COLL}/docs"),
                &json!({"query": query, "parameters": []}),
                &headers,
            );
            assert_eq!(reply.status, 200, "{}", reply.body);
            results.extend(reply.body["Documents"].as_array().unwrap().iter().cloned());
            match reply.header("x-ms-continuation") {
                Some(token) => continuation = Some(token.to_string()),
                None => return results,
            }
        }
    }

    /// The all-versions-and-deletes feed of `c` after `start` (an etag, or
    /// `*` for now), every page; returns the changes and the last etag.
    fn all_versions(&self, start: &str) -> (Vec<Value>, String) {
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

    fn clock(&self) -> i64 {
        let reply = self.get("/_emulator/clock", &[]);
        self.ok(reply)["now"].as_i64().unwrap()
    }

    fn advance(&self, seconds: i64) -> i64 {
        let reply = self.post("/_emulator/clock", &json!({"advance": seconds}), &[]);
        self.ok(reply)["now"].as_i64().unwrap()
    }

    fn purge(&self) -> i64 {
        let reply = self.post("/_emulator/purge", &json!({}), &[]);
        self.ok(reply)["purged"].as_i64().unwrap()
    }

    fn stored_items(&self) -> u64 {
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
fn summary(changes: &[Value]) -> Vec<(String, String, bool)> {
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
fn user_part(item: &Value) -> Value {
    let mut item = item.clone();
    item.as_object_mut()
        .unwrap()
        .retain(|k, _| !k.starts_with('_'));
    item
}

fn session_lsn(reply: &Reply) -> u64 {
    let token = reply.header("x-ms-session-token").expect("a session token");
    let lsn = token.rsplit('#').next().unwrap();
    lsn.parse()
        .unwrap_or_else(|_| panic!("session token {token:?}"))
}

/// The `items=N` of the `recovered` line in a start's stderr.
fn recovered_items(stderr: &str) -> Option<u64> {
    // Without the terminal colours tracing may add.
    let mut plain = String::new();
    let mut chars = stderr.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    let line = plain.lines().find(|l| l.contains("recovered"))?;
    let rest = &line[line.find("items=")? + "items=".len()..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// A tiny deterministic generator (xorshift), one per writer.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

// ---- a. every acknowledged write survives SIGKILL under load -------------

const WRITERS: usize = 8;
const IDS_PER_WRITER: usize = 16;

/// What one writer knows: the last acknowledged state of each of its ids
/// (`None`: absent), and the write that got no answer, if any: its id and
/// the state it asked for.
#[derive(Default)]
struct WriterLog {
    acked: HashMap<String, Option<Value>>,
    in_flight: Option<(String, Option<Value>)>,
    acknowledged_writes: usize,
}

/// Creates, upserts, replaces and deletes its own ids until `stop` or
/// until a request gets no answer (the process is gone).
fn writer(api: Api, writer: usize, stop: Arc<AtomicBool>) -> Result<WriterLog, String> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ ((writer as u64 + 1) * 0x1000_0001));
    let mut log = WriterLog::default();
    let mut seq = 0u64;
    while !stop.load(Ordering::SeqCst) {
        let id = format!("w{writer}-{}", rng.below(IDS_PER_WRITER as u64));
        let current = log.acked.get(&id).cloned().flatten();
        seq += 1;
        let body = json!({
            "id": id, "pk": id, "writer": writer, "seq": seq,
            "pad": "x".repeat(rng.below(300) as usize),
        });
        let pk = json!([id]).to_string();
        let pk_header = ("x-ms-documentdb-partitionkey", pk.as_str());
        let upsert = ("x-ms-documentdb-is-upsert", "True");
        let docs = format!("{COLL}/docs");
        let item = format!("{COLL}/docs/{id}");
        let choice = rng.below(10);
        let (attempt, wanted, expected) = match (&current, choice) {
            (None, 0..=4) => (
                api.try_send(Method::POST, &docs, &[pk_header], Some(&body)),
                Some(body.clone()),
                201,
            ),
            (None, _) => (
                api.try_send(Method::POST, &docs, &[pk_header, upsert], Some(&body)),
                Some(body.clone()),
                201,
            ),
            (Some(_), 0..=3) => (
                api.try_send(Method::PUT, &item, &[pk_header], Some(&body)),
                Some(body.clone()),
                200,
            ),
            (Some(_), 4..=6) => (
                api.try_send(Method::POST, &docs, &[pk_header, upsert], Some(&body)),
                Some(body.clone()),
                200,
            ),
            (Some(_), _) => (
                api.try_send(Method::DELETE, &item, &[pk_header], None),
                None,
                204,
            ),
        };
        match attempt {
            Ok(reply) if reply.status == expected => {
                log.acked.insert(id, wanted);
                log.acknowledged_writes += 1;
            }
            Ok(reply) => {
                return Err(format!(
                    "writer {writer}: {id} (acknowledged state {current:?}) answered {} where {expected} was due: {}",
                    reply.status, reply.body
                ))
            }
            Err(_) => {
                log.in_flight = Some((id, wanted));
                break;
            }
        }
    }
    Ok(log)
}

/// With `compactions`, a thread also asks for a compaction again and
/// again, so that the kill may cut one.
fn acknowledged_writes_survive_sigkill(sync: &str, window: Duration, compactions: bool) {
    let scratch = Scratch::new(&format!("kill-{sync}-{compactions}"));
    let start = START.to_string();
    let args = ["--clock", "manual", "--clock-start", &start, "--sync", sync];
    let mut emu = Emu::start(&scratch, &args);
    emu.api().create_db_and_container(json!({}));
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (api, stop) = (emu.api(), Arc::clone(&stop));
            std::thread::spawn(move || writer(api, w, stop))
        })
        .collect();
    let replacer = {
        let (api, stop) = (emu.api(), Arc::clone(&stop));
        std::thread::spawn(move || container_replacer(api, stop))
    };
    let compactor = compactions.then(|| {
        let (api, stop) = (emu.api(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut done = 0;
            while !stop.load(Ordering::SeqCst) {
                match api.try_send(Method::POST, "/_emulator/compact", &[], Some(&json!({}))) {
                    Ok(reply) => {
                        assert_eq!(reply.status, 200, "{}", reply.body);
                        done += 1;
                    }
                    Err(_) => break,
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            done
        })
    });
    std::thread::sleep(window);
    // Killed while the writers write: some request is usually in flight.
    emu.kill();
    stop.store(true, Ordering::SeqCst);
    let (replaced, replace_cut) = replacer.join().expect("the replacer panicked");
    if let Some(compactor) = compactor {
        let done = compactor.join().expect("the compactor panicked");
        eprintln!("--sync {sync}: {done} compactions before the kill");
        assert!(done > 0, "no compaction before the kill");
    }
    let logs: Vec<WriterLog> = writers
        .into_iter()
        .map(|w| {
            w.join()
                .expect("a writer panicked")
                .unwrap_or_else(|e| panic!("{e}"))
        })
        .collect();
    let total: usize = logs.iter().map(|l| l.acknowledged_writes).sum();
    let cut = logs.iter().filter(|l| l.in_flight.is_some()).count();
    eprintln!("--sync {sync}: {total} writes acknowledged, {cut} cut by the kill");
    assert!(
        total >= WRITERS,
        "only {total} writes acknowledged before the kill"
    );

    let emu = Emu::start(&scratch, &args);
    let api = emu.api();
    assert!(emu.stderr().contains("recovered"), "{}", emu.stderr());
    let mut expected_ids = HashSet::new();
    let mut maybe_ids = HashSet::new();
    for log in &logs {
        let mut states: BTreeMap<&String, Vec<&Option<Value>>> = BTreeMap::new();
        for (id, state) in &log.acked {
            states.entry(id).or_default().push(state);
        }
        let absent = None;
        if let Some((id, wanted)) = &log.in_flight {
            let entry = states.entry(id).or_default();
            if entry.is_empty() {
                entry.push(&absent);
            }
            entry.push(wanted);
        }
        for (id, allowed) in states {
            let read = api.read_item(id, id);
            let found = match read.status {
                200 => Some(user_part(&read.body)),
                404 => None,
                other => panic!("reading {id}: {other} {}", read.body),
            };
            assert!(
                allowed.iter().any(|a| **a == found),
                "--sync {sync}: {id} reads back as {found:?}; acknowledged: {allowed:?}\n{}",
                emu.stderr()
            );
            if allowed.len() > 1 {
                maybe_ids.insert(id.clone());
            } else if found.is_some() {
                expected_ids.insert(id.clone());
            }
        }
    }
    // Nothing else came back either (a query sees what reads see).
    let stored: HashSet<String> = api
        .query("SELECT c.id FROM c")
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect();
    let unexpected: Vec<_> = stored
        .difference(&expected_ids)
        .filter(|id| !maybe_ids.contains(*id))
        .collect();
    assert!(unexpected.is_empty(), "--sync {sync}: {unexpected:?}");
    assert!(expected_ids.is_subset(&stored), "--sync {sync}");
    // The container's settings: the last replace acknowledged, or the one cut.
    let reply = api.get(COLL, &[]);
    let default_ttl = api.ok(reply)["defaultTtl"].as_i64();
    assert!(
        default_ttl == replaced || (replace_cut.is_some() && default_ttl == replace_cut),
        "--sync {sync}: defaultTtl {default_ttl:?}; acknowledged {replaced:?}, cut {replace_cut:?}"
    );
}

/// Replaces container `c` (its `defaultTtl`, far beyond the clock's
/// reach) until `stop` or no answer; returns the last value acknowledged
/// (`None`: none was) and the one without an answer.
fn container_replacer(api: Api, stop: Arc<AtomicBool>) -> (Option<i64>, Option<i64>) {
    let mut acked = None;
    for ttl in 1_000_000.. {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let body = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
                          "defaultTtl": ttl});
        match api.try_send(Method::PUT, COLL, &[], Some(&body)) {
            Ok(reply) => {
                assert_eq!(reply.status, 200, "{}", reply.body);
                acked = Some(ttl);
            }
            Err(_) => return (acked, Some(ttl)),
        }
        // The item writers are the load; a replace now and then is enough.
        std::thread::sleep(Duration::from_millis(5));
    }
    (acked, None)
}

#[test]
fn acknowledged_writes_survive_sigkill_sync_periodic() {
    acknowledged_writes_survive_sigkill("periodic", Duration::from_millis(1500), false);
}

#[test]
fn acknowledged_writes_survive_sigkill_during_compactions() {
    acknowledged_writes_survive_sigkill("periodic", Duration::from_millis(1500), true);
}

#[test]
fn acknowledged_writes_survive_sigkill_sync_always() {
    acknowledged_writes_survive_sigkill("always", Duration::from_millis(1000), false);
}

#[test]
fn acknowledged_writes_survive_sigkill_sync_never() {
    acknowledged_writes_survive_sigkill("never", Duration::from_millis(1000), false);
}

// ---- b. a transactional batch cut by the kill is all or nothing ----------

const BATCH: usize = 50;

#[test]
fn a_batch_cut_by_sigkill_is_all_or_nothing() {
    let scratch = Scratch::new("batch");
    let start = START.to_string();
    let args = ["--clock", "manual", "--clock-start", &start];
    let mut emu = Emu::start(&scratch, &args);
    emu.api().create_db_and_container(json!({}));
    let stop = Arc::new(AtomicBool::new(false));
    // Each thread sends batches of 50 creates, one partition per batch;
    // returns the batches acknowledged and the one without an answer.
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let (api, stop) = (emu.api(), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                let mut in_flight = None;
                for n in 0.. {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let pk = format!("b{t}-{n}");
                    let operations: Vec<Value> = (0..BATCH)
                        .map(|i| {
                            json!({"operationType": "Create", "resourceBody": {
                                "id": format!("{pk}-{i}"), "pk": pk, "pad": "y".repeat(400)}})
                        })
                        .collect();
                    let header = json!([pk]).to_string();
                    let reply = api.try_send(
                        Method::POST,
                        &format!("{COLL}/docs"),
                        &[
                            ("x-ms-cosmos-is-batch-request", "True"),
                            ("x-ms-cosmos-batch-atomic", "True"),
                            ("x-ms-cosmos-batch-continue-on-error", "False"),
                            ("x-ms-documentdb-partitionkey", &header),
                        ],
                        Some(&Value::Array(operations)),
                    );
                    match reply {
                        Ok(reply) => {
                            assert_eq!(reply.status, 200, "{}", reply.body);
                            acked.push(pk);
                        }
                        Err(_) => {
                            in_flight = Some(pk);
                            break;
                        }
                    }
                }
                (acked, in_flight)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1200));
    emu.kill();
    stop.store(true, Ordering::SeqCst);
    let mut acked = HashSet::new();
    let mut in_flight = HashSet::new();
    for thread in threads {
        let (a, f) = thread.join().expect("a batch thread panicked");
        acked.extend(a);
        in_flight.extend(f);
    }
    assert!(!acked.is_empty(), "no batch acknowledged before the kill");
    eprintln!(
        "{} batches acknowledged, {} cut by the kill",
        acked.len(),
        in_flight.len()
    );

    let emu = Emu::start(&scratch, &args);
    let mut per_partition: HashMap<String, usize> = HashMap::new();
    for doc in emu.api().query("SELECT c.pk FROM c") {
        *per_partition
            .entry(doc["pk"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    for pk in &acked {
        assert_eq!(
            per_partition.get(pk),
            Some(&BATCH),
            "acknowledged batch {pk}"
        );
    }
    for (pk, count) in &per_partition {
        assert!(
            acked.contains(pk) || in_flight.contains(pk),
            "batch {pk} was never sent"
        );
        assert_eq!(
            *count,
            BATCH,
            "batch {pk} came back in part\n{}",
            emu.stderr()
        );
    }
}

#[test]
fn a_purge_cut_by_sigkill_leaves_one_ttl_delete_per_item() {
    const PARTITIONS: usize = 160;
    let scratch = Scratch::new("purge");
    let start = START.to_string();
    let args = ["--clock", "manual", "--clock-start", &start];
    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    api.create_db_and_container(json!({"defaultTtl": 10}));
    let (_, feed_start) = api.all_versions("*");
    for p in 0..PARTITIONS {
        let pk = format!("p{p}");
        let operations: Vec<Value> = (0..BATCH)
            .map(|i| json!({"operationType": "Create", "resourceBody": {"id": format!("{pk}-{i}"), "pk": pk}}))
            .collect();
        let header = json!([pk]).to_string();
        let reply = api.post(
            &format!("{COLL}/docs"),
            &Value::Array(operations),
            &[
                ("x-ms-cosmos-is-batch-request", "True"),
                ("x-ms-cosmos-batch-atomic", "True"),
                ("x-ms-documentdb-partitionkey", &header),
            ],
        );
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
    // Every item is due: the background purge starts, and the kill cuts it
    // once it has purged some (or after it, on a fast machine).
    assert_eq!(api.advance(11), START + 11);
    let deadline = Instant::now() + Duration::from_secs(30);
    while api.stored_items() == (PARTITIONS * BATCH) as u64 {
        assert!(
            Instant::now() < deadline,
            "the background purge never starts"
        );
    }
    emu.kill();

    let emu = Emu::start(&scratch, &args);
    let api = emu.api();
    assert_eq!(api.clock(), START + 11);
    eprintln!(
        "items recovered: {:?} of {} (fewer: the kill cut the purge)",
        recovered_items(&emu.stderr()),
        PARTITIONS * BATCH
    );
    api.purge();
    assert_eq!(api.stored_items(), 0);
    let (changes, _) = api.all_versions(&feed_start);
    let mut per_item: BTreeMap<String, Vec<(String, bool)>> = BTreeMap::new();
    for (op, id, ttl) in summary(&changes) {
        per_item.entry(id).or_default().push((op, ttl));
    }
    assert_eq!(per_item.len(), PARTITIONS * BATCH);
    for (id, ops) in per_item {
        assert_eq!(
            ops,
            [("create".to_string(), false), ("delete".to_string(), true)],
            "{id}\n{}",
            emu.stderr()
        );
    }
}

// ---- c. what a restart keeps ----------------------------------------------

/// Everything readable about the account's resources, to compare across a
/// restart: the lists and each resource as read back.
fn resources(api: &Api) -> BTreeMap<String, Value> {
    let hierarchical = json!(["t1", "u1"]).to_string();
    let mut out = BTreeMap::new();
    for path in [
        "/dbs",
        "/dbs/db",
        "/dbs/db/colls",
        COLL,
        "/dbs/db/colls/plain",
        "/dbs/db/colls/plain/pkranges",
        "/dbs/db/colls/c/pkranges",
        "/offers",
        "/dbs/db/users",
        "/dbs/db/users/alice",
        "/dbs/db/users/alice/permissions",
        "/dbs/db/users/alice/permissions/read-c",
    ] {
        let reply = api.get(path, &[]);
        out.insert(path.to_string(), api.ok(reply));
    }
    for id in ["i1", "i2"] {
        let path = format!("{COLL}/docs/{id}");
        let reply = api.get(&path, &[("x-ms-documentdb-partitionkey", &hierarchical)]);
        out.insert(path, api.ok(reply));
    }
    let reply = api.get(
        "/dbs/db/colls/plain/docs/p1",
        &[("x-ms-documentdb-partitionkey", r#"["p"]"#)],
    );
    out.insert("plain/p1".to_string(), api.ok(reply));
    let reply = api.get(&format!("{COLL}/docs"), &[]);
    out.insert("read feed of c".to_string(), api.ok(reply));
    out
}

#[test]
fn a_restart_keeps_settings_offers_users_items_feed_and_sessions() {
    let scratch = Scratch::new("keeps");
    let start = START.to_string();
    let args = ["--clock", "manual", "--clock-start", &start];
    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    api.ok(api.post(
        "/dbs",
        &json!({"id": "db"}),
        &[("x-ms-offer-throughput", "800")],
    ));
    let settings = json!({
        "id": "c",
        "partitionKey": {"paths": ["/tenant", "/user"], "kind": "MultiHash", "version": 2},
        "defaultTtl": 3600,
        "indexingPolicy": {
            "indexingMode": "consistent",
            "automatic": true,
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": "/secret/?"}, {"path": "/\"_etag\"/?"}]
        },
        "uniqueKeyPolicy": {"uniqueKeys": [{"paths": ["/email"]}]}
    });
    let created = api.post(
        "/dbs/db/colls",
        &settings,
        &[("x-ms-offer-throughput", "1200")],
    );
    assert_eq!(created.status, 201, "{}", created.body);
    let plain = json!({"id": "plain", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
    api.ok(api.post("/dbs/db/colls", &plain, &[]));
    let split = api.post(
        "/_emulator/split",
        &json!({"database": "db", "container": "plain", "range": "0"}),
        &[],
    );
    api.ok(split);
    // The feed from before the first item.
    let (none, feed_start) = api.all_versions("*");
    assert!(none.is_empty());
    let hierarchical = json!(["t1", "u1"]).to_string();
    let pk = ("x-ms-documentdb-partitionkey", hierarchical.as_str());
    let docs = format!("{COLL}/docs");
    for (id, email) in [("i1", "a@x"), ("i2", "b@x"), ("i3", "c@x")] {
        let item = json!({"id": id, "tenant": "t1", "user": "u1", "email": email, "ttl": 7200});
        assert_eq!(api.post(&docs, &item, &[pk]).status, 201);
    }
    let replaced = json!({"id": "i2", "tenant": "t1", "user": "u1", "email": "b2@x", "n": 2});
    api.ok(api.send(Method::PUT, &format!("{docs}/i2"), &[pk], Some(&replaced)));
    assert_eq!(api.delete(&format!("{docs}/i3"), &[pk]).status, 204);
    let p1 = json!({"id": "p1", "pk": "p"});
    api.ok(api.post(
        "/dbs/db/colls/plain/docs",
        &p1,
        &[("x-ms-documentdb-partitionkey", r#"["p"]"#)],
    ));
    api.ok(api.post("/dbs/db/users", &json!({"id": "alice"}), &[]));
    api.ok(api.post("/dbs/db/users", &json!({"id": "bob"}), &[]));
    let permission = api.post(
        "/dbs/db/users/alice/permissions",
        &json!({"id": "read-c", "permissionMode": "Read", "resource": "dbs/db/colls/c"}),
        &[],
    );
    let token = api.ok(permission)["_token"].as_str().unwrap().to_string();
    // The last write of c, and its session token.
    let last = api.send(
        Method::PUT,
        &format!("{docs}/i1"),
        &[pk],
        Some(&json!(
        {"id": "i1", "tenant": "t1", "user": "u1", "email": "a@x", "n": 1})),
    );
    assert_eq!(last.status, 200, "{}", last.body);
    let session = last.header("x-ms-session-token").unwrap().to_string();

    let before = resources(&api);
    let (changes_before, _) = api.all_versions(&feed_start);
    assert_eq!(
        summary(&changes_before)
            .iter()
            .map(|(op, id, _)| format!("{op} {id}"))
            .collect::<Vec<_>>(),
        [
            "create i1",
            "create i2",
            "create i3",
            "replace i2",
            "delete i3",
            "replace i1"
        ]
    );
    emu.kill();

    let emu = Emu::start(&scratch, &args);
    let api = emu.api();
    let after = resources(&api);
    for (what, value) in &before {
        assert_eq!(
            Some(value),
            after.get(what),
            "{what} changed across the restart"
        );
    }
    assert_eq!(before.len(), after.len());
    // The same feed from the same continuation, byte for byte.
    let (changes_after, _) = api.all_versions(&feed_start);
    assert_eq!(changes_before, changes_after);

    // A session token from before is one the emulator has reached.
    let read = api.get(
        &format!("{docs}/i1"),
        &[pk, ("x-ms-session-token", &session)],
    );
    assert_eq!(read.status, 200, "{}", read.body);
    // A resource token from before still reads.
    let date = httpdate::fmt_http_date(SystemTime::now());
    let with_token = api
        .http
        .get(format!("{}{COLL}/docs/i1", api.endpoint))
        .header("x-ms-date", &date)
        .header("x-ms-version", "2020-07-15")
        .header("x-ms-documentdb-partitionkey", &hierarchical)
        .header(
            "authorization",
            percent_encoding::utf8_percent_encode(&token, percent_encoding::NON_ALPHANUMERIC)
                .to_string(),
        )
        .send()
        .unwrap();
    assert_eq!(with_token.status().as_u16(), 200);
    // The LSN and the session go on from where they were. (The emulator
    // echoes uniqueKeyPolicy without enforcing it: compared above only.)
    let next = json!({"id": "i4", "tenant": "t1", "user": "u1", "email": "d@x"});
    let written = api.post(&docs, &next, &[pk]);
    assert_eq!(written.status, 201, "{}", written.body);
    assert!(
        session_lsn(&written) > session_lsn(&last),
        "session token {:?} after {session:?}",
        written.header("x-ms-session-token")
    );
    let (changes, _) = api.all_versions(&feed_start);
    assert_eq!(&changes[..changes_before.len()], &changes_before[..]);
    assert_eq!(
        summary(&changes[changes_before.len()..]),
        [("create".to_string(), "i4".to_string(), false)]
    );
    let lsn = |d: &Value| d["metadata"]["lsn"].as_u64().unwrap();
    assert!(lsn(changes.last().unwrap()) > lsn(&changes_before[changes_before.len() - 1]));
}

#[test]
fn the_manual_clock_and_ttl_survive_restarts() {
    let scratch = Scratch::new("clock");
    let start = START.to_string();
    let args = ["--clock", "manual", "--clock-start", &start];
    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    api.create_db_and_container(json!({"defaultTtl": -1}));
    assert_eq!(api.advance(1000), START + 1000);
    let (_, feed_start) = api.all_versions("*");
    assert_eq!(
        api.create_item(&json!({"id": "short", "pk": "p", "ttl": 10}))
            .status,
        201
    );
    assert_eq!(
        api.create_item(&json!({"id": "long", "pk": "p"})).status,
        201
    );
    assert_eq!(api.advance(2), START + 1002);
    // Killed right after the clock moved: the move was durable before its answer.
    emu.kill();

    // The same --clock-start, earlier than the persisted position.
    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    assert_eq!(api.clock(), START + 1002, "{}", emu.stderr());
    assert_eq!(api.read_item("short", "p").status, 200, "8 s left");
    assert_eq!(api.advance(9), START + 1011);
    assert_eq!(api.read_item("short", "p").status, 404);
    api.purge();
    assert_eq!(api.read_item("long", "p").status, 200);
    let expected: Vec<(String, String, bool)> = [
        ("create", "short", false),
        ("create", "long", false),
        ("delete", "short", true),
    ]
    .iter()
    .map(|(op, id, ttl)| (op.to_string(), id.to_string(), *ttl))
    .collect();
    let (changes, _) = api.all_versions(&feed_start);
    assert_eq!(summary(&changes), expected);
    assert_eq!(changes[2]["metadata"]["crts"], START + 1011);
    emu.terminate();

    // Stopped cleanly this time: the clock, the purge and its one TTL delete stay.
    let emu = Emu::start(&scratch, &args);
    let api = emu.api();
    assert_eq!(api.clock(), START + 1011);
    assert_eq!(api.advance(1), START + 1012);
    assert_eq!(api.purge(), 0);
    assert_eq!(summary(&api.all_versions(&feed_start).0), expected);
    assert_eq!(api.stored_items(), 1);
}

#[test]
fn with_the_system_clock_items_that_expired_while_stopped_are_purged_at_start() {
    let scratch = Scratch::new("wall");
    let mut emu = Emu::start(&scratch, &[]);
    let api = emu.api();
    api.create_db_and_container(json!({"defaultTtl": -1}));
    let (_, feed_start) = api.all_versions("*");
    assert_eq!(
        api.create_item(&json!({"id": "kept", "pk": "p"})).status,
        201
    );
    // Early in a second, so that the item cannot expire (and be purged)
    // before the kill right after it.
    while SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .subsec_millis()
        > 200
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        api.create_item(&json!({"id": "brief", "pk": "p", "ttl": 1}))
            .status,
        201
    );
    emu.kill();
    std::thread::sleep(Duration::from_millis(2500));

    let restarted_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let emu = Emu::start(&scratch, &[]);
    let api = emu.api();
    // The very first request already misses it.
    assert_eq!(api.read_item("brief", "p").status, 404, "{}", emu.stderr());
    assert_eq!(api.read_item("kept", "p").status, 200);
    let deadline = Instant::now() + Duration::from_secs(30);
    while api.stored_items() != 1 {
        assert!(Instant::now() < deadline, "brief is never purged");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (changes, _) = api.all_versions(&feed_start);
    assert_eq!(
        summary(&changes),
        [
            ("create".to_string(), "kept".to_string(), false),
            ("create".to_string(), "brief".to_string(), false),
            ("delete".to_string(), "brief".to_string(), true),
        ]
    );
    let crts = changes[2]["metadata"]["crts"].as_i64().unwrap();
    assert!(
        crts >= restarted_at,
        "purged at {crts}, restarted at {restarted_at}"
    );
}

// ---- d. RID counters --------------------------------------------------------

#[test]
fn rids_are_never_reused_after_a_restart() {
    let scratch = Scratch::new("rids");
    let start = START.to_string();
    let args = ["--clock", "manual", "--clock-start", &start];
    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    api.create_db_and_container(json!({}));
    let mut rids = HashSet::new();
    for i in 0..5 {
        let reply = api.create_item(&json!({"id": format!("a{i}"), "pk": "p"}));
        assert_eq!(reply.status, 201);
        assert!(rids.insert(reply.body["_rid"].as_str().unwrap().to_string()));
    }
    // The newest item and the newest container go: their RIDs were the highest.
    assert_eq!(
        api.delete(
            &format!("{COLL}/docs/a4"),
            &[("x-ms-documentdb-partitionkey", r#"["p"]"#)]
        )
        .status,
        204
    );
    let gone = api.post(
        "/dbs/db/colls",
        &json!({"id": "gone", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}}),
        &[],
    );
    let gone_rid = api.ok(gone)["_rid"].as_str().unwrap().to_string();
    assert_eq!(api.delete("/dbs/db/colls/gone", &[]).status, 204);
    emu.kill();

    let emu = Emu::start(&scratch, &args);
    let api = emu.api();
    for id in ["a4", "b0"] {
        let reply = api.create_item(&json!({"id": id, "pk": "p"}));
        assert_eq!(reply.status, 201, "{}", reply.body);
        let rid = reply.body["_rid"].as_str().unwrap().to_string();
        assert!(rids.insert(rid.clone()), "{id} got {rid} again");
    }
    let again = api.post(
        "/dbs/db/colls",
        &json!({"id": "new", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}}),
        &[],
    );
    assert_ne!(api.ok(again)["_rid"].as_str().unwrap(), gone_rid);
}

// ---- e. a torn or corrupt log ---------------------------------------------

fn item_ids(api: &Api) -> Vec<String> {
    let mut ids: Vec<String> = api
        .query("SELECT c.id FROM c")
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

fn numbered(n: usize) -> Vec<String> {
    let mut ids: Vec<String> = (0..n).map(|i| format!("item-{i:03}")).collect();
    ids.sort();
    ids
}

#[test]
fn a_torn_tail_is_cut_and_said() {
    const N: usize = 20;
    let scratch = Scratch::new("torn");
    let start = START.to_string();
    let args = ["--clock", "manual", "--clock-start", &start];
    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    api.create_db_and_container(json!({}));
    for id in numbered(N) {
        assert_eq!(api.create_item(&json!({"id": id, "pk": "p"})).status, 201);
    }
    emu.kill();
    let log = scratch.newest_log();
    let len = std::fs::metadata(&log).unwrap().len();
    assert!(len > 3, "{} is {len} bytes", log.display());
    let file = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
    file.set_len(len - 3).unwrap();
    drop(file);

    let mut emu = Emu::start(&scratch, &args);
    let stderr = emu.stderr();
    assert!(stderr.lines().any(|l| l.contains("dropped")), "{stderr}");
    assert_eq!(item_ids(&emu.api()), numbered(N - 1), "{stderr}");
    assert_eq!(scratch.files("dropped").len(), 1, "a dropped-* file");
    // The cut log takes new writes, which survive the next kill.
    assert_eq!(
        emu.api()
            .create_item(&json!({"id": "after", "pk": "p"}))
            .status,
        201
    );
    emu.kill();
    let emu = Emu::start(&scratch, &args);
    let mut expected = numbered(N - 1);
    expected.push("after".to_string());
    expected.sort();
    assert_eq!(item_ids(&emu.api()), expected, "{}", emu.stderr());
}

#[test]
fn a_corrupt_frame_cuts_the_log_there_and_is_said() {
    const N: usize = 40;
    let scratch = Scratch::new("corrupt");
    let start = START.to_string();
    let args = ["--clock", "manual", "--clock-start", &start];
    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    api.create_db_and_container(json!({}));
    for id in numbered(N) {
        let item = json!({"id": id, "pk": "p", "marker": format!("MARK-{id}")});
        assert_eq!(api.create_item(&item).status, 201);
    }
    emu.kill();
    let log = scratch.newest_log();
    let mut bytes = std::fs::read(&log).unwrap();
    // Where the 21st item's frame is, when its text shows in the log;
    // otherwise the middle of the log.
    let marker = b"MARK-item-020";
    let found = bytes.windows(marker.len()).position(|w| w == marker);
    eprintln!("the corrupt byte: {found:?} (None: the middle of the log)");
    let at = found.map_or(bytes.len() / 2, |p| p + 2);
    bytes[at] ^= 0x5a;
    std::fs::write(&log, &bytes).unwrap();

    let emu = Emu::start(&scratch, &args);
    let stderr = emu.stderr();
    assert!(stderr.lines().any(|l| l.contains("dropped")), "{stderr}");
    assert!(!scratch.files("dropped").is_empty(), "a dropped-* file");
    let ids = item_ids(&emu.api());
    // A prefix of the writes, and not all of them.
    assert!(ids.len() < N, "nothing was dropped: {stderr}");
    assert_eq!(ids, numbered(ids.len()), "{stderr}");
    if found.is_some() {
        assert_eq!(
            ids,
            numbered(20),
            "everything before the corrupt frame: {stderr}"
        );
    } else {
        assert!(!ids.is_empty(), "items before the corrupt frame: {stderr}");
    }
}

#[test]
fn a_damaged_snapshot_stops_the_start_and_says_so() {
    let scratch = Scratch::new("snapshot");
    let mut emu = Emu::start(&scratch, &[]);
    let api = emu.api();
    api.create_db_and_container(json!({}));
    assert_eq!(api.create_item(&json!({"id": "a", "pk": "p"})).status, 201);
    api.ok(api.post("/_emulator/compact", &json!({}), &[]));
    emu.kill();
    let snapshot = scratch.files("snapshot-").pop().expect("a snapshot");
    let mut bytes = std::fs::read(&snapshot).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x5a;
    std::fs::write(&snapshot, &bytes).unwrap();
    // Starting empty would lose everything silently: it must not start.
    let failure = match Emu::try_start(&scratch, &[]) {
        Ok(_) => panic!("the emulator started on a damaged snapshot"),
        Err(failure) => failure,
    };
    let status = failure.status.expect("it exits");
    assert!(!status.success(), "{status:?}");
    let name = snapshot.file_name().unwrap().to_str().unwrap();
    assert!(failure.stderr.contains(name), "{}", failure.stderr);
}

// ---- f. one emulator per directory ----------------------------------------

#[test]
fn a_second_emulator_on_the_same_directory_refuses_to_start() {
    let scratch = Scratch::new("lock");
    let mut first = Emu::start(&scratch, &[]);
    first.api().create_db_and_container(json!({}));
    let failure = match Emu::try_start(&scratch, &[]) {
        Ok(_) => panic!("a second emulator started on the same directory"),
        Err(failure) => failure,
    };
    let status = failure.status.expect("the second emulator exits");
    assert!(!status.success(), "{status:?}");
    assert!(
        failure.stderr.contains("is in use by another emulator"),
        "{}",
        failure.stderr
    );
    // The first one serves on, undisturbed.
    let api = first.api();
    assert_eq!(api.create_item(&json!({"id": "a", "pk": "p"})).status, 201);
    assert_eq!(api.read_item("a", "p").status, 200);
    // Its lock goes with it, even killed.
    first.kill();
    let again = Emu::start(&scratch, &[]);
    assert_eq!(again.api().read_item("a", "p").status, 200);
}

// ---- g. compaction ----------------------------------------------------------

#[test]
fn compaction_then_more_writes_then_sigkill_keeps_everything() {
    let scratch = Scratch::new("compact");
    let start = START.to_string();
    let args = ["--clock", "manual", "--clock-start", &start];
    let mut emu = Emu::start(&scratch, &args);
    let api = emu.api();
    api.create_db_and_container(json!({}));
    let mut expected: BTreeMap<String, Value> = BTreeMap::new();
    for i in 0..30 {
        let item = json!({"id": format!("old-{i:02}"), "pk": format!("p{}", i % 3), "n": i});
        assert_eq!(api.create_item(&item).status, 201);
        expected.insert(item["id"].as_str().unwrap().to_string(), item);
    }
    let reply = api.post("/_emulator/compact", &json!({}), &[]);
    let compacted = api.ok(reply);
    for field in ["generation", "snapshotBytes", "logBytesBefore"] {
        assert!(compacted[field].is_u64(), "{field}: {compacted}");
    }
    assert!(
        compacted["snapshotBytes"].as_u64().unwrap() > 0,
        "{compacted}"
    );
    assert!(compacted["millis"].is_number(), "{compacted}");
    assert!(!scratch.files("snapshot-").is_empty());
    // After the snapshot: creates, a replace, a delete, and the clock.
    for i in 0..10 {
        let item = json!({"id": format!("new-{i:02}"), "pk": "q", "n": i});
        assert_eq!(api.create_item(&item).status, 201);
        expected.insert(item["id"].as_str().unwrap().to_string(), item);
    }
    let replaced = json!({"id": "old-04", "pk": "p1", "n": 400});
    let reply = api.send(
        Method::PUT,
        &format!("{COLL}/docs/old-04"),
        &[("x-ms-documentdb-partitionkey", r#"["p1"]"#)],
        Some(&replaced),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    expected.insert("old-04".to_string(), replaced);
    assert_eq!(
        api.delete(
            &format!("{COLL}/docs/old-05"),
            &[("x-ms-documentdb-partitionkey", r#"["p2"]"#)]
        )
        .status,
        204
    );
    expected.remove("old-05");
    assert_eq!(api.advance(50), START + 50);
    // A second compaction moves to a newer generation.
    let second = api.post("/_emulator/compact", &json!({}), &[]);
    let second = api.ok(second);
    assert!(
        second["generation"].as_u64() > compacted["generation"].as_u64(),
        "{second} after {compacted}"
    );
    let late = json!({"id": "late", "pk": "q"});
    assert_eq!(api.create_item(&late).status, 201);
    expected.insert("late".to_string(), late);
    emu.kill();

    let emu = Emu::start(&scratch, &args);
    let api = emu.api();
    assert_eq!(api.clock(), START + 50);
    let stored: BTreeMap<String, Value> = api
        .query("SELECT * FROM c")
        .iter()
        .map(|d| (d["id"].as_str().unwrap().to_string(), user_part(d)))
        .collect();
    assert_eq!(stored, expected, "{}", emu.stderr());
}

#[test]
fn compaction_without_a_data_dir_is_a_bad_request() {
    let scratch = Scratch::new("compact-memory");
    let emu = Emu::spawn(&scratch, &[]).unwrap();
    emu.api()
        .post("/_emulator/compact", &json!({}), &[])
        .assert_error(400, "BadRequest");
    assert!(!scratch.data().exists(), "nothing touches the disk");
}
