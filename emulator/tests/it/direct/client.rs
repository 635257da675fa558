//! A small RNTBD client of the tests' own, written from the guide
//! (`docs/src/reference/rntbd.md`) rather than from the emulator's codec:
//! TLS over a real socket, trusting only the emulator's authority; frames
//! written and read byte by byte.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

pub type Tls = StreamOwned<ClientConnection, TcpStream>;

/// A TLS connection to `address` (`host:port`), as `name`, trusting the
/// authority in `pem` alone; reads time out after `read_timeout`.
pub fn connect(address: &str, name: &str, pem: &Path, read_timeout: Duration) -> Tls {
    let pem = std::fs::read(pem).expect("--cert-out was written");
    let mut roots = RootCertStore::empty();
    for block in pem::parse_many(&pem).unwrap() {
        roots
            .add(CertificateDer::from(block.contents().to_vec()))
            .unwrap();
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let server_name = ServerName::try_from(name.to_string()).unwrap();
    let connection = ClientConnection::new(Arc::new(config), server_name).unwrap();
    let tcp = TcpStream::connect(address).unwrap();
    tcp.set_read_timeout(Some(read_timeout)).unwrap();
    let mut tls = StreamOwned::new(connection, tcp);
    // The handshake, now: a failure is the test's, not a later read's.
    while tls.conn.is_handshaking() {
        tls.conn
            .complete_io(&mut tls.sock)
            .expect("the TLS handshake");
    }
    tls
}

/// A token: id, type byte, value bytes.
pub fn token(id: u16, type_byte: u8, value: &[u8]) -> Vec<u8> {
    let mut out = id.to_le_bytes().to_vec();
    out.push(type_byte);
    out.extend_from_slice(value);
    out
}

/// A SmallString token.
pub fn small_string(id: u16, text: &str) -> Vec<u8> {
    let mut value = vec![text.len() as u8];
    value.extend_from_slice(text.as_bytes());
    token(id, 0x07, &value)
}

/// A frame: L (24 + tokens), the four bytes, the activity id in .NET's
/// layout, the tokens, and the payload with its length when given.
pub fn frame(word: [u8; 4], activity: u128, tokens: &[Vec<u8>], payload: Option<&[u8]>) -> Vec<u8> {
    let tokens: Vec<u8> = tokens.concat();
    let mut out = ((24 + tokens.len()) as u32).to_le_bytes().to_vec();
    out.extend_from_slice(&word);
    out.extend_from_slice(&uuid::Uuid::from_u128(activity).to_bytes_le());
    out.extend_from_slice(&tokens);
    if let Some(payload) = payload {
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(payload);
    }
    out
}

/// The Java SDK's context request: ProtocolVersion 1, ClientVersion, UserAgent.
pub fn context_request(activity: u128) -> Vec<u8> {
    frame(
        [0; 4],
        activity,
        &[
            token(0x0000, 0x02, &1u32.to_le_bytes()),
            small_string(0x0001, "2020-07-15"),
            small_string(0x0002, "azsdk-java-cosmos/4.81.0 tests"),
        ],
        None,
    )
}

/// A Document Read (resource 3, operation 3) with its TransportRequestID.
pub fn read_request(transport_request_id: u32) -> Vec<u8> {
    frame(
        [3, 0, 3, 0],
        u128::from(transport_request_id),
        &[
            token(0x0002, 0x00, &[0]),
            token(0x004D, 0x02, &transport_request_id.to_le_bytes()),
        ],
        None,
    )
}

/// A response frame, read apart.
#[derive(Debug)]
pub struct Response {
    pub status: u32,
    pub activity: u128,
    /// Each token's id, type byte and value.
    pub tokens: Vec<(u16, u8, Vec<u8>)>,
    pub payload: Option<Vec<u8>>,
}

impl Response {
    pub fn token(&self, id: u16) -> Option<&[u8]> {
        self.tokens
            .iter()
            .find(|(i, _, _)| *i == id)
            .map(|(_, _, v)| v.as_slice())
    }

    /// A SmallString or String token's text.
    pub fn text(&self, id: u16) -> Option<String> {
        self.token(id)
            .map(|v| String::from_utf8(v.to_vec()).unwrap())
    }

    pub fn ulong(&self, id: u16) -> Option<u32> {
        self.token(id)
            .map(|v| u32::from_le_bytes(v.try_into().expect("a ULong")))
    }

    /// The JSON body.
    pub fn body(&self) -> serde_json::Value {
        serde_json::from_slice(self.payload.as_deref().expect("a payload")).unwrap()
    }
}

fn exact(stream: &mut impl Read, n: usize) -> std::io::Result<Vec<u8>> {
    let mut out = vec![0; n];
    stream.read_exact(&mut out)?;
    Ok(out)
}

/// Reads one response frame. `payload_id` is PayloadPresent's id (0x0000
/// in a data response; a context response has none: pass `None`).
pub fn read_response(stream: &mut impl Read, payload_id: Option<u16>) -> std::io::Result<Response> {
    let length = u32::from_le_bytes(exact(stream, 4)?.try_into().unwrap()) as usize;
    assert!(length >= 24, "L = {length}");
    let rest = exact(stream, length - 4)?;
    let status = u32::from_le_bytes(rest[0..4].try_into().unwrap());
    let activity = uuid::Uuid::from_bytes_le(rest[4..20].try_into().unwrap()).as_u128();
    let mut tokens = Vec::new();
    let mut at = 20;
    while at < rest.len() {
        let id = u16::from_le_bytes([rest[at], rest[at + 1]]);
        let type_byte = rest[at + 2];
        at += 3;
        let (prefix, size) = match type_byte {
            0x00 => (0, 1),
            0x01 => (0, 2),
            0x02 | 0x03 | 0x0D => (0, 4),
            0x04 | 0x05 | 0x0E => (0, 8),
            0x06 => (0, 16),
            0x07 | 0x0A => (1, rest[at] as usize),
            0x08 | 0x0B => (2, u16::from_le_bytes([rest[at], rest[at + 1]]) as usize),
            0x09 | 0x0C => (
                4,
                u32::from_le_bytes(rest[at..at + 4].try_into().unwrap()) as usize,
            ),
            0xFF => (0, 0),
            other => panic!("type byte {other:#x}"),
        };
        tokens.push((
            id,
            type_byte,
            rest[at + prefix..at + prefix + size].to_vec(),
        ));
        at += prefix + size;
    }
    let present = payload_id.and_then(|id| {
        tokens
            .iter()
            .find(|(i, t, _)| *i == id && *t == 0x00)
            .map(|(_, _, v)| v[0] == 1)
    });
    let payload = match present {
        Some(true) => {
            let n = u32::from_le_bytes(exact(stream, 4)?.try_into().unwrap()) as usize;
            Some(exact(stream, n)?)
        }
        _ => None,
    };
    Ok(Response {
        status,
        activity,
        tokens,
        payload,
    })
}

/// Whether the server closed `stream` (EOF or reset) before `read_timeout`
/// ran out, reading and dropping whatever came first.
pub fn closed(stream: &mut Tls) -> bool {
    let mut sink = [0u8; 4096];
    loop {
        match stream.read(&mut sink) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return false
            }
            // A reset, or TLS ended without close_notify: closed either way.
            Err(_) => return true,
        }
    }
}

