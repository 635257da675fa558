//! The Direct-mode measurement at tiny sizes against the built emulator
//! binary (`crate::emulator_binary`): the bench's own RNTBD client is
//! served by the emulator (context, signature, names, pipelining over one
//! and over two connections), every request of both ways answered 2xx.

use std::time::Duration;

use cosmos_bench::load::Window;
use cosmos_bench::measure::direct::{self, DirectSettings};
use cosmos_bench::measure::persistence::TempDir;
use cosmos_bench::targets;

use crate::emulator_binary;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_direct_measurement_runs_at_tiny_sizes_both_ways_without_errors() {
    let root = TempDir::new(&std::env::temp_dir(), "test-direct").unwrap();
    let root = root.path();
    let logs = root.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let cert = root.join("ca.pem");
    let emulator = targets::emulator(&emulator_binary(), &logs).with_args(
        &[
            "--tls".to_string(),
            "--cert-out".to_string(),
            cert.display().to_string(),
        ],
        "the emulator with --tls".into(),
        &logs.join("emulator.log"),
    );
    let settings = DirectSettings {
        window: Window {
            warmup: Duration::from_millis(50),
            measure: Duration::from_millis(300),
        },
        // 31 workers: two connections, one of them with 16 in flight.
        concurrencies: &[1, 31],
        items: 200,
        item_bytes: 1024,
        startup_runs: 2,
        cert: &cert,
    };
    let mut lines = Vec::new();
    let results = direct::measure(
        &emulator,
        cosmos_emulator::WELL_KNOWN_KEY,
        settings,
        |line| lines.push(line),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}\nprogress: {lines:#?}"));
    let shape: Vec<(&str, usize, usize)> = results
        .rows
        .iter()
        .map(|r| (r.operation, r.concurrency, r.direct_connections))
        .collect();
    assert_eq!(
        shape,
        [
            ("reads", 1, 1),
            ("writes", 1, 1),
            ("reads", 31, 2),
            ("writes", 31, 2)
        ]
    );
    for row in &results.rows {
        assert_eq!(row.unmatched_answers, 0, "every answer named its request");
        for (way, load) in [("HTTPS", &row.https), ("Direct", &row.direct)] {
            assert_eq!(
                load.errors, 0,
                "{} c={} {way}: {:?}",
                row.operation, row.concurrency, load.first_error
            );
            assert!(
                load.requests > 0,
                "{} c={} {way}: nothing completed",
                row.operation,
                row.concurrency
            );
        }
    }
    assert!(results.startup.is_some());
    assert!(results.idle_rss_bytes > 0);
}
