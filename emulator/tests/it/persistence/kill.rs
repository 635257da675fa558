//! Every acknowledged write survives SIGKILL: under load, in a batch, in a purge.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};

use super::support::*;

// ---- a. every acknowledged write survives SIGKILL under load -------------

pub(crate) const WRITERS: usize = 8;
pub(crate) const IDS_PER_WRITER: usize = 16;

/// What one writer knows: the last acknowledged state of each of its ids
/// (`None`: absent), and the write that got no answer, if any: its id and
/// the state it asked for.
#[derive(Default)]
pub(crate) struct WriterLog {
    acked: HashMap<String, Option<Value>>,
    in_flight: Option<(String, Option<Value>)>,
    acknowledged_writes: usize,
}

/// Creates, upserts, replaces and deletes its own ids until `stop` or
/// until a request gets no answer (the process is gone).
pub(crate) fn writer(api: Api, writer: usize, stop: Arc<AtomicBool>) -> Result<WriterLog, String> {
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
pub(crate) fn acknowledged_writes_survive_sigkill(sync: &str, window: Duration, compactions: bool) {
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
        .query("SELECT c.id FROM c", json!([]))
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
pub(crate) fn container_replacer(api: Api, stop: Arc<AtomicBool>) -> (Option<i64>, Option<i64>) {
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
pub(crate) fn acknowledged_writes_survive_sigkill_sync_periodic() {
    acknowledged_writes_survive_sigkill("periodic", Duration::from_millis(1500), false);
}

#[test]
pub(crate) fn acknowledged_writes_survive_sigkill_during_compactions() {
    acknowledged_writes_survive_sigkill("periodic", Duration::from_millis(1500), true);
}

#[test]
pub(crate) fn acknowledged_writes_survive_sigkill_sync_always() {
    acknowledged_writes_survive_sigkill("always", Duration::from_millis(1000), false);
}

#[test]
pub(crate) fn acknowledged_writes_survive_sigkill_sync_never() {
    acknowledged_writes_survive_sigkill("never", Duration::from_millis(1000), false);
}

// ---- b. a transactional batch cut by the kill is all or nothing ----------

pub(crate) const BATCH: usize = 50;

#[test]
pub(crate) fn a_batch_cut_by_sigkill_is_all_or_nothing() {
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
    for doc in emu.api().query("SELECT c.pk FROM c", json!([])) {
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
pub(crate) fn a_purge_cut_by_sigkill_leaves_one_ttl_delete_per_item() {
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
    assert_eq!(api.now(), START + 11);
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
