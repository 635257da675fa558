//! What an answer about a container says on the wire: the headers the SDKs
//! key their session tokens by (`x-ms-content-path`,
//! `x-ms-alt-content-path`, the partition key range), `lsn`,
//! `x-ms-global-committed-lsn`, `x-ms-item-lsn`, and the session token the
//! envelope writes from them (`{pkRangeId}:-1#{lsn}`; the rules are
//! `operations/session.rs`'s). The names and LSNs are written from an
//! operation's typed answer (`response.rs`, `from_operation`); the checks
//! of a request against its container are `operations::session`'s. Here:
//! the session token's text.

use axum::http::HeaderValue;

/// `{range}:-1#{lsn}`, written on the stack: the header copies it once.
/// `range` is a response's `x-ms-documentdb-partitionkeyrangeid` (digits),
/// `0` for a response naming none.
pub fn session_token(range: Option<&HeaderValue>, lsn: u64) -> HeaderValue {
    use std::io::Write;
    let range = range
        .map(HeaderValue::as_bytes)
        .filter(|r| !r.is_empty() && r.len() <= 10 && r.iter().all(u8::is_ascii_digit))
        .unwrap_or(b"0");
    let mut buffer = [0u8; 48];
    let mut cursor = std::io::Cursor::new(&mut buffer[..]);
    cursor.write_all(range).expect("fits in 48 bytes");
    write!(cursor, ":-1#{lsn}").expect("fits in 48 bytes");
    let written = cursor.position() as usize;
    HeaderValue::from_bytes(&buffer[..written]).expect("ascii digits")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_tokens_as_the_service_writes_them() {
        assert_eq!(session_token(None, 12), "0:-1#12");
        assert_eq!(
            session_token(None, u64::MAX),
            format!("0:-1#{}", u64::MAX).as_str()
        );
        let range = HeaderValue::from(u32::MAX);
        assert_eq!(
            session_token(Some(&range), u64::MAX),
            format!("{}:-1#{}", u32::MAX, u64::MAX).as_str()
        );
        let odd = HeaderValue::from_static("1,2");
        assert_eq!(session_token(Some(&odd), 3), "0:-1#3");
    }
}
