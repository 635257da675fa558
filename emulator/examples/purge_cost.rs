//! The store's own cost of a TTL purge: a million items (argument: how
//! many) expiring at one instant in one container, purged in the background
//! task's batches, with no HTTP and no reader. Prints the wall and CPU time
//! of the fill and of the purge; with `PAUSE=1` it waits 3 s between them,
//! so that `perf record -p` can attach for the purge alone. The end-to-end
//! measurement is `cargo xtask bench --only purge`.
use cosmos_emulator::data::store::{ItemWrite, Store, WriteMode};
use cosmos_emulator::{Clock, ClockMode};
use serde_json::{json, Value};
use std::time::Instant;

/// The background purge task's batch (`purge::BATCH` in the emulator).
const BATCH: usize = 512;

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

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1_000_000);
    let store = Store::new(Clock::new(ClockMode::Manual { start: None }));
    store
        .create_database(json!({"id": "db"}).as_object().unwrap(), None)
        .unwrap();
    store
        .create_container(
            "db",
            json!({"id": "c", "partitionKey": {"paths": ["/pk"]}, "defaultTtl": -1})
                .as_object()
                .unwrap(),
            None,
        )
        .unwrap();
    let pad = "x".repeat(900);
    let t = Instant::now();
    let c = cpu_secs();
    for i in 0..n {
        let body = json!({"id": format!("item-{i}"), "pk": format!("p{}", i % 1000), "ttl": 60, "pad": pad});
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
    eprintln!("fill {:?} cpu {:.2}", t.elapsed(), cpu_secs() - c);
    if std::env::var("PAUSE").is_ok() {
        std::thread::sleep(std::time::Duration::from_secs(3));
    }
    store.clock.advance(61).unwrap();
    let t = Instant::now();
    let c = cpu_secs();
    let mut total = 0;
    loop {
        let (k, _) = store.purge_batch(BATCH);
        total += k;
        if k < BATCH {
            break;
        }
    }
    eprintln!(
        "purge {total} in {:?} cpu {:.2}",
        t.elapsed(),
        cpu_secs() - c
    );
}
