//! The quick start's first test (docs/src/quick-start/rust.md), run by CI
//! against the emulator as the guide shows it.
// ANCHOR: test
use azure_core::credentials::Secret;
use azure_core::http::StatusCode;
use azure_data_cosmos::models::{ContainerProperties, TimeToLive};
use azure_data_cosmos::options::BinaryEncodingOptions;
use azure_data_cosmos::{AccountReference, CosmosClient, RoutingStrategy};
use cosmos_emulator::{Config, Emulator};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")] // azure_data_cosmos hangs on a current-thread runtime
async fn items_expire() -> Result<(), Box<dyn std::error::Error>> {
    // In this process, on a free port, with a manual test clock; stops when dropped.
    let emulator = Emulator::start(Config::for_tests())?;

    // Binary encoding off, as for Microsoft's Linux emulator.
    let account = AccountReference::with_authentication_key(
        format!("{}/", emulator.endpoint()).parse()?,
        Secret::from(emulator.key().to_string()),
    );
    let client = CosmosClient::builder()
        .with_binary_encoding_options(BinaryEncodingOptions::new().with_enabled(false))
        .build(
            account,
            RoutingStrategy::ProximityTo("South Central US".into()),
        )
        .await?;

    client.create_database("db", None).await?;
    let db = client.database_client("db");
    let mut properties = ContainerProperties::new("items", "/pk".into());
    properties.default_ttl = TimeToLive::Seconds(10);
    db.create_container(properties, None).await?;
    let items = db.container_client("items", None).await?;
    items
        .create_item("a", "a", &json!({"id": "a", "pk": "a"}), None)
        .await?;

    emulator.advance(10)?; // 10 s pass at once
    let expired = items.read_item("a", "a", None).await.unwrap_err();
    assert_eq!(expired.status().status_code(), StatusCode::NotFound);
    Ok(())
}
// ANCHOR_END: test
