//! The values flags and variables accept, parsed alike from either: each
//! parser pairs with the text that says what it accepts, for the refusal
//! ([`Invalid`], which every part of `settings/` returns: it lives here,
//! below them all, so that no part names `settings.rs` for it).

use std::net::IpAddr;
use std::path::Path;

use crate::protocol::auth::MasterKey;

/// Why the start stops: names the flag or variable and what it accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid(pub String);

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Invalid {}

pub const BOOL_ACCEPTED: &str = "expected true, false, 1 or 0";
pub const PORT_ACCEPTED: &str = "not a port number; expected 0 to 65535 (0 picks a free port)";
pub const HOST_ACCEPTED: &str =
    "expected an IP address or a DNS name, such as 0.0.0.0, 127.0.0.1 or localhost";
pub const ADVERTISE_ACCEPTED: &str =
    "expected an IP address or a DNS name, such as 192.168.1.20 or host.docker.internal";

/// `true`, `false`, `1`, `0`, in any case.
pub fn parse_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

/// clap's parser of a boolean flag's value.
pub fn flag_bool(text: &str) -> Result<bool, String> {
    parse_bool(text).ok_or_else(|| BOOL_ACCEPTED.into())
}

/// An IP address (in its canonical form), or a DNS name (letters, digits,
/// hyphens, dots; lowercased).
pub fn host_name(text: &str) -> Option<String> {
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(ip.to_string());
    }
    let name_ok = !text.is_empty()
        && text.len() <= 253
        && text.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
    name_ok.then(|| text.to_ascii_lowercase())
}

/// clap's parser of `--host`.
pub fn flag_host(text: &str) -> Result<String, String> {
    host_name(text).ok_or_else(|| HOST_ACCEPTED.into())
}

/// clap's parser of `--advertise-host`.
pub fn flag_advertise_host(text: &str) -> Result<String, String> {
    host_name(text).ok_or_else(|| ADVERTISE_ACCEPTED.into())
}

/// The key, checked now so that a bad one stops the start naming its source.
pub fn checked_key(key: &str, source: &str) -> Result<String, Invalid> {
    let key = key.trim().to_string();
    MasterKey::from_base64(&key)
        .map_err(|e| Invalid(format!("{source}: {e}; expected the base64 master key")))?;
    Ok(key)
}

/// The key a file holds; `source` names the flag or variable that named it.
pub fn key_from_file(path: &Path, source: &str) -> Result<String, Invalid> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Invalid(format!(
            "{source} {}: cannot read it ({e}); expected a readable file holding the base64 master key",
            path.display()
        ))
    })?;
    checked_key(&text, &format!("{source} {}", path.display()))
}
