//! `--protocol auto`: HTTP and HTTPS on one port, each connection sorted
//! by its first byte; the account document advertises the scheme the
//! client used; a connection that sends garbage gets a 400 (or, for a
//! broken TLS handshake, a close), and one that sends nothing harms nothing.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cosmos_emulator::protocol::auth::MasterKey;
use cosmos_emulator::{Config, Emulator, Protocol};
use serde_json::json;

use crate::common::{scratch_dir, Api};

/// An emulator serving both, its authority written to `dir/ca.pem`.
fn auto(dir: &Path) -> Emulator {
    Emulator::start(Config {
        protocol: Protocol::Auto,
        cert_out: Some(dir.join("ca.pem")),
        ..Config::for_tests()
    })
    .expect("the emulator starts")
}

/// A client that trusts the authority at `pem` and nothing else.
fn trusting(pem: &Path) -> reqwest::blocking::Client {
    let pem = std::fs::read(pem).expect("--cert-out was written");
    reqwest::blocking::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&pem).unwrap()])
        .build()
        .unwrap()
}

/// The signed client of `endpoint` over `http`.
fn api(endpoint: String, http: reqwest::blocking::Client) -> Api {
    Api::new(
        endpoint,
        MasterKey::from_base64(cosmos_emulator::WELL_KNOWN_KEY).unwrap(),
        http,
    )
}

fn advertised(api: &Api) -> String {
    let account = api.get("/", &[]);
    assert_eq!(account.status, 200, "{}", account.body);
    account.body["writableLocations"][0]["databaseAccountEndpoint"]
        .as_str()
        .unwrap()
        .to_string()
}

