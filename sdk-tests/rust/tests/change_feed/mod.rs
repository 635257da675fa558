//! The change feed through the SDK's `query_change_feed`, which sends
//! `x-ms-cosmos-changefeed-wire-format-version: 2021-09-15` on every change
//! feed request (`azure_data_cosmos_driver`'s `change_feed_with_mode`) and
//! reads each change as a `ChangeFeedItem` envelope: the latest version
//! (issues 11 and 47) and all versions and deletes.

use super::*;

/// The next page of a change feed, which is endless: within 10 s, or fail.
async fn next_page<P, E: std::fmt::Debug>(
    pages: &mut (impl futures::Stream<Item = Result<P, E>> + Unpin),
) -> P {
    use futures::StreamExt;
    tokio::time::timeout(std::time::Duration::from_secs(10), pages.next())
        .await
        .expect("a page within 10 s")
        .expect("a page")
        .expect("a page")
}

/// The change feed through the SDK's `query_change_feed` (issue 11): the
/// latest version from the beginning, and all versions and deletes from a
/// checkpoint taken at "now", with a TTL expiration as one delete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn change_feed_with_a_ttl_delete() {
    use azure_data_cosmos::options::{ChangeFeedMode, ChangeFeedOptions, ChangeFeedStartFrom};

    let emulator = start_emulator();
    let client = client(&emulator, emulator.key()).await.expect("client");
    let items = container(&client, TimeToLive::Seconds(10)).await;

    // All versions and deletes: a checkpoint at "now", before any change.
    let avad = || ChangeFeedOptions::default().with_mode(ChangeFeedMode::AllVersionsAndDeletes);
    let mut start = items
        .query_change_feed::<serde_json::Value>(
            FeedScope::full_container(),
            ChangeFeedStartFrom::Now,
            Some(avad()),
        )
        .await
        .expect("change feed from now");
    // The feed is endless: read until a page brings nothing new.
    assert!(next_page(&mut start).await.items().is_empty());
    let checkpoint = start.to_continuation_token().expect("a checkpoint");

    items
        .create_item("c", "a", &order("a", "c", 1.0, None), None)
        .await
        .unwrap();
    items
        .upsert_item("c", "a", &order("a", "c", 2.0, None), None)
        .await
        .unwrap();
    items
        .create_item("c", "kept", &order("kept", "c", 1.0, Some(-1)), None)
        .await
        .unwrap();

    // Latest version from the beginning: each live item once, latest version.
    let mut latest = items
        .query_change_feed::<Order>(
            FeedScope::full_container(),
            ChangeFeedStartFrom::Beginning,
            None,
        )
        .await
        .expect("change feed from the beginning");
    let mut seen = Vec::new();
    loop {
        let page = next_page(&mut latest).await;
        if page.items().is_empty() {
            break;
        }
        for item in page.items() {
            let order = item.current().expect("a current version");
            seen.push((order.id.clone(), order.total));
        }
    }
    assert_eq!(
        seen,
        vec![("a".to_string(), 2.0), ("kept".to_string(), 1.0)]
    );

    advance(&emulator, 11).await;
    purge(&emulator).await;

    let mut changes = items
        .query_change_feed::<serde_json::Value>(
            FeedScope::full_container(),
            ChangeFeedStartFrom::Now,
            Some(avad().with_continuation_token(checkpoint)),
        )
        .await
        .expect("change feed from the checkpoint");
    let mut summary = Vec::new();
    loop {
        let page = next_page(&mut changes).await;
        if page.items().is_empty() {
            break;
        }
        for item in page.items() {
            let metadata = item.metadata().expect("metadata");
            let id = item
                .current()
                .and_then(|c| c["id"].as_str().map(String::from))
                .or_else(|| metadata.id().map(String::from))
                .unwrap_or_default();
            summary.push((
                format!("{:?}", item.operation_type().expect("an operation")),
                id,
                metadata.time_to_live_expired().unwrap_or(false),
            ));
        }
    }
    let expected: Vec<(String, String, bool)> = [
        ("Create", "a", false),
        ("Replace", "a", false),
        ("Create", "kept", false),
        ("Delete", "a", true),
    ]
    .iter()
    .map(|(op, id, ttl)| (op.to_string(), id.to_string(), *ttl))
    .collect();
    assert_eq!(summary, expected);
}

/// The latest version over four ranges (issue 47): the SDK asks for the
/// wire format 2021-09-15, so each item comes as an envelope with its
/// current version and its metadata, the LSN it carries as `_lsn` and its
/// write time as `crts`; a replace arrives as the new version under a later
/// LSN.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latest_version_items_come_with_their_metadata() {
    use azure_data_cosmos::options::ChangeFeedStartFrom;
    use std::collections::BTreeMap;

    let emulator = start_emulator();
    let client = client(&emulator, emulator.key()).await.expect("client");
    client
        .create_database("shop", None)
        .await
        .expect("database");
    let db = client.database_client("shop");
    let options =
        CreateContainerOptions::default().with_throughput(ThroughputProperties::manual(24000));
    db.create_container(
        ContainerProperties::new("orders", "/customer".into()),
        Some(options),
    )
    .await
    .expect("a container of four ranges");
    let items = db.container_client("orders", None).await.expect("client");
    for i in 0..24 {
        let (id, customer) = (format!("o{i}"), format!("c{}", i % 11));
        items
            .create_item(&customer, &id, &order(&id, &customer, 1.0, None), None)
            .await
            .unwrap();
    }

    /// Every change from the beginning, by id: (total, lsn), checking each
    /// envelope on the way.
    async fn read_all(items: &ContainerClient) -> BTreeMap<String, (f64, i64)> {
        let mut pages = items
            .query_change_feed::<serde_json::Value>(
                FeedScope::full_container(),
                ChangeFeedStartFrom::Beginning,
                None,
            )
            .await
            .expect("change feed from the beginning");
        let mut seen = BTreeMap::new();
        loop {
            let page = next_page(&mut pages).await;
            if page.items().is_empty() {
                return seen;
            }
            for item in page.items() {
                let current = item.current().expect("the current version");
                let metadata = item
                    .metadata()
                    .expect("metadata: the wire format's envelope");
                let lsn = metadata.lsn().expect("an lsn").value();
                assert_eq!(current["_lsn"].as_i64(), Some(lsn), "{current}");
                assert_eq!(
                    metadata
                        .conflict_resolution_timestamp()
                        .map(|d| d.as_secs() as i64),
                    current["_ts"].as_i64(),
                    "crts is the item's last write"
                );
                let id = current["id"].as_str().expect("an id").to_string();
                seen.insert(id, (current["total"].as_f64().unwrap(), lsn));
            }
        }
    }

    let first = read_all(&items).await;
    let ids: Vec<String> = first.keys().cloned().collect();
    let mut expected: Vec<String> = (0..24).map(|i| format!("o{i}")).collect();
    expected.sort();
    assert_eq!(ids, expected);

    advance(&emulator, 2).await;
    items
        .upsert_item("c5", "o5", &order("o5", "c5", 9.0, None), None)
        .await
        .unwrap();
    let second = read_all(&items).await;
    assert_eq!(second["o5"].0, 9.0, "the latest version only");
    assert!(second["o5"].1 > first["o5"].1, "under a later LSN");
    assert_eq!(second.len(), 24);
}
