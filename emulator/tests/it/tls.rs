//! HTTPS: certificates made at start, handed to clients by file and by
//! route, verified for real by the client.

use crate::common::TestClient;
use cosmos_emulator::{Config, Protocol};
use serde_json::json;

fn tls_config(dir: &std::path::Path) -> Config {
    Config {
        protocol: Protocol::Https,
        cert_out: Some(dir.join("emulator.pem")),
        ..Config::for_tests()
    }
}

#[test]
fn serves_https_that_a_verifying_client_trusts() {
    let dir = tempdir();
    let c = TestClient::start_config(tls_config(&dir));
    assert!(
        c.emulator.endpoint().starts_with("https://127.0.0.1:"),
        "{}",
        c.emulator.endpoint()
    );
    // The account document advertises the scheme the client used.
    let account = c.get("/", &[]);
    assert_eq!(account.status, 200);
    let advertised = account.body["writableLocations"][0]["databaseAccountEndpoint"]
        .as_str()
        .unwrap();
    assert!(advertised.starts_with("https://"), "{advertised}");
    // The full API works over TLS.
    assert_eq!(c.post("/dbs", &json!({"id": "db"}), &[]).status, 201);
}

#[test]
fn the_certificate_route_serves_what_cert_out_wrote() {
    let dir = tempdir();
    let c = TestClient::start_config(tls_config(&dir));
    let written = std::fs::read_to_string(dir.join("emulator.pem")).unwrap();
    assert!(written.starts_with("-----BEGIN CERTIFICATE-----"));
    let pem = reqwest::blocking::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(written.as_bytes()).unwrap()])
        .build()
        .unwrap()
        .get(format!("{}/_explorer/emulator.pem", c.emulator.endpoint()))
        .send()
        .unwrap();
    assert_eq!(pem.status().as_u16(), 200, "public: no signature needed");
    assert_eq!(pem.text().unwrap(), written);
}

#[test]
fn a_client_that_does_not_trust_the_certificate_is_refused() {
    let dir = tempdir();
    let c = TestClient::start_config(tls_config(&dir));
    let other_dir = tempdir();
    let other = TestClient::start_config(tls_config(&other_dir));
    let foreign = std::fs::read(other_dir.join("emulator.pem")).unwrap();
    let untrusting = reqwest::blocking::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&foreign).unwrap()])
        .build()
        .unwrap();
    let result = untrusting
        .get(format!("{}/_explorer/emulator.pem", c.emulator.endpoint()))
        .send();
    assert!(
        result.is_err(),
        "a certificate from another emulator must not verify"
    );
    drop(other);
}

#[test]
fn a_name_other_than_localhost_gets_a_certificate_of_its_own() {
    let dir = tempdir();
    let c = TestClient::start_config(tls_config(&dir));
    let address: std::net::SocketAddr = c
        .emulator
        .endpoint()
        .trim_start_matches("https://")
        .parse()
        .unwrap();
    let pem = std::fs::read(dir.join("emulator.pem")).unwrap();
    // A compose service's name, resolved here to the loopback.
    let client = reqwest::blocking::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&pem).unwrap()])
        .resolve("cosmos", address)
        .resolve("localhost", address)
        .build()
        .unwrap();
    let reply = client
        .get(format!(
            "https://cosmos:{}/_explorer/emulator.pem",
            address.port()
        ))
        .send()
        .expect("the certificate verifies for cosmos");
    assert_eq!(reply.status().as_u16(), 200);
    // The start's own names still verify.
    let reply = client
        .get(format!(
            "https://localhost:{}/_explorer/emulator.pem",
            address.port()
        ))
        .send()
        .expect("the certificate verifies for localhost");
    assert_eq!(reply.status().as_u16(), 200);
}

#[test]
fn plain_http_has_no_certificate() {
    let c = TestClient::start();
    let reply = reqwest::blocking::get(format!("{}/_explorer/emulator.pem", c.emulator.endpoint()))
        .unwrap();
    assert_eq!(reply.status().as_u16(), 404);
}

/// A fresh directory under the target dir, unique per call.
fn tempdir() -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("cosmos-emulator-tls-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