fn dir(name: &str) -> PathBuf {
    let dir = scratch_dir(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn one_port_serves_signed_requests_over_http_and_https() {
    let dir = dir("auto-both");
    let emulator = auto(&dir);
    let endpoint = emulator.endpoint().to_string();
    assert!(endpoint.starts_with("http://127.0.0.1:"), "{endpoint}");
    let https_endpoint = endpoint.replace("http://", "https://");
    let plain = api(endpoint.clone(), reqwest::blocking::Client::new());
    let secure = api(https_endpoint.clone(), trusting(&dir.join("ca.pem")));

    // Each connection is told its own scheme, at the address it used.
    assert_eq!(advertised(&plain), format!("{endpoint}/"));
    assert_eq!(advertised(&secure), format!("{https_endpoint}/"));

    // One store behind both: written over one, read over the other.
    assert_eq!(plain.post("/dbs", &json!({"id": "db"}), &[]).status, 201);
    let created = secure.create_container("c", None);
    assert_eq!(created.status, 201, "{}", created.body);
    let item = json!({"id": "one", "pk": "p"});
    assert_eq!(secure.create_item(&item).status, 201);
    let read = plain.read_item("one", "p");
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(plain.ids(), secure.ids());
    // A wrong key is refused over either.
    let wrong = MasterKey::from_base64("b3RoZXIta2V5LWZvci10aGUtZW11bGF0b3ItdGVzdHM=").unwrap();
    for api in [&plain, &secure] {
        let reply = api.send_signed_with(&wrong, reqwest::Method::GET, "/dbs", &[], None);
        assert_eq!(reply.status, 401, "{}", api.endpoint());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn https_on_the_shared_port_negotiates_http2_by_alpn() {
    let dir = dir("auto-h2");
    let emulator = auto(&dir);
    let https = emulator.endpoint().replace("http://", "https://");
    let reply = trusting(&dir.join("ca.pem"))
        .get(format!("{https}/_explorer/emulator.pem"))
        .send()
        .unwrap();
    assert_eq!(reply.version(), reqwest::Version::HTTP_2);
    let reply =
        reqwest::blocking::get(format!("{}/_explorer/emulator.pem", emulator.endpoint())).unwrap();
    assert_eq!(reply.version(), reqwest::Version::HTTP_11);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_certificate_is_served_over_both_and_cert_out_makes_its_directory() {
    let dir = dir("auto-pem");
    let nested = dir.join("profiles/Client/AppData");
    let emulator = Emulator::start(Config {
        protocol: Protocol::Auto,
        cert_out: Some(nested.join("emulator.pem")),
        ..Config::for_tests()
    })
    .expect("the emulator starts");
    let written = std::fs::read_to_string(nested.join("emulator.pem")).unwrap();
    assert!(written.starts_with("-----BEGIN CERTIFICATE-----"));
    let https = emulator.endpoint().replace("http://", "https://");
    for (base, client) in [
        (
            emulator.endpoint().to_string(),
            reqwest::blocking::Client::new(),
        ),
        (https, trusting(&nested.join("emulator.pem"))),
    ] {
        let reply = client
            .get(format!("{base}/_explorer/emulator.pem"))
            .send()
            .unwrap();
        assert_eq!(reply.status().as_u16(), 200, "{base}");
        assert_eq!(reply.text().unwrap(), written, "{base}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn any_name_the_client_asks_for_gets_a_certificate_for_it() {
    let dir = dir("auto-sni");
    let emulator = auto(&dir);
    let address = emulator
        .endpoint()
        .trim_start_matches("http://")
        .to_string();
    let port = address.rsplit(':').next().unwrap().to_string();
    for name in ["cosmos", "cosmos-emulator.test", "localhost"] {
        let client = reqwest::blocking::Client::builder()
            .tls_certs_only([reqwest::Certificate::from_pem(
                &std::fs::read(dir.join("ca.pem")).unwrap(),
            )
            .unwrap()])
            .resolve(name, address.parse().unwrap())
            .build()
            .unwrap();
        let secure = api(format!("https://{name}:{port}"), client);
        let expected = match name {
            // Told 127.0.0.1, as Microsoft's emulator tells it (account.rs).
            "localhost" => format!("https://127.0.0.1:{port}/"),
            _ => format!("https://{name}:{port}/"),
        };
        assert_eq!(advertised(&secure), expected, "{name}");
        // Asked again: the same certificate, kept.
        assert_eq!(secure.get("/dbs", &[]).status, 200, "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The answer to `bytes` sent on a fresh connection: what came back before
/// the server closed it (within 15 s).
fn answer_to(endpoint: &str, bytes: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(endpoint.trim_start_matches("http://")).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    stream.write_all(bytes).unwrap();
    let mut answer = Vec::new();
    match stream.read_to_end(&mut answer) {
        Ok(_) => {}
        // A reset after a TLS alert is a close too; a timeout is not.
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!("{bytes:?}: no close within 15 s ({e})"),
    }
    answer
}

#[test]
fn garbage_gets_a_400_or_a_clean_close_and_the_server_lives_on() {
    let dir = dir("auto-garbage");
    let emulator = auto(&dir);
    let endpoint = emulator.endpoint().to_string();
    // Held open and silent all along: it blocks nobody.
    let silent = TcpStream::connect(endpoint.trim_start_matches("http://")).unwrap();
    for garbage in [
        &b"\x00\x01\x02\x03 not http\r\n\r\n"[..],
        b"\xff\xfe\xfd",
        b"GET / HTTP/9.9\r\n\r\n",
    ] {
        let answer = answer_to(&endpoint, garbage);
        assert!(
            answer.starts_with(b"HTTP/1.1 400"),
            "{garbage:?}: {}",
            String::from_utf8_lossy(&answer)
        );
    }
    // A TLS record that is not a ClientHello: the handshake fails, the
    // connection closes (after at most an alert).
    let answer = answer_to(&endpoint, b"\x16\x03\x01\x00\x05hello");
    assert!(answer.len() < 64, "{answer:?}");
    let plain = api(endpoint.clone(), reqwest::blocking::Client::new());
    assert_eq!(plain.get("/dbs", &[]).status, 200);
    let secure = api(
        endpoint.replace("http://", "https://"),
        trusting(&dir.join("ca.pem")),
    );
    assert_eq!(secure.get("/dbs", &[]).status, 200);
    drop(silent);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_silent_connection_does_not_hold_up_the_stop() {
    let dir = dir("auto-silent");
    let emulator = auto(&dir);
    let endpoint = emulator.endpoint().to_string();
    let _silent = TcpStream::connect(endpoint.trim_start_matches("http://")).unwrap();
    let _half_handshake = {
        let mut s = TcpStream::connect(endpoint.trim_start_matches("http://")).unwrap();
        s.write_all(b"\x16").unwrap();
        s
    };
    // Let the server accept both and start waiting on them.
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    drop(emulator);
    // The grace for requests in flight is 5 s; connections that never
    // began one must not use it up.
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "stopped in {:?}",
        started.elapsed()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
