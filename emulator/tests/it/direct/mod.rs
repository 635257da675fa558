//! Direct mode's connections (RNTBD over TLS, `rntbd/connection/`) on the
//! gateway's own port, through real sockets and real TLS: told apart from
//! HTTP after the handshake in `--protocol auto` and `https`, on every
//! region's endpoint; the context exchange; pipelined requests answered by
//! TransportRequestID; and what closes a connection (a request before the
//! context, bytes that are no frame, idling, the server stopping) without
//! harming the others. The requests here name nothing (the operations are
//! `rntbd/dispatch/tests/`'s): the dispatcher answers each with a 400.

mod client;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cosmos_emulator::protocol::auth::MasterKey;
use cosmos_emulator::{Config, Emulator, Protocol};
use proptest::prelude::*;

use crate::common::{scratch_dir, Api};
use client::{
    closed, connect, context_request, frame, named_read, read_request, read_response, send, token,
    Tls,
};

/// Response token ids the tests read.
const TRANSPORT_REQUEST_ID: u16 = 0x0035;
const CLIENT_VERSION: u16 = 0x0001;
const SERVER_AGENT: u16 = 0x0002;
const SERVER_VERSION: u16 = 0x0003;
const IDLE_TIMEOUT_SECONDS: u16 = 0x0004;

