//! Master-key authentication (`docs/src/reference/protocol.md`, "Authentication").
//!
//! The client signs `verb \n resourceType \n resourceLink \n x-ms-date \n date \n`
//! with HMAC-SHA256 under the base64-decoded account key. The server rebuilds
//! the same payload from the request and compares.

use base64::engine::general_purpose::{STANDARD as BASE64, URL_SAFE_NO_PAD};
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use percent_encoding::percent_decode_str;
use sha2::Sha256;

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use crate::protocol::error::{ApiError, Status};
use crate::protocol::limits::MAX_CLOCK_SKEW_SECONDS;
use crate::protocol::rid;

/// The key of Microsoft's emulator, which SDK samples and tests use.
pub const WELL_KNOWN_KEY: &str =
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

type HmacSha256 = Hmac<Sha256>;

/// The account key, as an HMAC whose key schedule is computed once: each
/// request clones it instead of hashing the key again.
#[derive(Clone)]
pub struct MasterKey {
    mac: HmacSha256,
    /// The key's text, base64url without padding: the signature part of
    /// the Entra tokens Microsoft's emulators accept (`entra_token.rs`).
    emulator_token_signature: std::sync::Arc<str>,
}

impl MasterKey {
    pub fn from_base64(key: &str) -> Result<Self, String> {
        let bytes = BASE64
            .decode(key.trim())
            .map_err(|e| format!("the key is not valid base64: {e}"))?;
        if bytes.is_empty() {
            return Err("the key is empty".into());
        }
        let mac = HmacSha256::new_from_slice(&bytes).expect("HMAC accepts any key length");
        let emulator_token_signature = URL_SAFE_NO_PAD.encode(key.trim()).into();
        Ok(MasterKey {
            mac,
            emulator_token_signature,
        })
    }

    /// Whether `signature` is the signature part of an Entra token of
    /// Microsoft's emulators for this key (padding tolerated).
    pub(crate) fn signs_emulator_token(&self, signature: &str) -> bool {
        use subtle::ConstantTimeEq;
        let signature = signature.trim().trim_end_matches('=');
        bool::from(
            signature
                .as_bytes()
                .ct_eq(self.emulator_token_signature.as_bytes()),
        )
    }

    /// The signature of one payload, base64-encoded.
    pub fn sign(&self, payload: &str) -> String {
        let mut mac = self.mac.clone();
        mac.update(payload.as_bytes());
        BASE64.encode(mac.finalize().into_bytes())
    }

    /// Whether `signature` signs `payload`, compared in constant time.
    pub(crate) fn verifies(&self, payload: &[u8], signature: &[u8]) -> bool {
        let mut mac = self.mac.clone();
        mac.update(payload);
        mac.verify_slice(signature).is_ok()
    }
}

/// The string a client signs.
pub fn payload(
    verb: &str,
    resource_type: &str,
    resource_link: &str,
    x_ms_date: &str,
    date: &str,
) -> String {
    let parts = [
        lower(verb),
        lower(resource_type),
        Cow::Borrowed(resource_link),
        lower(x_ms_date),
        lower(date),
    ];
    let mut payload = String::with_capacity(parts.iter().map(|p| p.len() + 1).sum());
    for part in &parts {
        payload.push_str(part);
        payload.push('\n');
    }
    payload
}

/// `s` in lower case, as the SDKs lower it; borrowed when it already is.
/// Verbs, resource types and dates are ASCII: no Unicode tables per request.
fn lower(s: &str) -> Cow<'_, str> {
    if !s.is_ascii() {
        Cow::Owned(s.to_lowercase())
    } else if s.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(s.to_ascii_lowercase())
    } else {
        Cow::Borrowed(s)
    }
}

/// `s` percent-decoded; borrowed when it holds no escape, as nearly every
/// path segment, so that the common request decodes nothing.
fn decoded(s: &str) -> Cow<'_, str> {
    if !s.contains('%') {
        return Cow::Borrowed(s);
    }
    // Into room for all of it at once: the decoder's own collection grows
    // a byte at a time (a tenth of a point read's authentication).
    let mut bytes = Vec::with_capacity(s.len());
    bytes.extend(percent_decode_str(s));
    match String::from_utf8(bytes) {
        Ok(text) => Cow::Owned(text),
        Err(e) => Cow::Owned(String::from_utf8_lossy(e.as_bytes()).into_owned()),
    }
}

