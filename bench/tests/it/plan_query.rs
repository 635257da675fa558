//! The plan-driven cross-partition query client against the real emulator
//! (in-process, loopback HTTP, signed requests): a container of ten ranges
//! and one of one range, loaded alike, give exactly the loaded items' answers,
//! and the ten-range queries really went to ten ranges that each held items.

use cosmos_bench::connection::{Connection, Endpoint};
use cosmos_bench::cosmos::Signer;
use cosmos_bench::measure::dataset::{self, DATABASE};
use cosmos_bench::measure::ranges::RangeQuery;
use cosmos_bench::measure::send_once;
use cosmos_bench::plan_query;
use cosmos_emulator::{Config, Emulator};

const ITEMS: usize = 600;
const PAGE: i64 = 25;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_driven_queries_return_exactly_the_loaded_items_across_ten_ranges() {
    let emulator = Emulator::start(Config::for_tests()).expect("the emulator starts");
    let endpoint = Endpoint::parse(emulator.endpoint()).unwrap();
    let signer = Signer::new(emulator.key(), &endpoint.authority()).unwrap();
    send_once(&endpoint, signer.create_database(DATABASE))
        .await
        .unwrap();
    for (container, throughput, expected_ranges) in [("ten", Some(60_000), 10), ("one", None, 1)] {
        send_once(
            &endpoint,
            signer.create_container_with(DATABASE, container, false, throughput),
        )
        .await
        .unwrap();
        dataset::fill(&endpoint, &signer, container, 0..ITEMS, 300, None, 8)
            .await
            .unwrap();
        let mut connection = Connection::open(&endpoint).await.unwrap();
        let ranges = plan_query::ranges(&mut connection, &signer, DATABASE, container)
            .await
            .unwrap();
        assert_eq!(ranges.len(), expected_ranges, "{container}: {ranges:?}");
        for query in RangeQuery::ALL {
            // 25 results a page: every range needs several pages.
            let run = plan_query::run(
                &mut connection,
                &signer,
                DATABASE,
                container,
                query.text(),
                PAGE,
            )
            .await
            .unwrap_or_else(|e| panic!("{container} `{}`: {e}", query.text()));
            query
                .check(&run.values, ITEMS)
                .unwrap_or_else(|e| panic!("{container}: {e}"));
            assert_eq!(run.ranges, expected_ranges);
            assert_eq!(run.rows_per_range.len(), expected_ranges);
            if query != RangeQuery::Count {
                // 64 logical partitions hash into every one of the ranges.
                assert!(
                    run.rows_per_range.iter().all(|&n| n > 0 && n < ITEMS) || expected_ranges == 1,
                    "{container} `{}`: rows per range {:?}",
                    query.text(),
                    run.rows_per_range
                );
                assert_eq!(run.rows_per_range.iter().sum::<usize>(), ITEMS);
                // The plan, the ranges, then at least ceil(rows / PAGE) pages a range.
                let pages: usize = run
                    .rows_per_range
                    .iter()
                    .map(|n| n.div_ceil(PAGE as usize))
                    .sum();
                assert!(run.requests >= 2 + pages, "{} requests", run.requests);
            } else {
                // One partial count per range, added up by the client.
                assert_eq!(run.rows_per_range, vec![1; expected_ranges]);
            }
        }
    }
}
