//! The persistence measurement at tiny sizes against the built emulator
//! binary (`target/<profile>/cosmos-emulator`, next to this test's own
//! directory; `cargo test --workspace` builds it; `COSMOS_EMULATOR_BIN`
//! names another): every part gives numbers, every temporary data
//! directory is gone afterwards.

use std::time::Duration;

use cosmos_bench::load::Window;
use cosmos_bench::measure::persistence::{self, PersistenceSettings, Storage, TempDir};
use cosmos_bench::targets;

use crate::emulator_binary;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_persistence_measurement_runs_at_tiny_sizes_and_cleans_up() {
    // Removed when the test ends, passed or not.
    let root = TempDir::new(&std::env::temp_dir(), "test").unwrap();
    let root = root.path();
    let logs = root.join("logs");
    let temp_root = root.join("data");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::create_dir_all(&temp_root).unwrap();
    let emulator = targets::emulator(&emulator_binary(), &logs);
    let settings = PersistenceSettings {
        window: Window {
            warmup: Duration::from_millis(50),
            measure: Duration::from_millis(200),
        },
        concurrencies: vec![1, 4],
        read_concurrency: 4,
        write_items: 50,
        startup_sizes: vec![200, 0, 30],
        startup_runs: 2,
        item_bytes: 1024,
        fill_concurrency: 8,
        compaction_concurrency: 4,
        temp_root: temp_root.clone(),
    };
    let mut lines = Vec::new();
    let results = persistence::measure(
        &emulator,
        cosmos_emulator::WELL_KNOWN_KEY,
        settings,
        &logs,
        |line| lines.push(line),
    )
    .await;
    let log = std::fs::read_to_string(logs.join("persistence.log")).unwrap_or_default();
    assert!(
        results.errors.is_empty(),
        "{:?}\nprogress: {lines:#?}\nemulator log (tail): {}",
        results.errors,
        &log[log.len().saturating_sub(3000)..]
    );

    let speed = results.speed.as_ref().unwrap();
    assert_eq!(
        speed.rows.iter().map(|r| r.storage).collect::<Vec<_>>(),
        Storage::ALL.to_vec()
    );
    for row in &speed.rows {
        assert_eq!(
            row.writes.iter().map(|t| t.concurrency).collect::<Vec<_>>(),
            vec![1, 4]
        );
        assert_eq!(row.reads.len(), 1);
        assert!(row
            .writes
            .iter()
            .chain(&row.reads)
            .all(|t| t.errors == 0 && t.requests > 0));
        assert_eq!(
            row.restart_ready_ms.is_some(),
            row.storage != Storage::InMemory
        );
    }

    let restarts = results.restarts.as_ref().unwrap();
    assert_eq!(restarts.items, 200);
    // A new directory; 0, 30 and 200 items after the fill; 200 after compactions.
    assert_eq!(
        restarts
            .startup
            .iter()
            .map(|s| (s.items, s.ready_ms.len()))
            .collect::<Vec<_>>(),
        vec![(0, 2), (0, 2), (30, 2), (200, 2), (200, 2)]
    );
    assert!(restarts
        .startup
        .iter()
        .all(|s| s.median_ready_ms > 0.0 && s.median_line_ms <= s.median_ready_ms));
    let c = &restarts.compaction;
    assert!(c.after_fill.bytes >= 200 * 1024, "{:?}", c.after_fill);
    assert!(
        c.after_compact
            .files
            .iter()
            .any(|(name, _)| name.starts_with("snapshot-")),
        "{:?}",
        c.after_compact
    );
    assert!(c.quiet.millis >= 0.0 && c.quiet_wall_ms > 0.0);
    assert!(c.loaded.generation > c.quiet.generation);
    assert!(c.writes_before_per_second > 0.0);
    assert!(restarts.in_memory_rss_bytes > 0 && restarts.data_dir_rss_bytes > 0);

    let mut md = String::new();
    persistence::markdown(&mut md, &results);
    assert!(md.contains("--data-dir, --sync always"), "{md}");
    assert!(md.contains("after two compactions"), "{md}");

    // Every data directory was removed.
    let left: Vec<_> = std::fs::read_dir(&temp_root).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