/// The `authorization` header value for a master-key signature.
pub fn authorization_header(key: &MasterKey, payload: &str) -> String {
    let token = format!("type=master&ver=1.0&sig={}", key.sign(payload));
    percent_encoding::utf8_percent_encode(&token, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// What a request path addresses, for signing: the resource type and link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedResource {
    pub resource_type: String,
    /// The links a client may have signed: the name-based link verbatim, or
    /// for RID-based paths the resource's RID in lower case.
    pub links: Vec<String>,
}

/// Derives the resource type and link from a request path, as the SDKs do:
/// `/dbs/a/colls/b/docs` → (`docs`, `dbs/a/colls/b`); `/dbs/a/colls/b/docs/c`
/// → (`docs`, `dbs/a/colls/b/docs/c`), the segments read as the service's
/// gateway reads them ([`gateway_segments`]).
/// The emulator's own control routes are signed like the account read.
pub fn signed_resource(path: &str) -> SignedResource {
    resource_of(path, &gateway_segments(path)).into_owned()
}

/// [`SignedResource`] as verification reads it: borrowed from the request's
/// path where it can be (the type and link of nearly every request are
/// slices of it), so that checking a signature copies nothing.
struct Resource<'a> {
    resource_type: Cow<'a, str>,
    link: Cow<'a, str>,
    /// For RID-based paths, the addressed resource's RID alone, lower-cased.
    rid_link: Option<String>,
}

impl Resource<'_> {
    /// The links a client may have signed, the name-based one first.
    fn links(&self) -> impl Iterator<Item = &str> {
        std::iter::once(&*self.link).chain(self.rid_link.as_deref())
    }

    fn into_owned(self) -> SignedResource {
        let mut links = vec![self.link.into_owned()];
        links.extend(self.rid_link);
        SignedResource {
            resource_type: self.resource_type.into_owned(),
            links,
        }
    }
}

/// The path's segments, each decoded once: as clients sign them, and as the
/// compute gateway reads them.
fn as_signed_segments(path: &str) -> Vec<Cow<'_, str>> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(decoded)
        .collect()
}

/// The resource type and link of `path` read as `segments`.
fn resource_of<'a>(path: &'a str, segments: &[Cow<'a, str>]) -> Resource<'a> {
    if segments.is_empty() || segments[0] == "_emulator" {
        return Resource {
            resource_type: Cow::Borrowed(""),
            link: Cow::Borrowed(""),
            rid_link: None,
        };
    }
    // Delete by partition key (`.../colls/{c}/operations/partitionkeydelete`):
    // both SDKs sign it as the container (Python maps its `partitionkey`
    // resource type to `colls`, "for the feature to work"; JavaScript signs
    // `ResourceType.container`) with the container's link.
    if segments.len() == 6 && segments[4] == "operations" && segments[5] == "partitionkeydelete" {
        return linked(Cow::Borrowed("colls"), path, &segments[..4]);
    }
    // One offer (`/offers/{rid}`): both SDKs sign its RID alone, lower-cased.
    if segments.len() == 2 && segments[0] == "offers" {
        return Resource {
            resource_type: Cow::Borrowed("offers"),
            link: Cow::Owned(segments[1].to_lowercase()),
            rid_link: None,
        };
    }
    let (resource_type, link_segments) = if segments.len() % 2 == 1 {
        (
            &segments[segments.len() - 1],
            &segments[..segments.len() - 1],
        )
    } else {
        (&segments[segments.len() - 2], segments)
    };
    linked(resource_type.clone(), path, link_segments)
}

/// A resource of `resource_type` at the link `link_segments` name.
fn linked<'a>(
    resource_type: Cow<'a, str>,
    path: &'a str,
    link_segments: &[Cow<'a, str>],
) -> Resource<'a> {
    // RID-based paths are signed with the addressed resource's RID alone, lower-cased.
    let rid_link = (link_segments.len() >= 2 && rid::looks_like_database_rid(&link_segments[1]))
        .then(|| link_segments[link_segments.len() - 1].to_lowercase());
    let link = match slice_of(path, link_segments) {
        Some(slice) => Cow::Borrowed(slice),
        None => Cow::Owned(link_segments.join("/")),
    };
    Resource {
        resource_type,
        link,
        rid_link,
    }
}