fn dir(name: &str) -> PathBuf {
    let dir = scratch_dir(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn start(protocol: Protocol, dir: &Path, tweak: impl FnOnce(&mut Config)) -> Emulator {
    let mut config = Config {
        protocol,
        cert_out: Some(dir.join("ca.pem")),
        ..Config::for_tests()
    };
    tweak(&mut config);
    Emulator::start(config).expect("the emulator starts")
}

/// `host:port` of an endpoint URL.
fn address(endpoint: &str) -> String {
    endpoint
        .trim_start_matches("http://")
        .trim_start_matches("https://")
        .trim_end_matches('/')
        .to_string()
}

fn direct(endpoint: &str, dir: &Path, read_timeout: Duration) -> Tls {
    connect(
        &address(endpoint),
        "localhost",
        &dir.join("ca.pem"),
        read_timeout,
    )
}

/// A connection past its context exchange, the answer checked.
fn negotiated(endpoint: &str, dir: &Path, read_timeout: Duration) -> Tls {
    let mut tls = direct(endpoint, dir, read_timeout);
    send(
        &mut tls,
        &context_request(0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10),
    );
    let context = read_response(&mut tls, None).expect("the context response");
    assert_eq!(context.status, 200);
    assert_eq!(context.activity, 0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10);
    tls
}

/// HTTPS on `endpoint`: the account's databases, signed.
fn https_answers(endpoint: &str, dir: &Path) -> u16 {
    https_api(endpoint, dir).get("/dbs", &[]).status
}

#[test]
fn the_context_exchange_is_answered_beside_https_in_auto_and_https() {
    for protocol in [Protocol::Auto, Protocol::Https] {
        let dir = dir("direct-context");
        let emulator = start(protocol, &dir, |_| {});
        let endpoint = emulator.endpoint().to_string();
        let mut tls = direct(&endpoint, &dir, Duration::from_secs(10));
        send(&mut tls, &context_request(7));
        let context = read_response(&mut tls, None).expect("the context response");
        assert_eq!((context.status, context.activity), (200, 7), "{protocol:?}");
        assert_eq!(
            context.text(SERVER_AGENT).as_deref(),
            Some("cosmos-emulator")
        );
        assert_eq!(
            context.text(SERVER_VERSION).as_deref(),
            Some(env!("CARGO_PKG_VERSION"))
        );
        assert_eq!(context.text(CLIENT_VERSION).as_deref(), Some("2020-07-15"));
        assert_eq!(context.ulong(IDLE_TIMEOUT_SECONDS), Some(600));
        // Each with the type the client declares for it and slices by.
        let types: Vec<(u16, u8)> = context.tokens.iter().map(|(id, t, _)| (*id, *t)).collect();
        assert_eq!(
            types,
            [
                (0, 0x02),
                (1, 0x07),
                (2, 0x07),
                (3, 0x07),
                (4, 0x02),
                (5, 0x02)
            ]
        );
        // A request on it is answered, its TransportRequestID echoed.
        send(&mut tls, &read_request(41));
        let answer = read_response(&mut tls, Some(0x0000)).expect("an answer");
        assert_eq!(answer.ulong(TRANSPORT_REQUEST_ID), Some(41));
        // It names no document: the dispatcher refuses it as the service
        // would refuse a request it cannot address, a Cosmos error.
        assert_eq!((answer.status, answer.activity), (400, 41));
        assert_eq!(answer.body()["code"], "BadRequest");
        // HTTP on the same port, meanwhile, as before.
        assert_eq!(https_answers(&endpoint, &dir), 200, "{protocol:?}");
        if protocol == Protocol::Auto {
            let plain = reqwest::blocking::get(format!("{endpoint}/_explorer/emulator.pem"));
            assert_eq!(plain.unwrap().status().as_u16(), 200);
        }
        drop(tls);
        drop(emulator);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// The guide's golden Create Document (written by the Java SDK's own
/// encoder; `docs/src/reference/rntbd.md#golden-frames`), its
/// authorization token filled to its length.
fn golden_create() -> Vec<u8> {
    let string = |id: u16, text: &str| {
        let mut value = (text.len() as u16).to_le_bytes().to_vec();
        value.extend_from_slice(text.as_bytes());
        token(id, 0x08, &value)
    };
    let authorization = format!("type%3Dmaster{}", "x".repeat(38 - 13));
    let bytes = frame(
        [3, 0, 1, 0],
        0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10,
        &[
            token(
                0x0000,
                0x0b,
                &[8, 0, 0xd9, 0x8d, 0x28, 0, 0xe4, 0x3e, 0x9f, 0],
            ),
            string(0x0001, &authorization),
            token(0x0002, 0x00, &[1]),
            client::small_string(0x0003, "Tue, 01 Jul 2025 00:00:00 GMT"),
            string(0x0005, "0:-1#5"),
            token(0x0010, 0x00, &[2]),
            string(0x0013, "/apps/emu/services/c1/partitions/0/replicas/1p"),
            string(0x0015, "db1"),
            string(0x0016, "c1"),
            client::small_string(0x0028, "2020-07-15"),
            string(0x002B, r#"["pk1"]"#),
            token(0x004D, 0x02, &1u32.to_le_bytes()),
        ],
        Some(br#"{"id":"a","pk":"pk1"}"#),
    );
    assert_eq!(&bytes[..4], &231u32.to_le_bytes(), "L as the SDK wrote it");
    bytes
}

#[test]
fn the_sdks_own_create_frame_in_pieces_is_read_whole_and_answered() {
    let dir = dir("direct-golden");
    let emulator = start(Protocol::Https, &dir, |_| {});
    let mut tls = negotiated(emulator.endpoint(), &dir, Duration::from_secs(10));
    // Twice, each in 7-byte records: the frame is put together across reads.
    let twice = [golden_create(), golden_create()].concat();
    for piece in twice.chunks(7) {
        send(&mut tls, piece);
    }
    for _ in 0..2 {
        let answer = read_response(&mut tls, Some(0x0000)).expect("an answer");
        assert_eq!(answer.ulong(TRANSPORT_REQUEST_ID), Some(1));
        assert_eq!(answer.activity, 0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10);
    }
    drop(emulator);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_regions_endpoint_serves_direct_mode_and_https() {
    let dir = dir("direct-regions");
    let emulator = start(Protocol::Https, &dir, |config| {
        config.regions = vec!["West US".into(), "East US".into()];
    });
    let regions = emulator.region_endpoints().to_vec();
    assert_eq!(regions.len(), 2);
    for (name, endpoint) in &regions {
        let mut tls = negotiated(endpoint, &dir, Duration::from_secs(10));
        send(&mut tls, &read_request(5));
        let answer = read_response(&mut tls, Some(0x0000)).expect("an answer");
        assert_eq!(answer.ulong(TRANSPORT_REQUEST_ID), Some(5), "{name}");
        assert_eq!(https_answers(endpoint, &dir), 200, "{name}");
    }
    drop(emulator);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_request_before_the_context_closes_the_connection() {
    let dir = dir("direct-no-context");
    let emulator = start(Protocol::Https, &dir, |_| {});
    let endpoint = emulator.endpoint().to_string();
    // Told from HTTP by a context request's zero bytes, or not: either way
    // nothing is answered as RNTBD and the connection closes.
    let mut zeroed = read_request(9);
    zeroed[4..8].copy_from_slice(&[0; 4]);
    let mut second_context = context_request(1);
    second_context.extend(context_request(2));
    for opening in [read_request(9), zeroed, second_context] {
        let mut tls = direct(&endpoint, &dir, Duration::from_secs(15));
        send(&mut tls, &opening);
        let started = Instant::now();
        assert!(closed(&mut tls), "closed within 15 s");
        assert!(started.elapsed() < Duration::from_secs(10));
    }
    // A context request without its ClientVersion is no context request.
    let mut tls = direct(&endpoint, &dir, Duration::from_secs(15));
    send(
        &mut tls,
        &frame([0; 4], 3, &[token(0x0000, 0x02, &1u32.to_le_bytes())], None),
    );
    assert!(closed(&mut tls));
    assert_eq!(https_answers(&endpoint, &dir), 200);
    drop(emulator);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_malformed_frame_closes_its_connection_and_the_others_go_on() {
    let dir = dir("direct-malformed");
    let emulator = start(Protocol::Auto, &dir, |_| {});
    let endpoint = emulator.endpoint().to_string();
    let mut bystander = negotiated(&endpoint, &dir, Duration::from_secs(15));
    let malformed: [Vec<u8>; 4] = [
        // L below the 24-byte header.
        10u32.to_le_bytes().repeat(2),
        // L past the 1 MiB limit.
        [0x7fff_ffffu32.to_le_bytes(), [3, 0, 3, 0]].concat(),
        // A token with a type byte no type has.
        frame([3, 0, 3, 0], 1, &[token(0x004D, 0x42, &[0; 4])], None),
        // A payload past the 4 MiB limit.
        frame([3, 0, 1, 0], 1, &[token(0x0002, 0x00, &[1])], None)
            .into_iter()
            .chain(u32::MAX.to_le_bytes())
            .collect(),
    ];
    for bytes in malformed {
        let mut tls = negotiated(&endpoint, &dir, Duration::from_secs(15));
        send(&mut tls, &bytes);
        assert!(closed(&mut tls), "{bytes:?}: closed within 15 s");
    }
    // The connection that did nothing wrong is still served, as is HTTP.
    send(&mut bystander, &read_request(77));
    let answer = read_response(&mut bystander, Some(0x0000)).expect("an answer");
    assert_eq!(answer.ulong(TRANSPORT_REQUEST_ID), Some(77));
    assert_eq!(https_answers(&endpoint, &dir), 200);
    drop(emulator);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_truncated_frame_then_silence_is_closed_by_the_idle_timeout() {
    let dir = dir("direct-idle");
    let emulator = start(Protocol::Https, &dir, |config| {
        config.direct_idle_timeout = Duration::from_secs(1);
    });
    let endpoint = emulator.endpoint().to_string();
    let mut tls = negotiated(&endpoint, &dir, Duration::from_secs(15));
    let request = read_request(3);
    send(&mut tls, &request[..request.len() / 2]);
    let started = Instant::now();
    assert!(closed(&mut tls), "closed within 15 s");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(800) && took < Duration::from_secs(5),
        "closed after {took:?}, the idle timeout being 1 s"
    );
    drop(emulator);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn two_hundred_pipelined_requests_are_each_answered_once() {
    let dir = dir("direct-pipelined");
    let emulator = start(Protocol::Https, &dir, |_| {});
    let endpoint = emulator.endpoint().to_string();
    let mut tls = negotiated(&endpoint, &dir, Duration::from_secs(30));
    // All written before any answer is read: past the 32 in flight, the
    // server stops reading until answers are written.
    let all: Vec<u8> = (1..=200).flat_map(read_request).collect();
    send(&mut tls, &all);
    let mut answered = BTreeSet::new();
    for _ in 0..200 {
        let answer = read_response(&mut tls, Some(0x0000)).expect("an answer");
        let id = answer.ulong(TRANSPORT_REQUEST_ID).expect("its id");
        assert_eq!(u128::from(id), answer.activity, "the activity id echoed");
        assert!(answered.insert(id), "{id} answered twice");
    }
    assert_eq!(answered, (1..=200).collect::<BTreeSet<u32>>());
    drop(emulator);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_open_direct_connection_does_not_hold_up_the_stop() {
    let dir = dir("direct-stop");
    let emulator = start(Protocol::Auto, &dir, |_| {});
    let endpoint = emulator.endpoint().to_string();
    let mut tls = negotiated(&endpoint, &dir, Duration::from_secs(15));
    let started = Instant::now();
    drop(emulator);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "stopped in {:?}",
        started.elapsed()
    );
    assert!(closed(&mut tls), "the stop closes the connection");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `Api` over HTTPS on `endpoint`, trusting the emulator's authority.
fn https_api(endpoint: &str, dir: &Path) -> Api {
    let pem = std::fs::read(dir.join("ca.pem")).unwrap();
    let http = reqwest::blocking::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&pem).unwrap()])
        .build()
        .unwrap();
    Api::new(
        format!("https://{}", address(endpoint)),
        MasterKey::from_base64(cosmos_emulator::WELL_KNOWN_KEY).unwrap(),
        http,
    )
}

#[test]
fn a_fault_rule_breaks_the_direct_connection_its_request_came_on() {
    let dir = dir("direct-fault-connection");
    let emulator = start(Protocol::Https, &dir, |_| {});
    let endpoint = emulator.endpoint().to_string();
    let api = https_api(&endpoint, &dir);
    assert_eq!(
        api.post("/dbs", &serde_json::json!({"id": "d"}), &[])
            .status,
        201
    );
    let container = serde_json::json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}});
    assert_eq!(api.post("/dbs/d/colls", &container, &[]).status, 201);
    let item = serde_json::json!({"id": "x", "pk": "a"});
    let created = api.post(
        "/dbs/d/colls/c/docs",
        &item,
        &[("x-ms-documentdb-partitionkey", r#"["a"]"#)],
    );
    assert_eq!(created.status, 201, "{}", created.body);
    let read = |tls: &mut Tls, id: u32| {
        send(tls, &named_read(id, ["d", "c", "x"], r#"["a"]"#));
        read_response(tls, Some(0x0000))
    };
    let mut bystander = negotiated(&endpoint, &dir, Duration::from_secs(15));
    assert_eq!(read(&mut bystander, 1).expect("an answer").status, 200);
    for how in ["reset", "close"] {
        let rule = serde_json::json!({"match": {"operation": "read"}, "respond": {"connection": how}, "hits": 1});
        assert_eq!(api.post("/_emulator/faults", &rule, &[]).status, 201);
        let mut victim = negotiated(&endpoint, &dir, Duration::from_secs(15));
        // No answer: the connection ends under the request (a reset, or an
        // end of stream), as an HTTP client's does.
        let started = Instant::now();
        assert!(read(&mut victim, 2).is_err(), "{how}: no answer");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{how}: at once, not at a timeout"
        );
        // Only that one: the other connection and a new one are served.
        assert_eq!(
            read(&mut bystander, 3).expect("an answer").status,
            200,
            "{how}"
        );
        let mut next = negotiated(&endpoint, &dir, Duration::from_secs(15));
        assert_eq!(read(&mut next, 4).expect("an answer").status, 200, "{how}");
    }
    drop(emulator);
    std::fs::remove_dir_all(&dir).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any bytes after the handshake (after a context request or not, told
    /// as RNTBD or not) never bring the server down: HTTP and Direct mode
    /// are answered afterwards.
    #[test]
    fn any_bytes_after_the_handshake_leave_the_server_serving(
        negotiate in any::<bool>(),
        force_binary in any::<bool>(),
        mut bytes in proptest::collection::vec(any::<u8>(), 0..512),
    ) {
        let dir = dir("direct-any-bytes");
        let emulator = start(Protocol::Auto, &dir, |config| {
            config.direct_idle_timeout = Duration::from_secs(1);
        });
        let endpoint = emulator.endpoint().to_string();
        if force_binary && bytes.len() >= 8 {
            bytes[4..8].copy_from_slice(&[0; 4]);
        }
        let mut tls = match negotiate {
            true => negotiated(&endpoint, &dir, Duration::from_millis(300)),
            false => direct(&endpoint, &dir, Duration::from_millis(300)),
        };
        send(&mut tls, &bytes);
        let _ = closed(&mut tls);
        drop(tls);
        prop_assert_eq!(https_answers(&endpoint, &dir), 200);
        let mut again = negotiated(&endpoint, &dir, Duration::from_secs(10));
        send(&mut again, &read_request(1));
        let answer = read_response(&mut again, Some(0x0000)).expect("an answer");
        prop_assert_eq!(answer.ulong(TRANSPORT_REQUEST_ID), Some(1));
        drop(emulator);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
