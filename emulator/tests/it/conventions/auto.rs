//! The binary with `--protocol auto` (or `PROTOCOL=auto`): the lines on
//! stdout name the `http://` endpoint, both schemes answer on its port, and
//! SIGTERM stops it with the requests in flight finished, as in the other
//! modes.

use std::io::Read;
use std::time::{Duration, Instant};

use cosmos_emulator::binary::settings::{COSMOS_EMULATOR_CERT_OUT, PROTOCOL};
use cosmos_emulator::protocol::auth::{authorization_header, payload, signed_resource, MasterKey};
use cosmos_emulator::WELL_KNOWN_KEY;
use rstest::rstest;
use serde_json::json;

use super::start;
use super::support::Scratch;
use crate::common::Api;

#[test]
fn auto_prints_the_http_endpoint_and_serves_https_on_its_port() {
    let scratch = Scratch::new("auto-lines");
    // A directory that does not exist yet, as a container tool names one.
    let pem = scratch.root.join("appdata/CosmosDBEmulator/emulator.pem");
    let mut emu = start(
        &scratch,
        &["--port", "0"],
        &[
            (PROTOCOL, "auto"),
            (COSMOS_EMULATOR_CERT_OUT, pem.to_str().unwrap()),
        ],
    );
    let endpoint = emu.api.endpoint().to_string();
    assert!(endpoint.starts_with("http://localhost:"), "{endpoint}");
    let addresses = emu.next_stdout_line().unwrap();
    assert!(
        addresses.starts_with("addresses http://127.0.0.1:"),
        "{addresses:?}"
    );
    assert_eq!(
        emu.next_stdout_line().as_deref(),
        Some(format!("Now listening on: {endpoint}\n").as_str())
    );
    assert_eq!(emu.next_stdout_line().as_deref(), Some("Started\r\n"));
    assert_eq!(emu.api.get("/dbs", &[]).status, 200);
    let certificate = std::fs::read(&pem).expect("--cert-out made its directory");
    let secure = Api::new(
        endpoint.replace("http://", "https://"),
        MasterKey::from_base64(WELL_KNOWN_KEY).unwrap(),
        reqwest::blocking::Client::builder()
            .tls_certs_only([reqwest::Certificate::from_pem(&certificate).unwrap()])
            .build()
            .unwrap(),
    );
    assert_eq!(secure.get("/dbs", &[]).status, 200);
    emu.terminate();
}

/// A body that comes in two halves, `pause` apart: a request in flight
/// for that long.
struct Slow {
    halves: Vec<Vec<u8>>,
    pause: Duration,
}

impl Read for Slow {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.halves.is_empty() {
            return Ok(0);
        }
        if self.halves.len() == 1 {
            std::thread::sleep(self.pause);
        }
        let half = self.halves.remove(0);
        buf[..half.len()].copy_from_slice(&half);
        Ok(half.len())
    }
}

#[rstest]
#[case::http("http")]
#[case::auto("auto")]
#[case::https("https")]
fn sigterm_lets_a_request_in_flight_finish_then_stops(#[case] protocol: &str) {
    let scratch = Scratch::new(&format!("inflight-{protocol}"));
    let pem = scratch.root.join("ca.pem");
    let mut args = vec!["--port", "0", "--protocol", protocol];
    if protocol != "http" {
        args.extend(["--cert-out", pem.to_str().unwrap()]);
    }
    let mut emu = start(&scratch, &args, &[]);
    let mut client = reqwest::blocking::Client::builder().timeout(Duration::from_secs(60));
    if protocol != "http" {
        let certificate = std::fs::read(&pem).unwrap();
        client = client.tls_certs_only([reqwest::Certificate::from_pem(&certificate).unwrap()]);
    }
    let client = client.build().unwrap();
    let endpoint = match protocol {
        "auto" => emu.api.endpoint().replace("http://", "https://"),
        _ => emu.api.endpoint().to_string(),
    };
    // One answer first: the connection the slow request reuses is accepted.
    let warm = api_for_client(&endpoint, client.clone());
    assert_eq!(warm.get("/dbs", &[]).status, 200);

    let sender = std::thread::spawn(move || {
        let date = httpdate::fmt_http_date(std::time::SystemTime::now());
        let resource = signed_resource("/dbs");
        let key = MasterKey::from_base64(WELL_KNOWN_KEY).unwrap();
        let signature = authorization_header(
            &key,
            &payload(
                "POST",
                &resource.resource_type,
                &resource.links[0],
                &date,
                "",
            ),
        );
        let body = json!({"id": "slow"}).to_string().into_bytes();
        let (first, second) = body.split_at(4);
        client
            .post(format!("{endpoint}/dbs"))
            .header("x-ms-date", &date)
            .header("x-ms-version", "2020-07-15")
            .header("authorization", signature)
            .header("content-type", "application/json")
            .body(reqwest::blocking::Body::new(Slow {
                halves: vec![first.to_vec(), second.to_vec()],
                pause: Duration::from_millis(1500),
            }))
            .send()
            .map(|r| r.status().as_u16())
    });
    std::thread::sleep(Duration::from_millis(500));
    let stopping = Instant::now();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &emu.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let answered = sender.join().unwrap();
    assert_eq!(answered.ok(), Some(201), "the request in flight finished");
    let exit = emu.child.wait().unwrap();
    assert!(exit.success(), "{exit:?}\n{}", emu.stderr());
    assert!(
        stopping.elapsed() < Duration::from_secs(10),
        "stopped in {:?}",
        stopping.elapsed()
    );
}

fn api_for_client(endpoint: &str, client: reqwest::blocking::Client) -> Api {
    Api::new(
        endpoint.to_string(),
        MasterKey::from_base64(WELL_KNOWN_KEY).unwrap(),
        client,
    )
}