/// `segments` joined by `/`, as the slice of `path` that already holds them
/// so: when each is borrowed from `path` and one byte (a `/`) separates it
/// from the next, as in every path without escapes, doubled slashes or
/// trailing whitespace.
fn slice_of<'a>(path: &'a str, segments: &[Cow<'a, str>]) -> Option<&'a str> {
    let mut range: Option<(usize, usize)> = None;
    for segment in segments {
        let Cow::Borrowed(segment) = segment else {
            return None;
        };
        let start = (segment.as_ptr() as usize).wrapping_sub(path.as_ptr() as usize);
        let end = start.checked_add(segment.len())?;
        // That very slice of `path`, not equal text from elsewhere.
        if !path
            .get(start..end)
            .is_some_and(|s| std::ptr::eq(s, *segment))
        {
            return None;
        }
        range = match range {
            None => Some((start, end)),
            Some((first, last)) if start == last + 1 => Some((first, end)),
            Some(_) => return None,
        };
    }
    match range {
        Some((start, end)) => path.get(start..end),
        None => Some(""),
    }
}

/// The path's segments as the service's routing gateway reads them when it
/// rebuilds what the client signed. Clients sign an id as it is and send it
/// percent-encoded once; the gateway decodes the whole path (so an escaped
/// `/` or `\` separates segments, and an escaped `#` ends the path), decodes
/// each segment a second time and drops trailing whitespace. An id ending
/// in whitespace, holding an escape sequence of its own (`a%20`), or a `/`,
/// `\` or `#` therefore never matches its signature: the service answers
/// 401 to reads, replaces and deletes of such items, though it creates them
/// (Microsoft's Go and JavaScript SDKs' id-encoding tests, against its
/// emulator, which is the service's gateway).
fn gateway_segments(path: &str) -> Vec<Cow<'_, str>> {
    fn trimmed(segment: Cow<'_, str>) -> Cow<'_, str> {
        match segment {
            Cow::Borrowed(s) => Cow::Borrowed(s.trim_end()),
            Cow::Owned(s) if s.trim_end().len() == s.len() => Cow::Owned(s),
            Cow::Owned(s) => Cow::Owned(s.trim_end().to_string()),
        }
    }
    if !path.contains(['%', '\\']) {
        // Nearly every request: nothing to decode, nothing copied, and room
        // for the segments of any resource's path at once.
        let mut segments = Vec::with_capacity(8);
        segments.extend(
            path.split('/')
                .filter(|s| !s.is_empty())
                .map(|s| trimmed(Cow::Borrowed(s))),
        );
        return segments;
    }
    let once = decoded(path);
    let once = once
        .split('#')
        .next()
        .unwrap_or_default()
        .replace('\\', "/");
    once.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| Cow::Owned(trimmed(decoded(s)).into_owned()))
        .collect()
}

/// Refuses, as the service's gateway does with 400, a path that holds a
/// control character once decoded: an item whose id holds a tab, a line
/// feed or a carriage return is created (its id travels in the body) but
/// cannot be addressed by its URL (the Go SDK's `TestItemIdEncodingRoutingGW`).
pub fn check_path(path: &str) -> Result<(), ApiError> {
    if !path.contains('%') || !decoded(path).contains(char::is_control) {
        return Ok(());
    }
    Err(ApiError::bad_request(
        "The request URL holds a control character (a tab, a line feed, a carriage return...) \
         once decoded, which the service's gateway refuses: an item whose id holds one can be \
         created, but not read, replaced or deleted by its URL. Query it, or delete it through a \
         stored procedure or by partition key, instead.",
    ))
}

/// The parts of a request that authentication reads.
pub struct SignedRequest<'a> {
    pub verb: &'a str,
    pub path: &'a str,
    pub authorization: Option<&'a str>,
    pub x_ms_date: Option<&'a str>,
    pub date: Option<&'a str>,
}

/// Checks a request's master-key signature, then that it was signed within
/// [`MAX_CLOCK_SKEW_SECONDS`] of `now`, the server's wall clock (never the
/// test clock: clients sign with their own wall time). A wrong signature
/// says what the server signed, so that a client author can find a signing
/// bug; a stale or future date says both times, as the service does.
pub fn verify(
    key: &MasterKey,
    request: &SignedRequest<'_>,
    now: SystemTime,
) -> Result<(), ApiError> {
    verify_at(Gateway::Routing, key, request, now)
}

/// Which of the service's gateways an endpoint is: how it reads a URL
/// before checking what the client signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Gateway {
    /// The routing gateway, the endpoint of every account and of
    /// Microsoft's emulators: it reads ids otherwise than clients sign them
    /// ([`gateway_segments`]) and refuses control characters.
    #[default]
    Routing,
    /// The SQL compute gateway (Microsoft's emulator serves it on port 8903
    /// with `/EnableSqlComputeEndpoint`): each segment decoded once, as
    /// signed, so every id the service creates can be addressed (the
    /// JavaScript SDK's `CGW_` tests, the Go SDK's
    /// `TestItemIdEncodingComputeGW`).
    Compute,
}

