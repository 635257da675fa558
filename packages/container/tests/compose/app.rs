//! The application of the compose example (docs/snippets/compose/), as
//! small as an application can be: a static binary with the standard
//! library alone, in a scratch image (nothing can be pulled where CI runs,
//! and a Python or Node base image would have to be). It speaks to the
//! emulator as any SDK does: signed requests over plain HTTP to
//! COSMOS_ENDPOINT (http://cosmos:8081, the compose service's name).
//!
//! It waits for the endpoint (as an application started beside its
//! database must), then checks that the account document advertises the
//! address it used (`cosmos:8081`: the emulator echoes the Host header, so
//! SDKs that follow the document stay on the service name), creates a
//! database and reads it back. Exit 0 and `ok` on its last line when all
//! of that held, 1 otherwise.
//!
//! Built by `cargo xtask image --test` with
//! `rustc --target x86_64-unknown-linux-musl -C opt-level=s` (no cargo, no
//! crates: HMAC-SHA256 and base64 are written out below).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn main() {
    match run() {
        Ok(()) => println!("ok"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

fn run() -> Result<(), String> {
    let endpoint = std::env::var("COSMOS_ENDPOINT").map_err(|_| "set COSMOS_ENDPOINT")?;
    let key = std::env::var("COSMOS_KEY").map_err(|_| "set COSMOS_KEY")?;
    let authority = endpoint
        .strip_prefix("http://")
        .ok_or("COSMOS_ENDPOINT must be http://host:port")?
        .trim_end_matches('/')
        .to_string();
    let client = Client {
        authority,
        key: base64_decode(&key).ok_or("COSMOS_KEY is not base64")?,
    };

    // The emulator may still be starting: retry for a minute.
    let started = Instant::now();
    let account = loop {
        match client.send("GET", "", "", "", None) {
            Ok((200, body)) => break body,
            Ok((status, body)) => return Err(format!("GET / answered {status}: {body}")),
            Err(e) if started.elapsed() < Duration::from_secs(60) => {
                eprintln!("waiting for {endpoint}: {e}");
                std::thread::sleep(Duration::from_millis(500));
            }
            Err(e) => return Err(format!("{endpoint} did not answer within 60 s: {e}")),
        }
    };
    let advertised = format!("\"databaseAccountEndpoint\":\"{endpoint}/\"");
    if !account.replace(' ', "").contains(&advertised) {
        return Err(format!("the account document does not advertise {endpoint}/: {account}"));
    }
    println!("the account document advertises {endpoint}/");

    let (status, body) = client.send("POST", "dbs", "dbs", "", Some(r#"{"id":"compose-app"}"#))?;
    if status != 201 {
        return Err(format!("creating database compose-app answered {status}: {body}"));
    }
    let link = "dbs/compose-app";
    let (status, body) = client.send("GET", link, "dbs", link, None)?;
    if status != 200 || !body.contains("\"id\":\"compose-app\"") {
        return Err(format!("reading {link} answered {status}: {body}"));
    }
    println!("created and read back database compose-app through {endpoint}");
    Ok(())
}

struct Client {
    /// `host:port`
    authority: String,
    key: Vec<u8>,
}

impl Client {
    /// One signed request (HTTP/1.1, the connection closed after it): the
    /// status and the body.
    fn send(
        &self,
        verb: &str,
        path: &str,
        resource_type: &str,
        link: &str,
        body: Option<&str>,
    ) -> Result<(u16, String), String> {
        let date = http_date(SystemTime::now());
        let payload = format!(
            "{}\n{}\n{}\n{}\n\n",
            verb.to_lowercase(),
            resource_type,
            link,
            date.to_lowercase()
        );
        let signature = base64_encode(&hmac_sha256(&self.key, payload.as_bytes()));
        let token = percent_encode(&format!("type=master&ver=1.0&sig={signature}"));
        let body = body.unwrap_or("");
        let request = format!(
            "{verb} /{path} HTTP/1.1\r\nHost: {}\r\nx-ms-date: {date}\r\nx-ms-version: 2018-12-31\r\n\
             authorization: {token}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n{body}",
            self.authority,
            body.len()
        );
        let mut stream = TcpStream::connect(&self.authority).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(|e| e.to_string())?;
        stream
            .write_all(request.as_bytes())
            .map_err(|e| e.to_string())?;
        let mut response = Vec::new();
        stream
            .read_to_end(&mut response)
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&response);
        let status = text
            .get(9..12)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("not an HTTP response: {text}"))?;
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
        Ok((status, body.to_string()))
    }
}

/// `Tue, 01 Jun 2027 10:00:00 GMT`
fn http_date(time: SystemTime) -> String {
    let seconds = time.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let days = (seconds / 86_400) as i64;
    let rest = seconds % 86_400;
    // Hinnant's civil_from_days.
    let z = days + 719_468;
    let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Everything but unreserved characters as %XX.
fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_encode(data: &[u8]) -> String {
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let n = chunk.iter().fold(0u32, |n, &b| n << 8 | u32::from(b)) << (8 * (3 - chunk.len()));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(BASE64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut n, mut bits) = (0u32, 0);
    for c in text.trim().bytes().filter(|&c| c != b'=') {
        n = n << 6 | BASE64.iter().position(|&b| b == c)? as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((n >> bits) as u8);
        }
    }
    Some(out)
}

fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&sha256(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let inner: Vec<u8> = block.iter().map(|b| b ^ 0x36).chain(message.iter().copied()).collect();
    let mut outer: Vec<u8> = block.iter().map(|b| b ^ 0x5c).collect();
    outer.extend_from_slice(&sha256(&inner));
    sha256(&outer)
}

/// FIPS 180-4 SHA-256.
fn sha256(message: &[u8]) -> [u8; 32] {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut data = message.to_vec();
    data.push(0x80);
    while data.len() % 64 != 56 {
        data.push(0);
    }
    data.extend_from_slice(&((message.len() as u64) * 8).to_be_bytes());
    for block in data.chunks(64) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let mut v = h;
        for i in 0..64 {
            let s1 = v[4].rotate_right(6) ^ v[4].rotate_right(11) ^ v[4].rotate_right(25);
            let ch = (v[4] & v[5]) ^ (!v[4] & v[6]);
            let t1 = v[7]
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = v[0].rotate_right(2) ^ v[0].rotate_right(13) ^ v[0].rotate_right(22);
            let maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
            let t2 = s0.wrapping_add(maj);
            v = [
                t1.wrapping_add(t2),
                v[0],
                v[1],
                v[2],
                v[3].wrapping_add(t1),
                v[4],
                v[5],
                v[6],
            ];
        }
        for (x, y) in h.iter_mut().zip(v) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 32];
    for (chunk, word) in out.chunks_mut(4).zip(h) {
        chunk.copy_from_slice(&word.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_answers() {
        // RFC 4231, test case 2.
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            base64_encode(&mac),
            "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM="
        );
        assert_eq!(base64_decode("TWFu").unwrap(), b"Man");
        assert_eq!(base64_encode(b"Ma"), "TWE=");
        assert_eq!(
            http_date(UNIX_EPOCH + Duration::from_secs(1_800_000_000)),
            "Fri, 15 Jan 2027 08:00:00 GMT"
        );
    }
}
