//! The guide's Rust resilience recipe (docs/src/resilience.md includes
//! it), run by CI: a throttled create that the SDK retries, and a
//! throttling that outlasts its retries.
// ANCHOR: recipe
use azure_core::credentials::Secret;
use azure_core::http::StatusCode;
use azure_data_cosmos::models::ContainerProperties;
use azure_data_cosmos::options::BinaryEncodingOptions;
use azure_data_cosmos::{AccountReference, CosmosClient, RoutingStrategy};
use cosmos_emulator::{Config, Emulator};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn a_throttled_create_is_retried() -> Result<(), Box<dyn std::error::Error>> {
    let emulator = Emulator::start(Config::for_tests())?;
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
    client.create_database("shop", None).await?;
    let db = client.database_client("shop");
    db.create_container(ContainerProperties::new("orders", "/pk".into()), None)
        .await?;
    let orders = db.container_client("orders", None).await?;

    // The next three creates answer 429 (the rule the control API's
    // POST /_emulator/faults takes, added in process).
    let rule = emulator.add_fault(json!({
        "match": {"operation": "create"},
        "respond": {"status": 429, "subStatus": 3200, "retryAfterMs": 50},
        "hits": 3,
    }))?;
    orders
        .create_item("p", "o1", &json!({"id": "o1", "pk": "p"}), None)
        .await?; // retried after each advertised 50 ms
    assert_eq!(emulator.faults()[0]["hitCount"], 3, "{rule}");

    // Throttled for good: the SDK's retries run out and the 429 is the app's.
    emulator.add_fault(json!({
        "match": {"operation": "create"},
        "respond": {"status": 429, "subStatus": 3200, "retryAfterMs": 10},
    }))?;
    let refused = orders
        .create_item("p", "o2", &json!({"id": "o2", "pk": "p"}), None)
        .await
        .unwrap_err();
    assert_eq!(refused.status().status_code(), StatusCode::TooManyRequests);
    Ok(())
}
// ANCHOR_END: recipe