/// [`verify`], at the given gateway.
pub fn verify_at(
    gateway: Gateway,
    key: &MasterKey,
    request: &SignedRequest<'_>,
    now: SystemTime,
) -> Result<(), ApiError> {
    verify_signature(gateway, key, request)?;
    let signed = match request.x_ms_date.filter(|d| !d.is_empty()) {
        Some(x_ms_date) => x_ms_date,
        None => request.date.unwrap_or(""),
    };
    check_date(signed, now)
}

/// The service's answers: 401 for a date it cannot read, 403 for a token
/// used outside its 15-minute window.
fn check_date(signed: &str, now: SystemTime) -> Result<(), ApiError> {
    let at = httpdate::parse_http_date(signed.trim()).map_err(|_| {
        ApiError::unauthorized(format!(
            "The input date header is invalid format. Please pass in RFC 1123 style date format \
             (e.g. 'Tue, 01 Nov 2022 10:00:00 GMT'); got x-ms-date '{signed}'."
        ))
    })?;
    let skew = Duration::from_secs(MAX_CLOCK_SKEW_SECONDS.unsigned_abs());
    let too_old = now.duration_since(at).is_ok_and(|d| d > skew);
    let too_new = at.duration_since(now).is_ok_and(|d| d > skew);
    if too_old || too_new {
        return Err(ApiError::new(
            Status::FORBIDDEN,
            format!(
                "The authorization token is not valid at the current time. Please create another token \
                 and retry (token start time: {}, token expiry time: {}, current server time: {}). \
                 Requests must be signed within {} minutes of the server's wall clock; check the \
                 client machine's clock.",
                httpdate::fmt_http_date(at),
                httpdate::fmt_http_date(at + skew),
                httpdate::fmt_http_date(now),
                MAX_CLOCK_SKEW_SECONDS / 60
            ),
        ));
    }
    Ok(())
}

fn verify_signature(
    gateway: Gateway,
    key: &MasterKey,
    request: &SignedRequest<'_>,
) -> Result<(), ApiError> {
    let Some(header) = request.authorization else {
        return Err(ApiError::unauthorized(
            "Required Header authorization is missing. Ensure a valid Authorization token is passed.",
        ));
    };
    let x_ms_date = request.x_ms_date.unwrap_or("");
    let date = request.date.unwrap_or("");
    if x_ms_date.is_empty() && date.is_empty() {
        return Err(ApiError::unauthorized(
            "The request must carry an x-ms-date header (RFC 1123, GMT); it is part of the signed payload.",
        ));
    }
    let mut room = [0; TOKEN_ROOM];
    let token = decoded_in(header, &mut room);
    let mut kind = None;
    let mut signature = None;
    // `token.split('&')`, each part `split_once('=')`, byte by byte.
    let mut rest = Some(&*token);
    while let Some(text) = rest {
        let part;
        (part, rest) = match split_once(text, b'&') {
            Some((part, after)) => (part, Some(after)),
            None => (text, None),
        };
        match split_once(part, b'=') {
            Some(("type", v)) => kind = Some(v),
            Some(("sig", v)) => signature = Some(v),
            _ => {}
        }
    }
    if kind != Some("master") {
        return Err(ApiError::unauthorized(format!(
            "The authorization token type '{}' is not supported: this emulator accepts master-key \
             tokens 'type=master&ver=1.0&sig=...', the resource tokens of permissions \
             'type=resource&ver=1.0&sig=...' and the Entra ID tokens of Microsoft's emulators \
             'type=aad&ver=1.0&sig=<jwt>'.",
            kind.unwrap_or("")
        )));
    }
    // An HMAC-SHA256 is 32 bytes: decoded on the stack (a longer one is
    // decoded all the same, and then fails to match).
    let mut signature_room = [0; 64];
    let signature: Option<Cow<'_, [u8]>> =
        signature
            .map(str::trim)
            .and_then(|s| match BASE64.decode_slice(s, &mut signature_room) {
                Ok(length) => Some(Cow::Borrowed(&signature_room[..length])),
                Err(_) => BASE64.decode(s).ok().map(Cow::Owned),
            });
    let Some(signature) = signature else {
        return Err(ApiError::unauthorized(
            "The authorization token has no valid base64 'sig' part: expected 'type=master&ver=1.0&sig=<base64 HMAC-SHA256>'.",
        ));
    };
    let segments = match gateway {
        Gateway::Routing => gateway_segments(request.path),
        Gateway::Compute => as_signed_segments(request.path),
    };
    let resource = resource_of(request.path, &segments);
    // Clients sign x-ms-date and, in the fifth line, "" (or the `date`
    // header, when they sent one and no x-ms-date): accept what they may have signed.
    let fifth_lines = std::iter::once("").chain(Some(date).filter(|d| !d.is_empty()));
    for fifth in fifth_lines {
        for link in resource.links() {
            let parts = [
                request.verb,
                &resource.resource_type,
                link,
                x_ms_date,
                fifth,
            ];
            if with_payload(parts, |p| key.verifies(p, &signature)) {
                return Ok(());
            }
        }
    }
    let expected = payload(
        request.verb,
        &resource.resource_type,
        &resource.link,
        x_ms_date,
        "",
    );
    Err(ApiError::unauthorized(format!(
        "The input authorization token can't serve the request. The wrong key is being used or the \
         expected payload is not built as per the protocol. Server used the following payload to sign: '{}'",
        expected.replace('\n', "\\n")
    )))
}