/// Writes `bytes`, ignoring a failure (the server may have closed first).
pub fn send(stream: &mut Tls, bytes: &[u8]) {
    let _ = stream.write_all(bytes).and_then(|()| stream.flush());
}

/// A String token (u16 length).
pub fn string(id: u16, text: &str) -> Vec<u8> {
    let mut value = (text.len() as u16).to_le_bytes().to_vec();
    value.extend_from_slice(text.as_bytes());
    token(id, 0x08, &value)
}

/// A Document Read of `dbs/{db}/colls/{coll}/docs/{doc}` by name, in
/// partition `pk` (a JSON array), signed with the account key as the SDK
/// signs it (the guide's "Authorization"): what a fault rule can match.
pub fn named_read(transport_request_id: u32, names: [&str; 3], pk: &str) -> Vec<u8> {
    use cosmos_emulator::protocol::auth;
    let [db, coll, doc] = names;
    let key = auth::MasterKey::from_base64(cosmos_emulator::WELL_KNOWN_KEY).unwrap();
    let date = httpdate::fmt_http_date(std::time::SystemTime::now());
    let link = format!("dbs/{db}/colls/{coll}/docs/{doc}");
    let signature =
        auth::authorization_header(&key, &auth::payload("get", "docs", &link, &date, ""));
    frame(
        [3, 0, 3, 0],
        u128::from(transport_request_id),
        &[
            token(0x0002, 0x00, &[0]),
            string(0x0001, &signature),
            small_string(0x0003, &date),
            string(0x0015, db),
            string(0x0016, coll),
            string(0x0017, doc),
            string(0x002B, pk),
            token(0x004D, 0x02, &transport_request_id.to_le_bytes()),
        ],
        None,
    )
}
