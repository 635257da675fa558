//! The store's own cost of persistence (`--data-dir`), without HTTP: fills
//! a container with N 1 KB items (argument, default 100,000) in memory and
//! in a data directory (`--sync never`), then reopens the directory: the
//! fill's CPU per write both ways, the reopen time (journal replay, then
//! after a compaction the snapshot), the disk bytes per item, and the
//! process's RSS after each. The end-to-end measurement is `cargo xtask
//! bench --only persistence`.
use cosmos_emulator::data::persist::SyncMode;
use cosmos_emulator::data::store::{ItemWrite, Store, WriteMode};
use cosmos_emulator::{Clock, ClockMode};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Instant;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    (fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap()) / 100.0
}

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    kib / 1024.0
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

fn store(dir: Option<&Path>) -> Store {
    let store = Store::new(Clock::new(ClockMode::Manual { start: None }));
    match dir {
        Some(dir) => store.open_data_dir(dir, SyncMode::Never).unwrap(),
        None => store,
    }
}

fn fill(store: &Store, n: usize) -> f64 {
    store
        .create_database(json!({"id": "db"}).as_object().unwrap(), None)
        .unwrap();
    store
        .create_container(
            "db",
            json!({"id": "c", "partitionKey": {"paths": ["/pk"]}})
                .as_object()
                .unwrap(),
            None,
        )
        .unwrap();
    let pad = "x".repeat(900);
    let c = cpu_secs();
    for i in 0..n {
        let body = json!({"id": format!("item-{i}"), "pk": format!("p{}", i % 1000), "pad": pad});
        let Value::Object(body) = body else {
            unreachable!()
        };
        store
            .write_item(
                "db",
                "c",
                ItemWrite {
                    mode: WriteMode::Create,
                    url_id: None,
                    partition_key_header: None,
                    if_match: None,
                    body,
                },
            )
            .unwrap();
    }
    (cpu_secs() - c) / n as f64 * 1e6
}

fn reopen(dir: &Path, what: &str) -> Store {
    let t = Instant::now();
    let store = store(Some(dir));
    println!(
        "reopen from {what}: {:.0} ms, RSS {:.0} MiB",
        t.elapsed().as_secs_f64() * 1e3,
        rss_mib()
    );
    store
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(100_000);
    let dir = std::env::temp_dir().join(format!("persist-cost-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let base = rss_mib();
    let memory = store(None);
    let cpu = fill(&memory, n);
    println!(
        "in memory: {cpu:.1} µs CPU/write, RSS +{:.0} MiB",
        rss_mib() - base
    );
    drop(memory);
    let persisted = store(Some(&dir));
    let cpu = fill(&persisted, n);
    println!(
        "--data-dir: {cpu:.1} µs CPU/write; log {:.0} bytes/item",
        dir_bytes(&dir) as f64 / n as f64
    );
    drop(persisted);
    if std::env::var_os("PAUSE").is_some() {
        println!("pid {}: attach now", std::process::id());
        std::thread::sleep(std::time::Duration::from_secs(3));
    }
    let replayed = reopen(&dir, "the journal");
    let t = Instant::now();
    let report = replayed.compact().unwrap();
    println!(
        "compaction: {:.0} ms ({:.0} ms under the lock), snapshot {:.0} bytes/item",
        t.elapsed().as_secs_f64() * 1e3,
        report.locked_millis,
        report.snapshot_bytes as f64 / n as f64
    );
    drop(replayed);
    drop(reopen(&dir, "the snapshot"));
    std::fs::remove_dir_all(&dir).unwrap();
}