/// `text` split at the first `byte`, as `str::split_once` with a `char`
/// does, but in one pass of `memchr`.
fn split_once(text: &str, byte: u8) -> Option<(&str, &str)> {
    memchr::memchr(byte, text.as_bytes()).map(|at| (&text[..at], &text[at + 1..]))
}

/// How long an authorization header may be to be decoded on the stack: a
/// master token, escaped, is about 100 bytes.
const TOKEN_ROOM: usize = 256;

/// [`decoded`], written into `room` when it fits there and is UTF-8 once
/// decoded (every master token), so that the common request allocates nothing.
fn decoded_in<'a>(s: &'a str, room: &'a mut [u8; TOKEN_ROOM]) -> Cow<'a, str> {
    if !s.contains('%') || s.len() > room.len() {
        return decoded(s);
    }
    fn hex(digit: Option<&u8>) -> Option<u8> {
        (*digit? as char).to_digit(16).map(|d| d as u8)
    }
    let bytes = s.as_bytes();
    let (mut from, mut to) = (0, 0);
    loop {
        // What comes before the next `%` is copied as it is.
        let plain = memchr::memchr(b'%', &bytes[from..]).unwrap_or(bytes.len() - from);
        room[to..to + plain].copy_from_slice(&bytes[from..from + plain]);
        (from, to) = (from + plain, to + plain);
        if from == bytes.len() {
            break;
        }
        // As `percent_decode_str`: `%` and two hex digits are one byte; a
        // `%` without them stays as it is.
        match hex(bytes.get(from + 1)).zip(hex(bytes.get(from + 2))) {
            Some((high, low)) => {
                room[to] = high << 4 | low;
                from += 3;
            }
            None => {
                room[to] = b'%';
                from += 1;
            }
        }
        to += 1;
    }
    match std::str::from_utf8(&room[..to]) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => decoded(s),
    }
}

/// Calls `f` with the payload [`payload`] builds from `parts` (verb,
/// resource type, link, x-ms-date, date), written on the stack when it fits
/// and its lower-cased parts are ASCII (as they are in every request).
fn with_payload<R>(parts: [&str; 5], f: impl FnOnce(&[u8]) -> R) -> R {
    const ROOM: usize = 512;
    // The link is signed as it is; the other parts lower-cased.
    const LOWERED: [bool; 5] = [true, true, false, true, true];
    let length: usize = parts.iter().map(|part| part.len() + 1).sum();
    let ascii = parts
        .iter()
        .zip(LOWERED)
        .all(|(part, lowered)| !lowered || part.is_ascii());
    if length > ROOM || !ascii {
        let [verb, resource_type, link, x_ms_date, date] = parts;
        return f(payload(verb, resource_type, link, x_ms_date, date).as_bytes());
    }
    let mut room = [0; ROOM];
    let mut at = 0;
    for (part, lowered) in parts.iter().zip(LOWERED) {
        let written = &mut room[at..at + part.len()];
        written.copy_from_slice(part.as_bytes());
        if lowered {
            written.make_ascii_lowercase();
        }
        room[at + part.len()] = b'\n';
        at += part.len() + 1;
    }
    f(&room[..at])
}

#[cfg(test)]
mod tests;
